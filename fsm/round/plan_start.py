"""Planners for the starting position and the 1-7 side wager: the RNG draw and its supervised
void, the dice shaker (three shakes, re-shake when the bank lifts the lid), the dealer's dice total,
and side wagers settled before any card (NY 5324.41(h)(8), (j); NJ 13:69F-11.8C).

Must never draw a random number itself: the owner's CSPRNG draw arrives as ``rng_drawn``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsm.round import states as S
from fsm.round.checks import Plan, _invalid, _Reject
from fsm.round.constants import AREAS
from fsm.round.context import Round
from fsm.round.effects import Alert, SideWagerResult, SideWagerSettled
from fsm.round.events import (
    DicePositionEntered,
    LidLiftedByBank,
    RngDrawn,
    RngVoid,
    ShakeDetected,
    SideWagers,
)
from fsm.round.position import dice_number
from fsm.rules.paytables import side_wager_win_cents


def _p_rng_drawn(m: Round, d: RngDrawn) -> Plan:
    value = d.value
    r = m.r
    if m.state == S.FAULT:
        if m.fault is None or m.fault["interrupted"] != S.RNG or r.rng_value is not None:
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
        m.set_start(value)

    return m.after_rng_route(), act


def _p_rng_void(m: Round, d: RngVoid) -> Plan:
    sup, reason = d.supervisor, d.reason
    r = m.r

    def act() -> None:
        r.rng_voids.append({"value": r.rng_value, "supervisor": sup, "reason": reason})
        r.rng_value = None
        r.start_number = None
        r.start_seat = None

    return S.RNG, act


def _p_shake_detected(m: Round, d: ShakeDetected) -> Plan:
    def act() -> None:
        m.r.shakes += 1

    return S.INTERNAL, act


def _p_lid_lifted_by_bank(m: Round, d: LidLiftedByBank) -> Plan:
    if m.bank.current is None:
        raise _Reject("no player banks this round")

    def act() -> None:
        m.r.shakes = 0
        m.emit(
            Alert(
                "dealer",
                "RESHAKE_REQUIRED",
                "the bank lifted the lid: cover and re-shake (NY 5324.41(h)(8)(i))",
            )
        )

    return S.INTERNAL, act


def _p_dice_position_entered(m: Round, d: DicePositionEntered) -> Plan:
    total = d.total
    if m.r.shakes < 3:
        raise _Reject(
            f"the shaker was shaken {m.r.shakes} time(s); at least three before the lid is "
            "removed (NY 5324.41(h)(8)(i), (h)(10)(i))"
        )
    return S.DEALING, lambda: m.set_start(dice_number(total))


def _parse_bets(d: SideWagers) -> list[tuple[int, int, int]]:
    raw = d.bets
    if not isinstance(raw, list):
        raise _invalid("bets: must be a list of {position, number, cents}")
    bets: list[tuple[int, int, int]] = []
    for i, b in enumerate(raw):
        if not isinstance(b, Mapping):
            raise _invalid(f"bets[{i}]: must be a mapping with position, number, cents")
        extra = set(b) - {"position", "number", "cents"}
        if extra:
            raise _invalid(f"bets[{i}].{sorted(extra)[0]}: unknown key")
        position = _bet_int(b, i, "position", 1, AREAS)
        bets.append((position, _bet_int(b, i, "number", 1, 7), _bet_int(b, i, "cents", 1, None)))
    return bets


def _bet_int(b: Mapping[str, Any], i: int, key: str, lo: int, hi: int | None) -> int:
    if key not in b:
        raise _invalid(f"bets[{i}].{key}: required")
    v = b[key]
    if isinstance(v, bool) or not isinstance(v, int):
        raise _invalid(f"bets[{i}].{key}: must be an integer, not {v!r}"[:120])
    if v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise _invalid(f"bets[{i}].{key}: must be {rng}, not {v}")
    return v


def _settle_side_wagers(m: Round, bets: list[tuple[int, int, int]]) -> None:
    """NY 5324.41(j)(2)(iii)-(vi): a bet on the drawn number wins at the configured odds,
    rounded down to the dollar; every other bet loses."""
    number = m.r.rng_value
    odds = m.config.side_wager_odds_fraction
    results = [
        SideWagerResult(p, n, c, side_wager_win_cents(c, odds) if n == number else 0)
        for p, n, c in bets
    ]
    m.r.side_results = [r.fields_json() for r in results]
    m.emit(SideWagerSettled(int(number or 0), tuple(results)))


def _p_side_wagers(m: Round, d: SideWagers) -> Plan:
    """In LockedOut (before the RNG is activated, (j)(2)(i)): the bets are recorded and settled
    when the dealer confirms after the draw. In SideWagers: recorded and settled at once, unless
    bets were recorded before the draw (they cannot be changed once the number is known)."""
    if not m.config.side_wager_offered:
        raise _Reject("the 1-7 side wager is not offered at this table (game.side_wager)")
    bets = _parse_bets(d)
    r = m.r
    if m.state == S.LOCKED_OUT:

        def record() -> None:
            r.side_bets = [list(b) for b in bets]

        return S.INTERNAL, record
    if r.side_bets is not None:
        raise _Reject(
            "the side wagers were recorded before the draw; confirm with side_wagers_settled"
        )
    return S.DEALING, lambda: _settle_side_wagers(m, bets)


def _p_side_wagers_settled(m: Round, d: object) -> Plan:
    r = m.r

    def act() -> None:
        if r.side_bets is not None:
            _settle_side_wagers(m, [(b[0], b[1], b[2]) for b in r.side_bets])
        else:
            r.side_results = []

    return S.DEALING, act


_SEAT_KEYS = {"dealer": 0, "0": 0, **{str(a): a for a in range(1, AREAS + 1)}}
