"""Par sheets (issue 13): the exact enumeration of every seven-card hand against the published
census, an independent brute force on reduced decks (every hand evaluated by itself with the
controller's functions), and a sampled estimate with the real evaluator on the full deck."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from itertools import combinations

import pytest

from fsm.rules import parsheet as ps
from fsm.rules.parsheet_enum import FULL_DECK, Deck, enumerate_hands
from fsm.rules.paytables import BUILTIN, load_builtin
from fsm.rules.progressive import ProgressiveTable
from fsm.rules.ranking import RankingOptions

# the tests on the full deck share one worker, where the enumeration is computed once
full_deck_group = pytest.mark.xdist_group("parsheet-full-deck")

BOTH_OPTIONS = (RankingOptions("second", "highest-missing"), RankingOptions("lowest", "ace"))

# table-rules.md, "Game facts worth testing against" (Wizard of Odds, Alspach)
CENSUS = {
    "five-aces": 1_128,
    "natural-royal-flush": 4_512,
    "royal-flush-with-joker": 21_620,
    "straight-flush": 184_832,
    "four-of-a-kind": 307_472,
    "full-house": 4_188_528,
    "flush": 6_172_088,
    "straight": 11_236_028,
    "three-of-a-kind": 7_470_676,
    "two-pair": 35_553_816,
    "pair": 64_221_960,
    "high-card": 24_780_420,
}

# Reduced decks small enough to evaluate hand by hand, each reaching lines the others cannot.
REDUCED_DECKS = {
    # natural royals, royals with the joker, royal match (K-Q / A-K of another suit)
    "2 suits of 9-A": Deck(ranks=(9, 10, 11, 12, 13, 14), suits=2),
    # A-2-3-4-5 (the ranking option), seven-card straight flushes with and without the joker
    "2 suits of A-7": Deck(ranks=(14, 2, 3, 4, 5, 6, 7), suits=2),
    # three and four of a kind, five aces, full houses
    "4 suits of Q-A": Deck(ranks=(12, 13, 14), suits=4),
    # pai gows jack-high (insurance, imperial banker bonus), no joker
    "2 suits of 2-J, no joker": Deck(ranks=(2, 3, 4, 6, 7, 9, 11), suits=2, joker=False),
}

SEVEN_CARD_TABLES = [
    load_builtin(n) for n in BUILTIN if load_builtin(n).wager in ps.SEVEN_CARD_WAGERS
]


def _sheets(hands: ps.SevenCards) -> list[ps.Sheet]:
    out = [ps.census(hands)]
    for table in SEVEN_CARD_TABLES:
        out.append(ps.bonus_sheet(table, hands, "king-queen"))
        if table.wager in ("fortune-bonus", "envy"):
            out.append(ps.bonus_sheet(table, hands, "ace-king"))
    progressive = ProgressiveTable.load()
    for meter in (0, 100_000, 10_000_000):
        for wager in (100, 500):
            out.append(ps.progressive_sheet(progressive, hands, meter, wager))
    return out


@full_deck_group
def test_census_of_all_154143080_seven_card_hands_equals_table_rules() -> None:
    hands = ps.full_deck()
    assert hands.total == math.comb(53, 7) == 154_143_080
    sheet = ps.census(hands)
    assert {ln.line: ln.count for ln in sheet.lines} == CENSUS


@pytest.mark.parametrize("deck_name", list(REDUCED_DECKS))
def test_brute_force_on_a_reduced_deck_agrees_line_by_line_for_every_pay_table(
    deck_name: str,
) -> None:
    """Every pay table, both royal-match choices, the progressive at three meters and both
    wagers, under both settings of the ranking options (NY (c)(2)-(4))."""
    deck = REDUCED_DECKS[deck_name]
    brutes = ps.brute_force(combinations(deck.cards, 7), BOTH_OPTIONS, deck)
    for opts, brute in zip(BOTH_OPTIONS, brutes, strict=True):
        method = ps.seven_cards(deck, opts)
        assert method.total == brute.total == math.comb(len(deck.cards), 7)
        for ours, theirs in zip(_sheets(method), _sheets(brute), strict=True):
            assert [(ln.line, ln.count, ln.pays) for ln in ours.lines] == [
                (ln.line, ln.count, ln.pays) for ln in theirs.lines
            ], f"{deck_name}, {opts}: {ours.name}"
            assert ours.ret == theirs.ret and ours.figures == theirs.figures, ours.name


def test_the_reduced_decks_reach_the_rare_lines() -> None:
    """The brute-force comparison is only as good as the lines it reaches: between them the
    reduced decks make every kind of hand the tables pay, the rare ones included."""
    reached: set[str] = set()
    for deck in REDUCED_DECKS.values():
        hands = ps.seven_cards(deck)
        for sheet in _sheets(hands):
            reached |= {f"{sheet.wager}:{ln.line}" for ln in sheet.lines if ln.count}
    for line in (
        "census:five-aces",
        "census:natural-royal-flush",
        "census:royal-flush-with-joker",
        "census:straight-flush",
        "fortune-bonus:seven-card-straight-flush-no-joker",
        "fortune-bonus:seven-card-straight-flush-with-joker",
        "fortune-bonus:royal-flush-plus-royal-match",
        "seven-card:straight-flush-no-joker",
        "seven-card:straight-flush-with-joker",
        "insurance:jack-high",
        "imperial-banker:jack-high",
        "progressive:natural-royal-flush-and-pair",
        "progressive:five-aces-and-pair",
        "progressive:four-of-a-kind-and-pair",
    ):
        assert line in reached, line


@full_deck_group
def test_sampled_estimate_with_the_real_evaluator_agrees_within_its_standard_error() -> None:
    """2,000 seeded hands of the full deck evaluated one by one: every table's return lies within
    four standard errors of the exact figure (a fixed seed: the test is repeatable)."""
    rng = random.Random(13)
    deck = list(FULL_DECK.cards)
    sample = [tuple(rng.sample(deck, 7)) for _ in range(2_000)]
    exact = ps.full_deck()
    (sampled,) = ps.brute_force(sample)
    progressive = ProgressiveTable.load()
    pairs = [(ps.bonus_sheet(t, exact), ps.bonus_sheet(t, sampled)) for t in SEVEN_CARD_TABLES]
    pairs.append(
        (
            ps.progressive_sheet(progressive, exact, 100_000),
            ps.progressive_sheet(progressive, sampled, 100_000),
        )
    )
    for full, est in pairs:
        n = est.hands
        mean = sum((ln.contribution for ln in est.lines), Fraction(0))
        # per-hand return of line i is contribution_i / probability_i
        second = sum(
            (ln.contribution**2 / ln.probability for ln in est.lines if ln.count), Fraction(0)
        )
        se = math.sqrt(float(second - mean**2) / n)
        exact_ret = sum((ln.contribution for ln in full.lines), Fraction(0))
        assert abs(float(mean - exact_ret)) <= 4 * se + 1e-12, (full.name, mean, exact_ret, se)
        # and line by line: each count within four binomial standard deviations (plus one hand)
        for exact_line, seen in zip(full.lines, est.lines, strict=True):
            p = float(exact_line.probability)
            sd = math.sqrt(n * p * (1 - p))
            assert abs(seen.count - n * p) <= 4 * sd + 1, (full.name, exact_line.line)


@full_deck_group
def test_progressive_jackpots_match_the_counts_by_hand_k4() -> None:
    """NY 5324.41(k)(4): a natural royal flush and a pair is 4 suits x 66 pairs of the other 48
    cards (8 ranks x 6 + 5 ranks x 3 + the joker with 3 aces) = 264 hands; five aces and a pair
    is 12 ranks x 6 = 72 hands. At a meter of $1,000 both pay the whole meter."""
    sheet = ps.progressive_sheet(ProgressiveTable.load(), ps.full_deck(), 100_000)
    counts = {ln.line: ln.count for ln in sheet.lines}
    assert counts["natural-royal-flush-and-pair"] == 4 * (8 * 6 + 5 * 3 + 3) == 264
    assert counts["five-aces-and-pair"] == 12 * 6 == 72
    assert sum(counts.values()) == 154_143_080


@full_deck_group
def test_progressive_return_is_linear_in_the_meter_and_breaks_even_k4() -> None:
    table = ProgressiveTable.load()
    hands = ps.full_deck()
    low = ps.progressive_sheet(table, hands, 1_000_000)
    high = ps.progressive_sheet(table, hands, 2_000_000)
    a, b = low.figures["return_a"], low.figures["return_b_per_meter_cent"]
    assert isinstance(a, Fraction) and isinstance(b, Fraction) and b > 0
    assert high.figures["return_a"] == a and high.figures["return_b_per_meter_cent"] == b
    assert low.ret == a + b * 1_000_000 and high.ret == a + b * 2_000_000  # whole-cent shares
    breakeven = low.figures["break_even_meter_cents"]
    assert isinstance(breakeven, Fraction)
    at = ps.progressive_sheet(table, hands, math.ceil(breakeven))
    assert at.ret is not None and abs(at.ret - 1) < b * 200  # shares rounded down to the cent


@full_deck_group
def test_meter_deductions_are_the_payouts_of_50_dollars_or_straight_flushes_k5() -> None:
    sheet = ps.progressive_sheet(ProgressiveTable.load(), ps.full_deck(), 100_000, 100)
    deducted = {ln.line for ln in sheet.lines if ln.deducted}
    assert "straight-flush" in deducted  # $25, but a straight flush
    assert "four-of-a-kind-and-pair" not in deducted  # $40
    assert "royal-flush" in deducted  # $100
    five = ps.progressive_sheet(ProgressiveTable.load(), ps.full_deck(), 100_000, 500)
    assert "four-of-a-kind-and-pair" not in {ln.line for ln in five.lines if ln.deducted}  # $200


def test_three_card_bonus_counts_every_three_card_hand_o1() -> None:
    sheet = ps.three_card_sheet(load_builtin("three-card"))
    assert sheet.hands == math.comb(53, 3) == 23_426
    counts = {ln.line: ln.count for ln in sheet.lines}
    assert sum(counts.values()) == 23_426
    # natural straight flushes: 4 suits x 12 runs (A-2-3 ... Q-K-A)
    assert counts["straight-flush-no-joker"] == 48


def test_side_wager_return_follows_the_odds_rounded_down_to_the_dollar_j2vi() -> None:
    six = ps.side_sheet(load_builtin("side-1-7-6"))
    assert six.figures["return_by_wager_cents"] == {
        str(w): Fraction(1) for w in ps.SIDE_WAGERS_CENTS
    }
    half = ps.side_sheet(load_builtin("side-1-7-5.5"))
    by = half.figures["return_by_wager_cents"]
    assert isinstance(by, dict)
    assert by["100"] == Fraction(1 + 5, 7)  # 5.5:1 on $1 wins $5
    assert by["200"] == Fraction(2 + 11, 7 * 2)


def test_enumeration_counts_every_hand_of_a_reduced_deck_once() -> None:
    for deck in REDUCED_DECKS.values():
        assert enumerate_hands(deck).total == math.comb(len(deck.cards), 7)


@full_deck_group
def test_the_jackpot_check_on_royal_and_five_aces_hands_equals_the_full_enumeration() -> None:
    """``tablectl config check`` evaluates only the hands holding a natural royal flush or five
    aces; at every meter and wager that gives the full enumeration's jackpot counts."""
    table = ProgressiveTable.load()
    for meter in (0, 100_000, 250_000, 10_000_000):
        for wager in (100, 500):
            fast = ps.jackpot_probabilities(table, meter, wager)
            assert fast == ps.jackpot_probabilities(table, meter, wager, exhaustive=True)
            assert set(fast) == set(ps.jackpot_lines(table))


def test_the_jackpot_check_s_suit_classes_pay_as_every_hand_nj_13_69d_1_52e() -> None:
    """The jackpot check (NJ 13:69D-1.52(e), ``tablectl config check``) evaluates one hand of
    each class of suit renamings; for every shipped progressive pay table it counts each line as
    evaluating all 5,640 royal-flush and five-aces hands one by one does."""
    from fsm.rules.progressive import DATA_DIR

    classes = ps._royal_or_five_aces_classes()
    assert sum(count for _, count in classes) == 5640
    assert len(classes) < 5640 // 10  # one evaluation a class, not a hand
    every = list(ps._royal_or_five_aces_hands())
    for path in sorted(DATA_DIR.glob("*.toml")):
        table = ProgressiveTable.load(str(path))
        for meter in (0, 10_000_000):
            one_by_one: dict[str | None, int] = {}
            for hand in every:
                line = table.best_line(hand, meter, ps.DEFAULT_OPTIONS, 100)
                one_by_one[line] = one_by_one.get(line, 0) + 1
            by_class: dict[str | None, int] = {}
            for hand, count in classes:
                line = table.best_line(hand, meter, ps.DEFAULT_OPTIONS, 100)
                by_class[line] = by_class.get(line, 0) + count
            assert by_class == one_by_one, path.name
