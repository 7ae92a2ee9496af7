"""The benchmarks' scripted inputs are legal for the code they measure: a benchmark that drives
the round machine with a round it rejects measures rejections (``make bench`` stopped at
``bench_round`` when the RNG began to need the dealer's activation, NY 5324.41(h)(8)(ii)). The
timings themselves are the benchmarks' business (`bench/`), never a test's."""

from __future__ import annotations

from bench.bench_round import _round_events
from fsm.round.config import GameConfig
from fsm.round.effects import Rejected
from fsm.round.events import Event
from fsm.round.machine import RoundMachine


def test_bench_round_s_scripted_rounds_are_accepted_event_by_event() -> None:
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
