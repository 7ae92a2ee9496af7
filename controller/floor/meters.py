"""The table's meters as SAS meters: which level meter each SAS meter code carries (docs/sas.md).

Only the progressive wager is metered (the base game is chips the controller cannot see);
denomination code 01 ($0.01), so one credit is one cent. Every wager contributes to every level,
so counts of wagers come from the first level; wins and payments add up over the levels (a
winning wager is paid at one level). Responsible only for reading the published meters (per
level, ``fsm/round/meters.py`` ``report``) into SAS values. Must never read the journal or the
machine, nor change a meter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

LevelMeters = Mapping[str, Mapping[str, Any]]


def _first(name: str) -> Callable[[LevelMeters], int]:
    def get(meters: LevelMeters) -> int:
        for level in meters.values():
            return int(level.get(name, 0))
        return 0

    return get


def _sum(name: str) -> Callable[[LevelMeters], int]:
    def get(meters: LevelMeters) -> int:
        return sum(int(level.get(name, 0)) for level in meters.values())

    return get


def _losses(meters: LevelMeters) -> int:
    return max(0, _first("progressive_in")(meters) - _sum("wins")(meters))


#: Sources a SAS meter code may be mapped to in ``[sas.meters]``.
SOURCES: dict[str, Callable[[LevelMeters], int]] = {
    "zero": lambda meters: 0,
    "wagered_cents": _first("wagered_cents"),
    "progressive_in": _first("progressive_in"),
    "wins": _sum("wins"),
    "losses": _losses,
    "paid_cents": _sum("paid_cents"),
    "meter_paid_cents": _sum("meter_paid_cents"),
    "tray_paid_cents": _sum("tray_paid_cents"),
    "hits": _sum("hits"),
    "voided_wagers": _first("voided_wagers"),
}

COIN_IN, COIN_OUT, JACKPOT, CANCELLED, GAMES_PLAYED, GAMES_WON, GAMES_LOST = 0, 1, 2, 4, 5, 6, 7
DROP = 0x24
ATTENDANT_PROGRESSIVE = 0x20


def meter_value(code: int, meters: LevelMeters, mapping: Mapping[int, str]) -> int | None:
    """The value of SAS meter ``code``; None when the mapping does not carry it."""
    source = mapping.get(code)
    if source is None:
        return None
    return SOURCES[source](meters)


def value_or_zero(code: int, meters: LevelMeters, mapping: Mapping[int, str]) -> int:
    value = meter_value(code, meters, mapping)
    return 0 if value is None else value
