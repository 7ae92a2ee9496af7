"""The supervisor's panel steps through the whole stack: MockFactory pins -> gpiozero drivers ->
owner thread -> round machine -> journal (real SQLite file), with the shoe and shuffler on real
pseudo-terminals. NY 5324.41(k)(3)(iii) (a supervisor validates), NJ 13:69E-1.39B(h) (faults)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.sim.simulate import Service, build_service, load_sim_config


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = build_service(load_sim_config(None), tmp_path / "panel.db", seed=4)
    svc.start()
    try:
        yield svc
    finally:
        svc.owner.stop()
        svc.close()


def wait_for(check: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def entries(db: Path, type_: str) -> list[dict[str, object]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT data FROM journal WHERE type = ? ORDER BY seq", (type_,))
        return [json.loads(r[0]) for r in rows]
    finally:
        conn.close()


def test_next_without_the_key_is_journaled_as_refused_and_the_table_stays_closed(
    service: Service, tmp_path: Path
) -> None:
    assert service.owner.public.state == "Closed"
    service.pins.press_next()
    wait_for(lambda: len(entries(tmp_path / "panel.db", "panel_next")) == 1, "panel_next entry")
    (entry,) = entries(tmp_path / "panel.db", "panel_next")
    effects = entry["effects"]
    assert isinstance(effects, list) and effects[0]["type"] == "rejected"
    assert "supervisor key" in effects[0]["reason"]
    assert service.owner.public.state == "Closed"


def test_key_and_next_at_the_panel_open_the_table_and_it_shuffles_to_betting(
    service: Service, tmp_path: Path
) -> None:
    service.pins.turn_key(True)
    wait_for(lambda: len(entries(tmp_path / "panel.db", "supervisor_key")) == 1, "key entry")
    service.pins.press_next()
    # the shuffler simulator on its pty counts 53 cards: the acceptors arm for betting
    wait_for(lambda: service.owner.public.state == "Open_Betting", "Open_Betting")
    service.pins.turn_key(False)
    wait_for(lambda: len(entries(tmp_path / "panel.db", "supervisor_key")) == 2, "key off")
    service.pins.press_void()  # closing the table needs the key: refused now
    wait_for(lambda: len(entries(tmp_path / "panel.db", "panel_void")) == 1, "panel_void")
    assert service.owner.public.state == "Open_Betting"
    service.pins.turn_key(True)
    service.pins.press_void()
    wait_for(lambda: service.owner.public.state == "Closed", "Closed")
