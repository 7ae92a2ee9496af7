"""The round's states and legal transitions: one ``HierarchicalMachine``, built once per process.

Responsible for: the state tree of DESIGN.md (Closed; Open{Shuffling, Betting, LockedOut,
StartingPosition{Rng, Dice}, SideWagers, Dealing, Play, Settlement, JackpotPending, RoundComplete};
Fault; Maintenance) and, for every event type (= trigger), the states it is legal in and the
states it may lead to. Which of those destinations an event takes is decided by the round machine
(fsm/round/machine.py) before it fires the trigger: each transition carries the condition
"the planned route is this destination", and one ``after`` callback applies the plan.

The machine is shared by every RoundMachine (a model passed per call, never registered, so
nothing accumulates); it is driven only by the owner thread, and a lock keeps two tables in one
process from interleaving on its transition queue. Must never: hold game data, do I/O, or be
rebuilt per round (no GraphMachine at runtime: docs/round_diagram.py draws from TRANSITIONS).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from transitions.extensions import HierarchicalMachine

SEP = "_"  # transitions' NestedState separator (its default)

STATE_TREE: list[Any] = [
    "Closed",
    {
        "name": "Open",
        "children": [
            "Shuffling",
            "Betting",
            "LockedOut",
            {"name": "StartingPosition", "children": ["Rng", "Dice"]},
            "SideWagers",
            "Dealing",
            "Play",
            "Settlement",
            "JackpotPending",
            "RoundComplete",
        ],
    },
    "Fault",
    "Maintenance",
]

CLOSED = "Closed"
MAINTENANCE = "Maintenance"
FAULT = "Fault"
SHUFFLING = "Open_Shuffling"
BETTING = "Open_Betting"
LOCKED_OUT = "Open_LockedOut"
RNG = "Open_StartingPosition_Rng"
DICE = "Open_StartingPosition_Dice"
SIDE_WAGERS = "Open_SideWagers"
DEALING = "Open_Dealing"
PLAY = "Open_Play"
SETTLEMENT = "Open_Settlement"
JACKPOT_PENDING = "Open_JackpotPending"
ROUND_COMPLETE = "Open_RoundComplete"

LEAF_STATES: tuple[str, ...] = (
    CLOSED,
    SHUFFLING,
    BETTING,
    LOCKED_OUT,
    RNG,
    DICE,
    SIDE_WAGERS,
    DEALING,
    PLAY,
    SETTLEMENT,
    JACKPOT_PENDING,
    ROUND_COMPLETE,
    FAULT,
    MAINTENANCE,
)
INTERNAL = ""  # route of an event that stays in its state (transitions' dest=None)

# trigger -> list of (source, destinations). A source may be a parent ("Open" = every Open_*).
# Destination INTERNAL = the event is handled in place.
TRANSITIONS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "table_opened": [(CLOSED, (SHUFFLING,))],
    "table_closed": [(BETTING, (CLOSED,)), (SHUFFLING, (CLOSED,))],
    "maintenance_entered": [(CLOSED, (MAINTENANCE,))],
    "maintenance_exited": [(MAINTENANCE, (CLOSED,))],
    "config_changed": [(MAINTENANCE, (INTERNAL,))],
    "meter_corrected": [(MAINTENANCE, (INTERNAL,))],
    "light_test": [(MAINTENANCE, (INTERNAL,))],
    "display_test": [(MAINTENANCE, (INTERNAL,))],
    "shuffle_complete": [(SHUFFLING, (BETTING, FAULT))],
    "chip_detected": [(BETTING, (INTERNAL,))],
    "bank_accepted": [(BETTING, (INTERNAL,))],
    "bank_released": [(BETTING, (INTERNAL,))],
    "lockout_pressed": [(BETTING, (LOCKED_OUT,))],
    # with the three-card bonus the count leads straight to Dealing: the starting position is
    # the pai gow position farthest to the dealer's left (NY 5324.41(n)(4)), no RNG, no dice
    "pai_gow_wagers": [(BETTING, (INTERNAL,)), (LOCKED_OUT, (INTERNAL,))],
    "chips_confirmed": [(LOCKED_OUT, (RNG, DICE, DEALING))],
    "chips_mismatch": [(LOCKED_OUT, (INTERNAL,))],
    "chips_resolved": [(LOCKED_OUT, (RNG, DICE, DEALING))],
    "rng_drawn": [(RNG, (SIDE_WAGERS, DEALING)), (FAULT, (INTERNAL,))],
    "rng_void": [(SIDE_WAGERS, (RNG,))],
    "shake_detected": [(DICE, (INTERNAL,))],
    "lid_lifted_by_bank": [(DICE, (INTERNAL,))],
    "dice_position_entered": [(DICE, (DEALING,))],
    "side_wagers": [(LOCKED_OUT, (INTERNAL,)), (SIDE_WAGERS, (DEALING,))],
    "side_wagers_settled": [(SIDE_WAGERS, (DEALING,))],
    "dealt": [(DEALING, (INTERNAL, PLAY, FAULT))],
    "three_card_settled": [(DEALING, (INTERNAL,))],
    "play_complete": [(PLAY, (SETTLEMENT, JACKPOT_PENDING, ROUND_COMPLETE))],
    "progressive_outcome": [(SETTLEMENT, (INTERNAL, JACKPOT_PENDING, ROUND_COMPLETE))],
    "hit_validated": [(JACKPOT_PENDING, (INTERNAL, ROUND_COMPLETE))],
    "hit_voided": [(JACKPOT_PENDING, (INTERNAL, ROUND_COMPLETE))],
    "round_completed": [(ROUND_COMPLETE, (BETTING, SHUFFLING))],
    "fault_raised": [
        (CLOSED, (FAULT,)),
        (MAINTENANCE, (FAULT,)),
        ("Open", (FAULT,)),
        (FAULT, (INTERNAL,)),
    ],
    "fault_cleared": [(FAULT, tuple(s for s in LEAF_STATES if s != FAULT))],
    "deadline": [(SHUFFLING, (FAULT,)), (RNG, (FAULT,)), (DEALING, (FAULT,))],
    # the dealer panel's NEXT: chips_confirmed / side_wagers_settled / three_card_settled /
    # play_complete, by state
    "panel_next": [
        (LOCKED_OUT, (RNG, DICE, DEALING)),
        (SIDE_WAGERS, (DEALING,)),
        (DEALING, (INTERNAL,)),
        (PLAY, (SETTLEMENT, JACKPOT_PENDING, ROUND_COMPLETE)),
        (CLOSED, (SHUFFLING,)),
        (JACKPOT_PENDING, (INTERNAL, ROUND_COMPLETE)),
        (FAULT, tuple(s for s in LEAF_STATES if s != FAULT)),
    ],
    # with the supervisor key switch on, NEXT also does the supervisor's step of the state
    # (open the table, validate the pending hit, clear a fault so the round resumes)
    # and VOID the supervisor's void (the hit, the faulted round, the RNG draw, an idle table)
    "panel_void": [
        (BETTING, (CLOSED,)),
        (SHUFFLING, (CLOSED,)),
        (SIDE_WAGERS, (RNG,)),
        (JACKPOT_PENDING, (INTERNAL, ROUND_COMPLETE)),
        (FAULT, tuple(s for s in LEAF_STATES if s != FAULT)),
    ],
    # the shaker's lid sensor: in Dice, a lift before three shakes requires a re-shake
    "shaker_lid": [(s, (INTERNAL,)) for s in (CLOSED, MAINTENANCE, "Open", FAULT)],
}
# Informational inputs, journaled and accepted in every state, changing nothing.
INFORMATIONAL = ("power_up", "device_recovered", "console_refused", "config_pending")
# The supervisor key switch is accepted in every state; its position is kept for the panel.
TRANSITIONS["supervisor_key"] = [(s, (INTERNAL,)) for s in (CLOSED, MAINTENANCE, "Open", FAULT)]
for _name in INFORMATIONAL:
    TRANSITIONS[_name] = [(s, (INTERNAL,)) for s in (CLOSED, MAINTENANCE, "Open", FAULT)]


class Model:
    """What transitions sees of a RoundMachine: its state name, the planned route, the apply
    callback and the last error. One per RoundMachine."""

    __slots__ = ("applied", "apply", "error", "route", "state")

    def __init__(self, state: str, apply: Callable[[Any], None]) -> None:
        self.state = state
        self.route = INTERNAL
        self.apply = apply
        self.error: BaseException | None = None
        self.applied = False


def _route_is(dest: str) -> Callable[[Any], bool]:
    def check(event_data: Any) -> bool:
        return bool(event_data.model.route == dest)

    check.__name__ = f"route_is_{dest or 'internal'}"
    return check


def _apply(event_data: Any) -> None:
    event_data.model.applied = True
    event_data.model.apply(event_data)


def _on_exception(event_data: Any) -> None:
    event_data.model.error = event_data.error


def build_machine() -> HierarchicalMachine:
    """The one machine of the process (called once, at import)."""
    machine = HierarchicalMachine(
        model=None,
        states=STATE_TREE,
        initial=CLOSED,
        queued=True,
        send_event=True,
        auto_transitions=False,
        on_exception=[_on_exception],
    )
    for trigger, rows in TRANSITIONS.items():
        for source, dests in rows:
            for dest in dests:
                machine.add_transition(
                    trigger,
                    source,
                    None if dest == INTERNAL else dest,
                    conditions=[_route_is(dest)],
                    after=[_apply],
                )
    return machine


MACHINE = build_machine()
_LOCK = threading.Lock()


def fire(model: Model, trigger: str) -> None:
    """Fire ``trigger`` on ``model`` (route planned beforehand); errors land in model.error."""
    model.error = None
    model.applied = False
    with _LOCK:
        MACHINE.trigger_event(model, trigger)
    if model.error is None and not model.applied:
        model.error = RuntimeError(f"no transition for {trigger} to {model.route or 'itself'}")


def set_state(model: Model, state: str) -> None:
    """Put a model into ``state`` without callbacks (restore after restart)."""
    if state not in LEAF_STATES:
        raise ValueError(f"state: {state!r} is not a state of the round")
    with _LOCK:
        MACHINE.set_state(state, model)


def legal_triggers(state: str) -> list[str]:
    """Event types legal in ``state`` (from the table, parents included)."""
    out = []
    for trigger, rows in TRANSITIONS.items():
        for source, _ in rows:
            if state == source or state.startswith(source + SEP):
                out.append(trigger)
                break
    return out
