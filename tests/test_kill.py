"""THE KILL TEST (issue 3; DESIGN.md "a crash between commit and output is repaired on restart";
NJ 13:69E-1.39: no meter or journal data lost through a power cut): ``tablectl simulate
--headless`` is SIGKILLed at seeded random moments and started again each time; the journal ends
with exactly N completed rounds, verifies by replay, has gapless sequence numbers, no round
completed twice, no round id lost (each one completed or voided), and meters that reconcile to
the cent with the movements journaled (nothing applied twice).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_simulate import check_journal

from controller.journal.audit import connect_read_only

ROUNDS = 200
KILLS = 7
SEED = 20261129


def _start(db: Path) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "controller.cli",
        "simulate",
        "--headless",
        "--rounds",
        str(ROUNDS),
        "--seed",
        "8",
        "--db",
        str(db),
    ]
    root = Path(__file__).resolve().parent.parent
    return subprocess.Popen(
        cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ)
    )


def _entries(db: Path) -> int:
    import sqlite3

    if not db.exists():
        return 0
    try:
        conn = connect_read_only(db)
        try:
            return int(conn.execute("SELECT count(*) FROM journal").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_sigkill_at_random_moments_still_ends_with_exactly_n_rounds(tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    rng = random.Random(SEED)
    kills = 0
    killed_mid_run = 0
    while kills < KILLS:
        before = _entries(db)
        proc = _start(db)
        # a random point of the run: after 1..300 new journal entries, then 0..20 ms more
        grow = rng.randint(1, 300)
        while _entries(db) < before + grow and proc.poll() is None:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.02))
        if proc.poll() is not None:  # finished before the kill: the run is complete
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        kills += 1
        if _entries(db) > before:
            killed_mid_run += 1
    final = _start(db)
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err.decode(errors="replace")[-2000:]
    assert kills == KILLS and killed_mid_run >= KILLS - 1, (kills, killed_mid_run)
    check_journal(db, ROUNDS)
    again = _start(db)  # and a run on a finished journal adds nothing but its power-up
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err.decode(errors="replace")[-2000:]
    check_journal(db, ROUNDS)
