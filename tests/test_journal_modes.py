"""Training never touches a live journal, and a live table never carries on a training one.

Issue 23 on main c291293: ``tablectl simulate --db <a live journal>`` appended three scripted
rounds drawn by the seeded RNG to it (its meter moved $1,000.00 -> $1,001.47 and every report of
it began "TRAINING journal"); a live owner opened a training journal and carried on. Now the
journal records at creation whether it is live or training (``meta.mode``, covered by the genesis
hash); each side refuses the other's, with a clear error and nothing appended (NJ 13:69D-1.52(f):
no meter change without a recorded reason).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from test_cmd_run import write_config

from controller.cli.simulate import live_journal_problem
from controller.journal.audit import recorded_mode, verify
from controller.journal.format import JournalError
from controller.journal.store import Journal
from fsm.round import GameConfig, RoundMachine

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]


def _journal(path: Path, mode: str | None, training_flag: bool = False) -> Path:
    machine = RoundMachine(GameConfig(table_id="T1"))
    with Journal.open(path, table_id="T1", created_ms=0, mode=mode) as journal:
        data = {"software_hash": "ab"} | ({"training": True} if training_flag else {})
        journal.append(1, None, "power_up", data, machine.snapshot(), machine.meters())
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_journal_records_at_creation_whether_it_is_live_or_training(tmp_path: Path) -> None:
    assert recorded_mode(_journal(tmp_path / "live.db", "live")) == "live"
    assert recorded_mode(_journal(tmp_path / "training.db", "training")) == "training"
    # journals made before meta.mode: their first power_up says
    assert recorded_mode(_journal(tmp_path / "old-live.db", None)) == "live"
    assert recorded_mode(_journal(tmp_path / "old-train.db", None, training_flag=True)) == (
        "training"
    )
    assert verify(tmp_path / "live.db").ok


def test_a_live_journal_is_refused_by_a_training_owner_and_nothing_is_appended(
    tmp_path: Path,
) -> None:
    live = _journal(tmp_path / "live.db", "live")
    before = _digest(live)
    with pytest.raises(JournalError, match="LIVE table's journal"):
        Journal.open(live, mode="training")
    training = _journal(tmp_path / "training.db", "training")
    with pytest.raises(JournalError, match="TRAINING journal"):
        Journal.open(training, mode="live")
    assert _digest(live) == before
    with Journal.open(live, mode="live") as journal:
        assert journal.count() == 1


def test_simulate_refuses_a_live_journal_with_a_clear_error_and_appends_nothing(
    tmp_path: Path,
) -> None:
    live = _journal(tmp_path / "live.db", "live")
    before = _digest(live)
    done = subprocess.run(
        [*TABLECTL, "simulate", "--headless", "--rounds", "3", "--seed", "7", "--db", str(live)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is a LIVE table's journal" in done.stderr
    assert _digest(live) == before
    assert not (tmp_path / "live.db.lock").exists()


def test_simulate_refuses_the_live_configuration_s_journal_path_before_it_exists(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, "/dev/ttyS0", "/dev/ttyS1")
    live_path = tmp_path / "journal.db"  # the path write_config puts in [journal]
    problem = live_journal_problem(live_path, live_config=config)
    assert problem is not None and "live table's journal path" in problem
    assert live_journal_problem(tmp_path / "mine.db", live_config=config) is None
    live_db = "/var/lib/paigow/journal.db"
    done = subprocess.run(
        [*TABLECTL, "simulate", "--headless", "--rounds", "1", "--db", live_db],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "live table's journal path" in done.stderr


def test_run_refuses_a_training_journal_with_a_clear_error_and_appends_nothing(
    tmp_path: Path, ptys: tuple[str, str]
) -> None:
    config = write_config(tmp_path, *ptys)
    training = _journal(tmp_path / "journal.db", "training")
    before = _digest(training)
    done = subprocess.run(
        [*TABLECTL, "run", "--config", str(config), "--pin-factory", "mock"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is a TRAINING journal" in done.stderr
    assert _digest(training) == before
