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
    # issue 22 item 4: every entry shipped, the tables' last ones too (the link stops after the
    # owner's last commit), and the run ends with both totals, equal
    for t in ("SIM1", "SIM2"):
        cursor = (work / f"{t}.db.link-cursor").read_text().strip()
        conn = connect_read_only(work / f"{t}.db")
        (last,) = conn.execute("SELECT max(seq) FROM journal").fetchone()
        conn.close()
        assert int(cursor) == last, t
    (totals,) = [line for line in done.stdout.splitlines() if line.startswith("contributions:")]
    tables_took = int(totals.split("journaled ")[1].split()[0])
    assert totals.endswith(f"the pool took {tables_took}") and tables_took > 0
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
    # a server the run did not start is not the run's to take down (issue 22 item 4)
    assert main(["simulate", "--headless", "--rounds", "2", "--tables", "2", "--linked",
                 "--nats", "nats://127.0.0.1:4222", "--faults", "nats-down@1"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "--faults nats-down: takes down the nats-server the run starts" in err
