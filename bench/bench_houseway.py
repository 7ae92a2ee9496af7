"""Benchmark of the house way: settings per second on seeded random hands, and a ratio against a
brute-force setter (best of the 21 splits by high value then low value) measured in the same run.

Responsible only for timing; the figures are relative (no target). Must never assert a speed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from itertools import combinations

from fsm.rules.cards import Card
from fsm.rules.houseway import HouseWay
from fsm.rules.ranking import (
    DEFAULT_OPTIONS,
    RankingOptions,
    Value,
    high_at_least_low,
    value2,
    value5,
)

SEED = 20261129
HANDS = 20_000
_SPLITS = tuple(
    ((i, j), tuple(k for k in range(7) if k not in (i, j))) for i, j in combinations(range(7), 2)
)


def brute_force_setting(
    cards: Sequence[Card], opts: RankingOptions = DEFAULT_OPTIONS
) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    """The baseline: of the 21 splits that do not foul, the best by (high value, low value)."""
    best: tuple[Value, Value] | None = None
    chosen: tuple[tuple[Card, ...], tuple[Card, ...]] = ((), ())
    for front_idx, back_idx in _SPLITS:
        back = tuple(cards[k] for k in back_idx)
        front = tuple(cards[k] for k in front_idx)
        hv, lv = value5(back, opts), value2(front)
        if high_at_least_low(hv, lv) and (best is None or (hv, lv) > best):
            best, chosen = (hv, lv), (back, front)
    return chosen


def _hands(n: int, seed: int) -> list[list[Card]]:
    rng = random.Random(seed)
    deck = list(range(53))
    return [rng.sample(deck, 7) for _ in range(n)]


def run() -> dict[str, float | int | str]:
    hands = _hands(HANDS, SEED)
    way = HouseWay.load("reference")
    # warm-up: ranking tables and the way file are built once, outside the timed loops
    for cards in hands[:200]:
        way.set(cards, DEFAULT_OPTIONS)
        brute_force_setting(cards, DEFAULT_OPTIONS)

    start = time.perf_counter()
    for cards in hands:
        way.set(cards, DEFAULT_OPTIONS)
    ours = time.perf_counter() - start

    start = time.perf_counter()
    for cards in hands:
        brute_force_setting(cards, DEFAULT_OPTIONS)
    brute = time.perf_counter() - start

    return {
        "houseway_settings_per_second": round(len(hands) / ours),
        "houseway_vs_brute_force_ratio": round(brute / ours, 2),
    }


if __name__ == "__main__":
    print(run())
