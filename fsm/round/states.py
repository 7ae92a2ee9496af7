"""The round's states and legal transitions: one ``HierarchicalMachine``, built once per process.

Responsible for: the state tree of DESIGN.md (Closed; Open{Shuffling, Betting, LockedOut,
StartingPosition{Rng, Dice}, SideWagers, Dealing, Play, Settlement, JackpotPending, RoundComplete};
Fault; Maintenance) and, for every event type (= trigger), the states it is legal in and the
states it may lead to. Which of those destinations an event takes is decided by the round
machine's planner (fsm/round/machine.py) before it fires the trigger: each transition carries the
condition "the planned route is this destination"; its ``before`` callback runs the planned
action, then the library exits the source and enters the destination, calling every leaf state's
``on_exit`` and ``on_enter`` callbacks, which hand over to the model's owner (the round machine
runs what its state table declares for that state: effects, deadline).

Each RoundMachine builds its own machine once (about a millisecond) and passes its model per
call (never registered, so nothing accumulates). No lock is needed: a queued machine keeps one
transition queue, and only its own table's owner thread ever fires it. Must never: hold game
data, do I/O, or be rebuilt per round (no GraphMachine at runtime: docs/round_diagram.py draws
from TRANSITIONS).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

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
    # with an RNG the count leaves the round in LockedOut: the RNG fires only when the dealer
    # (or the bank) activates it, and only once the 1-7 side wagers are closed (NY 5324.41
    # (h)(8)(ii), (h)(10)(ii), (j)(2)(i)); with dice the shaking is the activation
    "chips_confirmed": [(LOCKED_OUT, (INTERNAL, DICE, DEALING))],
    "chips_mismatch": [(LOCKED_OUT, (INTERNAL,))],
    "chips_resolved": [(LOCKED_OUT, (INTERNAL, DICE, DEALING))],
    "rng_activated": [(LOCKED_OUT, (RNG,))],
    "rng_drawn": [(RNG, (SIDE_WAGERS, DEALING)), (FAULT, (INTERNAL,))],
    "rng_void": [(SIDE_WAGERS, (RNG,))],
    "shake_detected": [(DICE, (INTERNAL,))],
    "lid_lifted_by_bank": [(DICE, (INTERNAL,))],
    "dice_position_entered": [(DICE, (DEALING,))],
    # recorded before the RNG is activated only (NY 5324.41(j)(2)(i), NJ 13:69F-11.8C(b)1)
    "side_wagers": [(LOCKED_OUT, (INTERNAL,))],
    "side_wagers_settled": [(SIDE_WAGERS, (DEALING,))],
    "dealt": [(DEALING, (INTERNAL, PLAY, FAULT))],
    "three_card_settled": [(DEALING, (INTERNAL,))],
    "play_complete": [(PLAY, (SETTLEMENT, JACKPOT_PENDING, ROUND_COMPLETE))],
    "progressive_outcome": [(SETTLEMENT, (INTERNAL, JACKPOT_PENDING, ROUND_COMPLETE))],
    "hit_validated": [(JACKPOT_PENDING, (INTERNAL, ROUND_COMPLETE))],
    "hit_voided": [(JACKPOT_PENDING, (INTERNAL, ROUND_COMPLETE))],
    "link_hit_locked": [(JACKPOT_PENDING, (INTERNAL,))],
    "round_completed": [(ROUND_COMPLETE, (BETTING, SHUFFLING))],
    "fault_raised": [
        (CLOSED, (FAULT,)),
        (MAINTENANCE, (FAULT,)),
        ("Open", (FAULT,)),
        (FAULT, (INTERNAL,)),
    ],
    "fault_cleared": [(FAULT, tuple(s for s in LEAF_STATES if s != FAULT))],
    "deadline": [(SHUFFLING, (FAULT,)), (RNG, (FAULT,)), (DEALING, (FAULT,))],
    # the dealer panel's NEXT: chips_confirmed then rng_activated / side_wagers_settled /
    # three_card_settled / play_complete, by state
    "panel_next": [
        (LOCKED_OUT, (INTERNAL, RNG, DICE, DEALING)),
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
INFORMATIONAL = (
    "power_up",
    "device_recovered",
    "console_refused",
    "software_verified",
    "config_pending",
    "floor_link",
    "floor_command",
    "training",
    "link_state",
)
# The supervisor key switch is accepted in every state; its position is kept for the panel.
TRANSITIONS["supervisor_key"] = [(s, (INTERNAL,)) for s in (CLOSED, MAINTENANCE, "Open", FAULT)]
# ... and so is the naming of the person holding it (refused while the key is off)
TRANSITIONS["key_holder"] = [(s, (INTERNAL,)) for s in (CLOSED, MAINTENANCE, "Open", FAULT)]
for _name in INFORMATIONAL:
    TRANSITIONS[_name] = [(s, (INTERNAL,)) for s in (CLOSED, MAINTENANCE, "Open", FAULT)]


class Owner(Protocol):
    """What the model's callbacks call on their round machine."""

    def act(self) -> None: ...

    def entered(self, state: str) -> None: ...

    def exited(self, state: str) -> None: ...


class Model:
    """What transitions sees of a RoundMachine: its state name, the planned route, the owner
    the callbacks call, and the last error. One per RoundMachine."""

    __slots__ = ("applied", "error", "owner", "route", "state")

    def __init__(self, state: str, owner: Owner) -> None:
        self.state = state
        self.route = INTERNAL
        self.owner = owner
        self.error: BaseException | None = None
        self.applied = False


def _route_is(dest: str) -> Callable[[Any], bool]:
    def check(event_data: Any) -> bool:
        return bool(event_data.model.route == dest)

    check.__name__ = f"route_is_{dest or 'internal'}"
    return check


def _act(event_data: Any) -> None:
    event_data.model.applied = True
    event_data.model.owner.act()


def _on_enter(state: str) -> Callable[[Any], None]:
    def enter(event_data: Any) -> None:
        event_data.model.owner.entered(state)

    enter.__name__ = f"enter_{state}"
    return enter


def _on_exit(state: str) -> Callable[[Any], None]:
    def leave(event_data: Any) -> None:
        event_data.model.owner.exited(state)

    leave.__name__ = f"exit_{state}"
    return leave


def _with_callbacks(tree: list[Any], prefix: str = "") -> list[Any]:
    """STATE_TREE with every leaf's on_enter / on_exit wired to the model's owner."""
    out: list[Any] = []
    for node in tree:
        if isinstance(node, str):
            full = prefix + node
            out.append({"name": node, "on_enter": [_on_enter(full)], "on_exit": [_on_exit(full)]})
        else:
            full = prefix + node["name"]
            out.append(
                {"name": node["name"], "children": _with_callbacks(node["children"], full + SEP)}
            )
    return out


def _on_exception(event_data: Any) -> None:
    event_data.model.error = event_data.error


def build_machine() -> HierarchicalMachine:
    """A table's machine (built once per RoundMachine)."""
    machine = HierarchicalMachine(
        model=None,
        states=_with_callbacks(STATE_TREE),
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
                    before=[_act],
                )
    return machine


def fire(machine: HierarchicalMachine, model: Model, trigger: str) -> None:
    """Fire ``trigger`` on ``model`` (route planned beforehand); errors land in model.error."""
    model.error = None
    model.applied = False
    machine.trigger_event(model, trigger)
    if model.error is None and not model.applied:
        model.error = RuntimeError(f"no transition for {trigger} to {model.route or 'itself'}")


def set_state(machine: HierarchicalMachine, model: Model, state: str) -> None:
    """Put a model into ``state`` without callbacks (restore after restart)."""
    if state not in LEAF_STATES:
        raise ValueError(f"state: {state!r} is not a state of the round")
    machine.set_state(state, model)


def legal_triggers(state: str) -> list[str]:
    """Event types legal in ``state`` (from the table, parents included)."""
    out = []
    for trigger, rows in TRANSITIONS.items():
        for source, _ in rows:
            if state == source or state.startswith(source + SEP):
                out.append(trigger)
                break
    return out
