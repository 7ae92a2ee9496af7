"""docs/wiring.md's pin plan is the code's (issue 9 point 5): the table's default BCM numbers are
PinConfig's, every header position in the table and in the drawn header is where that BCM line
really is on the 40-pin header, and the buses stay free."""

from __future__ import annotations

import re
from pathlib import Path

from drivers.gpio.pins import PinConfig

WIRING = Path(__file__).resolve().parents[1] / "docs" / "wiring.md"

# The Raspberry Pi 40-pin header (J8): header pin -> BCM line (the official pinout, not our docs).
HEADER_BCM = {
    3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24, 19: 10,
    21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5, 31: 6, 32: 12, 33: 13, 35: 19,
    36: 16, 37: 26, 38: 20, 40: 21,
}  # fmt: skip
GROUNDS = {6, 9, 14, 20, 25, 30, 34, 39}


def _section(title: str) -> str:
    text = WIRING.read_text()
    start = text.index(f"## {title}")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _table_rows() -> dict[str, tuple[list[int], list[int]]]:
    rows: dict[str, tuple[list[int], list[int]]] = {}
    for line in _section("Pin plan").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not re.fullmatch(r"`[a-z_]+`", cells[1]):
            continue
        bcm = [int(n) for n in re.findall(r"\d+", cells[2])]
        header = [int(n) for n in re.findall(r"\d+", cells[3])]
        rows[cells[1].strip("`")] = (bcm, header)
    return rows


def test_the_pin_plan_table_shows_the_code_defaults() -> None:
    rows = _table_rows()
    defaults = PinConfig()
    for key, pin in defaults.assignments():
        name, _, index = key.removeprefix("pins.").partition("[")
        bcm, _ = rows[name]
        assert pin == bcm[int(index.rstrip("]")) if index else 0], key


def test_the_table_header_positions_are_where_the_lines_are() -> None:
    for key, (bcm, header) in _table_rows().items():
        if len(header) == len(bcm) and header:
            assert [HEADER_BCM[h] for h in header] == bcm, key


def test_the_drawn_header_puts_each_line_on_its_real_pin() -> None:
    drawing = _section("Pin plan").split("```")[1]
    seen: dict[int, int] = {}
    for line in drawing.splitlines():
        # "... 17 (11) (12) 18 ..." : BCM before the left pin, after the right one
        for left_bcm, pin in re.findall(r"(?<!\w)(\d+)\s+\((\d+)\)\s*\(", line):
            seen[int(pin)] = int(left_bcm)
        for pin, right_bcm in re.findall(r"\)\s*\((\d+)\)\s+(\d+)\b", line):
            seen[int(pin)] = int(right_bcm)
        for pin in re.findall(r"GND\s+\((\d+)\)|\((\d+)\)\s+GND", line):
            number = int(next(p for p in pin if p))
            assert number in GROUNDS, line
    assert seen == HEADER_BCM


def test_the_grounds_listed_in_the_electrical_section_are_the_headers() -> None:
    text = _section("Electrical side")
    listed = {
        int(n)
        for n in re.search(r"Pins ([\d, and]+) are ground", text)[1].replace("and", ",").split(",")
        if n.strip()
    }  # type: ignore[index]
    assert listed == GROUNDS
