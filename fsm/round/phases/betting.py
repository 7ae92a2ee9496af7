"""The betting phase: Shuffling, Betting, LockedOut. The shuffle's deck count, chips at the
acceptors, the player bank, the lock-out, the chip count (confirmed, mismatched, resolved) and the
pai gow positions of the three-card bonus (NY 5324.41(h), (k)(1)-(2), (n)(4)-(5), (n)(8)).

Must never count a chip after the lock-out (it is refused as late), nor contribute before the
chip count is confirmed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fsm.round.catalogue import IN_ROUND_AFTER_LOCKOUT
from fsm.round.constants import AREAS
from fsm.round.context import Round
from fsm.round.effects import Alert, Bank, BankOffer, Effect, Shuffle, Wagers
from fsm.round.events import BankAccepted, ChipDetected, ChipsMismatch, ChipsResolved, PaiGowWagers
from fsm.round.phase import Guard, Phase, StateSpec, Step, Transition, Untimely
from fsm.round.phases.shared import LOCKED_IN, deadline, glyph, lights_off
from fsm.round.states import (
    BETTING,
    CLOSED,
    DEALING,
    DICE,
    FAULT,
    LOCKED_OUT,
    MAINTENANCE,
    SHUFFLING,
)
from fsm.round.vocabulary import IDLE, LightState
from fsm.rules.cards import DECK_SIZE

# --- what the states show and request


def lights_betting(c: Round) -> list[LightState]:
    # NY 5324.41(d)(4): the player checks the light of the wager
    return ["lit" if a in c.r.wagers else "attract" for a in range(1, AREAS + 1)]


def request_shuffle(c: Round) -> list[Effect]:
    return [Shuffle()]


def offer_bank(c: Round) -> list[Effect]:
    order = c.bank.offer_order(c.config.dealer_right_area) if c.config.player_banking else []
    return [BankOffer(tuple(order))] if order else []


# --- the shuffle


def deck_counted(s: Step) -> bool:
    """The shuffler counted the 53 cards of the deck; any other count is a fault."""
    return bool(s.e.count == DECK_SIZE)


def deck_fault(s: Step) -> None:
    count = s.e.count
    s.c.enter_fault(
        f"DECK_COUNT_{count}",
        "shuffler",
        f"the shuffler counted {count} cards, 53 required; the deck must not deal",
        SHUFFLING,
    )


def deck_ready(s: Step) -> None:
    c = s.c
    c.rounds_since_shuffle = 0
    if c.config.bank_start_of_game == "every_shuffle":
        c.bank.new_game()
    c.begin_round()


# --- chips and the bank


def floor_accepts(s: Step) -> bool:
    refusal = s.c.floor_refusal()
    return not refusal or s.refuse(
        f"progressive wagers are refused: {refusal}", "not_armed", s.e.position
    )


def acceptor_unlit(s: Step) -> bool:
    area = s.e.position
    return area not in s.c.r.wagers or s.refuse(
        f"position {area} is already lit: one progressive wager per acceptor", "already_lit", area
    )


def take_chip(s: Step) -> None:
    e: ChipDetected = s.e
    cents = s.c.config.progressive_wager_cents
    s.c.r.wagers[e.position] = cents
    s.c.emit(Wagers(tuple(sorted(s.c.r.wagers)), cents))


def banking_offered(s: Step) -> bool:
    return s.c.config.player_banking or s.refuse(
        "player banking is not offered at this table (game.player_banking)"
    )


def may_bank(s: Step) -> bool:
    why = s.c.bank.refusal(s.e.position)
    return not why or s.refuse(why)


def bank(s: Step) -> None:
    e: BankAccepted = s.e
    s.c.bank.current = e.position
    s.c.emit(Bank(e.position))


def a_player_banks(s: Step) -> bool:
    return s.c.bank.current is not None or s.refuse("no player banks this round")


def release_bank(s: Step) -> None:
    s.c.bank.current = None
    s.c.emit(Bank(None))


# --- the chip count and the pai gow positions


def three_card_mode(s: Step) -> bool:
    return s.c.config.three_card_bonus


def dice_mode(s: Step) -> bool:
    return not s.c.config.three_card_bonus and s.c.config.start_mode != "rng"


def rng_mode(s: Step) -> bool:
    return not s.c.config.three_card_bonus and s.c.config.start_mode == "rng"


def not_counted(s: Step) -> bool:
    return not s.c.r.counted or s.refuse(
        "the chip count is already confirmed: the dealer activates the RNG next "
        "(rng_activated, NY 5324.41(h)(8)(ii))"
    )


def uncounted(s: Step) -> bool:
    """(NEXT in LockedOut is the chip count until it is confirmed, then the RNG's activation.)"""
    return not s.c.r.counted


def counts_agreed(s: Step) -> bool:
    return s.c.r.mismatch is None or s.refuse(
        "the chip count did not match the lights: a supervisor resolves it"
    )


def _pai_gow_misses(c: Round, wagered: Iterable[int]) -> str | None:
    """With the three-card bonus the deal needs the dealer's pai gow positions, and every
    progressive wager must be at one of them (NY 5324.41(k)(1), (n)(4)-(5))."""
    pai_gow = c.r.pai_gow
    if not pai_gow:
        return (
            "pai_gow_wagers: enter the positions holding a pai gow wager before the deal; the "
            "stacks go only to them (NY 5324.41(n)(4), (n)(5))"
        )
    outside = sorted(set(wagered) - set(pai_gow))
    if outside:
        return (
            f"position {outside[0]}: a progressive wager without a pai gow wager; only a player "
            "with a pai gow wager may make one (NY 5324.41(k)(1)): enter it in pai_gow_wagers "
            "or resolve the wagers"
        )
    return _bank_missing(c, pai_gow, "pai_gow_wagers")


def _bank_missing(c: Round, positions: Iterable[int], key: str) -> str | None:
    """A player bank plays a hand from its own area, so with the three-card bonus its area is
    among the pai gow positions the stacks go to (NY 5324.41(h)(6), (n)(4)-(5))."""
    bank = c.bank.current
    if bank is not None and bank not in set(positions):
        return (
            f"{key}: area {bank} banks this round and is dealt a hand: include it "
            "(NY 5324.41(h)(6), (n)(4)-(5))"
        )
    return None


def pai_gow_covers(s: Step) -> bool:
    """NY 5324.41(k)(1) in every mode: once the dealer entered the positions holding a pai gow
    wager, every progressive wager (lit, or kept by a resolution) must be at one of them."""
    pai_gow = s.c.r.pai_gow
    if pai_gow is None:
        return True
    outside = sorted(set(s.memo.get("kept", s.c.r.wagers)) - set(pai_gow))
    return not outside or s.refuse(
        f"position {outside[0]}: a progressive wager without a pai gow wager; only a player "
        "with a pai gow wager may make one (NY 5324.41(k)(1)): enter it in pai_gow_wagers "
        "or resolve the wagers"
    )


def pai_gow_ready(s: Step) -> bool:
    """The lit wagers (or those a resolution keeps) are all at entered pai gow positions."""
    why = _pai_gow_misses(s.c, s.memo.get("kept", s.c.r.wagers))
    return why is None or s.refuse(why)


def count_confirmed(s: Step) -> None:
    """The chip count is confirmed: contribute; with the three-card bonus the starting position
    is known at once (no RNG, no dice, (n)(4))."""
    c = s.c
    c.contribute()
    c.r.counted = True
    if c.config.three_card_bonus:
        c.set_start_three_card()


def counts_differ(s: Step) -> bool:
    e: ChipsMismatch = s.e
    lit = len(s.c.r.wagers)
    return e.counted != lit or s.refuse(
        f"counted: {e.counted} chips match {lit} lights; send chips_confirmed"
    )


def report_mismatch(s: Step) -> None:
    e: ChipsMismatch = s.e
    s.c.r.mismatch = e.counted
    s.c.emit(
        Alert(
            "supervisor",
            "CHIP_COUNT_MISMATCH",
            f"{e.counted} chips counted, {len(s.c.r.wagers)} acceptor lights lit "
            "(NY 5324.41(k)(2))",
        )
    )


def a_mismatch(s: Step) -> bool:
    return s.c.r.mismatch is not None or s.refuse("no chip count mismatch to resolve")


def kept_positions_lit(s: Step) -> bool:
    """The positions a supervisor keeps are lit, each once."""
    e: ChipsResolved = s.e
    raw: Any = e.positions
    if not isinstance(raw, list):
        return s.refuse("positions: must be a list of lit positions holding a wager", "invalid")
    positions: list[int] = []
    for i, p in enumerate(raw):
        if isinstance(p, bool) or not isinstance(p, int) or p not in s.c.r.wagers:
            return s.refuse(f"positions[{i}]: {p!r} is not a lit position")
        if p in positions:
            return s.refuse(f"positions[{i}]: {p} appears twice", "invalid")
        positions.append(p)
    s.memo["kept"] = positions
    return True


def keep_positions(s: Step) -> None:
    r = s.c.r
    r.wagers = {p: r.wagers[p] for p in sorted(s.memo["kept"])}
    r.mismatch = None
    s.c.emit(Wagers(tuple(r.wagers), s.c.config.progressive_wager_cents))


def pai_gow_positions_valid(s: Step) -> bool:
    """The dealer enters the betting areas holding a pai gow wager (the controller does not see
    the main game's chips), replaceable until the chip count is confirmed; required with the
    three-card bonus (the stacks go only to them), in every other mode it makes the controller
    check (k)(1). Every lit progressive wager must be among them (NY 5324.41(k)(1)), and with
    the three-card bonus a player bank's area too."""
    e: PaiGowWagers = s.e
    raw: Any = e.positions
    if not isinstance(raw, list) or not raw:
        return s.refuse("positions: must be a non-empty list of betting areas 1..6", "invalid")
    positions: list[int] = []
    for i, p in enumerate(raw):
        if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= AREAS:
            return s.refuse(
                f"positions[{i}]: must be a betting area 1..6, not {p!r}"[:120], "invalid"
            )
        if p in positions:
            return s.refuse(f"positions[{i}]: {p} appears twice", "invalid")
        positions.append(p)
    outside = sorted(set(s.c.r.wagers) - set(positions))
    if outside:
        return s.refuse(
            f"positions: position {outside[0]} has a progressive wager, so it holds a pai gow "
            "wager too (NY 5324.41(k)(1)): include it"
        )
    why = _bank_missing(s.c, positions, "positions") if s.c.config.three_card_bonus else None
    if why:
        return s.refuse(why)
    s.memo["pai_gow"] = sorted(positions)
    return True


def record_pai_gow(s: Step) -> None:
    s.c.r.pai_gow = s.memo["pai_gow"]


def count_rows(trigger: str, first: Iterable[Guard], also: Iterable[Any] = ()) -> list[Transition]:
    """Where a confirmed chip count leads: with the three-card bonus straight to the deal
    ((n)(4)), with dice to the shaker; with an RNG it stays in LockedOut until the dealer (or the
    bank) activates the RNG (``rng_activated``, (h)(8)(ii), (h)(10)(ii))."""
    guards = [*first]
    act = [*also, count_confirmed]
    return [
        Transition(trigger, LOCKED_OUT, None, [rng_mode, *guards, pai_gow_covers], before=act),
        Transition(trigger, LOCKED_OUT, DICE, [dice_mode, *guards, pai_gow_covers], before=act),
        Transition(
            trigger, LOCKED_OUT, DEALING, [three_card_mode, *guards, pai_gow_ready], before=act
        ),
    ]


_CLOSED_TO_CHIPS = "the table is closed: no progressive wager is accepted"
_LATE_CHIP = "late chip: no progressive wager is accepted after the lock-out (NY 5324.41(k)(2))"

PHASE = Phase(
    name="betting",
    states={
        SHUFFLING: StateSpec(
            lights_off,
            glyph(IDLE),
            on_enter=request_shuffle,
            waiting=request_shuffle,
            deadline=deadline(SHUFFLING),
        ),
        BETTING: StateSpec(lights_betting, glyph(IDLE), armed=True, on_enter=offer_bank),
        LOCKED_OUT: LOCKED_IN,
    },
    transitions=[
        Transition("shuffle_complete", SHUFFLING, BETTING, [deck_counted], before=[deck_ready]),
        Transition("shuffle_complete", SHUFFLING, FAULT, before=[deck_fault]),
        Transition(
            "chip_detected", BETTING, None, [floor_accepts, acceptor_unlit], before=[take_chip]
        ),
        Transition("bank_accepted", BETTING, None, [banking_offered, may_bank], before=[bank]),
        Transition("bank_released", BETTING, None, [a_player_banks], before=[release_bank]),
        Transition("lockout_pressed", BETTING, LOCKED_OUT),
        Transition(
            "pai_gow_wagers",
            (BETTING, LOCKED_OUT),
            None,
            [pai_gow_positions_valid],
            before=[record_pai_gow],
        ),
        *count_rows("chips_confirmed", [not_counted, counts_agreed]),
        # the dealer panel's NEXT in LockedOut: the chip count first (then the RNG, start.py)
        *count_rows("panel_next", [uncounted, counts_agreed]),
        Transition(
            "chips_mismatch",
            LOCKED_OUT,
            None,
            [not_counted, counts_differ],
            before=[report_mismatch],
        ),
        *count_rows("chips_resolved", [a_mismatch, kept_positions_lit], also=[keep_positions]),
    ],
    untimely=[
        Untimely(
            "chip_detected", frozenset({CLOSED, MAINTENANCE}), "not_armed", _CLOSED_TO_CHIPS, True
        ),
        Untimely(
            "chip_detected",
            frozenset({FAULT}),
            "not_armed",
            "progressive wagers are refused while the table is in fault",
            True,
        ),
        Untimely(
            "chip_detected",
            frozenset({SHUFFLING}),
            "not_armed",
            "acceptors are not armed while the deck is shuffled",
            True,
        ),
        Untimely("chip_detected", IN_ROUND_AFTER_LOCKOUT, "late", _LATE_CHIP, True),
    ],
)
