"""Planners for faults: raised from any state, cleared by a supervisor so the round resumes or is
voided by rule with its contributions reversed, and deadlines passed (NJ 13:69E-1.39B).

Must never clear a fault without a supervisor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from fsm.round import states as S
from fsm.round.catalogue import ALWAYS_VOID, VOIDABLE
from fsm.round.checks import Plan, _Reject, _text
from fsm.round.events import JSON

if TYPE_CHECKING:
    from fsm.round.machine import RoundMachine


def _p_fault_raised(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    code = _text(d, "code")[:64]
    device = _text(d, "device")[:64]
    detail = d.get("detail", "")
    if not isinstance(detail, str):
        raise _Reject("detail: must be a string")
    route = S.INTERNAL if m.state == S.FAULT else S.FAULT
    here = m.state
    return route, lambda: m._enter_fault(code, device, detail[:200], here)


def _p_fault_cleared(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    sup = _text(d, "supervisor")
    void = d.get("void", False)
    if not isinstance(void, bool):
        raise _Reject("void: must be true or false")
    assert m._fault is not None
    where = str(m._fault["interrupted"])
    r = m._r
    if void and where not in VOIDABLE:
        raise _Reject(
            f"void: the round cannot be voided from {where}; progressive wagers were settled"
        )
    if void or where in ALWAYS_VOID:
        reason = f"fault cleared by {sup}: round voided (interrupted in {where})"

        def voided() -> None:
            m._fault = None
            m._void_round(reason[:200])

        return S.SHUFFLING, voided
    target = where
    if where == S.RNG and r.rng_value is not None:
        target = m._after_rng_route()

    def resume() -> None:
        m._fault = None
        if where == S.DICE:
            r.shakes = 0  # the dice are shaken again after a fault
        if target != where:
            m._set_start(int(r.rng_value or 0))

    return target, resume


def _p_deadline(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    dl = m._deadline
    if dl is None:
        raise _Reject("no deadline in this state")
    if m._now < int(dl[0]):
        raise _Reject(f"deadline not reached: due at {dl[0]}")
    code, device = str(dl[1]), str(dl[2])
    detail = str(dl[3]) if len(dl) > 3 else f"{device} did not answer in time"
    here = m.state
    return S.FAULT, lambda: m._enter_fault(code, device, detail, here)
