"""Par sheets: the exact count, probability, pay and contribution of every line of a pay table.

From the exact enumeration of every seven-card hand (``fsm.rules.parsheet_enum``: C(53,7) =
154,143,080 hands by rank pattern and suit combinatorics) the bonus tables of NY 5324.41 (m)
fortune bonus A/B/C, envy bonus A/B/C, insurance A-E, (o)(2) seven-card bonus, (p)(4),(5) imperial
player and banker bonus, the progressive payout wager (k)(4) as a function of the meter, and the
best-five-card census; the three-card bonus (o)(1) over every C(53,3) three-card hand; the 1-7
side wager (j)(2)(vi) from its odds. Each hand's lines come from the controller's own functions
(``fsm.rules.sevencard``, ``ProgressiveTable.best_line``) on a real hand of its key, and the pay
from the loaded ``PayTable``/``ProgressiveTable``: nothing here re-implements a rule.

The main game is simulated by the caller, who owns the random numbers: ``MainGameTally`` only adds
up seeded rounds, both sides set by the house way and settled by ``fsm.rules.settlement``.

Probabilities are exact fractions; money is integer cents. Must never do I/O, read a clock, draw a
random number, or change a pay table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from itertools import combinations

from fsm.rules import sevencard as sc
from fsm.rules.cards import JOKER, Card
from fsm.rules.houseway import HouseWay
from fsm.rules.jackpot_odds import JACKPOT_ODDS_LIMIT, ROYAL_OR_FIVE_ACES_LINES, jackpot_lines
from fsm.rules.parsheet_enum import FULL_DECK, Deck, Enumeration, HandKey, enumerate_hands
from fsm.rules.paytables import Odds, PayTable, side_wager_win_cents
from fsm.rules.progressive import ProgressiveTable, line_claims
from fsm.rules.ranking import (
    DEFAULT_OPTIONS,
    Category,
    RankingOptions,
    best_five_of_seven,
    value2,
    value5,
)
from fsm.rules.settlement import VigRule, settle

LOSES = "loses"


@dataclass(frozen=True)
class SheetLine:
    """One line of a par sheet: the hands whose best (paid) line it is, and what it returns.

    ``contribution`` is the line's share of the return per unit wagered (stake returned plus the
    win for odds wagers; the payout for the progressive and the envy bonus); ``deducted`` says
    whether a progressive payout comes off the meter (NY 5324.41(k)(5))."""

    line: str
    count: int
    pays: str
    contribution: Fraction
    total: int
    deducted: bool | None = None

    @property
    def probability(self) -> Fraction:
        return Fraction(self.count, self.total)

    @property
    def one_in(self) -> float:
        return self.total / self.count if self.count else math.inf


@dataclass(frozen=True)
class Sheet:
    """The par sheet of one pay table (or of the census, the main game is ``MainGame``)."""

    name: str
    wager: str
    cite: str
    hands: int
    lines: tuple[SheetLine, ...]
    ret: Fraction | None  # return per unit wagered; None where the wager has no stake (envy)
    notes: tuple[str, ...] = ()
    figures: Mapping[str, object] = field(default_factory=dict)

    @property
    def edge(self) -> Fraction | None:
        return None if self.ret is None else 1 - self.ret


# --- the seven-card hands, once per ranking option setting ---------------------------------------


@dataclass
class SevenCards:
    """Every seven-card hand of a deck by key, with the lines the controller gives each key."""

    enumeration: Enumeration
    keys: list[tuple[HandKey, int, tuple[Card, ...]]]

    @property
    def total(self) -> int:
        return self.enumeration.total

    @property
    def opts(self) -> RankingOptions:
        return self.enumeration.opts

    def tally(self, lines_of: Callable[[tuple[Card, ...]], object]) -> dict[object, int]:
        """Hands per value of ``lines_of(representative)``: the controller's function on one real
        hand of each key stands for every hand of that key."""
        out: dict[object, int] = {}
        for _key, n, rep in self.keys:
            v = lines_of(rep)
            out[v] = out.get(v, 0) + n
        return out


def seven_cards(deck: Deck = FULL_DECK, opts: RankingOptions = DEFAULT_OPTIONS) -> SevenCards:
    e = enumerate_hands(deck, opts)
    reps = e.representative
    return SevenCards(e, [(k, n, reps[k]) for k, n in e.counts.items()])


@cache
def full_deck(opts: RankingOptions = DEFAULT_OPTIONS) -> SevenCards:
    """The 154,143,080 hands of the 53-card deck (computed once per option setting)."""
    return seven_cards(FULL_DECK, opts)


def brute_force(
    hands: Iterable[Sequence[Card]],
    opts: RankingOptions | Sequence[RankingOptions] = DEFAULT_OPTIONS,
    deck: Deck = FULL_DECK,
) -> list[SevenCards]:
    """The independent check: every hand evaluated by itself with the controller's functions
    (census, every bonus classification, the progressive claims), hands with the same answers
    grouped; one result per option setting (the answers that do not depend on the options are
    computed once). No rank pattern, suit count or key of ``parsheet_enum`` is used."""
    settings = [opts] if isinstance(opts, RankingOptions) else list(opts)
    groups: list[dict[tuple[object, ...], list[object]]] = [{} for _ in settings]
    for cards in hands:
        hand = tuple(cards)
        common = (
            sc.fortune_lines(hand, "king-queen"),
            sc.fortune_lines(hand, "ace-king"),
            sc.seven_card_bonus_lines(hand),
            sc.imperial_player_lines(hand),
            sc.imperial_banker_line(hand),
            sc.insurance_line(hand),
        )
        ordered = tuple(sorted(hand))
        for o, group_of in zip(settings, groups, strict=True):
            answers = (*common, census_line(hand, o), line_claims(ordered, o))
            group = group_of.get(answers)
            if group is None:
                group_of[answers] = [1, hand]
            else:
                group[0] = int(group[0]) + 1  # type: ignore[call-overload]
    out = []
    for o, group_of in zip(settings, groups, strict=True):
        e = Enumeration(deck, o)
        keys: list[tuple[HandKey, int, tuple[Card, ...]]] = []
        for i, (n, rep) in enumerate(group_of.values()):
            assert isinstance(n, int) and isinstance(rep, tuple)
            e.raw[(i, None, None, 0, (False, False))] = n
            keys.append((HandKey(i, None, None, 0), n, rep))
        out.append(SevenCards(e, keys))
    return out


# --- census -----------------------------------------------------------------------------------

CENSUS_ORDER = (
    "five-aces",
    "natural-royal-flush",
    "royal-flush-with-joker",
    "straight-flush",
    "four-of-a-kind",
    "full-house",
    "flush",
    "straight",
    "three-of-a-kind",
    "two-pair",
    "pair",
    "high-card",
)


def census_line(cards: tuple[Card, ...], opts: RankingOptions) -> str:
    """The best five-card hand of seven cards, a royal flush split natural / with the joker."""
    cat = Category(best_five_of_seven(cards, opts)[0])
    if cat == Category.ROYAL_FLUSH:
        natural = any(
            value5(five, opts)[0] == Category.ROYAL_FLUSH and JOKER not in five
            for five in combinations(cards, 5)
        )
        return "natural-royal-flush" if natural else "royal-flush-with-joker"
    return cat.label


def census(hands: SevenCards) -> Sheet:
    counts = hands.tally(lambda rep: census_line(rep, hands.opts))
    total = hands.total
    lines = tuple(
        SheetLine(name, counts.get(name, 0), "", Fraction(0), total) for name in CENSUS_ORDER
    )
    return Sheet(
        "Best five-card hand of seven cards",
        "census",
        "NY 5324.41(c)(2)",
        total,
        lines,
        None,
        (_options_note(hands.opts),),
    )


def _options_note(opts: RankingOptions) -> str:
    return (
        f"A-2-3-4-5 ranks {opts.ace_low_straight}; the joker in a flush: {opts.joker_flush} "
        "(NY 5324.41(c)(2)-(4))"
    )


# --- bonus pay tables -------------------------------------------------------------------------

SEVEN_CARD_WAGERS = (
    "fortune-bonus",
    "envy",
    "insurance",
    "seven-card",
    "imperial-player",
    "imperial-banker",
)


def bonus_lines(
    wager: str, cards: tuple[Card, ...], royal_match: sc.RoyalMatch = "king-queen"
) -> frozenset[str]:
    """The lines seven cards make for a bonus wager, by the controller's own classification."""
    if wager in ("fortune-bonus", "envy"):
        return sc.fortune_lines(cards, royal_match)
    if wager == "seven-card":
        return sc.seven_card_bonus_lines(cards)
    if wager == "imperial-player":
        return sc.imperial_player_lines(cards)
    if wager == "imperial-banker":
        line = sc.imperial_banker_line(cards)
    elif wager == "insurance":
        line = sc.insurance_line(cards)
    else:
        raise ValueError(f"{wager!r} is not a seven-card bonus wager")
    return frozenset() if line is None else frozenset({line})


_CITES = {
    "fortune-bonus": "NY 5324.41(m)(1)",
    "envy": "NY 5324.41(m)(2), (l)(3)",
    "insurance": "NY 5324.41(m)(3), (c)(7)",
    "three-card": "NY 5324.41(o)(1)",
    "seven-card": "NY 5324.41(o)(2)",
    "imperial-player": "NY 5324.41(p)(4)",
    "imperial-banker": "NY 5324.41(p)(5)",
    "side-1-7": "NY 5324.41(j)(2)(vi), NJ 13:69F-11.8C(b)6",
}


def _pays_text(pay: Odds | int) -> str:
    return str(pay) if isinstance(pay, Odds) else f"${pay / 100:,.2f}"


def _odds_sheet(
    table: PayTable, counts: Mapping[object, int], total: int, notes: tuple[str, ...]
) -> Sheet:
    """A sheet from hands per set of lines made: each set is paid its single best line."""
    paid: dict[str, int] = {}
    for lines, n in counts.items():
        assert isinstance(lines, frozenset)
        best = table.best(lines)
        name = LOSES if best is None else best[0]
        paid[name] = paid.get(name, 0) + n
    out: list[SheetLine] = []
    ret = Fraction(0)
    amount_kind = any(not isinstance(p, Odds) for p in table.pays.values())
    for line in reversed(list(table.pays)):
        pay = table.pays[line]
        n = paid.get(line, 0)
        if isinstance(pay, Odds):
            contribution = Fraction(n, total) * (1 + pay.ratio)
        else:
            contribution = Fraction(n * pay, total)  # cents per hand
        ret += contribution
        out.append(SheetLine(line, n, _pays_text(pay), contribution, total))
    out.append(SheetLine(LOSES, paid.get(LOSES, 0), "-", Fraction(0), total))
    figures: dict[str, object] = {}
    if amount_kind:
        figures["expected_payment_cents_per_other_hand"] = ret
        return Sheet(
            table.name or table.wager,
            table.wager,
            _CITES[table.wager],
            total,
            tuple(out),
            None,
            (
                *notes,
                "the envy bonus has no stake: the figure is the expected payment (cents) to one "
                "envy marker for each other hand at the table (by linearity, exact for any "
                "number of hands)",
            ),
            figures,
        )
    return Sheet(
        table.name or table.wager, table.wager, _CITES[table.wager], total, tuple(out), ret, notes
    )


def bonus_sheet(
    table: PayTable, hands: SevenCards, royal_match: sc.RoyalMatch = "king-queen"
) -> Sheet:
    """The exact par sheet of a seven-card bonus table (fortune, envy, insurance, seven-card,
    imperial player / banker)."""
    if table.wager not in SEVEN_CARD_WAGERS:
        raise ValueError(f"{table.name or table.wager}: not a seven-card bonus table")
    counts = hands.tally(lambda rep: bonus_lines(table.wager, rep, royal_match))
    notes = [_options_note(hands.opts)]
    if table.wager in ("fortune-bonus", "envy"):
        notes.append(f"royal match: {royal_match} (NY 5324.41(c)(6)(ii))")
    if table.wager == "imperial-banker":
        notes.append("on the dealer's (or bank's) seven cards (NY 5324.41(p)(3)(ii))")
    if table.wager.startswith("imperial"):
        notes.append(
            "one imperial wager is paid by the player hand and the banker hand bonus (NY (p)(3)): "
            "this sheet counts its part as a wager of its own; the expected wins of the two parts "
            "add up, the stake's fate needs both hands of one deal (not computed here)"
        )
    return _odds_sheet(table, counts, hands.total, tuple(notes))


def three_card_sheet(table: PayTable, deck: Deck = FULL_DECK) -> Sheet:
    """NY 5324.41(o)(1) over every three-card hand of the deck (C(53,3) = 23,426)."""
    if table.wager != "three-card":
        raise ValueError(f"{table.name or table.wager}: not a three-card bonus table")
    counts: dict[object, int] = {}
    total = 0
    for hand in combinations(deck.cards, 3):
        lines = sc.three_card_lines(hand)
        counts[lines] = counts.get(lines, 0) + 1
        total += 1
    return _odds_sheet(table, counts, total, ("every three-card hand enumerated",))


SIDE_WAGERS_CENTS = (100, 200, 500, 1000, 2500, 10000)


def side_sheet(table: PayTable, wagers_cents: Sequence[int] = SIDE_WAGERS_CENTS) -> Sheet:
    """NY 5324.41(j): one number of seven wins; the win is rounded down to the whole dollar
    (j)(2)(vi), so the return depends on the amount wagered."""
    if table.wager != "side-1-7":
        raise ValueError(f"{table.name or table.wager}: not a 1-7 side wager table")
    pay = table.pays["hit"]
    assert isinstance(pay, Odds)
    hit = Fraction(1, 7)
    lines = []
    by_wager: dict[str, Fraction] = {}
    for w in wagers_cents:
        win = side_wager_win_cents(w, pay.ratio)
        ret = hit * Fraction(w + win, w)
        by_wager[str(w)] = ret
        lines.append(SheetLine(f"hit, ${w / 100:g} wager", 1, f"wins ${win / 100:g}", ret, 7))
    lines.append(SheetLine(LOSES, 6, "-", Fraction(0), 7))
    return Sheet(
        table.name or table.wager,
        table.wager,
        _CITES["side-1-7"],
        7,
        tuple(lines),
        by_wager[str(wagers_cents[0])],
        (
            f"pays {pay}, rounded down to the whole dollar; return by wager (the return shown is "
            f"for ${wagers_cents[0] / 100:g})",
        ),
        {"return_by_wager_cents": by_wager},
    )


# --- the progressive payout wager -------------------------------------------------------------


@dataclass(frozen=True)
class Linear:
    """a + b * M per unit wagered, M the meter in cents."""

    a: Fraction
    b: Fraction

    def at(self, meter_cents: int | Fraction) -> Fraction:
        return self.a + self.b * meter_cents


def _best_lines(
    table: ProgressiveTable, hands: SevenCards, meter: int, wager: int
) -> dict[str | None, int]:
    out: dict[str | None, int] = {}
    for _key, n, rep in hands.keys:
        line = table.best_line(rep, meter, hands.opts, wager)
        out[line] = out.get(line, 0) + n
    return out


def _linear(
    table: ProgressiveTable, paid: Mapping[str | None, int], total: int, wager: int
) -> tuple[Linear, Linear]:
    """(return, meter deductions) per unit wagered as a + b*M for this choice of paid lines."""
    a = b = da = db = Fraction(0)
    for name, n in paid.items():
        if name is None:
            continue
        line = table.line(name)
        p = Fraction(n, total)
        if line.meter_percent is not None:
            # NY (k)(4)(i): a $5 wager is paid five times the share, as every amount
            slope = p * Fraction(line.meter_percent, 100) * Fraction(wager, 100) / wager
            b += slope
            db += slope
            continue
        assert line.amount_cents is not None
        pay = line.amount_cents * wager // 100
        a += p * Fraction(pay, wager)
        if table.deducted_from_meter(name, wager, pay):
            da += p * Fraction(pay, wager)
    return Linear(a, b), Linear(da, db)


def break_even_meter(
    table: ProgressiveTable, hands: SevenCards, wager: int, start: int
) -> Fraction | None:
    """The meter (cents) at which the return reaches 100%. The return is convex and increasing in
    the meter (each hand is paid its best line, the maximum of lines linear in the meter), so
    Newton's step on the segment of the current meter (solve a + b*M = 1, move there) converges;
    while no line paid from the meter is anyone's best, the meter is doubled. None when no meter
    can reach 100% (no line paid from the meter)."""
    if not jackpot_lines(table):
        return None
    meter = Fraction(max(start, 100))
    for _ in range(60):
        paid = _best_lines(table, hands, math.ceil(meter), wager)
        ret, _ded = _linear(table, paid, hands.total, wager)
        if ret.b == 0:
            meter *= 2
            continue
        solved = (1 - ret.a) / ret.b
        if abs(solved - meter) < 1:
            return solved
        meter = max(Fraction(1), solved)
    return None


def progressive_sheet(
    table: ProgressiveTable,
    hands: SevenCards,
    meter_cents: int,
    wager_cents: int = 100,
    levels: Sequence[Mapping[str, object]] = (),
) -> Sheet:
    """The progressive payout wager (NY 5324.41(k)) with the meter at ``meter_cents``: every line
    the hands are paid at that meter, the return a + b*M on that segment, the break-even meter,
    the share deducted from the meter (k)(5), and the filing items of NJ 13:69D-1.52(e)."""
    total = hands.total
    paid = _best_lines(table, hands, meter_cents, wager_cents)
    ret, ded = _linear(table, paid, total, wager_cents)
    lines: list[SheetLine] = []
    for line in reversed(table.lines):
        n = paid.get(line.name, 0)
        pay_cents = table.payout_cents(line.name, wager_cents, meter_cents)
        pays = (
            f"{line.meter_percent * wager_cents // 100}% of meter"  # (k)(4)(i): $5 pays 5x
            if line.meter_percent is not None
            else f"${pay_cents / 100:,.2f}"
        )
        lines.append(
            SheetLine(
                line.name,
                n,
                pays,
                Fraction(n * pay_cents, total * wager_cents),
                total,
                table.deducted_from_meter(line.name, wager_cents, pay_cents),
            )
        )
    lines.append(SheetLine(LOSES, paid.get(None, 0), "-", Fraction(0), total))
    exact = sum((ln.contribution for ln in lines), Fraction(0))
    breakeven = break_even_meter(table, hands, wager_cents, meter_cents)
    jackpots = {name: Fraction(paid.get(name, 0), total) for name in jackpot_lines(table)}
    rare = [name for name, p in jackpots.items() if p * JACKPOT_ODDS_LIMIT < 1]
    figures: dict[str, object] = {
        "meter_cents": meter_cents,
        "wager_cents": wager_cents,
        "return_at_meter": exact,
        "return_a": ret.a,
        "return_b_per_meter_cent": ret.b,
        "break_even_meter_cents": breakeven,
        "deducted_a": ded.a,
        "deducted_b_per_meter_cent": ded.b,
        "house_paid_return": ret.a - ded.a,
        "jackpot_probability": jackpots,
        "jackpots_rarer_than_1_in_100m": rare,
        "levels": list(levels),
    }
    if levels:
        # every cent the rates put on the meter (and in the reserve for the resets) is paid to
        # players in the long run; the house pays the rest of the lines itself
        first = levels[0]
        rate = Fraction(
            int(str(first.get("rate_bp", 0))) + int(str(first.get("hidden_rate_bp", 0)))
        )
        figures["long_run_return"] = ret.a - ded.a + rate / 10_000
    notes = [
        _options_note(hands.opts),
        "the wager is kept (NY 5324.41(k)(2)); the return is the expected payout per unit wagered",
        f"return = {float(ret.a):.6f} + {float(ret.b * 100_000):.6f} x (meter / $1,000), while "
        "the lines paid at this meter stay the best (a meter share is rounded down to the cent)",
    ]
    return Sheet(
        table.name,
        "progressive",
        "NY 5324.41(k)(4),(5); NJ 13:69D-1.52(e)",
        total,
        tuple(lines),
        exact,
        tuple(notes),
        figures,
    )


def jackpot_probabilities(
    table: ProgressiveTable,
    meter_cents: int,
    wager_cents: int = 100,
    opts: RankingOptions = DEFAULT_OPTIONS,
    exhaustive: bool = False,
) -> dict[str, Fraction]:
    """The probability that a hand is paid each jackpot (line paid from the meter) with the meter
    at ``meter_cents``, exactly. When every jackpot is one of the four lines only a natural royal
    flush or five aces can claim, only the 5,640 hands holding one are evaluated (4 x C(48,2) +
    C(48,2)); otherwise (or ``exhaustive``) every hand is enumerated."""
    jackpots = jackpot_lines(table)
    total = FULL_DECK.hands()
    if set(jackpots) <= ROYAL_OR_FIVE_ACES_LINES and not exhaustive:
        paid: dict[str | None, int] = {}
        for hand, count in _royal_or_five_aces_classes():
            line = table.best_line(hand, meter_cents, opts, wager_cents)
            paid[line] = paid.get(line, 0) + count
    else:
        paid = _best_lines(table, full_deck(opts), meter_cents, wager_cents)
    return {name: Fraction(paid.get(name, 0), total) for name in jackpots}


def rare_jackpots(
    table: ProgressiveTable,
    meter_cents: int,
    wager_cents: int = 100,
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> list[tuple[str, Fraction]]:
    """Jackpots won less often than 1 in 100,000,000 hands with the meter at ``meter_cents``
    (NJ 13:69D-1.52(e)), with their probabilities."""
    probabilities = jackpot_probabilities(table, meter_cents, wager_cents, opts)
    return [(name, p) for name, p in probabilities.items() if p * JACKPOT_ODDS_LIMIT < 1]


def royal_or_five_aces_census(
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> tuple[tuple[tuple[str, ...], int], ...]:
    """The 5,640 hands holding a natural royal flush or five aces (`_royal_or_five_aces_hands`)
    by the set of progressive lines each can claim (``line_claims``, every line of every table;
    sorted names) and how many hands claim exactly that set, in the order of the sets. What
    `fsm.rules.jackpot_census` stores, so that ``tablectl config check`` answers the jackpot
    check of `fsm.rules.jackpot_odds` without building the rank tables."""
    census: dict[tuple[str, ...], int] = {}
    for hand, count in _royal_or_five_aces_classes():
        claims = tuple(sorted(line_claims(hand, opts)))
        census[claims] = census.get(claims, 0) + count
    return tuple(sorted(census.items()))


def _royal_or_five_aces_classes() -> list[tuple[tuple[Card, ...], int]]:
    """`_royal_or_five_aces_hands` as classes of hands a renaming of the suits turns into one
    another, each as one of its hands and its size (about 400 classes for the 5,640 hands).
    The ranking and every pay-table line are blind to which suit is which, so every hand of a
    class is paid the same line; `jackpot_probabilities` (and so ``tablectl config check``)
    evaluates one hand a class. The four royal flushes' hands are one suit's, four times over
    (two royal flushes, or one and five aces, never fit in seven cards)."""
    deck = FULL_DECK.cards
    hands: dict[tuple[tuple[Card, ...], tuple[int, ...]], tuple[Card, ...]] = {}
    counts: dict[tuple[tuple[Card, ...], tuple[int, ...]], int] = {}
    royal = tuple((r - 2) * 4 for r in range(10, 15))  # the royal flush in suit 0
    aces = (*((14 - 2) * 4 + s for s in range(4)), JOKER)
    for core, fixed, weight in ((royal, (0,), 4), (aces, (), 1)):
        rest = [c for c in deck if c not in core]
        for two in combinations(rest, 2):
            key = (core, _suit_free_form(two, fixed))
            hands.setdefault(key, tuple(sorted((*core, *two))))
            counts[key] = counts.get(key, 0) + weight
    return [(hand, counts[key]) for key, hand in hands.items()]


def _suit_free_form(cards: Sequence[Card], fixed: tuple[int, ...]) -> tuple[int, ...]:
    """``cards`` with their suits renamed: a suit in ``fixed`` keeps its name, the others are
    named 10, 11, ... in the order they first appear (cards taken by rank, then suit): the same
    for every hand a renaming of the free suits gives."""
    names: dict[int, int] = {s: s for s in fixed}
    out: list[int] = []
    for card in sorted(cards):
        if card == JOKER:
            out.append(-1)
            continue
        rank, suit = divmod(card, 4)
        if suit not in names:
            names[suit] = 10 + len(names) - len(fixed)
        out.append(rank * 100 + names[suit])
    return tuple(sorted(out))


def _royal_or_five_aces_hands() -> Iterable[tuple[Card, ...]]:
    """Every seven-card hand holding a natural royal flush or four aces and the joker."""
    seen: set[tuple[Card, ...]] = set()
    deck = FULL_DECK.cards
    cores: list[tuple[Card, ...]] = []
    for s in range(4):
        cores.append(tuple((r - 2) * 4 + s for r in range(10, 15)))
    cores.append((*((14 - 2) * 4 + s for s in range(4)), JOKER))
    for core in cores:
        rest = [c for c in deck if c not in core]
        for two in combinations(rest, 2):
            hand = tuple(sorted((*core, *two)))
            if hand not in seen:
                seen.add(hand)
                yield hand


# --- the main game, from rounds the caller deals -------------------------------------------------


@dataclass
class MainGameTally:
    """Rounds of the main game, the player and the dealer both set by the house way.

    ``add`` takes the two seven-card hands (the caller draws them); ``figures`` gives each
    proportion with its standard error sqrt(p(1-p)/n) and the house edge (the player's mean loss
    per unit wagered, vigorish included) with the standard error of a mean."""

    way: HouseWay
    opts: RankingOptions = DEFAULT_OPTIONS
    ez: bool = False
    vig: VigRule = "round-up-25"
    wager_cents: int = 10_000
    rounds: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: {"win": 0, "push": 0, "lose": 0})
    copies: int = 0
    rules: dict[str, int] = field(default_factory=dict)
    net_sum: int = 0
    net_sq: int = 0

    def add(self, player7: Sequence[Card], dealer7: Sequence[Card]) -> None:
        p = self.way.explain(player7, self.opts)
        d = self.way.explain(dealer7, self.opts)
        for dec in (p, d):
            self.rules[dec.rule] = self.rules.get(dec.rule, 0) + 1
        s = settle(p.setting, d.setting, self.wager_cents, ez=self.ez, vig=self.vig, opts=self.opts)
        self.rounds += 1
        self.outcomes[s.outcome] += 1
        ph, dh = value5(p.setting.high, self.opts), value5(d.setting.high, self.opts)
        if ph == dh or value2(p.setting.low) == value2(d.setting.low):
            self.copies += 1
        self.net_sum += s.net_cents
        self.net_sq += s.net_cents * s.net_cents

    def figures(self) -> dict[str, tuple[float, float]]:
        """name -> (estimate, standard error)."""
        n = self.rounds
        if n == 0:
            return {}

        def prop(k: int, m: int = n) -> tuple[float, float]:
            p = k / m
            return p, math.sqrt(p * (1 - p) / m)

        out = {name: prop(k) for name, k in self.outcomes.items()}
        out["copy"] = prop(self.copies)
        w = self.wager_cents
        mean = self.net_sum / n
        var = (self.net_sq / n - mean * mean) * n / max(1, n - 1)
        out["house_edge"] = (-mean / w, math.sqrt(max(var, 0.0) / n) / w)
        for rule, k in sorted(self.rules.items()):
            out[f"rule:{rule}"] = prop(k, 2 * n)
        return out


def progressive_levels(levels: Iterable[object]) -> list[dict[str, object]]:
    """The NJ 13:69D-1.52(e) parameters of progressive levels (objects with the attributes of
    ``fsm.round.config.ProgressiveLevel``)."""
    out = []
    for lvl in levels:
        out.append(
            {
                "name": getattr(lvl, "name", ""),
                "initial_cents": getattr(lvl, "initial_cents", 0),
                "reset_cents": getattr(lvl, "reset_cents", 0),
                "rate_bp": getattr(lvl, "rate_bp", 0),
                "hidden_rate_bp": getattr(lvl, "hidden_rate_bp", 0),
                "limit_cents": getattr(lvl, "limit_cents", 0),
                "lines": list(getattr(lvl, "lines", ())),
            }
        )
    return out


__all__ = [
    "JACKPOT_ODDS_LIMIT",
    "MainGameTally",
    "SevenCards",
    "Sheet",
    "SheetLine",
    "bonus_sheet",
    "brute_force",
    "census",
    "full_deck",
    "jackpot_probabilities",
    "progressive_sheet",
    "rare_jackpots",
    "seven_cards",
    "side_sheet",
    "three_card_sheet",
]
