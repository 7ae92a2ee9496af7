"""``tablectl sas poll`` as a small host against the floor link over a pty, and ``tablectl sas
log`` reading the frame log the running link wrote."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sas_support import hit_config, make_owner

from controller.cli import main
from controller.config import load_config
from controller.floor.framelog import log_path_for


def test_sas_poll_and_log_against_a_running_floor_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from controller.floor.service import pty_floor_link

    cfg = load_config(hit_config(tmp_path))
    db = tmp_path / "journal.db"
    owner = make_owner(cfg, db)
    owner.start()
    floor = pty_floor_link(cfg.sas, cfg.game, owner, db, tmp_path / "sas", serial_number="TBL0001")
    floor.start()
    try:
        assert main(["sas", "poll", "--port", str(tmp_path / "sas"), "--address", "1", "55"]) == 0
        out = capsys.readouterr().out
        assert "01 55 00 01 6C B7" in out and "CRC ok" in out
        assert main(["sas", "poll", "--port", str(tmp_path / "sas"), "52", "0002"]) == 0
        assert "NACK" in capsys.readouterr().out
        assert main(["sas", "poll", "--port", str(tmp_path / "sas"), "general"]) == 0
        assert "exception 17" in capsys.readouterr().out  # power applied
        assert main(["sas", "poll", "--port", str(tmp_path / "sas"), "--address", "2", "1A"]) == 3
        capsys.readouterr()
        time.sleep(1.0)  # the follower saves the ring twice a second
    finally:
        floor.stop()
        owner.stop()
    assert main(["sas", "log", "--db", str(db)]) == 0
    log = capsys.readouterr().out
    assert "01 55" in log and "selected game number" in log and "NACK" in log
    assert log_path_for(db).exists()
    assert main(["sas", "log", "--db", str(db), "--last", "1", "--json"]) == 0
    assert capsys.readouterr().out.count("\n") == 1


def test_sas_poll_refuses_bad_input_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sas", "poll", "--port", "/dev/null", "EE"]) == 2
    assert "not a poll the table answers" in capsys.readouterr().err
    assert main(["sas", "poll", "--port", "/dev/null", "52", "01"]) == 2
    assert "takes 2 data bytes" in capsys.readouterr().err
    assert main(["sas", "log", "--file", "/nonexistent/x"]) == 2


def test_simulate_refuses_a_sas_link_path_it_cannot_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("keep me")
    args = ["simulate", "--headless", "--rounds", "1", "--db", str(tmp_path / "j.db")]
    assert main([*args, "--sas-link", str(taken)]) == 2
    assert "not a symlink" in capsys.readouterr().err and taken.read_text() == "keep me"
    assert main([*args, "--sas-link", str(tmp_path / "no" / "such")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "j.db").exists()  # nothing touched
