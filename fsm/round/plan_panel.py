"""Planners for the dealer panel and the informational inputs: NEXT, VOID and the supervisor key
switch, the shaker's lid sensor, power-up and device recovery.

Must never let NEXT or VOID take a supervisor's step without the key switch on.
"""

from __future__ import annotations

from collections.abc import Callable

from fsm.round import states as S
from fsm.round.checks import Plan, _Reject
from fsm.round.context import Round
from fsm.round.effects import Alert
from fsm.round.events import (
    FaultCleared,
    HitValidated,
    HitVoided,
    KeyHolder,
    RngActivated,
    RngVoid,
    ShakerLid,
    SupervisorKey,
    TableClosed,
    TableOpened,
)
from fsm.round.plan_betting import _p_chips_confirmed
from fsm.round.plan_deal import (
    _p_hit_validated,
    _p_hit_voided,
    _p_play_complete,
    _p_three_card_settled,
)
from fsm.round.plan_faults import _p_fault_cleared
from fsm.round.plan_start import _p_rng_activated, _p_rng_void, _p_side_wagers_settled
from fsm.round.plan_table import _p_table_closed, _p_table_opened

# Who the journal names for a supervisor's step taken at the dealer panel: the person holding the
# turned key when an identifying input named them (``key_holder``: the console's ``key-holder``
# request after their PIN, or a badge reader); the key switch alone names no one, and then the
# journal says ``panel-key`` (the casino's key-control log says who held the key). ``via`` says
# it was the panel either way.
PANEL_SUPERVISOR = "panel-key"
PANEL = "panel"


def _panel_supervisor(m: Round, button: str, what: str) -> str:
    if not m.key_on:
        raise _Reject(f"{button} here {what}: it needs the supervisor key switch on")
    return m.key_holder or PANEL_SUPERVISOR


def _first_pending(m: Round) -> int:
    if not m.r.pending:
        raise _Reject("no hit awaits validation")
    return int(m.r.pending[0]["position"])


def _p_supervisor_key(m: Round, d: SupervisorKey) -> Plan:
    on = d.on

    def act() -> None:
        m.key_on = on
        if not on:
            m.key_holder = None  # the next turn of the key names no one until named again

    return S.INTERNAL, act


def _p_key_holder(m: Round, d: KeyHolder) -> Plan:
    """The person holding the turned key, identified by the input that posts this (the console
    checked their PIN): panel steps name them until the key is turned off."""
    if not m.key_on:
        raise _Reject("key_holder: the supervisor key switch is off; turn it on first")
    who = d.supervisor

    def act() -> None:
        m.key_holder = who

    return S.INTERNAL, act


def _void_hit(m: Round) -> Plan:
    sup = _panel_supervisor(m, "VOID", "voids the pending hit")
    reason = "voided at the dealer panel"
    return _p_hit_voided(m, HitVoided(_first_pending(m), sup, reason, PANEL))


def _void_faulted_round(m: Round) -> Plan:
    sup = _panel_supervisor(m, "VOID", "clears the fault and voids the round")
    return _p_fault_cleared(m, FaultCleared(sup, True, PANEL))


def _void_draw(m: Round) -> Plan:
    sup = _panel_supervisor(m, "VOID", "voids the RNG draw")
    return _p_rng_void(m, RngVoid(sup, "draw voided at the dealer panel", PANEL))


def _close_table(m: Round) -> Plan:
    sup = _panel_supervisor(m, "VOID", "closes the table")
    return _p_table_closed(m, TableClosed(sup, PANEL))


def _open_table(m: Round) -> Plan:
    sup = _panel_supervisor(m, "NEXT", "opens the table")
    return _p_table_opened(m, TableOpened(sup, PANEL))


def _validate_hit(m: Round) -> Plan:
    sup = _panel_supervisor(m, "NEXT", "validates the pending hit")
    return _p_hit_validated(m, HitValidated(_first_pending(m), sup, PANEL))


def _clear_fault(m: Round) -> Plan:
    sup = _panel_supervisor(m, "NEXT", "clears the fault")
    return _p_fault_cleared(m, FaultCleared(sup, False, PANEL))


def _next_locked_out(m: Round) -> Plan:
    """NEXT in LockedOut: the chip count, then (with an RNG) the RNG's activation by the dealer
    (NY 5324.41(k)(2), (h)(8)(ii))."""
    if not m.r.counted:
        return _p_chips_confirmed(m, None)
    return _p_rng_activated(m, RngActivated("dealer", PANEL))


# What the panel's buttons mean, declared once per state (the states a button is legal in are
# the sources of its transitions in states.py; a test checks the two agree).
PANEL_VOID: dict[str, Callable[[Round], Plan]] = {
    S.JACKPOT_PENDING: _void_hit,  # NY (k)(3)
    S.FAULT: _void_faulted_round,
    S.SIDE_WAGERS: _void_draw,  # the only way to a second draw
    S.BETTING: _close_table,  # refused while wagers are lit
    S.SHUFFLING: _close_table,
}
PANEL_NEXT: dict[str, Callable[[Round], Plan]] = {
    S.CLOSED: _open_table,
    S.JACKPOT_PENDING: _validate_hit,
    S.FAULT: _clear_fault,
    S.LOCKED_OUT: lambda m: _next_locked_out(m),
    S.SIDE_WAGERS: lambda m: _p_side_wagers_settled(m, None),
    S.DEALING: lambda m: _p_three_card_settled(m, None),
    S.PLAY: lambda m: _p_play_complete(m, None),
}


def _p_panel_void(m: Round, d: object) -> Plan:
    """The dealer panel's VOID button, a supervisor's step (key switch on): void the pending hit
    (NY (k)(3)), void the faulted round by rule, void the RNG draw so it is drawn again (the only
    way to a second draw), or close a table with no round in progress."""
    return PANEL_VOID[m.state](m)


def _p_panel_next(m: Round, d: object) -> Plan:
    """The dealer panel's NEXT button: the step the state waits on from the dealer; with the
    supervisor key switch on, the supervisor's step where the state waits on a supervisor."""
    return PANEL_NEXT[m.state](m)


def _p_shaker_lid(m: Round, d: ShakerLid) -> Plan:
    lifted = d.lifted
    if m.state != S.DICE or not lifted or m.r.shakes >= 3:
        return S.INTERNAL, lambda: None

    def reshake() -> None:
        shakes = m.r.shakes
        m.r.shakes = 0
        m.emit(
            Alert(
                "dealer",
                "RESHAKE_REQUIRED",
                f"lid lifted after {shakes} shake(s): cover and shake at least three "
                "times (NY 5324.41(h)(8)(i))",
            )
        )

    return S.INTERNAL, reshake


def _p_informational(m: Round, d: object) -> Plan:
    return S.INTERNAL, lambda: None


def _p_power_up(m: Round, d: object) -> Plan:
    """The reconcile event after a restart (the owner applies ``outputs()`` next). The requests
    ``outputs()`` issues again (shuffle, draw_rng) get a fresh deadline from now. A dispense is
    never issued again: a deal cut by a restart cannot be trusted, so its deadline falls due at
    once with the fault DEAL_INTERRUPTED, and clearing it voids the round (NJ 13:69E-1.39B(h))."""
    state = m.state

    def act() -> None:
        if state in (S.SHUFFLING, S.RNG):
            m.deadline = m.deadline_for(state)
        elif state == S.DEALING and m.r.stage != "three_dealt":
            # (in "three_dealt" no dispense is outstanding: the dealer settles the three-card
            # bonus and the fours are dispensed only after three_card_settled, (n)(6)-(7))
            m.deadline = [
                m.now,
                "DEAL_INTERRUPTED",
                "shoe",
                "the controller restarted while the shoe was dealing",
            ]

    return S.INTERNAL, act
