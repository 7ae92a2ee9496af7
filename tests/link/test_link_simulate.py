"""``tablectl simulate --headless --tables N --linked``: N simulated tables (each its own process,
the whole pty and GPIO stack) on one pool with a link controller and a nats-server started for
the run; the pool's journal verifies and holds every table's contributions.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from link_support import ROOT, nats_binary

from controller.cli import main
from controller.journal.audit import connect_read_only


def _effects(db: Path, etype: str) -> list[dict]:  # type: ignore[type-arg]
    conn = connect_read_only(db)
    try:
        rows = conn.execute("SELECT data FROM journal").fetchall()
    finally:
        conn.close()
    return [e for (d,) in rows for e in json.loads(d).get("effects", []) if e["type"] == etype]


def test_simulate_linked_tables_on_one_pool(tmp_path: Path) -> None:
    nats_binary()  # skips (or fails under CI=true) without nats-server
    cmd = [sys.executable, "-m", "controller.cli", "simulate", "--headless", "--rounds", "2",
           "--tables", "2", "--linked", "--db", str(tmp_path / "run.db")]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    work = tmp_path / "run"
    contributed = sum(
        mv["wagered_cents"] * (2100 + 500)
        for t in ("SIM1", "SIM2")
        for mv in _effects(work / f"{t}.db", "meter_movement")
        if mv["kind"] == "contribution" and mv["level"] == "progressive"
    )
    pool = sum(e["units"] for e in _effects(work / "pool.db", "pool_contribution"))
    assert contributed > 0 and pool == contributed
    assert main(["link", "verify", "--db", str(work / "pool.db")]) == 0


def test_linked_options_are_checked_before_anything_starts(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["simulate", "--headless", "--rounds", "2", "--tables", "3"]) == 2
    assert "need --linked" in capsys.readouterr().err
    assert main(["simulate", "--headless", "--rounds", "2", "--faults", "link-down@1"]) == 2
    assert "needs --tables N --linked" in capsys.readouterr().err
    assert main(["simulate", "--rounds", "2", "--tables", "2", "--linked"]) == 2
    assert "--headless" in capsys.readouterr().err
