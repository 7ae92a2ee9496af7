"""The benchmarks' scripted inputs are legal for the code they measure: a benchmark that drives
the round machine with a round it rejects measures rejections (``make bench`` stopped at
``bench_round`` when the RNG began to need the dealer's activation, NY 5324.41(h)(8)(ii)). The
timings themselves are the benchmarks' business (`bench/`), never a test's."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from fsm.round.config import GameConfig
from fsm.round.effects import Rejected
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_module(name: str) -> Any:
    """A module of ``bench/`` by its file: ``bench`` is not an installed package."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_round_s_scripted_rounds_are_accepted_event_by_event() -> None:
    _round_events = _bench_module("bench_round")._round_events
    machine = RoundMachine(GameConfig.from_mapping({}, "game"))
    now = 0
    for event in (
        Event("table_opened", {"supervisor": "s"}),
        Event("shuffle_complete", {"count": 53}),
    ):
        machine.step(event, now)
    for _ in range(3):
        for event in _round_events(machine.round_id):
            now += 1000
            effects = machine.step(event, now)
            assert not [e for e in effects if isinstance(e, Rejected)], (event, machine.state)
    assert machine.state == "Open_Betting"
