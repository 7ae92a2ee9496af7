"""The starting-position RNG: uniform 1..7 without modulo bias, independent draws
(table-rules.md "Random number generator": NJ 13:69E-1.28G, GLI-11 style chi-square, runs and
serial-correlation tests at the 99% confidence level).

A test at the 99% level rejects a perfect generator 1% of the time. So each statistical test on
the CSPRNG draws a fresh sample and, only if the first exceeds the critical value, a second one:
the test fails when two independent samples both fail (false alarm 1 in 10,000), while a biased
generator fails both by a wide margin (see the modulo-bias tests, which must fail the same check).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from controller.service import rng

N_DRAWS = 700_000


def _draws(source: Callable[[], int], n: int = N_DRAWS) -> list[int]:
    return [source() for _ in range(n)]


def _twice(statistic: Callable[[list[int]], float], critical: float) -> list[float]:
    """The statistic of up to two fresh CSPRNG samples; stops at the first that passes."""
    seen: list[float] = []
    for _ in range(2):
        value = statistic(_draws(rng.draw_position))
        seen.append(value)
        if abs(value) < critical:
            break
    return seen


def _modulo_biased(seed: int) -> Callable[[], int]:
    """The classic mistake: a random byte modulo 7 (256 = 36*7 + 4, so 1..4 are favoured)."""
    r = random.Random(seed)
    return lambda: r.getrandbits(8) % 7 + 1


def test_draw_position_is_always_1_to_7_and_reaches_every_value_starting_position() -> None:
    """table-rules.md: one number 1-7; every position can be selected."""
    draws = _draws(rng.draw_position, 5_000)
    assert set(draws) == {1, 2, 3, 4, 5, 6, 7}


def test_chi_square_helper_matches_hand_computed_value() -> None:
    # counts 1..7, total 28, expected 4: (9+4+1+0+1+4+9)/4 = 7.0
    assert rng.chi_square([1, 2, 3, 4, 5, 6, 7]) == pytest.approx(7.0)
    assert rng.chi_square([5] * 7) == 0.0


def test_runs_helper_matches_hand_computed_value() -> None:
    # signs low,high,low,high: 4 runs; n1 = n2 = 2: mean 3, variance 2/3 -> z = 1/sqrt(2/3)
    assert rng.runs_z([1, 7, 1, 7]) == pytest.approx(1 / (2 / 3) ** 0.5)
    # 4s are left out of the runs test
    assert rng.runs_z([1, 4, 7, 4, 1, 7]) == pytest.approx(rng.runs_z([1, 7, 1, 7]))


def test_csprng_passes_chi_square_goodness_of_fit_at_99_percent_rng() -> None:
    """NJ 13:69E-1.28G / table-rules.md: 700,000 draws, 7 cells, 6 degrees of freedom, critical
    value 16.812 at the 99% level."""
    seen = _twice(lambda d: rng.chi_square(rng.counts(d)), rng.CHI2_CRITICAL_6DF_99)
    assert seen[-1] < rng.CHI2_CRITICAL_6DF_99, f"chi-square statistics {seen}"


def test_modulo_biased_generator_fails_the_same_chi_square_check() -> None:
    """The check must be able to fail: byte % 7 favours 1..4 by 1/36, which 700,000 draws show."""
    statistic = rng.chi_square(rng.counts(_draws(_modulo_biased(7))))
    assert statistic > rng.CHI2_CRITICAL_6DF_99


def test_csprng_passes_runs_test_at_99_percent_rng() -> None:
    """Runs above/below the middle value: |z| < 2.576 (two-sided 99%)."""
    seen = _twice(rng.runs_z, rng.Z_CRITICAL_99)
    assert abs(seen[-1]) < rng.Z_CRITICAL_99, f"runs z-scores {seen}"


def test_csprng_passes_serial_correlation_test_at_99_percent_rng() -> None:
    """Lag-1 serial correlation: |r * sqrt(n)| < 2.576 (two-sided 99%)."""
    seen = _twice(rng.serial_correlation_z, rng.Z_CRITICAL_99)
    assert abs(seen[-1]) < rng.Z_CRITICAL_99, f"serial correlation z-scores {seen}"


def test_csprng_passes_serial_pairs_test_at_99_percent_rng() -> None:
    """49 successive pairs, 48 degrees of freedom, critical value 73.683 at the 99% level."""
    seen = _twice(rng.serial_pairs_chi_square, rng.CHI2_CRITICAL_48DF_99)
    assert seen[-1] < rng.CHI2_CRITICAL_48DF_99, f"serial pair statistics {seen}"


def test_correlated_sequence_fails_serial_and_runs_checks() -> None:
    """The checks must be able to fail: a sequence that repeats each draw once (x, x, y, y, ...)
    is uniform but not independent."""
    r = random.Random(3)
    draws: list[int] = []
    for _ in range(50_000):
        value = r.randrange(7) + 1
        draws += [value, value]
    assert abs(rng.serial_correlation_z(draws)) > rng.Z_CRITICAL_99
    assert abs(rng.runs_z(draws)) > rng.Z_CRITICAL_99
    assert rng.chi_square(rng.counts(draws)) < rng.CHI2_CRITICAL_6DF_99


def test_seeded_draw_is_repeatable_and_only_for_simulation() -> None:
    """The simulator's seeded source repeats with the same seed; the real draw is from secrets."""
    a, b = rng.SeededDraw(42), rng.SeededDraw(42)
    assert [a() for _ in range(50)] == [b() for _ in range(50)]
    assert all(1 <= rng.SeededDraw(1)() <= 7 for _ in range(10))
    assert rng.draw_position.__module__ == "controller.service.rng"


@pytest.mark.parametrize("bad", [0, 8, -1, True, 3.0, "3", None])
def test_check_draw_refuses_a_value_outside_1_to_7(bad: object) -> None:
    with pytest.raises(ValueError, match="rng: draw source returned"):
        rng.check_draw(bad)
