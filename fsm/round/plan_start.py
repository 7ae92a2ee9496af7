"""Planners for the starting position and the 1-7 side wager: the RNG draw and its supervised
void, the dice shaker (three shakes, re-shake when the bank lifts the lid), the dealer's dice total,
and side wagers settled before any card (NY 5324.41(h)(8), (j); NJ 13:69F-11.8C).

Must never draw a random number itself: the owner's CSPRNG draw arrives as ``rng_drawn``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from fsm.round import states as S
from fsm.round.catalogue import AREAS
from fsm.round.checks import Plan, _field, _int, _position, _Reject, _text
from fsm.round.events import JSON
from fsm.round.position import (
    dice_number,
)
from fsm.rules.paytables import side_wager_win_cents

if TYPE_CHECKING:
    from fsm.round.machine import RoundMachine


def _p_rng_drawn(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    value = _int(d, "value", 1, 7)
    r = m._r
    if m.state == S.FAULT:
        if m._fault is None or m._fault["interrupted"] != S.RNG or r.rng_value is not None:
            raise _Reject("no random number draw is outstanding")

        def keep() -> None:
            r.rng_value = value
            r.rng_draws += 1

        return S.INTERNAL, keep
    if r.rng_value is not None:
        raise _Reject("one draw per round: a redraw only after a supervisor's rng_void")

    def act() -> None:
        r.rng_value = value
        r.rng_draws += 1
        m._set_start(value)

    return m._after_rng_route(), act


def _p_rng_void(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    sup = _text(d, "supervisor")
    reason = _text(d, "reason")
    r = m._r

    def act() -> None:
        r.rng_voids.append({"value": r.rng_value, "supervisor": sup, "reason": reason})
        r.rng_value = None
        r.start_number = None
        r.start_seat = None

    return S.RNG, act


def _p_shake_detected(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    def act() -> None:
        m._r.shakes += 1

    return S.INTERNAL, act


def _p_lid_lifted_by_bank(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    if m._bank.current is None:
        raise _Reject("no player banks this round")

    def act() -> None:
        m._r.shakes = 0
        m._emit(
            {
                "type": "alert",
                "to": "dealer",
                "code": "RESHAKE_REQUIRED",
                "detail": "the bank lifted the lid: cover and re-shake (NY 5324.41(h)(8)(i))",
            }
        )

    return S.INTERNAL, act


def _p_dice_position_entered(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    total = _int(d, "total", 3, 18)
    if m._r.shakes < 3:
        raise _Reject(
            f"the shaker was shaken {m._r.shakes} time(s); at least three before the lid is "
            "removed (NY 5324.41(h)(8)(i), (h)(10)(i))"
        )
    return S.DEALING, lambda: m._set_start(dice_number(total))


def _parse_bets(d: Mapping[str, JSON]) -> list[tuple[int, int, int]]:
    raw = _field(d, "bets")
    if not isinstance(raw, list):
        raise _Reject("bets: must be a list of {position, number, cents}")
    bets: list[tuple[int, int, int]] = []
    for i, b in enumerate(raw):
        if not isinstance(b, Mapping):
            raise _Reject(f"bets[{i}]: must be a mapping with position, number, cents")
        extra = set(b) - {"position", "number", "cents"}
        if extra:
            raise _Reject(f"bets[{i}].{sorted(extra)[0]}: unknown key")
        try:
            bets.append((_position(b), _int(b, "number", 1, 7), _int(b, "cents", 1)))
        except _Reject as e:
            raise _Reject(f"bets[{i}].{e}") from None
    return bets


def _settle_side_wagers(m: RoundMachine, bets: list[tuple[int, int, int]]) -> None:
    """NY 5324.41(j)(2)(iii)-(vi): a bet on the drawn number wins at the configured odds,
    rounded down to the dollar; every other bet loses."""
    number = m._r.rng_value
    odds = m._config.side_wager_odds_fraction
    results = [
        {
            "position": p,
            "number": n,
            "cents": c,
            "payout_cents": side_wager_win_cents(c, odds) if n == number else 0,
        }
        for p, n, c in bets
    ]
    m._r.side_results = results
    m._emit({"type": "side_wager_settled", "number": number, "results": results})


def _p_side_wagers(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """In LockedOut (before the RNG is activated, (j)(2)(i)): the bets are recorded and settled
    when the dealer confirms after the draw. In SideWagers: recorded and settled at once, unless
    bets were recorded before the draw (they cannot be changed once the number is known)."""
    if not m._config.side_wager_offered:
        raise _Reject("the 1-7 side wager is not offered at this table (game.side_wager)")
    bets = _parse_bets(d)
    r = m._r
    if m.state == S.LOCKED_OUT:

        def record() -> None:
            r.side_bets = [list(b) for b in bets]

        return S.INTERNAL, record
    if r.side_bets is not None:
        raise _Reject(
            "the side wagers were recorded before the draw; confirm with side_wagers_settled"
        )
    return S.DEALING, lambda: _settle_side_wagers(m, bets)


def _p_side_wagers_settled(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    r = m._r

    def act() -> None:
        if r.side_bets is not None:
            _settle_side_wagers(m, [(b[0], b[1], b[2]) for b in r.side_bets])
        else:
            r.side_results = []

    return S.DEALING, act


_SEAT_KEYS = {"dealer": 0, "0": 0, **{str(a): a for a in range(1, AREAS + 1)}}
