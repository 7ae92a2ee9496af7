"""The jackpot check of NJ 13:69D-1.52(e) (no jackpot won less often than 1 in 100,000,000 hands)
that ``tablectl config check`` runs on a table's progressive pay table, without the rank tables.

When every jackpot (line paid as a share of the meter) is one only a natural royal flush or five
aces can claim, which line each of those 5,640 hands is paid depends on the pay table and the
meter only through the set of lines the hand claims; `fsm.rules.jackpot_census` stores how many
hands claim each set, computed from the rules by ``fsm.rules.parsheet.royal_or_five_aces_census``
(tests/test_jackpot_census.py keeps the two equal, and these answers equal the par sheet's).
Any other jackpot needs every hand: the par sheet's full enumeration (``fsm.rules.parsheet``).

Must never do I/O or hold a rule of its own: the lines and their pay are the table's.
"""

from __future__ import annotations

from fractions import Fraction

from fsm.rules.jackpot_census import CENSUS
from fsm.rules.progressive import ProgressiveTable
from fsm.rules.ranking import DEFAULT_OPTIONS, RankingOptions

#: NJ 13:69D-1.52(e): the probability of each jackpot no worse than 1 in 100,000,000.
JACKPOT_ODDS_LIMIT = 100_000_000
#: All C(53,7) seven-card hands of the 53-card deck.
ALL_HANDS = 154_143_080
#: The lines only a hand holding a natural royal flush or five aces can claim.
ROYAL_OR_FIVE_ACES_LINES = frozenset(
    {"natural-royal-flush", "natural-royal-flush-and-pair", "five-aces", "five-aces-and-pair"}
)


def jackpot_lines(table: ProgressiveTable) -> tuple[str, ...]:
    """The lines paid as a share of the meter: the jackpots of NJ 13:69D-1.52(e)."""
    return tuple(line.name for line in table.lines if line.from_meter)


def jackpot_probabilities(
    table: ProgressiveTable,
    meter_cents: int,
    wager_cents: int = 100,
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> dict[str, Fraction]:
    """The probability that a hand is paid each jackpot with the meter at ``meter_cents``,
    exactly (``fsm.rules.parsheet.jackpot_probabilities``'s figures)."""
    jackpots = jackpot_lines(table)
    if not set(jackpots) <= ROYAL_OR_FIVE_ACES_LINES:
        from fsm.rules import parsheet  # every hand: the rank tables, seconds

        return parsheet.jackpot_probabilities(table, meter_cents, wager_cents, opts)
    paid: dict[str, int] = {}
    for claims, count in CENSUS[(opts.ace_low_straight, opts.joker_flush)]:
        best = table.best_of(
            claims,
            wager_cents,
            lambda name: table.payout_cents(name, wager_cents, meter_cents),
        )
        if best is not None:
            paid[best[0]] = paid.get(best[0], 0) + count
    return {name: Fraction(paid.get(name, 0), ALL_HANDS) for name in jackpots}


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


def one_in(p: Fraction) -> str:
    """A probability as a filing says it: "1 in 34,163" (or "none of the 154,143,080")."""
    return "none of the 154,143,080" if p == 0 else f"1 in {float(1 / p):,.0f}"
