"""Reports and journal verify on a simulated journal, as ratios against reading the journal.

Baseline: reading and decoding every entry of the same journal (``JournalReader.entries``), the
least any report must do. Figures: shift, rounds and hits reports, and ``journal verify`` with the
round machine's replay, each as a multiple of that baseline, plus the journal's size.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROUNDS = 300


def _best(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run() -> dict[str, float | int | str]:
    from controller.cli.journal import make_replay
    from controller.journal.audit import verify
    from controller.journal.reports import JournalReader, hits_report, rounds_report, shift_report

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "journal.db"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "controller.cli",
                "simulate",
                "--headless",
                "--rounds",
                str(ROUNDS),
                "--seed",
                "3",
                "--db",
                str(db),
            ],
            check=True,
            capture_output=True,
        )
        with JournalReader(db) as reader:
            entries = sum(1 for _ in reader.entries())
            base = _best(lambda: sum(1 for _ in reader.entries()))
            shift = _best(lambda: shift_report(reader))
            rounds = _best(lambda: rounds_report(reader))
            hits = _best(lambda: hits_report(reader))
        replay, _ = make_replay(db, None)
        check = _best(lambda: verify(db, replay), repeat=1)
    return {
        "reports_journal_entries": entries,
        "reports_baseline_read_ms": round(base * 1000, 2),
        "reports_shift_vs_read": round(shift / base, 2),
        "reports_rounds_vs_read": round(rounds / base, 2),
        "reports_hits_vs_read": round(hits / base, 2),
        "reports_verify_replay_vs_read": round(check / base, 2),
    }
