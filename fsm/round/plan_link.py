"""Planners for the linked progressive (docs/link.md; NY 5321.18(b),(c), NJ 13:69E-1.39B(d),(e)):
the link controller reached or lost, and the pool's payout of a pending hit locked by it.

A linked wager is unplayable while the link controller cannot be reached: the acceptors are not
armed and a chip is refused (`Round.floor_refusal`); the base game and the table-local wagers go
on. A pending hit of the linked level is paid only once the controller has locked its amount.
Must never do I/O.
"""

from __future__ import annotations

from typing import Any

from fsm.round import states as S
from fsm.round.checks import Plan, _Reject
from fsm.round.context import Round
from fsm.round.effects import LinkedWager
from fsm.round.events import LinkHitLocked, LinkState


def _p_link_state(m: Round, e: LinkState) -> Plan:
    """The link controller lost (``up`` false) or confirmed again: linked wagers refused,
    acceptors not armed, until the controller confirms it holds the table's contributions. A
    change of the linked wager's playability is the ``linked_wager`` effect (the floor link
    reports it over SAS)."""
    if e.level not in m.meters:
        raise _Reject(f"level: no level {e.level!r}; levels: {', '.join(m.meters)}"[:200])

    def act() -> None:
        before = _playability(m.link)
        if not e.linked:
            m.link = None
        else:
            m.link = {
                "pool": e.pool,
                "level": e.level,
                "down": not e.up,
                "confirmed_seq": e.confirmed_seq if e.up else (m.link or {}).get("confirmed_seq"),
            }
        after = _playability(m.link)
        if after == before:  # a change only: down after up, up after down, linked, unlinked
            return
        if after is not None:
            m.emit(LinkedWager(*after, linked=True))
        elif before is not None:  # unlinked: the table's own progressive again, playable
            m.emit(LinkedWager(before[0], before[1], playable=True, linked=False))

    return S.INTERNAL, act


def _playability(link: dict[str, Any] | None) -> tuple[str, str, bool] | None:
    """(pool, level, playable) of the linked wager; None: not linked."""
    if link is None:
        return None
    return str(link.get("pool")), str(link.get("level")), not link.get("down")


def _p_link_hit_locked(m: Round, e: LinkHitLocked) -> Plan:
    """The pool's amount for a pending hit of the linked level, locked by the controller."""
    if m.link is None or m.link.get("level") != e.level or m.link.get("pool") != e.pool:
        raise _Reject(f"level {e.level!r} is not linked to pool {e.pool!r} at this table")
    hit = next((p for p in m.r.pending if p["position"] == e.position), None)
    if hit is None or hit["level"] != e.level:
        raise _Reject(f"position {e.position}: no pending hit of level {e.level}")
    if e.line is not None and e.line != hit["line"]:  # a lock of the hit a supervisor voided
        raise _Reject(f"position {e.position}: the hit pending is {hit['line']}, not {e.line}")
    if "locked_cents" in hit:
        raise _Reject(f"position {e.position}: already locked at {hit['locked_cents']} cents")

    def act() -> None:
        hit["locked_cents"] = e.cents
        hit["lock_order"] = e.order

    return S.INTERNAL, act
