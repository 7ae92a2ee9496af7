"""The statistical tests a lab runs on the scaled 1-7 values, with p-values, fast enough for
10,000,000 values in pure Python (bytes.count, bytes.split, bytes.translate, Counter: no numpy).

Tests (table-rules.md: "chi-square, runs and serial-correlation tests at the 99% confidence
level", GLI-11 style; Knuth, TAOCP vol. 2, 3.3.2): frequency (chi-square, 6 degrees of freedom),
serial pairs (non-overlapping, 48), runs above / below the middle value (Wald-Wolfowitz, normal),
lag-1 serial correlation (normal), and the gap test of each value (chi-square). The p-value
functions (`chi2_sf`, `normal_sf_two_sided`) are the regularized upper incomplete gamma function
and erfc, from the standard library's ``math``.

Values are a ``bytes`` object, one value 1..7 per byte. Pure functions: no file, no clock, no
randomness; must never decide what a lab's verdict is beyond the stated significance level.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass

POSITIONS = 7
#: The significance of each test (the 99% confidence level of table-rules.md).
ALPHA = 0.01
#: Gap lengths 0..GAP_CELLS-1 and ">= GAP_CELLS" are the gap test's cells (48 degrees of
#: freedom; the last cell expects (6/7)^48 = 0.06% of the gaps: about 900 of 1.4 million).
GAP_CELLS = 48


@dataclass(frozen=True)
class TestResult:
    name: str
    statistic: float
    df: int | None  # degrees of freedom of a chi-square; None for a normal z
    p_value: float
    detail: str

    def passed(self, alpha: float = ALPHA) -> bool:
        return self.p_value >= alpha

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "detail": self.detail,
        }


# ------------------------------------------------------------------------------- distributions
def _gamma_series(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x) by its series (x < a + 1)."""
    term = total = 1.0 / a
    n = a
    for _ in range(10_000):
        n += 1
        term *= x / n
        total += term
        if abs(term) < abs(total) * 1e-16:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_continued_fraction(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x) by Lentz's continued fraction (x >= a+1)."""
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with ``df`` degrees of freedom: Q(df/2, x/2)."""
    if df < 1:
        raise ValueError(f"chi2_sf: df must be >= 1, not {df}")
    if x <= 0:
        return 1.0
    a, half = df / 2, x / 2
    if half < a + 1:
        return max(0.0, 1.0 - _gamma_series(a, half))
    return _gamma_continued_fraction(a, half)


def normal_sf_two_sided(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2))


def _pearson(observed: list[int], expected: list[float]) -> float:
    return sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))


# ------------------------------------------------------------------------------------- checks
def _check(values: bytes, minimum: int) -> None:
    if len(values) < minimum:
        raise ValueError(f"need at least {minimum} values, got {len(values)}")
    if values.translate(None, bytes(range(1, POSITIONS + 1))):
        raise ValueError("values must each be 1..7")


def frequency(values: bytes) -> TestResult:
    """Chi-square of the seven values' counts against 1/7 each; 6 degrees of freedom."""
    _check(values, POSITIONS * 5)
    observed = [values.count(v) for v in range(1, POSITIONS + 1)]
    n = len(values)
    x = _pearson(observed, [n / POSITIONS] * POSITIONS)
    return TestResult("frequency (chi-square)", x, 6, chi2_sf(x, 6), f"counts {observed}")


def serial_pairs(values: bytes) -> TestResult:
    """Chi-square of the 49 non-overlapping pairs (x[2i], x[2i+1]) against 1/49 each; 48 degrees
    of freedom: no value favours a successor."""
    _check(values, 2 * 49 * 5)
    pairs = Counter(zip(values[0::2], values[1::2], strict=False))
    observed = [pairs.get((a, b), 0) for a in range(1, 8) for b in range(1, 8)]
    n = len(values) // 2
    x = _pearson(observed, [n / 49] * 49)
    return TestResult("serial pairs (chi-square)", x, 48, chi2_sf(x, 48), f"{n} pairs")


_HIGH_LOW = bytes.maketrans(bytes(range(1, 8)), b"LLL-HHH")


def runs(values: bytes) -> TestResult:
    """Wald-Wolfowitz runs above / below the middle value 4 (4s left out): too few runs
    (clumping) or too many (alternation) give a large |z|."""
    _check(values, 20)
    signs = values.translate(_HIGH_LOW, b"")
    signs = signs.replace(b"-", b"")
    n_high = signs.count(b"H")
    n_low = len(signs) - n_high
    if n_high == 0 or n_low == 0:
        raise ValueError("runs: the sequence never crosses the middle value")
    n = n_high + n_low
    # "LH" and "HL" cannot overlap themselves, so bytes.count finds every change of side
    changes = signs.count(b"LH") + signs.count(b"HL")
    observed = changes + 1
    mean = 2 * n_high * n_low / n + 1
    variance = (mean - 1) * (mean - 2) / (n - 1)
    z = (observed - mean) / math.sqrt(variance)
    return TestResult(
        "runs above/below 4 (normal)",
        z,
        None,
        normal_sf_two_sided(z),
        f"{observed} runs, expected {mean:.1f}",
    )


def serial_correlation(values: bytes) -> TestResult:
    """The lag-1 serial correlation coefficient r of x[i], x[i+1]; r * sqrt(n) is about standard
    normal for an independent sequence."""
    _check(values, 20)
    n = len(values)
    pairs = Counter(itertools.pairwise(values))
    counts = [values.count(v) for v in range(1, 8)]
    sum_x = sum(v * c for v, c in zip(range(1, 8), counts, strict=True))
    sum_xx = sum(v * v * c for v, c in zip(range(1, 8), counts, strict=True))
    sum_lag = sum(a * b * c for (a, b), c in pairs.items())
    mean = sum_x / n
    variance = sum_xx / n - mean * mean
    if variance == 0:
        raise ValueError("serial_correlation: a constant sequence")
    first, last = values[0], values[-1]
    m = n - 1  # pairs
    # covariance of the m pairs around the overall mean
    cov = (sum_lag - mean * (2 * sum_x - first - last) + m * mean * mean) / m
    r = cov / variance
    z = r * math.sqrt(m)
    return TestResult(
        "serial correlation lag 1 (normal)", z, None, normal_sf_two_sided(z), f"r = {r:.3e}"
    )


def gap(values: bytes, value: int, cells: int = GAP_CELLS) -> TestResult:
    """Knuth's gap test for one value: the number of other values between successive
    occurrences is 0, 1, 2, ... with probability p(1-p)^r, p = 1/7; lengths >= ``cells`` are
    one cell. Chi-square with ``cells`` degrees of freedom."""
    _check(values, 1)
    if not 1 <= value <= POSITIONS:
        raise ValueError(f"gap: value must be 1..7, not {value}")
    segments = values.split(bytes([value]))[1:-1]  # the gaps between occurrences
    total = len(segments)
    if total < 5 * cells:
        raise ValueError(f"gap: {total} gaps of {value} are too few for {cells} cells")
    lengths = Counter(min(len(s), cells) for s in segments)
    observed = [lengths.get(r, 0) for r in range(cells + 1)]
    p = 1 / POSITIONS
    expected = [total * p * (1 - p) ** r for r in range(cells)] + [total * (1 - p) ** cells]
    x = _pearson(observed, expected)
    return TestResult(f"gap of {value} (chi-square)", x, cells, chi2_sf(x, cells), f"{total} gaps")


def battery(values: bytes) -> list[TestResult]:
    """Every test above on ``values``: frequency, serial pairs, runs, serial correlation, and the
    gap test of each of the seven values (11 tests)."""
    out = [frequency(values), serial_pairs(values), runs(values), serial_correlation(values)]
    out += [gap(values, v) for v in range(1, POSITIONS + 1)]
    return out


def family_alpha(tests: int, alpha: float = ALPHA) -> float:
    """Bonferroni: each of ``tests`` p-values must be at least alpha / tests for the family to
    pass at ``alpha`` (a perfect generator fails the family with probability at most alpha)."""
    return alpha / tests
