"""The starting-position random number generator (table-rules.md, NJ 13:69E-1.28G) and the
statistics a test lab runs on it.

Responsible for one thing: drawing a number 1..7, every value equally likely, from the operating
system's CSPRNG. The source is `read_csprng` (``os.urandom``: getrandom(2), seeded by the kernel
from an uncontrolled source, never the same sequence after a restart); the scaling is `scale`, one
byte at a time: a byte b below 252 (= 36 x 7) gives b mod 7 + 1, a byte 252..255 is rejected and
another read (rejection sampling: no modulo bias; the proof is docs/rng.md). `draw_position` is
exactly `scale(read_csprng)`, and `tablectl rng dump` calls the same `scale` (controller/lab), so
the lab's dump is the round's draw. The owner thread draws exactly once per ``draw_rng`` effect and
journals the value as ``rng_drawn``.

A seeded source (`SeededDraw`) exists for the simulated table only: `tablectl simulate --seed`
uses it so a run is repeatable. It must never be used by `tablectl run` (real hardware), and this
module must never cache, pre-draw, reuse or re-select a value.

The goodness-of-fit helpers (`chi_square`, `runs_z`, `serial_correlation_z`) are the checks of
table-rules.md ("chi-square, runs and serial-correlation tests at the 99% confidence level"); the
critical values are cited constants, not computed here.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Sequence
from itertools import pairwise

POSITIONS = 7

#: A source of starting positions: returns an int 1..7 on each call.
DrawSource = Callable[[], int]

#: Chi-square critical value, 6 degrees of freedom (7 cells), upper 1% (99% level): 16.812
#: (NIST/SEMATECH e-Handbook of Statistical Methods, table 1.3.6.7.4).
CHI2_CRITICAL_6DF_99 = 16.812
#: Chi-square critical value, 48 degrees of freedom (7 x 7 serial pairs), upper 1%: 73.683
#: (same table).
CHI2_CRITICAL_48DF_99 = 73.683
#: Two-sided standard normal critical value at the 99% level: 2.576 (z_{0.995}).
Z_CRITICAL_99 = 2.576


#: A source of raw random bytes: ``read(n)`` returns ``n`` bytes.
ByteSource = Callable[[int], bytes]

#: A byte below this is accepted: 252 = 36 x 7, the largest multiple of 7 not above 256, so each
#: value 1..7 has exactly 36 of the 252 accepted bytes (docs/rng.md, "The scaling").
ACCEPT_BELOW = (256 // POSITIONS) * POSITIONS
#: Rejected bytes in a row after which the source is taken as broken (an RNG_FAILURE fault, never
#: a value): a working source does this with probability (4/256)^64, below 10^-115.
MAX_REJECTIONS = 64


class RngError(RuntimeError):
    """The byte source failed: a short read, or a run of rejected bytes no working source makes."""


def read_csprng(n: int) -> bytes:
    """``n`` bytes of the operating system's CSPRNG (getrandom(2)): the production source."""
    return os.urandom(n)


def scale(read: ByteSource) -> tuple[int, bytes]:
    """One starting position 1..7 from ``read``, one byte at a time, with the bytes it consumed.

    A byte b < `ACCEPT_BELOW` (252) gives ``b % 7 + 1``; a byte 252..255 is rejected and the next
    one read. The round's draw (`draw_position`) and the lab's dump both call this function."""
    consumed = b""
    for _ in range(MAX_REJECTIONS + 1):
        byte = read(1)
        if len(byte) != 1:
            raise RngError(f"rng: the byte source returned {len(byte)} bytes, expected 1")
        consumed += byte
        if byte[0] < ACCEPT_BELOW:
            return byte[0] % POSITIONS + 1, consumed
    raise RngError(f"rng: {MAX_REJECTIONS + 1} rejected bytes in a row: the source is broken")


def draw_with_bytes() -> tuple[int, bytes]:
    """One production draw and the raw bytes it consumed: `scale` over `read_csprng`. The round
    (`draw_position`) and `tablectl rng dump` both make exactly this call."""
    return scale(read_csprng)


def draw_position() -> int:
    """One starting position 1..7 from the OS CSPRNG (the only source for real hardware)."""
    return draw_with_bytes()[0]


class SeededDraw:
    """A repeatable source of positions 1..7 for the SIMULATED table only (``--seed``)."""

    def __init__(self, seed: int | str) -> None:
        self._random = random.Random(f"rng:{seed}")

    def __call__(self) -> int:
        return self._random.randrange(POSITIONS) + 1


def check_draw(value: object) -> int:
    """The value a draw source returned, checked to be an int 1..7 (ValueError otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= POSITIONS:
        raise ValueError(f"rng: draw source returned {value!r}, expected an int 1..{POSITIONS}")
    return value


# --------------------------------------------------------------------------------- statistics
def counts(draws: Sequence[int]) -> list[int]:
    """How many times each value 1..7 occurs in ``draws`` (index 0 = value 1)."""
    out = [0] * POSITIONS
    for value in draws:
        out[value - 1] += 1
    return out


def chi_square(observed: Sequence[int]) -> float:
    """Pearson's chi-square statistic of ``observed`` cell counts against equal expectation."""
    total = sum(observed)
    if total == 0:
        raise ValueError("chi_square: no observations")
    expected = total / len(observed)
    return sum((o - expected) ** 2 / expected for o in observed)


def serial_pairs_chi_square(draws: Sequence[int]) -> float:
    """Chi-square of the 49 non-overlapping pairs (x[2i], x[2i+1]) against equal expectation:
    a serial test (each value must not favour any successor). 48 degrees of freedom."""
    cells = [0] * (POSITIONS * POSITIONS)
    for i in range(0, len(draws) - 1, 2):
        cells[(draws[i] - 1) * POSITIONS + draws[i + 1] - 1] += 1
    return chi_square(cells)


def runs_z(draws: Sequence[int]) -> float:
    """Wald-Wolfowitz runs test z-score on the sequence dichotomised above / below the middle
    value 4 (draws of 4 are left out). Too few runs (clumping) or too many (alternation) give a
    large |z|."""
    signs = [value > 4 for value in draws if value != 4]
    n = len(signs)
    n_high = sum(signs)
    n_low = n - n_high
    if n_high == 0 or n_low == 0:
        raise ValueError("runs_z: the sequence never crosses the middle value")
    runs = 1 + sum(1 for a, b in pairwise(signs) if a != b)
    mean = 2 * n_high * n_low / n + 1
    variance = (mean - 1) * (mean - 2) / (n - 1)
    return (runs - mean) / math.sqrt(variance)


def serial_correlation_z(draws: Sequence[int], lag: int = 1) -> float:
    """Lag-``lag`` serial correlation coefficient times sqrt(n): about standard normal for an
    independent sequence."""
    n = len(draws) - lag
    if n < 2:
        raise ValueError("serial_correlation_z: too few draws")
    mean = sum(draws) / len(draws)
    dev = [x - mean for x in draws]
    variance = sum(d * d for d in dev) / len(draws)
    if variance == 0:
        raise ValueError("serial_correlation_z: constant sequence")
    cov = sum(dev[i] * dev[i + lag] for i in range(n)) / n
    return cov / variance * math.sqrt(n)
