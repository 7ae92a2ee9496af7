"""Planners for faults: raised from any state, cleared by a supervisor so the round resumes or is
voided by rule with its contributions reversed, and deadlines passed (NJ 13:69E-1.39B).

A fault its device reports (``held``: a jam, an empty shoe, a lost link) stays in the per-device
fault set until that device reports healthy (``device_recovered``); only then may a supervisor
clear it. Must never clear a fault without a supervisor.
"""

from __future__ import annotations

from typing import Any

from fsm.round import states as S
from fsm.round.catalogue import ALWAYS_VOID, VOIDABLE
from fsm.round.checks import Plan, _Reject
from fsm.round.context import Round
from fsm.round.effects import FaultClearedEffect
from fsm.round.events import Deadline, DeviceRecovered, FaultCleared, FaultRaised

# the states after the deal: Play and Settlement are not voidable, a fault there resumes
_DEALT = frozenset({S.PLAY, S.SETTLEMENT, S.JACKPOT_PENDING, S.ROUND_COMPLETE})


def _p_fault_raised(m: Round, d: FaultRaised) -> Plan:
    code = d.code[:64]
    device = d.device[:64]
    detail = d.detail
    route = S.INTERNAL if m.state == S.FAULT else S.FAULT
    here = m.state
    return route, lambda: m.enter_fault(code, device, detail[:200], here, d.held)


def held_faults(m: Round) -> list[dict[str, Any]]:
    """The faults of the per-device fault set still reported by their device."""
    if m.fault is None:
        return []
    return [f for f in m.fault["faults"] if f.get("held")]


def _p_device_recovered(m: Round, d: DeviceRecovered) -> Plan:
    """A device reports healthy: its held faults (of ``code``, or all) leave the fault set; the
    supervisor may then clear the fault. Anywhere else informational."""
    gone = [f for f in held_faults(m) if f["device"] == d.device and d.code in (None, f["code"])]

    def healthy() -> None:
        for f in gone:
            f["held"] = False

    return S.INTERNAL, healthy


def _p_fault_cleared(m: Round, d: FaultCleared) -> Plan:
    sup = d.supervisor
    void = d.void
    assert m.fault is not None
    held = held_faults(m)
    if held:  # as gaming platforms keep it: a fault clears only when its device is healthy
        f = held[0]
        raise _Reject(
            f"{f['code']}: the {f['device']} still reports it; the fault clears once the "
            f"{f['device']} reports healthy"
        )
    where = str(m.fault["interrupted"])
    r = m.r
    if void and where not in VOIDABLE:
        if where in _DEALT:
            raise _Reject(
                f"void: the round cannot be voided from {where}: the cards are dealt, so the "
                "round resumes (NY 5324.41(k)(3), (g)(9)); clear the fault without void"
            )
        raise _Reject(f"void: no round can be voided from {where}; clear the fault without void")
    if void or where in ALWAYS_VOID:
        reason = f"fault cleared by {sup}: round voided (interrupted in {where})"

        def voided() -> None:
            m.fault = None
            m.emit(FaultClearedEffect(sup, "voided", d.via))
            m.void_round(reason[:200], sup)

        return S.SHUFFLING, voided
    target = where
    if where == S.RNG and r.rng_value is not None:
        target = m.after_rng_route()

    def resume() -> None:
        m.fault = None
        m.emit(FaultClearedEffect(sup, "resumed", d.via))
        if where == S.DICE:
            r.shakes = 0  # the dice are shaken again after a fault
        if target != where:
            m.set_start(int(r.rng_value or 0))

    return target, resume


def _p_deadline(m: Round, d: Deadline) -> Plan:
    dl = m.deadline
    if dl is None:
        raise _Reject("no deadline in this state")
    if m.now < int(dl[0]):
        raise _Reject(f"deadline not reached: due at {dl[0]}")
    code, device = str(dl[1]), str(dl[2])
    detail = str(dl[3]) if len(dl) > 3 else f"{device} did not answer in time"
    here = m.state
    return S.FAULT, lambda: m.enter_fault(code, device, detail, here)
