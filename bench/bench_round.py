"""Speed of the round machine's pure step (it runs inside the lock-out latency budget).

Figures (``python -m bench bench_round``):
- ``round_step_mean_us``: mean time of ``RoundMachine.step`` over whole rounds (chips, lock-out,
  contributions, RNG, dealing, outcomes, a validated hit, round completion);
- ``round_lockout_step_p50_us`` / ``_p99_us``: median and p99 of ``step(lockout_pressed)`` alone
  (a change of state: the library exits and enters nested states);
- ``round_bare_trigger_mean_us``: the baseline measured in the same run: one bare trigger of a
  transitions ``HierarchicalMachine`` built as the round's (same state tree, every leaf's on_enter
  / on_exit, queued, send_event, on_exception, before_state_change) whose one transition has a
  no-op condition and a no-op ``before``;
- ``round_step_over_bare_trigger_ratio``: the first over the baseline (what validation, the
  phases' guards and actions, the rollback copy and the outputs add to the library's own cost);
- ``round_snapshot_mean_us``: ``snapshot()`` (called by the owner after every step).
Must never be imported by the service.
"""

from __future__ import annotations

import math
import time
from typing import Any

from transitions.extensions import HierarchicalMachine

from fsm.round.config import GameConfig
from fsm.round.effects import Rejected
from fsm.round.events import Event
from fsm.round.machine import RoundMachine
from fsm.round.states import BETTING, CLOSED, SEP, STATE_TREE

ROUNDS = 300


class _Bare:
    """The bare trigger's model: its state only."""

    __slots__ = ("state",)

    def __init__(self) -> None:
        self.state = BETTING


def _noop(event_data: Any) -> None:
    return None


def _yes(event_data: Any) -> bool:
    return True


def _bare_tree(tree: list[Any]) -> list[Any]:
    return [
        {"name": n, "on_enter": [_noop], "on_exit": [_noop]}
        if isinstance(n, str)
        else {"name": n["name"], "children": _bare_tree(n["children"])}
        for n in tree
    ]


def _bare_machine() -> HierarchicalMachine:
    assert SEP == "_"
    hsm = HierarchicalMachine(
        model=None,
        states=_bare_tree(STATE_TREE),
        initial=CLOSED,
        queued=True,
        send_event=True,
        auto_transitions=False,
        on_exception=[_noop],
        before_state_change=[_noop],
    )
    hsm.add_transition("chip_detected", BETTING, None, conditions=[_yes], before=[_noop])
    return hsm


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def _round_events(round_id: int) -> list[Event]:
    return [
        *(Event("chip_detected", {"position": p}) for p in (1, 3, 6)),
        Event("lockout_pressed", {}),
        Event("chips_confirmed", {}),
        Event("rng_activated", {}),  # the dealer activates the RNG (NY 5324.41(h)(8)(ii))
        Event("rng_drawn", {"value": 1 + round_id % 7}),
        Event("dealt", {"remaining": 4}),
        Event("play_complete", {}),
        Event("progressive_outcome", {"position": 1, "line": "flush"}),
        Event("progressive_outcome", {"position": 3, "line": None}),
        Event("progressive_outcome", {"position": 6, "line": "straight-flush"}),
        Event("hit_validated", {"position": 6, "supervisor": "s"}),
        Event("round_completed", {"round_id": round_id}),
        Event("shuffle_complete", {"count": 53}),
    ]


def run() -> dict[str, float | int | str]:
    m = RoundMachine(GameConfig.from_mapping({}, "game"))
    now = 0
    m.step(Event("table_opened", {"supervisor": "s"}), now)
    m.step(Event("shuffle_complete", {"count": 53}), now)
    steps: list[float] = []
    lockouts: list[float] = []
    snaps: list[float] = []
    for _ in range(ROUNDS):
        for ev in _round_events(m.round_id):
            now += 1000
            t0 = time.perf_counter()
            effects = m.step(ev, now)
            dt = time.perf_counter() - t0
            assert not any(isinstance(e, Rejected) for e in effects), (ev, effects)
            steps.append(dt)
            if ev.type == "lockout_pressed":
                lockouts.append(dt)
            t0 = time.perf_counter()
            m.snapshot()
            snaps.append(time.perf_counter() - t0)
    bare: list[float] = []
    hsm = _bare_machine()
    model = _Bare()
    for _ in range(len(steps)):
        t0 = time.perf_counter()
        hsm.trigger_event(model, "chip_detected")
        bare.append(time.perf_counter() - t0)
    step_mean = sum(steps) / len(steps) * 1e6
    bare_mean = sum(bare) / len(bare) * 1e6
    return {
        "round_step_mean_us": round(step_mean, 1),
        "round_lockout_step_p50_us": round(sorted(lockouts)[len(lockouts) // 2] * 1e6, 1),
        "round_lockout_step_p99_us": round(_p99(lockouts) * 1e6, 1),
        "round_bare_trigger_mean_us": round(bare_mean, 1),
        "round_step_over_bare_trigger_ratio": round(step_mean / bare_mean, 2),
        "round_snapshot_mean_us": round(sum(snaps) / len(snaps) * 1e6, 1),
    }
