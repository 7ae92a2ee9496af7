"""Planners for the starting position and the 1-7 side wager: the RNG's activation by the dealer
or the bank, the draw and its supervised void, the dice shaker (three shakes, re-shake when the
bank lifts the lid), the dealer's dice total, and side wagers closed before the RNG is activated
and settled on the displayed number before any card (NY 5324.41(h)(8), (h)(10), (j);
NJ 13:69F-11.8C; NJ 13:69E-1.28G).

Must never draw a random number itself (the owner's CSPRNG draw arrives as ``rng_drawn``), accept
or change a side wager once the RNG is activated, or void a displayed number a side wager rides on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsm.round import states as S
from fsm.round.checks import Plan, _invalid, _Reject
from fsm.round.constants import AREAS
from fsm.round.context import Round
from fsm.round.effects import Alert
from fsm.round.events import (
    DicePositionEntered,
    LidLiftedByBank,
    RngActivated,
    RngDrawn,
    RngVoid,
    ShakeDetected,
    SideWagers,
)
from fsm.round.position import dice_number


def _p_rng_activated(m: Round, d: RngActivated) -> Plan:
    """NY 5324.41(h)(8)(ii), (h)(10)(ii): the RNG is activated by a person, after the chip count
    ((k)(2)); with the 1-7 side wager only once the side wagers are closed (an explicit list,
    possibly empty), since they are made before the activation ((j)(2)(i), NJ 11.8C(b)1)."""
    r = m.r
    if not r.counted:
        raise _Reject(
            "the chip count is not confirmed: confirm it before the RNG is activated "
            "(NY 5324.41(k)(2))"
        )
    if m.config.side_wager_offered and r.side_bets is None:
        raise _Reject(
            "the 1-7 side wagers are open: enter them (side_wagers, an empty list when none) "
            "before the RNG is activated (NY 5324.41(j)(2)(i), NJ 13:69F-11.8C(b)1)"
        )
    if d.by == "bank" and m.bank.current is None:
        raise _Reject("by: no player banks this round; the dealer activates the RNG")

    def act() -> None:
        r.rng_activated_by = d.by

    return S.RNG, act


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
    """The supervisor's void of a draw, so it is drawn again. Never of a number displayed while
    1-7 side wagers are recorded: it decides them, and is final (NY 5324.41(j)(2)(iii),
    NJ 13:69F-11.8C(b)3, NJ 13:69E-1.28G(c)). A draw that failed before it was displayed (no
    value, or a value that arrived while the table was in fault) is drawn again without a void."""
    sup, reason = d.supervisor, d.reason
    r = m.r
    if r.side_bets and r.start_number is not None:
        raise _Reject(
            f"the number {r.start_number} is displayed and {len(r.side_bets)} 1-7 side "
            "wager(s) ride on it: a displayed number is final (NY 5324.41(j)(2)(iii), "
            "NJ 13:69F-11.8C(b)3, NJ 13:69E-1.28G(c))"
        )

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


def _p_side_wagers(m: Round, d: SideWagers) -> Plan:
    """In LockedOut, before the RNG is activated ((j)(2)(i)): the bets are recorded (an empty
    list: none placed), replaceable until the activation closes them; they are settled on the
    displayed number when the dealer confirms (``side_wagers_settled``). After the activation no
    side wager is accepted (the machine refuses it as late)."""
    if not m.config.side_wager_offered:
        raise _Reject("the 1-7 side wager is not offered at this table (game.side_wager)")
    bets = _parse_bets(d)
    r = m.r

    def record() -> None:
        r.side_bets = [list(b) for b in bets]

    return S.INTERNAL, record


def _p_side_wagers_settled(m: Round, d: object) -> Plan:
    """The dealer collected the losers and paid the winners (NY (j)(2)(iv)-(v)): the recorded
    side wagers are settled on the displayed number, then the cards are dealt. Never with none
    recorded (the activation required them)."""
    r = m.r
    if r.side_bets is None:
        raise _Reject(
            "no 1-7 side wagers were recorded before the RNG was activated: nothing to settle "
            "(NY 5324.41(j)(2)(i))"
        )
    return S.DEALING, m.settle_side_wagers


_SEAT_KEYS = {"dealer": 0, "0": 0, **{str(a): a for a in range(1, AREAS + 1)}}
