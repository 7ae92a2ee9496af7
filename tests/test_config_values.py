"""Malformed values anywhere in the table's configuration file, each with the exact message the
loader gives: the full key path, what is allowed, what was found.

Issue 7 point 11: one set of readers (`fsm.configread`) for fsm, drivers and controller. TOML has
``nan``, ``inf`` and booleans (Python ints): none of them passes as a number or an integer in any
section; a section nothing reads is refused.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from test_config import minimal, problems_of

LEVEL = {"name": "progressive", "initial_cents": 100000, "rate_bp": 2100, "hidden_rate_bp": 500}

CASES: list[tuple[str, str, object, str]] = [
    ("sas", "address", True, "sas.address: must be an integer 1..127, got bool True"),
    ("sas", "address", 1.0, "sas.address: must be an integer 1..127, got float 1.0"),
    (
        "table",
        "asset_number",
        True,
        "table.asset_number: must be an integer 1..4294967295, got bool True",
    ),
    ("console", "enabled", 0, "console.enabled: must be true or false, got int 0"),
    (
        "serial.shoe",
        "status_timeout",
        math.nan,
        "serial.shoe.status_timeout: must be a finite number of seconds > 0 and <= 3600, "
        "got float nan",
    ),
    (
        "serial.shoe",
        "dispense_timeout",
        math.inf,
        "serial.shoe.dispense_timeout: must be a finite number of seconds > 0 and <= 3600, "
        "got float inf",
    ),
    (
        "serial.shuffler",
        "shuffle_timeout",
        True,
        "serial.shuffler.shuffle_timeout: must be a finite number of seconds > 0 and <= 3600, "
        "got bool True",
    ),
    (
        "serial.shoe.link",
        "ack_timeout",
        math.nan,
        "serial.shoe.link.ack_timeout: must be a finite number of seconds 0.001..3600, "
        "got float nan",
    ),
    (
        "serial.shoe.link",
        "silence_timeout",
        math.inf,
        "serial.shoe.link.silence_timeout: must be a finite number of seconds 0.001..3600, "
        "got float inf",
    ),
    (
        "serial.shoe.link",
        "idle_flush",
        -math.inf,
        "serial.shoe.link.idle_flush: must be a finite number of seconds 0..3600, got float -inf",
    ),
    (
        "serial.shoe.link",
        "max_retries",
        True,
        "serial.shoe.link.max_retries: must be an integer 0..20, got bool True",
    ),
    (
        "serial.shoe.port",
        "read_tick",
        math.nan,
        "serial.shoe.port.read_tick: must be a finite number of seconds > 0 and <= 3600, "
        "got float nan",
    ),
    (
        "serial.shoe.port",
        "baudrate",
        True,
        "serial.shoe.port.baudrate: True is not a standard baud rate",
    ),
    (
        "pins",
        "shaker",
        True,
        "pins.shaker: expected a BCM pin number (integer), got bool True",
    ),
    (
        "pins",
        "shaker",
        12.0,
        "pins.shaker: expected a BCM pin number (integer), got float 12.0",
    ),
    (
        "game",
        "progressive_wager_cents",
        True,
        "game.progressive_wager_cents: must be an integer >= 0, got bool True",
    ),
    (
        "game",
        "rounds_per_shuffle",
        1.5,
        "game.rounds_per_shuffle: must be an integer >= 0, got float 1.5",
    ),
    (
        "game",
        "shuffle_timeout_ms",
        math.inf,
        "game.shuffle_timeout_ms: must be an integer >= 0, got float inf",
    ),
    ("game", "ez_pai_gow", 1, "game.ez_pai_gow: must be true or false, got int 1"),
    (
        "game",
        "house_way",
        "atlantis",
        "game.house_way: must be one of foxwoods, reference or a house-way file, "
        "got str 'atlantis'",
    ),
    (
        "game",
        "card_reading_shoe",
        "yes",
        "game.card_reading_shoe: must be true or false, got str 'yes'",
    ),
    (
        "game.side_wager",
        "offered",
        1,
        "game.side_wager.offered: must be true or false, got int 1",
    ),
    (
        "game.levels[0]",
        "rate_bp",
        math.nan,
        "game.levels[0].rate_bp: must be an integer >= 0, got float nan",
    ),
    (
        "game.levels[0]",
        "initial_cents",
        True,
        "game.levels[0].initial_cents: must be an integer 0..100000000000, got bool True",
    ),
]


def with_value(where: str, key: str, value: object) -> dict[str, Any]:
    data = minimal()
    if where == "game.levels[0]":
        data["game"]["levels"] = [{**LEVEL, key: value}]
        return data
    target = data
    for part in where.split("."):
        target = target.setdefault(part, {})
    target[key] = value
    return data


@pytest.mark.parametrize(("where", "key", "value", "message"), CASES)
def test_malformed_value_gives_its_exact_message(
    where: str, key: str, value: object, message: str
) -> None:
    assert problems_of(with_value(where, key, value)) == [message]


def test_a_section_nothing_reads_is_refused() -> None:
    """Issue 7 point 7: refuse any section nothing reads."""
    data = minimal()
    data["webpage"] = {"enabled": True, "port": 8080}
    assert problems_of(data) == [
        "webpage: unknown section (allowed: table, pins, serial, sas, game, bonus, journal, "
        "console, supervisors, web, link)"
    ]


def test_the_web_section_names_its_bad_key() -> None:
    """Issue 11: ``[web]`` is read through fsm.configread; a bad value names its key."""
    data = minimal()
    data["web"] = {"enabled": True, "host": "localhost"}
    assert problems_of(data) == [
        "web.host: must be an IP address such as 127.0.0.1 or 0.0.0.0, got 'localhost'"
    ]
    data["web"] = {"enabled": True, "port": 0}
    assert [p.split(":")[0] for p in problems_of(data)] == ["web.port"]
    data["web"] = {"enabled": True, "colour": "red"}
    assert [p.split(":")[0] for p in problems_of(data)] == ["web.colour"]


def test_the_1_7_side_wager_pay_table_must_pay_what_the_round_pays_j() -> None:
    """NY 5324.41(j)(2)(vi): the round settles the 1-7 side wager at ``game.side_wager.odds``; a
    [bonus] pay table paying other odds would say one thing and pay another."""
    data = minimal()
    data["game"]["side_wager"] = {"offered": True, "odds": "6:1"}
    data["bonus"] = {"offered": ["side-1-7"], "tables": {"side-1-7": "side-1-7-5.5"}}
    assert problems_of(data) == [
        "bonus.tables.side-1-7: pays 11:2 but game.side_wager.odds is 6:1 (the round pays "
        "that); they must agree"
    ]
    data["bonus"]["tables"]["side-1-7"] = "side-1-7-6"
    assert problems_of_ok(data)


def test_the_bonus_offering_cannot_hide_in_the_game_section() -> None:
    data = minimal()
    data["game"]["bonus"] = {"offered": []}
    assert problems_of(data) == ["game.bonus: the bonus offering is its own section, [bonus]"]


def problems_of_ok(data: dict[str, Any]) -> bool:
    from controller.config import parse_config

    config = parse_config(data, "test.toml")
    return config.bonus is not None and config.bonus.offered == ("side-1-7",)
