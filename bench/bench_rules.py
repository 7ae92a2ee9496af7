"""Five-card evaluation speed against phevaluator (C-backed) on the same joker-free hands.

``five_card_vs_phevaluator`` = our evaluations per second / phevaluator's, measured in the same
process on the same hands (target at least 0.3). Raw rates are reported beside the ratio.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

from phevaluator import evaluate_cards

from fsm.rules.ranking import DEFAULT_OPTIONS, value5

HANDS = 200_000
ROUNDS = 5


def _best_rate(fn: Callable[[Sequence[int]], object], hands: list[tuple[int, ...]]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for h in hands:
            fn(h)
        best = min(best, time.perf_counter() - start)
    return len(hands) / best


def run() -> dict[str, float | int | str]:
    rng = random.Random(20261129)
    hands = [tuple(rng.sample(range(52), 5)) for _ in range(HANDS)]  # 0..51: no joker
    value5(hands[0], DEFAULT_OPTIONS)  # build the lookup tables outside the timing

    def ours(h: Sequence[int]) -> object:
        return value5(h, DEFAULT_OPTIONS)

    def theirs(h: Sequence[int]) -> object:
        return evaluate_cards(*h)

    # alternate the two sides so drift on a noisy machine hits both alike
    our_rate = their_rate = 0.0
    for _ in range(2):
        our_rate = max(our_rate, _best_rate(ours, hands))
        their_rate = max(their_rate, _best_rate(theirs, hands))
    return {
        "five_card_evals_per_second": round(our_rate),
        "phevaluator_evals_per_second": round(their_rate),
        "five_card_vs_phevaluator": round(our_rate / their_rate, 3),
    }
