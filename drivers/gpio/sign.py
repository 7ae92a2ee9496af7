"""What the progressive meter sign shows: each level's amount, or "WIN", the winning areas and
what each hit pays.

Responsible for the sign's text and its seven-segment font (NY 5324.41(a)(4) with 5324.2(l): the
progressive meter is shown to the players; PA 605a.7(1)); the devices that show it are
``drivers.gpio.max7219.Max7219MeterSign`` (an 8-digit MAX7219 module per shown level; on the
simulated table over ``SimulatedChain``, whose registers the page draws).
Must never see, and so never show, a level's hidden (reserve) or overflow amount: its input is
:class:`SignLevel`, which carries only the displayed amount. Never touches a pin.

Text: one string per 8-digit module, one character per digit except ``W`` (two digits: a
seven-segment digit cannot draw a W) and ``.`` (the decimal point of the digit before it).
Amounts are dollars and cents, right-aligned (``"  1000.00"``: eight digits); from $1,000,000
whole dollars (``" 1234567"``); beyond eight digits of dollars, dashes. A level with a hit
pending or being paid shows ``"WIN"`` and the areas (``"WIN   3"``; two hits on one level:
``"WIN  3.5"``), turn about with the amount each of those hits pays (``"  100.00"`` for a $100
royal flush, the meter's amount for a share of it), one per page (the reader turns the page).

The font, drawn three rows high as :func:`draw` draws it (tests compare these drawings)::

     _       _   _       _   _   _   _   _
    | |   |  _|  _| |_| |_  |_    | |_| |_|      _  | |   | |    _
    |_|   | |_   _|   |  _| |_|   | |_|  _|         |_|  _| |   | |    .
     0   1   2   3   4   5   6   7   8   9 blank -      W     I   N  dp

``"WIN   3"`` (a hit pending on area 3) and ``"  1000.00"`` ($1,000.00)::

                                 _
    | |   | |    _               _|
    |_|  _| |   | |              _|

                 _   _   _   _   _
              | | | | | | | | | | |
              | |_| |_| |_|.|_| |_|
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

DIGITS_PER_MODULE = 8

Segments = tuple[int, int, int, int, int, int, int]

#: Segment states (a, b, c, d, e, f, g) of each character of the sign; 1 = lit. "W" is drawn on
#: two digits: its left half is FONT["W"], its right half WIDE_RIGHT.
FONT: MappingProxyType[str, Segments] = MappingProxyType(
    {
        #      a  b  c  d  e  f  g
        "0": (1, 1, 1, 1, 1, 1, 0),
        "1": (0, 1, 1, 0, 0, 0, 0),
        "2": (1, 1, 0, 1, 1, 0, 1),
        "3": (1, 1, 1, 1, 0, 0, 1),
        "4": (0, 1, 1, 0, 0, 1, 1),
        "5": (1, 0, 1, 1, 0, 1, 1),
        "6": (1, 0, 1, 1, 1, 1, 1),
        "7": (1, 1, 1, 0, 0, 0, 0),
        "8": (1, 1, 1, 1, 1, 1, 1),
        "9": (1, 1, 1, 1, 0, 1, 1),
        " ": (0, 0, 0, 0, 0, 0, 0),
        "-": (0, 0, 0, 0, 0, 0, 1),
        "W": (0, 1, 1, 1, 1, 1, 0),  # left half "|_|"
        "I": (0, 0, 0, 0, 1, 1, 0),
        "N": (0, 0, 1, 0, 1, 0, 1),  # "n"
    }
)
WIDE_RIGHT: Segments = (0, 1, 1, 1, 0, 0, 0)  # right half of W "_|"


@dataclass(frozen=True)
class Cell:
    """One digit of a module: its segments a..g and its decimal point."""

    segments: Segments
    dp: bool = False


@dataclass(frozen=True)
class SignLevel:
    """One level as the sign shows it: the displayed amount, and the areas (1..6) of hits on
    it that are pending or being paid. Deliberately nothing else (no reserve, no overflow)."""

    name: str
    display_cents: int
    wins: tuple[int, ...] = ()
    # what each hit of ``wins`` pays (in the same order; an unknown amount is left out)
    win_cents: tuple[int, ...] = ()


def amount_text(cents: int) -> str:
    """``cents`` as the sign writes it in eight digits (see the module docstring)."""
    if cents < 0:
        raise ValueError(f"sign amount {cents}: a meter is never negative")
    dollars, rest = divmod(cents, 100)
    text = f"{dollars}.{rest:02d}" if dollars < 1_000_000 else str(dollars)
    if len(text.replace(".", "")) > DIGITS_PER_MODULE:
        text = "-" * DIGITS_PER_MODULE
    return text.rjust(DIGITS_PER_MODULE + text.count("."))


def win_text(areas: Sequence[int]) -> str:
    """``"WIN"`` and up to four winning areas, right-aligned, separated by decimal points."""
    shown = sorted(set(areas))[:4]
    for area in shown:
        if isinstance(area, bool) or not 1 <= area <= 9:
            raise ValueError(f"sign area {area!r}: expected a betting area 1..9")
    tail = ".".join(str(a) for a in shown)
    free = DIGITS_PER_MODULE - 4  # W takes two digits, I and N one each
    return "WIN" + tail.rjust(free + tail.count("."))


def level_text(level: SignLevel, page: int = 0) -> str:
    """A level's text on ``page``: its amount; with a win, "WIN" and the areas, then in turn
    what each of those hits pays (NY 5324.41(a)(4): the players see the win and its amount)."""
    if not level.wins:
        return amount_text(level.display_cents)
    turns = [win_text(level.wins), *(amount_text(c) for c in level.win_cents)]
    return turns[page % len(turns)]


def sign_texts(levels: Sequence[SignLevel], modules: int, page: int = 0) -> tuple[str, ...]:
    """The text of each of ``modules`` modules: level i on module i. With more levels than
    modules the levels are shown a page at a time (``page`` counts up; the reader turns it),
    except that a level with a win is always on the first page's modules first."""
    if modules <= 0:
        return ()
    ordered = sorted(levels, key=lambda lv: not lv.wins) if len(levels) > modules else levels
    pages = max(1, -(-len(ordered) // modules))
    start = (page % pages) * modules
    shown = list(ordered[start : start + modules])
    texts = [level_text(lv, page) for lv in shown]
    return tuple(texts + [" " * DIGITS_PER_MODULE] * (modules - len(texts)))


def cells(text: str) -> tuple[Cell, ...]:
    """The digits of one module's text; ValueError for a character the font lacks or a text
    longer than eight digits."""
    out: list[Cell] = []
    for ch in text:
        if ch == ".":
            if not out:
                raise ValueError(f"sign text {text!r}: a decimal point needs a digit before it")
            out[-1] = Cell(out[-1].segments, True)
            continue
        if ch not in FONT:
            raise ValueError(f"sign text {text!r}: no seven-segment drawing for {ch!r}")
        out.append(Cell(FONT[ch]))
        if ch == "W":
            out.append(Cell(WIDE_RIGHT))
    if len(out) > DIGITS_PER_MODULE:
        raise ValueError(f"sign text {text!r}: {len(out)} digits, the module has 8")
    return tuple([Cell(FONT[" "])] * (DIGITS_PER_MODULE - len(out)) + out)


def draw(row: Sequence[Cell]) -> str:
    """Three text rows of the digits (``_`` and ``|``, ``.`` for a decimal point), trailing
    spaces stripped: how the docs and the tests draw the sign."""
    top, mid, bottom = [], [], []
    for cell in row:
        a, b, c, d, e, f, g = cell.segments
        top.append(" " + ("_" if a else " ") + "  ")
        mid.append(("|" if f else " ") + ("_" if g else " ") + ("|" if b else " ") + " ")
        bottom.append(
            ("|" if e else " ")
            + ("_" if d else " ")
            + ("|" if c else " ")
            + ("." if cell.dp else " ")
        )
    return "\n".join("".join(r).rstrip() for r in (top, mid, bottom))
