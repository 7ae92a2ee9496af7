"""Benchmark of the owner loop and the simulated table, as ratios against baselines measured in
the same run: a headless simulated run (owner + round machine + journal + pty shoe/shuffler +
MockFactory pins) against bare journal appends of entries of the same size, and the CSPRNG draw
against a seeded ``random`` draw. Writes nothing but temporary files."""

from __future__ import annotations

import random
import sqlite3
import tempfile
import time
from pathlib import Path

from controller.journal.store import Journal
from controller.service import rng
from controller.sim.simulate import run_headless

ROUNDS = 100


def _raw_appends(
    path: Path, entries: list[tuple[str, dict[str, object]]], snap: dict[str, object]
) -> float:
    """Appends per second of the same entries (with the last snapshot) straight to a journal."""
    with Journal.open(path) as journal:
        start = time.perf_counter()
        for i, (kind, data) in enumerate(entries):
            journal.append(i, 1, kind, data, snap, {})
        return len(entries) / (time.perf_counter() - start)


def run() -> dict[str, float | int | str]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "sim.db"
        start = time.perf_counter()
        code = run_headless(db, ROUNDS, 1)
        elapsed = time.perf_counter() - start
        if code != 0:
            return {"owner_bench_error": f"simulate exited {code}"}
        import json

        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT type, data FROM journal ORDER BY seq").fetchall()
        snap = json.loads(conn.execute("SELECT snapshot FROM state").fetchone()[0])
        conn.close()
        entries = [(kind, json.loads(data)) for kind, data in rows]
        raw = _raw_appends(Path(tmp) / "raw.db", entries, snap)
    sim_entries = len(entries) / elapsed
    n = 200_000
    t0 = time.perf_counter()
    for _ in range(n):
        rng.draw_position()
    csprng = n / (time.perf_counter() - t0)
    seeded = random.Random(1)
    t0 = time.perf_counter()
    for _ in range(n):
        seeded.randrange(7)
    baseline = n / (time.perf_counter() - t0)
    return {
        "simulate_headless_rounds_per_s": round(ROUNDS / elapsed, 1),
        "simulate_headless_100_rounds_s": round(elapsed, 2),
        "simulate_entries_per_s": round(sim_entries, 1),
        "journal_raw_appends_per_s": round(raw, 1),
        "simulate_entries_vs_raw_appends_ratio": round(sim_entries / raw, 3),
        "rng_csprng_draws_per_s": round(csprng),
        "rng_csprng_vs_seeded_random_ratio": round(csprng / baseline, 3),
    }
