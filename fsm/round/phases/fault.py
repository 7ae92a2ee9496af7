"""The fault phase: Fault. Faults raised from any state, deadlines passed, devices recovering,
and the supervisor's clearing: the round resumes where it was, or is voided by rule with its
contributions reversed (NJ 13:69E-1.39B).

A fault its device reports (``held``: a jam, an empty shoe, a lost link) stays in the per-device
fault set until that device reports healthy (``device_recovered``); only then may a supervisor
clear it. Must never clear a fault without a supervisor, nor void a round whose cards are dealt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fsm.round.catalogue import ALWAYS_VOID, VOIDABLE
from fsm.round.context import Round
from fsm.round.effects import FaultClearedEffect
from fsm.round.events import DeviceRecovered, FaultCleared, FaultRaised
from fsm.round.phase import Action, Guard, Phase, StateSpec, Step, Transition, as_event
from fsm.round.phases.shared import (
    PANEL,
    after_draw,
    glyph,
    key_turned,
    lights_off,
    panel_supervisor,
)
from fsm.round.states import (
    CLOSED,
    DEALING,
    DICE,
    EVERYWHERE,
    FAULT,
    JACKPOT_PENDING,
    LEAF_STATES,
    MAINTENANCE,
    PLAY,
    RNG,
    ROUND_COMPLETE,
    SETTLEMENT,
    SHUFFLING,
)
from fsm.round.vocabulary import FAULT as FAULT_GLYPH

# the states after the deal: Play and Settlement are not voidable, a fault there resumes
DEALT = frozenset({PLAY, SETTLEMENT, JACKPOT_PENDING, ROUND_COMPLETE})


def record_fault(s: Step) -> None:
    e: FaultRaised = s.e
    s.c.enter_fault(e.code[:64], e.device[:64], e.detail[:200], s.c.state, e.held)


def held_faults(c: Round) -> list[dict[str, Any]]:
    """The faults of the per-device fault set still reported by their device."""
    if c.fault is None:
        return []
    return [f for f in c.fault["faults"] if f.get("held")]


def recovered(s: Step) -> None:
    """A device reports healthy: its held faults (of ``code``, or all) leave the fault set; the
    supervisor may then clear the fault. Anywhere else informational."""
    e: DeviceRecovered = s.e
    for f in held_faults(s.c):
        if f["device"] == e.device and e.code in (None, f["code"]):
            f["held"] = False


# --- the supervisor clears the fault


def devices_healthy(s: Step) -> bool:
    """As gaming platforms keep it: a fault clears only when its device is healthy."""
    held = held_faults(s.c)
    if not held:
        return True
    f = held[0]
    return s.refuse(
        f"{f['code']}: the {f['device']} still reports it; the fault clears once the "
        f"{f['device']} reports healthy"
    )


def _interrupted(c: Round) -> str:
    assert c.fault is not None
    return str(c.fault["interrupted"])


def void_permitted(s: Step) -> bool:
    """Rounds interrupted before the deal resume, or are voided when the supervisor asks; once the
    cards are dealt a fault resumes, since a dealt hand may be a progressive winner whose cards
    stay until it is paid (NY 5324.41(k)(3), (g)(9))."""
    where = _interrupted(s.c)
    if not s.e.void or where in VOIDABLE:
        return True
    if where in DEALT:
        return s.refuse(
            f"void: the round cannot be voided from {where}: the cards are dealt, so the "
            "round resumes (NY 5324.41(k)(3), (g)(9)); clear the fault without void"
        )
    return s.refuse(f"void: no round can be voided from {where}; clear the fault without void")


def voids(s: Step) -> bool:
    """The supervisor asked for the void, or the round was interrupted while dealing."""
    return bool(s.e.void) or _interrupted(s.c) in ALWAYS_VOID


def clear_and_void(s: Step) -> None:
    e: FaultCleared = s.e
    c = s.c
    reason = f"fault cleared by {e.supervisor}: round voided (interrupted in {_interrupted(c)})"
    c.fault = None
    c.emit(FaultClearedEffect(e.supervisor, "voided", e.via))
    c.void_round(reason[:200], e.supervisor)


def _resume_target(c: Round) -> str:
    """Where the round resumes: where it was, except that a draw which arrived during the fault
    leads on as the draw does."""
    where = _interrupted(c)
    if where == RNG and c.r.rng_value is not None:
        return after_draw(c)
    return where


def resumes_to(target: str) -> Guard:
    def resumes(s: Step) -> bool:
        return _resume_target(s.c) == target

    resumes.__name__ = f"resumes_to_{target}"
    return resumes


def clear_and_resume(s: Step) -> None:
    e: FaultCleared = s.e
    c = s.c
    where = _interrupted(c)
    target = _resume_target(c)
    c.fault = None
    c.emit(FaultClearedEffect(e.supervisor, "resumed", e.via))
    if where == DICE:
        c.r.shakes = 0  # the dice are shaken again after a fault
    if target != where:
        c.set_start(int(c.r.rng_value or 0))


def clearing_rows(
    trigger: str, pre: Sequence[Guard] = (), prepare: Sequence[Action] = ()
) -> list[Transition]:
    """A cleared fault voids the round and goes to the shuffle, or resumes where it was (one row
    per state it may resume to: the library picks the one the round was interrupted in)."""
    guards = [*pre, devices_healthy, void_permitted]
    return [
        Transition(
            trigger, FAULT, SHUFFLING, [*guards, voids], before=[clear_and_void], prepare=prepare
        ),
        *(
            Transition(
                trigger,
                FAULT,
                target,
                [*guards, resumes_to(target)],
                before=[clear_and_resume],
                prepare=prepare,
            )
            for target in LEAF_STATES
            if target != FAULT
        ),
    ]


def _clearing_by_panel(void: bool) -> Action:
    def clearing(s: Step) -> FaultCleared:
        return FaultCleared(panel_supervisor(s.c), void, PANEL)

    clearing.__name__ = "void_by_panel" if void else "clear_by_panel"
    return as_event(clearing)


# --- deadlines


def a_deadline(s: Step) -> bool:
    dl = s.c.deadline
    if dl is None:
        return s.refuse("no deadline in this state")
    return s.c.now >= int(dl[0]) or s.refuse(f"deadline not reached: due at {dl[0]}")


def deadline_passed(s: Step) -> None:
    c = s.c
    assert c.deadline is not None
    dl = c.deadline
    code, device = str(dl[1]), str(dl[2])
    detail = str(dl[3]) if len(dl) > 3 else f"{device} did not answer in time"
    c.enter_fault(code, device, detail, c.state)


PHASE = Phase(
    name="fault",
    states={FAULT: StateSpec(lights_off, glyph(FAULT_GLYPH))},
    transitions=[
        Transition("fault_raised", (CLOSED, MAINTENANCE, "Open"), FAULT, before=[record_fault]),
        Transition("fault_raised", FAULT, None, before=[record_fault]),
        Transition("device_recovered", EVERYWHERE, None, before=[recovered]),
        *clearing_rows("fault_cleared"),
        *clearing_rows(
            "panel_next", [key_turned("NEXT", "clears the fault")], [_clearing_by_panel(False)]
        ),
        *clearing_rows(
            "panel_void",
            [key_turned("VOID", "clears the fault and voids the round")],
            [_clearing_by_panel(True)],
        ),
        Transition(
            "deadline", (SHUFFLING, RNG, DEALING), FAULT, [a_deadline], before=[deadline_passed]
        ),
    ],
)
