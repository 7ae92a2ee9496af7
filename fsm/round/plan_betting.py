"""Planners for betting: the shuffle's deck count, chips at the acceptors, the player bank, the
lock-out, the chip count and the pai gow positions of the three-card bonus (NY 5324.41(h), (k)(2),
(n)(8), (k)(1)).

Must never do I/O; a chip after the lock-out is refused, never counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fsm.round import states as S
from fsm.round.checks import Plan, _invalid, _Reject
from fsm.round.constants import AREAS
from fsm.round.context import Round
from fsm.round.effects import Alert, Bank, Wagers
from fsm.round.events import (
    BankAccepted,
    BankReleased,
    ChipDetected,
    ChipsMismatch,
    ChipsResolved,
    LockoutPressed,
    PaiGowWagers,
    ShuffleComplete,
)
from fsm.rules.cards import DECK_SIZE


def _p_shuffle_complete(m: Round, e: ShuffleComplete) -> Plan:
    count = e.count
    if count != DECK_SIZE:

        def fault() -> None:
            m.enter_fault(
                f"DECK_COUNT_{count}",
                "shuffler",
                f"the shuffler counted {count} cards, 53 required; the deck must not deal",
                S.SHUFFLING,
            )

        return S.FAULT, fault

    def act() -> None:
        m.rounds_since_shuffle = 0
        if m.config.bank_start_of_game == "every_shuffle":
            m.bank.new_game()
        m.begin_round()

    return S.BETTING, act


def _p_chip_detected(m: Round, e: ChipDetected) -> Plan:
    area = e.position
    refusal = m.floor_refusal()
    if refusal:
        raise _Reject(f"progressive wagers are refused: {refusal}", "not_armed", area)
    if area in m.r.wagers:
        raise _Reject(
            f"position {area} is already lit: one progressive wager per acceptor",
            "already_lit",
            area,
        )
    cents = m.config.progressive_wager_cents

    def act() -> None:
        m.r.wagers[area] = cents
        m.emit(Wagers(tuple(sorted(m.r.wagers)), cents))

    return S.INTERNAL, act


def _p_bank_accepted(m: Round, e: BankAccepted) -> Plan:
    if not m.config.player_banking:
        raise _Reject("player banking is not offered at this table (game.player_banking)")
    area = e.position
    why = m.bank.refusal(area)
    if why:
        raise _Reject(why)

    def act() -> None:
        m.bank.current = area
        m.emit(Bank(area))

    return S.INTERNAL, act


def _p_bank_released(m: Round, e: BankReleased) -> Plan:
    if m.bank.current is None:
        raise _Reject("no player banks this round")

    def act() -> None:
        m.bank.current = None
        m.emit(Bank(None))

    return S.INTERNAL, act


def _p_lockout_pressed(m: Round, e: LockoutPressed) -> Plan:
    return S.LOCKED_OUT, lambda: None


def _three_card_ready(m: Round, wagered: Iterable[int]) -> None:
    """With the three-card bonus the deal needs the dealer's pai gow positions, and every
    progressive wager must be at one of them (NY 5324.41(k)(1), (n)(4)-(5))."""
    if not m.config.three_card_bonus:
        return
    pai_gow = m.r.pai_gow
    if not pai_gow:
        raise _Reject(
            "pai_gow_wagers: enter the positions holding a pai gow wager before the deal; the "
            "stacks go only to them (NY 5324.41(n)(4), (n)(5))"
        )
    outside = sorted(set(wagered) - set(pai_gow))
    if outside:
        raise _Reject(
            f"position {outside[0]}: a progressive wager without a pai gow wager; only a player "
            "with a pai gow wager may make one (NY 5324.41(k)(1)): enter it in pai_gow_wagers "
            "or resolve the wagers"
        )
    _bank_dealt(m, pai_gow, "pai_gow_wagers")


def _bank_dealt(m: Round, positions: Iterable[int], key: str) -> None:
    """A player bank plays a hand from its own area, so with the three-card bonus its area is
    among the pai gow positions the stacks go to (NY 5324.41(h)(6), (n)(4)-(5))."""
    bank = m.bank.current
    if bank is not None and bank not in set(positions):
        raise _Reject(
            f"{key}: area {bank} banks this round and is dealt a hand: include it "
            "(NY 5324.41(h)(6), (n)(4)-(5))"
        )


def _after_count(m: Round) -> None:
    """The chip count is confirmed: contribute; with the three-card bonus the starting position
    is known at once (no RNG, no dice, (n)(4))."""
    m.contribute()
    m.r.counted = True
    if m.config.three_card_bonus:
        m.set_start_three_card()


def _p_pai_gow_wagers(m: Round, e: PaiGowWagers) -> Plan:
    """The dealer enters the betting areas holding a pai gow wager (the controller does not see
    the main game's chips). Only with the three-card bonus, where the stacks go to them alone
    (NY 5324.41(n)(4)-(5), (n)(7)(ii)); replaceable until the chip count is confirmed. Every
    lit progressive wager must be among them (NY 5324.41(k)(1))."""
    if not m.config.three_card_bonus:
        raise _Reject(
            "pai gow positions are entered only with the three-card bonus (game.three_card_bonus)"
        )
    raw: Any = e.positions
    if not isinstance(raw, list) or not raw:
        raise _invalid("positions: must be a non-empty list of betting areas 1..6")
    positions: list[int] = []
    for i, p in enumerate(raw):
        if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= AREAS:
            raise _invalid(f"positions[{i}]: must be a betting area 1..6, not {p!r}"[:120])
        if p in positions:
            raise _invalid(f"positions[{i}]: {p} appears twice")
        positions.append(p)
    outside = sorted(set(m.r.wagers) - set(positions))
    if outside:
        raise _Reject(
            f"positions: position {outside[0]} has a progressive wager, so it holds a pai gow "
            "wager too (NY 5324.41(k)(1)): include it"
        )
    _bank_dealt(m, positions, "positions")

    def act() -> None:
        m.r.pai_gow = sorted(positions)

    return S.INTERNAL, act


def _counted_already(m: Round) -> None:
    if m.r.counted:
        raise _Reject(
            "the chip count is already confirmed: the dealer activates the RNG next "
            "(rng_activated, NY 5324.41(h)(8)(ii))"
        )


def _p_chips_confirmed(m: Round, e: Any) -> Plan:
    _counted_already(m)
    if m.r.mismatch is not None:
        raise _Reject("the chip count did not match the lights: a supervisor resolves it")
    _three_card_ready(m, m.r.wagers)
    return m.start_route(), lambda: _after_count(m)


def _p_chips_mismatch(m: Round, e: ChipsMismatch) -> Plan:
    _counted_already(m)
    counted = e.counted
    lit = len(m.r.wagers)
    if counted == lit:
        raise _Reject(f"counted: {counted} chips match {lit} lights; send chips_confirmed")

    def act() -> None:
        m.r.mismatch = counted
        m.emit(
            Alert(
                "supervisor",
                "CHIP_COUNT_MISMATCH",
                f"{counted} chips counted, {lit} acceptor lights lit (NY 5324.41(k)(2))",
            )
        )

    return S.INTERNAL, act


def _p_chips_resolved(m: Round, e: ChipsResolved) -> Plan:
    if m.r.mismatch is None:
        raise _Reject("no chip count mismatch to resolve")
    raw: Any = e.positions
    if not isinstance(raw, list):
        raise _invalid("positions: must be a list of lit positions holding a wager")
    positions: list[int] = []
    for i, p in enumerate(raw):
        if isinstance(p, bool) or not isinstance(p, int) or p not in m.r.wagers:
            raise _Reject(f"positions[{i}]: {p!r} is not a lit position")
        if p in positions:
            raise _invalid(f"positions[{i}]: {p} appears twice")
        positions.append(p)
    _three_card_ready(m, positions)

    def act() -> None:
        r = m.r
        r.wagers = {p: r.wagers[p] for p in sorted(positions)}
        r.mismatch = None
        m.emit(Wagers(tuple(r.wagers), m.config.progressive_wager_cents))
        _after_count(m)

    return m.start_route(), act
