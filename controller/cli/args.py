"""Argument types of the command line: whole numbers and seconds within stated bounds.

Responsible for refusing, while the arguments are parsed (argparse's exit 2 with a message that
names the option), a number no command could mean: NaN, infinity, a count or an amount past its
bound (``--rounds 99999999999999999999999``). Every ``type=`` of ``controller/cli`` is one of these
or a ``choices`` list (tests/test_cli_hostile.py checks every option of every command, so a new
command is covered). Must never hold a game rule or touch a file.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from fsm.configread import MAX_CENTS

#: A seed, a count or an id the CLI takes: at most a signed 64-bit integer.
MAX_WHOLE = 2**63 - 1


class BoundedInt:
    """``type=`` of a whole number ``lo..hi`` (ASCII digits, optional sign)."""

    def __init__(self, lo: int, hi: int, what: str = "a whole number") -> None:
        self.lo, self.hi, self.what = lo, hi, what
        self.__name__ = what  # argparse names the type in its message

    def __call__(self, text: str) -> int:
        value = text.strip()
        digits = value[1:] if value[:1] in "+-" else value
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 20:
            raise argparse.ArgumentTypeError(
                f"must be {self.what} {self.lo}..{self.hi}, got {text[:40]!r}"
            )
        number = int(value)
        if not self.lo <= number <= self.hi:
            raise argparse.ArgumentTypeError(
                f"must be {self.what} {self.lo}..{self.hi}, got {number}"
            )
        return number


class BoundedSeconds:
    """``type=`` of a finite number of seconds ``lo..hi`` (never NaN or infinity)."""

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = lo, hi
        self.__name__ = "seconds"

    def __call__(self, text: str) -> float:
        try:  # ASCII only: float() takes "\u0661" (an Arabic-Indic one) and "1_0"
            value = float(text) if text.isascii() and "_" not in text else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not self.lo <= value <= self.hi:
            raise argparse.ArgumentTypeError(
                f"must be a finite number of seconds {self.lo:g}..{self.hi:g}, got {text[:40]!r}"
            )
        return value


def whole(lo: int, hi: int = MAX_WHOLE, what: str = "a whole number") -> Callable[[str], int]:
    return BoundedInt(lo, hi, what)


def cents(lo: int = 0) -> Callable[[str], int]:
    """An amount of money in whole cents, ``lo``..`MAX_CENTS`."""
    return BoundedInt(lo, MAX_CENTS, "whole cents")


def seconds(lo: float, hi: float) -> Callable[[str], float]:
    return BoundedSeconds(lo, hi)


#: The types an option may have (the test of every command checks each option against these).
BOUNDED_TYPES = (BoundedInt, BoundedSeconds)
