"""The deal phase: Dealing and Play. The shoe's report of a dispense (cards remaining, a reading
shoe's hidden hands), the three-card bonus's stacks of three then four, and play complete: the
dealer's hand by the house way, the EZ pai gow queen dragon, a reading shoe's outcomes
(NY 5324.41(f)(3), (g)(1), (n); NJ 13:69F-11.9(c), (h)3).

Must never let a card identity into an effect or a reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fsm.round.constants import AREAS, CARDS_PER_HAND, STACKS
from fsm.round.context import Resolution, Round
from fsm.round.effects import DealerHand, Dispense, Effect
from fsm.round.events import Dealt
from fsm.round.phase import Phase, StateSpec, Step, Transition
from fsm.round.phases.shared import LOCKED_IN, deadline, glyph_start, lights_locked
from fsm.round.states import DEALING, FAULT, JACKPOT_PENDING, PLAY, ROUND_COMPLETE, SETTLEMENT
from fsm.rules.cards import DECK_SIZE, JOKER, CardError, parse_card
from fsm.rules.settlement import is_queen_dragon

SEAT_KEYS = {"dealer": 0, "0": 0, **{str(a): a for a in range(1, AREAS + 1)}}


def dispense(c: Round) -> list[Effect]:
    """On entering Dealing: seven stacks of seven, or with the three-card bonus stacks of three
    to the pai gow positions and the dealer (NY 5324.41(n)(2), (n)(4)-(5))."""
    if c.config.three_card_bonus:
        c.r.stage = "three"
        return [Dispense(len(c.delivery_seats()), 3)]
    c.r.stage = "seven"
    return [Dispense(STACKS, 7)]


# --- the shoe's report


def no_threes_await(s: Step) -> bool:
    return s.c.r.stage != "three_dealt" or s.refuse(
        "the three-card stacks await three_card_settled"
    )


def _expected_remaining(c: Round) -> int:
    """Without the three-card bonus 7 stacks of 7 leave 4 cards. With it the stacks go to the p
    pai gow positions and the dealer: 53 - 3(p + 1) remain after the threes ((n)(4)-(5)),
    53 - 7(p + 1) after the fours ((n)(7)(ii)): 4 only with six players."""
    stage = c.r.stage
    if stage in ("three", "four"):
        per = 3 if stage == "three" else CARDS_PER_HAND
        return DECK_SIZE - per * len(c.delivery_seats())
    return DECK_SIZE - STACKS * CARDS_PER_HAND


def count_right(s: Step) -> bool:
    return bool(s.e.remaining == _expected_remaining(s.c))


def misdeal(s: Step) -> None:
    remaining = s.e.remaining
    s.c.enter_fault(
        f"MISDEAL_REMAINING_{remaining}",
        "shoe",
        f"{remaining} cards remain in the shoe, {_expected_remaining(s.c)} expected",
        DEALING,
    )


def _read_card(c: Any) -> int | None:
    if isinstance(c, bool):
        return None
    if isinstance(c, int) and 0 <= c <= JOKER:
        return c
    if isinstance(c, str):
        try:
            return parse_card(c)
        except CardError:
            return None
    return None


def _seats(c: Round, d: Dealt, size: int, order: list[int]) -> dict[int, Any] | str:
    """The raw stacks of one dispense keyed by seat: ``hands`` maps each seat dealt, or
    ``stacks`` lists them in the order dispensed (the delivery order); or why it cannot be read."""
    if d.hands is None:
        if not isinstance(d.stacks, list) or len(d.stacks) != len(order):
            return f"stacks: must be the {len(order)} stacks in the order dispensed"
        return dict(zip(order, d.stacks, strict=True))
    if not isinstance(d.hands, Mapping):
        return f"hands: must map positions 1..6 and 'dealer' to {size} cards"
    seats: dict[int, Any] = {}
    for k, v in d.hands.items():
        seat = SEAT_KEYS.get(str(k))
        if seat is None:
            return f"hands: key {str(k)[:10]!r} is not a position 1..6 or 'dealer'"
        seats[seat] = v
    if set(seats) != set(order):
        if len(order) == STACKS:
            return "hands: need all 7 seats (dealer and areas 1..6)"
        return (
            f"hands: need exactly the seats dealt: {', '.join(map(str, order[:-1]))} and "
            "'dealer' (NY 5324.41(n)(5))"
        )
    return seats


def _cards(seats: dict[int, Any], size: int, seen: Iterable[int]) -> dict[int, list[int]] | str:
    out: dict[int, list[int]] = {}
    known: set[int] = set(seen)
    for seat, cards in sorted(seats.items()):
        if not isinstance(cards, list) or len(cards) != size:
            return f"hands: seat {seat} must have {size} cards"
        hand: list[int] = []
        for raw in cards:
            card = _read_card(raw)
            if card is None:
                return f"hands: seat {seat} holds something that is not a card"
            if card in known:
                return "hands: a card appears twice"
            known.add(card)
            hand.append(card)
        out[seat] = hand
    return out


def parse_hands(
    c: Round, d: Dealt, size: int, seen: Iterable[int] = ()
) -> dict[int, list[int]] | str | None:
    """The cards of one dispense from a card-reading shoe, keyed by seat (None: the shoe does
    not read cards), or why they cannot be read. Cards already ``seen`` (the three-card stacks)
    may not appear again. A reason never names a card."""
    if d.hands is None and d.stacks is None:
        return None
    seats = _seats(c, d, size, c.delivery_seats())
    return seats if isinstance(seats, str) else _cards(seats, size, seen)


def stacks_read(s: Step) -> bool:
    """A card-reading shoe's stacks are readable: threes, fours after the threes, or sevens."""
    r = s.c.r
    if r.stage == "three":
        hands = parse_hands(s.c, s.e, 3)
    elif r.stage == "four":
        seen = [card for cards in r.threes.values() for card in cards]
        hands = parse_hands(s.c, s.e, CARDS_PER_HAND - 3, seen)
        if isinstance(hands, dict) and r.threes:
            hands = {seat: r.threes[seat] + cards for seat, cards in hands.items()}
        elif not isinstance(hands, str):
            hands = None
    else:
        hands = parse_hands(s.c, s.e, CARDS_PER_HAND)
    if isinstance(hands, str):
        return s.refuse(hands, "invalid")
    s.memo["hands"] = hands
    return True


def threes_stage(s: Step) -> bool:
    return s.c.r.stage == "three"


def full_stacks(s: Step) -> bool:
    """The dispense completes the hands: seven cards, or the fours after the threes."""
    return s.c.r.stage != "three"


def threes_dealt(s: Step) -> None:
    r = s.c.r
    r.stage = "three_dealt"
    r.threes = s.memo["hands"] or {}
    s.c.deadline = None  # the dealer settles the three-card bonus: no device to wait on


def dealt(s: Step) -> None:
    r = s.c.r
    r.stage = "dealt"
    r.threes = {}
    if s.memo["hands"] is not None:
        r.hands = s.memo["hands"]


def threes_on_table(s: Step) -> bool:
    return s.c.r.stage == "three_dealt" or s.refuse("no three-card stacks have been dealt")


def deal_fours(s: Step) -> None:
    """NY 5324.41(n)(7)(ii): stacks of four to the same seats, farthest left first, dealer last."""
    c = s.c
    c.r.stage = "four"
    c.deadline = [c.now + c.config.dispense_timeout_ms, "SHOE_TIMEOUT", "shoe"]
    c.emit(Dispense(len(c.delivery_seats()), CARDS_PER_HAND - 3))


# --- play complete


def show_dealer_hand(s: Step) -> None:
    """With a card-reading shoe the dealer's seven cards are known when play completes: the
    dealer's hand set by the configured house way (NY 5324.41(g)(1), NJ 13:69F-11.9(c)) and,
    with EZ pai gow, whether the banking hand's seven cards (the dealer's, or the player bank's)
    are a queen dragon, which pushes every pai gow wager (NJ 13:69F-11.9(h)3). The effect names
    the house way and the rule applied, never a card."""
    c = s.c
    cards = c.r.hands.get(0)
    if cards is None:
        return
    cfg = c.config
    decision = cfg.way.explain(cards, cfg.ranking)
    bank = c.bank.current
    banking = c.r.hands.get(bank) if bank is not None else cards
    dragon = cfg.ez_pai_gow and banking is not None and is_queen_dragon(banking)
    c.emit(
        DealerHand(
            house_way=cfg.house_way,
            rule=decision.rule.split(":")[0],
            ez_pai_gow=cfg.ez_pai_gow,
            bank=bank,
            queen_dragon=dragon,
            pai_gow_wagers="push" if dragon else "settle",
        )
    )


def no_wagers(s: Step) -> bool:
    return not s.c.r.wagers


def outcomes_to_enter(s: Step) -> bool:
    """Progressive wagers and a shoe that does not read cards: the dealer enters each outcome
    (Settlement)."""
    return bool(s.c.r.wagers) and not s.c.r.hands


def _read_outcomes(c: Round) -> Resolution:
    """Each wagered hand's best line now, each line at its own level's meter (NY (g)(8),
    (k)(6)); decided again when a hit is paid."""
    outcomes: dict[int, str | None] = {}
    for area in c.r.wagers:
        best = c.best_now(c.config.table.claims(c.r.hands[area], c.config.ranking))
        outcomes[area] = None if best is None else best[0]
    return c.resolution(outcomes)


def read_hits_pending(s: Step) -> bool:
    return bool(s.once("resolution", lambda: _read_outcomes(s.c)).pending)


def settle_read_outcomes(s: Step) -> None:
    s.c.resolve(s.once("resolution", lambda: _read_outcomes(s.c)))


def play_rows(trigger: str) -> list[Transition]:
    return [
        Transition(trigger, PLAY, SETTLEMENT, [outcomes_to_enter]),
        Transition(trigger, PLAY, ROUND_COMPLETE, [no_wagers], before=[show_dealer_hand]),
        Transition(
            trigger,
            PLAY,
            JACKPOT_PENDING,
            [read_hits_pending],
            before=[show_dealer_hand, settle_read_outcomes],
        ),
        Transition(trigger, PLAY, ROUND_COMPLETE, before=[show_dealer_hand, settle_read_outcomes]),
    ]


PHASE = Phase(
    name="deal",
    states={
        # a dispense is never re-issued after a restart: a shoe interrupted mid-deal cannot be
        # trusted (power_up makes its deadline fall due: DEAL_INTERRUPTED)
        DEALING: StateSpec(
            lights_locked, glyph_start, on_enter=dispense, deadline=deadline(DEALING)
        ),
        PLAY: LOCKED_IN,
    },
    transitions=[
        Transition(
            "dealt",
            DEALING,
            PLAY,
            [no_threes_await, count_right, full_stacks, stacks_read],
            before=[dealt],
        ),
        Transition(
            "dealt",
            DEALING,
            None,
            [no_threes_await, count_right, threes_stage, stacks_read],
            before=[threes_dealt],
        ),
        # any other count is a misdeal, whatever the shoe read
        Transition("dealt", DEALING, FAULT, [no_threes_await], [count_right], before=[misdeal]),
        Transition("three_card_settled", DEALING, None, [threes_on_table], before=[deal_fours]),
        Transition("panel_next", DEALING, None, [threes_on_table], before=[deal_fours]),
        *play_rows("play_complete"),
        *play_rows("panel_next"),
    ],
)
