"""Planners for the dealer panel and the informational inputs: NEXT, VOID and the supervisor key
switch, the shaker's lid sensor, power-up and device recovery.

Must never let NEXT or VOID take a supervisor's step without the key switch on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from fsm.round import states as S
from fsm.round.checks import Plan, _field, _Reject
from fsm.round.events import JSON
from fsm.round.plan_betting import _p_chips_confirmed
from fsm.round.plan_deal import (
    _p_hit_validated,
    _p_hit_voided,
    _p_play_complete,
    _p_three_card_settled,
)
from fsm.round.plan_faults import _p_fault_cleared
from fsm.round.plan_start import _p_rng_void, _p_side_wagers_settled
from fsm.round.plan_table import _p_table_closed, _p_table_opened

if TYPE_CHECKING:
    from fsm.round.machine import RoundMachine


# Who the journal names for a supervisor's step taken at the dealer panel: the holder of the
# supervisor key (the casino's key-control log says who that was).
PANEL_SUPERVISOR = "panel-key"


def _panel_supervisor(m: RoundMachine, button: str, what: str) -> dict[str, JSON]:
    if not m._key_on:
        raise _Reject(f"{button} here {what}: it needs the supervisor key switch on")
    return {"supervisor": PANEL_SUPERVISOR}


def _first_pending(m: RoundMachine) -> int:
    if not m._r.pending:
        raise _Reject("no hit awaits validation")
    return int(m._r.pending[0]["position"])


def _p_supervisor_key(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    on = _field(d, "on")
    if not isinstance(on, bool):
        raise _Reject("on: must be true or false")

    def act() -> None:
        m._key_on = on

    return S.INTERNAL, act


def _p_panel_void(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The dealer panel's VOID button, a supervisor's step (key switch on): void the pending hit
    (NY (k)(3)), void the faulted round by rule, void the RNG draw so it is drawn again (the only
    way to a second draw), or close a table with no round in progress."""
    state = m.state
    if state == S.JACKPOT_PENDING:
        sup = _panel_supervisor(m, "VOID", "voids the pending hit")
        reason = "voided at the dealer panel"
        return _p_hit_voided(m, {**sup, "position": _first_pending(m), "reason": reason})
    if state == S.FAULT:
        sup = _panel_supervisor(m, "VOID", "clears the fault and voids the round")
        return _p_fault_cleared(m, {**sup, "void": True})
    if state == S.SIDE_WAGERS:
        sup = _panel_supervisor(m, "VOID", "voids the RNG draw")
        return _p_rng_void(m, {**sup, "reason": "draw voided at the dealer panel"})
    sup = _panel_supervisor(m, "VOID", "closes the table")
    return _p_table_closed(m, sup)


def _p_panel_next(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The dealer panel's NEXT button: the step the state waits on from the dealer; with the
    supervisor key switch on, the supervisor's step where the state waits on a supervisor."""
    state = m.state
    if state == S.CLOSED:
        return _p_table_opened(m, _panel_supervisor(m, "NEXT", "opens the table"))
    if state == S.JACKPOT_PENDING:
        sup = _panel_supervisor(m, "NEXT", "validates the pending hit")
        return _p_hit_validated(m, {**sup, "position": _first_pending(m)})
    if state == S.FAULT:
        return _p_fault_cleared(m, _panel_supervisor(m, "NEXT", "clears the fault"))
    if state == S.LOCKED_OUT:
        return _p_chips_confirmed(m, d)
    if state == S.SIDE_WAGERS:
        return _p_side_wagers_settled(m, d)
    if state == S.DEALING:
        return _p_three_card_settled(m, d)
    return _p_play_complete(m, d)


def _p_shaker_lid(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    lifted = _field(d, "lifted")
    if not isinstance(lifted, bool):
        raise _Reject("lifted: must be true or false")
    if m.state != S.DICE or not lifted or m._r.shakes >= 3:
        return S.INTERNAL, lambda: None

    def reshake() -> None:
        shakes = m._r.shakes
        m._r.shakes = 0
        m._emit(
            {
                "type": "alert",
                "to": "dealer",
                "code": "RESHAKE_REQUIRED",
                "detail": f"lid lifted after {shakes} shake(s): cover and shake at least three "
                "times (NY 5324.41(h)(8)(i))",
            }
        )

    return S.INTERNAL, reshake


def _p_informational(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    return S.INTERNAL, lambda: None


def _p_power_up(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The reconcile event after a restart (the owner applies ``outputs()`` next). The requests
    ``outputs()`` issues again (shuffle, draw_rng) get a fresh deadline from now. A dispense is
    never issued again: a deal cut by a restart cannot be trusted, so its deadline falls due at
    once with the fault DEAL_INTERRUPTED, and clearing it voids the round (NJ 13:69E-1.39B(h))."""
    state = m.state

    def act() -> None:
        if state in (S.SHUFFLING, S.RNG):
            m._deadline = m._deadline_for(state)
        elif state == S.DEALING and m._r.stage != "three_dealt":
            # (in "three_dealt" no dispense is outstanding: the dealer settles the three-card
            # bonus and the fours are dispensed only after three_card_settled, (n)(6)-(7))
            m._deadline = [
                m._now,
                "DEAL_INTERRUPTED",
                "shoe",
                "the controller restarted while the shoe was dealing",
            ]

    return S.INTERNAL, act
