"""Inputs legal in every state, journaled whatever the round is doing: power-up, the supervisor key
switch and who holds it, the floor link and the floor system's commands (SAS 01 / 02), the link
controller's state (docs/link.md), refused console PINs, a pending configuration, training notes,
the controller compartment's door and a supervisor's maintenance allowance (issue 28 item 4).

None of them moves the round to another state. Must never let the key switch alone name a person.
"""

from __future__ import annotations

from typing import Any

from fsm.round.effects import DoorChanged, LinkedWager
from fsm.round.events import (
    Door,
    DoorMaintenance,
    FloorCommand,
    FloorLink,
    KeyHolder,
    LinkState,
    SupervisorKey,
)
from fsm.round.phase import Phase, Step, Transition
from fsm.round.states import DEALING, EVERYWHERE, RNG, SHUFFLING


def rearm_deadlines(s: Step) -> None:
    """The reconcile event after a restart (the owner applies ``outputs()`` next). The requests
    ``outputs()`` issues again (shuffle, draw_rng) get a fresh deadline from now. A dispense is
    never issued again: a deal cut by a restart cannot be trusted, so its deadline falls due at
    once with the fault DEAL_INTERRUPTED, and clearing it voids the round (NJ 13:69E-1.39B(h))."""
    c = s.c
    if c.state in (SHUFFLING, RNG):
        c.deadline = c.deadline_for(c.state)
    elif c.state == DEALING and c.r.stage != "three_dealt":
        # (in "three_dealt" no dispense is outstanding: the dealer settles the three-card
        # bonus and the fours are dispensed only after three_card_settled, (n)(6)-(7))
        c.deadline = [
            c.now,
            "DEAL_INTERRUPTED",
            "shoe",
            "the controller restarted while the shoe was dealing",
        ]


def turn_key(s: Step) -> None:
    e: SupervisorKey = s.e
    s.c.key_on = e.on
    if not e.on:
        s.c.key_holder = None  # the next turn of the key names no one until named again


def key_is_on(s: Step) -> bool:
    return s.c.key_on or s.refuse("key_holder: the supervisor key switch is off; turn it on first")


def name_key_holder(s: Step) -> None:
    """The person holding the turned key, identified by the input that posts this (the console
    checked their PIN): panel steps name them until the key is turned off."""
    e: KeyHolder = s.e
    s.c.key_holder = e.supervisor


def door_switch(s: Step) -> None:
    """The compartment door opened or closed (a report of the state it already has changes
    nothing: the switch's state at power-up). Opening counts (the SAS door meter); closing
    ends a maintenance allowance. Its effect carries the facts for SAS 11 / 12 and the page."""
    e: Door = s.e
    c = s.c
    door = c.door or {"open": False, "opened": 0, "maintenance": None}
    if c.door is not None and door["open"] == e.open:
        return
    door = dict(door)
    if e.open:
        door["opened"] += 1
    else:
        door["maintenance"] = None
    door["open"] = e.open
    c.door = door
    c.emit(
        DoorChanged("opened" if e.open else "closed", e.open, door["opened"], door["maintenance"])
    )


def door_is_open(s: Step) -> bool:
    e: DoorMaintenance = s.e
    door = s.c.door
    if not e.allow or (door is not None and door["open"]):
        return True
    return s.refuse("door_maintenance: the compartment door is closed: nothing to allow")


def door_maintenance(s: Step) -> None:
    e: DoorMaintenance = s.e
    c = s.c
    door = dict(c.door or {"open": False, "opened": 0, "maintenance": None})
    door["maintenance"] = e.supervisor if e.allow else None
    c.door = door
    c.emit(DoorChanged("maintenance", door["open"], door["opened"], door["maintenance"]))


def floor_link(s: Step) -> None:
    """Down with ``blocks_progressive`` (the progressive depends on the floor system):
    progressive wagers are refused, the acceptors not armed, until the link returns
    (NJ 13:69E-1.39B(d))."""
    e: FloorLink = s.e
    s.c.floor["link_blocks"] = (not e.up) and e.blocks_progressive


def floor_command(s: Step) -> None:
    """SAS 01 / 02 refuse / accept progressive wagers; the others (clock, game enable, an
    acknowledged exception) change no round state."""
    e: FloorCommand = s.e
    if e.command == "refuse_progressive":
        s.c.floor["refused"] = True
    elif e.command == "accept_progressive":
        s.c.floor["refused"] = False


def level_known(s: Step) -> bool:
    level = s.e.level
    return level in s.c.meters or s.refuse(
        f"level: no level {level!r}; levels: {', '.join(s.c.meters)}"[:200]
    )


def _playability(link: dict[str, Any] | None) -> tuple[str, str, bool] | None:
    """(pool, level, playable) of the linked wager; None: not linked."""
    if link is None:
        return None
    return str(link.get("pool")), str(link.get("level")), not link.get("down")


def link_state(s: Step) -> None:
    """The link controller lost (``up`` false) or confirmed again: linked wagers refused,
    acceptors not armed, until the controller confirms it holds the table's contributions
    (NY 5321.18(c), NJ 13:69E-1.39B(d)). A change of the linked wager's playability is the
    ``linked_wager`` effect (the floor link reports it over SAS)."""
    e: LinkState = s.e
    c = s.c
    before = _playability(c.link)
    if not e.linked:
        c.link = None
        if before is not None:  # its own level again: from its configured amounts, journaled
            c.restart_level(
                before[1],
                f"unlinked from pool {before[0]}: the level starts from its configured amounts "
                "(the pool's money stays the pool's, docs/link.md)",
            )
    else:
        c.link = {
            "pool": e.pool,
            "level": e.level,
            "down": not e.up,
            "confirmed_seq": e.confirmed_seq if e.up else (c.link or {}).get("confirmed_seq"),
        }
    after = _playability(c.link)
    if after == before:  # a change only: down after up, up after down, linked, unlinked
        return
    if after is not None:
        c.emit(LinkedWager(*after, linked=True))
    elif before is not None:  # unlinked: the table's own progressive again, playable
        c.emit(LinkedWager(before[0], before[1], playable=True, linked=False))


PHASE = Phase(
    name="informational",
    transitions=[
        Transition("power_up", EVERYWHERE, None, before=[rearm_deadlines]),
        Transition("supervisor_key", EVERYWHERE, None, before=[turn_key]),
        Transition("key_holder", EVERYWHERE, None, [key_is_on], before=[name_key_holder]),
        Transition("floor_link", EVERYWHERE, None, before=[floor_link]),
        Transition("floor_command", EVERYWHERE, None, before=[floor_command]),
        Transition("link_state", EVERYWHERE, None, [level_known], before=[link_state]),
        Transition("door", EVERYWHERE, None, before=[door_switch]),
        Transition("door_maintenance", EVERYWHERE, None, [door_is_open], before=[door_maintenance]),
        # journaled, changing nothing
        Transition("console_refused", EVERYWHERE),
        Transition("software_verified", EVERYWHERE),
        Transition("config_pending", EVERYWHERE),
        Transition("training", EVERYWHERE),
    ],
)
