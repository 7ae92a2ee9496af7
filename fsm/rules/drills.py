"""Dealer training drills: set the dealer's hand by the house way, settle a round, pay a
progressive line; each one judged with the reason a dealer can read, and the practice hands that
make a progressive line on demand.

A drill is built from cards the caller gives (a shuffled deck order: the caller owns the
randomness) and judged by the same rules the round machine uses: ``fsm.rules.houseway`` (the
house way's decision and the rule that made it, NY 5324.41(g)(2), NJ 13:69F-11.9(c)),
``fsm.rules.settlement`` (win / push / lose and the vigorish, NY 5324.41(g)(5)-(8)) and
``fsm.rules.progressive`` (the line and its payout at the meter of the moment, NY 5324.41(k)(4),
(k)(6)). Must never do I/O, read a clock, draw a random number, or hold a rule of its own: it only
asks those modules and puts their answer into words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fsm.rules.cards import Card, CardError, check_distinct, format_cards, parse_cards
from fsm.rules.houseway import HouseWay
from fsm.rules.progressive import ProgressiveTable
from fsm.rules.ranking import DEFAULT_OPTIONS, RankingOptions, value2, value5
from fsm.rules.setting import Foul, Setting, check_setting, describe_high, describe_low
from fsm.rules.settlement import Outcome, Settlement, VigRule, settle

# --------------------------------------------------------------------------- practice hands

#: One seven-card hand per line of NY 5324.41(k)(4) whose best line (the one paying the most,
#: (g)(8)) is that line with a $1 wager and the meter at or above its reset ($1,000): the practice
#: deck deals these on demand (tests check each against ``best_line``).
PRACTICE_HANDS: Mapping[str, str] = {
    "natural-royal-flush-and-pair": "As Ks Qs Js Ts 2c 2d",
    "five-aces-and-pair": "As Ah Ad Ac JK Kc Kd",
    "natural-royal-flush": "As Ks Qs Js Ts 2c 7d",
    "five-aces": "As Ah Ad Ac JK 2c 7d",
    "royal-flush-and-pair": "JK Ks Qs Js Ts 2c 2d",
    "royal-flush": "JK Ks Qs Js Ts 2c 7d",
    "straight-flush-and-pair": "9h 8h 7h 6h 5h 2c 2d",
    "straight-flush": "9h 8h 7h 6h 5h 2c Kd",
    "four-of-a-kind-and-pair": "9c 9d 9h 9s Kc Kd 2h",
    "four-of-a-kind": "9c 9d 9h 9s Kc 2d 5h",
    "full-house-and-pair": "9c 9d 9h Kc Kd 2h 2s",
    "full-house": "9c 9d 9h Kc Kd 2h 5s",
    "flush-and-pair": "Ah Jh 8h 5h 3h 2c 2d",
    "flush": "Ah Jh 8h 5h 3h 2c 7d",
    "straight-and-pair": "9c 8d 7h 6s 5c 2d 2h",
    "straight": "9c 8d 7h 6s 5c 2d Kh",
    "three-of-a-kind": "9c 9d 9h Kc 2d 5h 7s",
}


def practice_hand(line: str) -> tuple[Card, ...]:
    """The seven cards the practice deck deals for ``line``; ValueError naming the lines."""
    text = PRACTICE_HANDS.get(line)
    if text is None:
        raise ValueError(f"line: no practice hand for {line!r}; lines: {', '.join(PRACTICE_HANDS)}")
    return parse_cards(text, 7)


def stack_slots(index: int, stacks: int, sizes: Sequence[int] = (7,)) -> list[int]:
    """Where in the shoe (0 = the top card) the cards of stack ``index`` lie when ``stacks``
    stacks are dispensed once per size of ``sizes``: (7,) for the deal of seven stacks of seven,
    (3, 4) for the three-card bonus's stacks of three, then of four (NY 5324.41(n)(5), (n)(7))."""
    if not 0 <= index < stacks:
        raise ValueError(f"stack {index}: not one of the {stacks} stacks dealt")
    slots: list[int] = []
    base = 0
    for size in sizes:
        slots.extend(base + index * size + k for k in range(size))
        base += stacks * size
    return slots


def arrange(deck: Sequence[Card], slots: Sequence[int], cards: Sequence[Card]) -> list[Card]:
    """``deck`` (top first) with ``cards[k]`` moved to position ``slots[k]``, each by swapping it
    with the card there: the same cards, every other card where it was unless swapped out.
    CardError when a wanted card is not in the deck."""
    if len(slots) != len(cards) or len(set(slots)) != len(slots):
        raise ValueError("slots: one distinct slot per card")
    if any(not 0 <= slot < len(deck) for slot in slots):
        raise ValueError(f"slots: not within the {len(deck)} cards of the deck")
    check_distinct(cards)
    out = list(deck)
    for slot, card in zip(slots, cards, strict=True):
        try:
            at = out.index(card)
        except ValueError:
            raise CardError(f"card {format_cards([card])} is not in the deck") from None
        out[at], out[slot] = out[slot], out[at]
    return out


# --------------------------------------------------------------------------- house way drill

_CLASS_WORDS: Mapping[str, str] = {
    "no_pair": "no pair: the highest card stays back, the second and third highest go in front",
    "one_pair": "one pair: the pair stays back, the next two highest cards go in front",
    "two_pair": "two pair",
    "three_pair": "three pair: the highest pair goes in front",
    "trips": "three of a kind back, the two highest other cards in front",
    "two_trips": "two three-of-a-kinds: a pair from the higher one goes in front",
    "full_house": "full house: the three of a kind back, the pair in front",
    "four_of_a_kind": "four of a kind",
    "five_aces": "five aces",
    "straights_and_flushes": "a straight or flush plays in the back hand with the best front "
    "hand the house way allows",
}
_SPECIAL_WORDS: Mapping[str, str] = {
    "trips.aces": "three aces: a pair of aces back, an ace and the highest other card in front",
    "full_house.keep_if_pair": "full house kept together behind, the two singletons in front "
    "(the house way's exception for this pair)",
    "full_house.with_two_pair": "three of a kind with two pairs: the highest pair goes in front",
    "four_of_a_kind.with_trips": "four of a kind with three of a kind: a pair from the three "
    "goes in front",
    "four_of_a_kind.with_pair": "four of a kind with a pair: the pair goes in front",
    "five_aces.keep_if_pair": "five aces with a pair the house way keeps: the pair goes in front",
    "five_aces.rule": "five aces: three aces back, two aces in front",
}


def explain_rule(rule: str) -> str:
    """A house way decision's rule (``reference.two_pair.rules[5]: split``) in a dealer's words."""
    _, _, key = rule.partition(".")
    key = key or rule
    base, _, play = key.partition(": ")
    for special, words in _SPECIAL_WORDS.items():
        if base.startswith(special):
            return words
    head = base.split(".")[0].split("[")[0]
    words = _CLASS_WORDS.get(head, head.replace("_", " "))
    if head == "straights_and_flushes":
        return words
    if play == "split":
        return f"{words}: split ({base}): the lower pair goes in front"
    if play == "keep":
        return f"{words}: kept together ({base}): the two highest other cards go in front"
    return words


@dataclass(frozen=True)
class HouseWayVerdict:
    """The judgement of a dealer's setting: ``correct`` when its two hands rank as the house
    way's do; ``expected`` the house way's setting, ``rule`` the rule that chose it, ``foul`` set
    when the dealer's setting is not even a legal setting, ``explanation`` the why in words."""

    correct: bool
    expected: Setting
    rule: str
    explanation: str
    foul: Foul | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "correct": self.correct,
            "expected": {
                "high": format_cards(self.expected.high),
                "low": format_cards(self.expected.low),
            },
            "rule": self.rule,
            "explanation": self.explanation,
            "foul": None if self.foul is None else str(self.foul),
        }


def check_house_way(
    way: HouseWay,
    cards7: Sequence[Card],
    high: Sequence[Card],
    low: Sequence[Card],
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> HouseWayVerdict:
    """Judge the dealer's setting ``high`` / ``low`` of the dealt ``cards7`` against the house
    way (NY 5324.41(g)(2)): correct when both hands rank exactly as the house way's (a card of
    the same rank in another suit is the same setting). CardError unless seven distinct cards."""
    decision = way.explain(cards7, opts)
    expected = decision.setting
    words = explain_rule(decision.rule)
    want = f"{format_cards(expected.high)} / {format_cards(expected.low)}"
    foul = check_setting(high, low, cards7, opts)
    if foul is not None:
        return HouseWayVerdict(
            False,
            expected,
            decision.rule,
            f"not a legal setting: {foul}. The house way ({way.name}) sets {want}: {words}.",
            foul,
        )
    same = value5(high, opts) == value5(expected.high, opts) and value2(low) == value2(expected.low)
    if same:
        return HouseWayVerdict(
            True, expected, decision.rule, f"correct: {want} ({way.name}: {words})"
        )
    given_high, given_low = describe_high(value5(high, opts)), describe_low(value2(low))
    want_high = describe_high(value5(expected.high, opts))
    want_low = describe_low(value2(expected.low))
    return HouseWayVerdict(
        False,
        expected,
        decision.rule,
        f"not the house way: you set {given_high} behind and {given_low} in front; the house "
        f"way ({way.name}) sets {want} ({want_high} behind, {want_low} in front): {words}.",
    )


# --------------------------------------------------------------------------- settlement drill


@dataclass(frozen=True)
class SeatAnswer:
    """What the dealer says a wager gets: ``outcome`` and the vigorish taken (cents)."""

    outcome: Outcome
    vig_cents: int = 0


@dataclass(frozen=True)
class SeatVerdict:
    position: int
    correct: bool
    expected: Settlement
    explanation: str

    def to_json(self) -> dict[str, object]:
        return {
            "position": self.position,
            "correct": self.correct,
            "outcome": self.expected.outcome,
            "won_cents": self.expected.won_cents,
            "vig_cents": self.expected.vig_cents,
            "net_cents": self.expected.net_cents,
            "explanation": self.explanation,
        }


def settle_round(
    dealer: Setting,
    players: Mapping[int, tuple[Setting, int]],
    *,
    ez: bool = False,
    vig: VigRule = "round-up-25",
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> dict[int, Settlement]:
    """Each betting area's pai gow wager settled against the dealer's setting (NY
    5324.41(g)(5)-(8)): ``players`` maps an area to its setting and wager in cents."""
    return {
        position: settle(setting, dealer, wager, ez=ez, vig=vig, opts=opts)
        for position, (setting, wager) in sorted(players.items())
    }


def check_settlement(
    expected: Mapping[int, Settlement], answers: Mapping[int, SeatAnswer]
) -> list[SeatVerdict]:
    """Judge the dealer's answer for each area of ``expected`` (`settle_round`): the outcome and,
    for a win, the vigorish (5% of the win rounded up to the next 25 cents, NY (g)(8))."""
    out: list[SeatVerdict] = []
    for position, want in sorted(expected.items()):
        answer = answers.get(position)
        rule = want.reason
        money = (
            f"pays {_dollars(want.won_cents)} less {_dollars(want.vig_cents)} vigorish = "
            f"{_dollars(want.net_cents)}"
            if want.outcome == "win"
            else ("the wager stays (push)" if want.outcome == "push" else "the wager is taken")
        )
        if answer is None:
            out.append(SeatVerdict(position, False, want, f"no answer: {want.outcome}, {rule}"))
            continue
        if answer.outcome != want.outcome:
            why = f"{answer.outcome} is wrong: {want.outcome}, {rule}; {money}"
            out.append(SeatVerdict(position, False, want, why))
        elif want.outcome == "win" and answer.vig_cents != want.vig_cents:
            why = (
                f"win is right but the vigorish is {_dollars(want.vig_cents)}, not "
                f"{_dollars(answer.vig_cents)}: 5% of {_dollars(want.won_cents)} rounded up to "
                f"the next 25 cents; {money}"
            )
            out.append(SeatVerdict(position, False, want, why))
        else:
            out.append(
                SeatVerdict(position, True, want, f"correct: {want.outcome}, {rule}; {money}")
            )
    return out


# --------------------------------------------------------------------------- progressive drill


@dataclass(frozen=True)
class ProgressivePay:
    """What a progressive hand pays now: the ``line`` (None: nothing), ``amount_cents`` at the
    meter given, and whether it comes off the meter (a supervisor validates it first, (k)(5))."""

    line: str | None
    amount_cents: int
    from_meter: bool
    explanation: str


def progressive_pay(
    table: ProgressiveTable,
    cards7: Sequence[Card],
    meter_cents: int,
    wager_cents: int = 100,
    opts: RankingOptions = DEFAULT_OPTIONS,
    *,
    five_times_meter: bool = True,
) -> ProgressivePay:
    """The line a progressive hand wins (the one paying most, NY 5324.41(g)(8)) and its payout
    with the meter at ``meter_cents`` now ((k)(4), (k)(6)); a $5 wager's share of the meter is
    five times the share unless ``five_times_meter`` is False (the table's reading of
    (k)(4)(i), `ProgressiveTable.payout_cents`)."""
    if isinstance(meter_cents, bool) or not isinstance(meter_cents, int) or meter_cents < 0:
        raise ValueError(f"meter_cents: a whole number of cents >= 0, got {meter_cents!r}")
    line = table.best_line(
        cards7, meter_cents, opts, wager_cents, five_times_meter=five_times_meter
    )
    if line is None:
        return ProgressivePay(None, 0, False, "no line of the pay table: the wager loses")
    amount = table.payout_cents(line, wager_cents, meter_cents, five_times_meter=five_times_meter)
    spec = table.line(line)
    deducted = table.deducted_from_meter(line, wager_cents, amount)
    if spec.meter_percent is not None:
        times = (
            f", x{wager_cents // 100} for this {_dollars(wager_cents)} wager"
            if five_times_meter and wager_cents != 100
            else ""
        )
        how = (
            f"{spec.meter_percent}% of the meter {_dollars(meter_cents)}{times} = "
            f"{_dollars(amount)}"
        )
    else:
        assert spec.amount_cents is not None
        how = (
            f"{_dollars(spec.amount_cents)} for a $1 wager, x{wager_cents // 100} for this "
            f"{_dollars(wager_cents)} wager = {_dollars(amount)}"
        )
    where = (
        "off the meter: a supervisor validates it before it is paid (NY 5324.41(k)(5))"
        if deducted
        else "from the chip tray"
    )
    return ProgressivePay(line, amount, deducted, f"{line}: {how}, {where}")


@dataclass(frozen=True)
class ProgressiveVerdict:
    correct: bool
    expected: ProgressivePay
    explanation: str

    def to_json(self) -> dict[str, object]:
        return {
            "correct": self.correct,
            "line": self.expected.line,
            "amount_cents": self.expected.amount_cents,
            "from_meter": self.expected.from_meter,
            "explanation": self.explanation,
        }


def check_progressive_pay(expected: ProgressivePay, answer_cents: int) -> ProgressiveVerdict:
    """Judge the amount the dealer would pay against `progressive_pay`'s answer."""
    if answer_cents == expected.amount_cents:
        return ProgressiveVerdict(True, expected, f"correct: {expected.explanation}")
    return ProgressiveVerdict(
        False,
        expected,
        f"{_dollars(answer_cents)} is wrong: {expected.explanation}",
    )


def _dollars(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) // 100:,}.{abs(cents) % 100:02d}"


__all__ = [
    "PRACTICE_HANDS",
    "HouseWayVerdict",
    "ProgressivePay",
    "ProgressiveVerdict",
    "SeatAnswer",
    "SeatVerdict",
    "arrange",
    "check_house_way",
    "check_progressive_pay",
    "check_settlement",
    "explain_rule",
    "practice_hand",
    "progressive_pay",
    "settle_round",
    "stack_slots",
]
