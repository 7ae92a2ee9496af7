"""A Pi has no RTC (issue 9 point 4): the journal marks timestamps taken before the clock was
synchronised. power_up carries ``clock_synced``; a later synchronisation is journaled once as
``device_recovered {device: clock, code: TIME_SYNC}``."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from controller.cli import run as run_cli
from controller.service import timesync
from controller.sim.simulate import build_service, load_sim_config
from fsm.round.events import Event


def test_the_timesyncd_flag_file_means_synchronised(tmp_path: Path) -> None:
    flag = tmp_path / "synchronized"
    flag.touch()
    assert timesync.clock_synchronised(flag) is True


@pytest.mark.parametrize(
    ("state", "synced"), [(timesync.TIME_ERROR, False), (0, True), (None, False)]
)
def test_without_the_flag_the_kernel_decides_and_unknown_means_not_synchronised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: int | None, synced: bool
) -> None:
    monkeypatch.setattr(timesync, "_adjtimex_state", lambda: state)
    assert timesync.clock_synchronised(tmp_path / "missing") is synced


def test_the_kernels_answer_is_read_without_setting_anything() -> None:
    state = timesync._adjtimex_state()
    assert state is None or 0 <= state <= 5  # TIME_OK .. TIME_ERROR


def test_power_up_journals_whether_the_clock_was_synchronised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timesync, "clock_synchronised", lambda flag=None: False)
    db = tmp_path / "t.db"
    service = build_service(load_sim_config(None), db, 1)
    service.owner.start()
    service.owner.stop()
    service.close()
    conn = sqlite3.connect(db)
    try:
        ((kind, data),) = conn.execute("SELECT type, data FROM journal WHERE seq = 1").fetchall()
    finally:
        conn.close()
    assert kind == "power_up"
    assert json.loads(data)["clock_synced"] is False


def test_a_later_synchronisation_is_posted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    synced = threading.Event()
    monkeypatch.setattr(timesync, "clock_synchronised", lambda flag=None: synced.is_set())
    posted: list[Event] = []

    class Owner:
        def post(self, event: Event) -> None:
            posted.append(event)

    watch = run_cli._Watch(Owner())
    assert watch.check() and posted == []
    synced.set()
    assert watch.check() and watch.check()
    assert posted == [Event("device_recovered", {"device": "clock", "code": "TIME_SYNC"})]
