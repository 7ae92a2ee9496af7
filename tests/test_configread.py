"""The one set of configuration readers (`fsm.configread`): every malformed value gets one exact
message naming the full key path and what is allowed.

DESIGN.md "Configuration": validated at load, messages that name the key and the allowed values;
STYLE.md: one reader set (Klipper's config object), an unknown key is an error, never a default.
TOML booleans are Python ints and TOML has ``nan`` and ``inf``: neither may pass as a number.
"""

from __future__ import annotations

import math
import tomllib
from typing import Any

import pytest

from fsm.configread import REQUIRED, ConfigValueError, Reader, int_value

KEYS = ("n", "t", "on", "name", "mode", "sub", "pins")

#: What every seconds key allows (fsm.configread.MAX_SECONDS).
SECS = "dev.t: must be a finite number of seconds > 0 and <= 3600, got"


def read(data: dict[str, Any], how: str) -> object:
    r = Reader(data, "dev", KEYS)
    if how == "int":
        return r.integer("n", REQUIRED, 1, 127)
    if how == "int>=0":
        return r.integer("n", 0, 0)
    if how == "seconds":
        return r.seconds("t", 1.0)
    if how == "number":
        return r.number("t", 0.5, 0.0, 10.0)
    if how == "bool":
        return r.boolean("on", True)
    if how == "str":
        return r.string("name", "x")
    if how == "choice":
        return r.choice("mode", ("rng", "dice"), "rng")
    if how == "sub":
        return r.table("sub", ("a",)).integer("a", 1)
    if how == "list":
        return r.items(
            "pins", lambda v, k: int_value(v, k, 2, 27), (), length=2, what="a list of pins"
        )
    raise AssertionError(how)


MALFORMED = [
    ({"n": True}, "int", "dev.n: must be an integer 1..127, got bool True"),
    ({"n": 1.0}, "int", "dev.n: must be an integer 1..127, got float 1.0"),
    ({"n": "5"}, "int", "dev.n: must be an integer 1..127, got str '5'"),
    ({"n": 0}, "int", "dev.n: must be an integer 1..127, got int 0"),
    ({"n": 128}, "int", "dev.n: must be an integer 1..127, got int 128"),
    ({}, "int", "dev.n: required (an integer 1..127)"),
    ({"n": -1}, "int>=0", "dev.n: must be an integer >= 0, got int -1"),
    (
        {"t": math.nan},
        "seconds",
        SECS + " float nan",
    ),
    (
        {"t": math.inf},
        "seconds",
        SECS + " float inf",
    ),
    (
        {"t": -math.inf},
        "seconds",
        SECS + " float -inf",
    ),
    ({"t": 0}, "seconds", SECS + " int 0"),
    (
        {"t": True},
        "seconds",
        SECS + " bool True",
    ),
    (
        {"t": "1"},
        "seconds",
        SECS + " str '1'",
    ),
    ({"t": 11}, "number", "dev.t: must be a finite number 0..10, got int 11"),
    ({"on": 1}, "bool", "dev.on: must be true or false, got int 1"),
    ({"on": "yes"}, "bool", "dev.on: must be true or false, got str 'yes'"),
    ({"name": ""}, "str", "dev.name: must be a non-empty string, got str ''"),
    ({"name": 3}, "str", "dev.name: must be a non-empty string, got int 3"),
    ({"mode": "coin"}, "choice", "dev.mode: must be one of rng, dice, got str 'coin'"),
    ({"mode": True}, "choice", "dev.mode: must be one of rng, dice, got bool True"),
    ({"sub": 5}, "sub", "dev.sub: must be a table, got int 5"),
    ({"sub": {"b": 1}}, "sub", "dev.sub.b: unknown key (allowed: a)"),
    ({"sub": {"a": math.nan}}, "sub", "dev.sub.a: must be an integer, got float nan"),
    ({"pins": "5,6"}, "list", "dev.pins: must be a list of pins, got str '5,6'"),
    ({"pins": [5]}, "list", "dev.pins: must be a list of pins of exactly 2, got 1"),
    ({"pins": [5, True]}, "list", "dev.pins[1]: must be an integer 2..27, got bool True"),
    ({"pins": [5, 99]}, "list", "dev.pins[1]: must be an integer 2..27, got int 99"),
    (
        {"colour": "red"},
        "int",
        "dev.colour: unknown key (allowed: mode, n, name, on, pins, sub, t)",
    ),
]


@pytest.mark.parametrize(("data", "how", "message"), MALFORMED)
def test_each_malformed_value_gets_its_exact_message(
    data: dict[str, Any], how: str, message: str
) -> None:
    with pytest.raises(ConfigValueError) as info:
        read(data, how)
    assert str(info.value) == message
    assert info.value.key == message.split(":")[0]


def test_toml_nan_inf_and_booleans_from_a_real_file_are_refused() -> None:
    """What tomllib really produces: ``nan``/``inf`` floats and ``true`` (an int subclass)."""
    data = tomllib.loads("t = nan\nn = true\nu = -inf\n")
    with pytest.raises(ConfigValueError, match="got float nan"):
        Reader(data, "x", ("t", "n", "u")).seconds("t")
    with pytest.raises(ConfigValueError, match="got bool True"):
        Reader(data, "x", ("t", "n", "u")).integer("n")
    with pytest.raises(ConfigValueError, match="got float -inf"):
        Reader(data, "x", ("t", "n", "u")).number("u")


def test_absent_keys_take_their_defaults_and_good_values_pass() -> None:
    r = Reader({"n": 7, "t": 2, "on": False}, "dev", KEYS)
    assert r.integer("n", REQUIRED, 1, 127) == 7
    assert r.seconds("t") == 2.0 and isinstance(r.seconds("t"), float)
    assert r.boolean("on", True) is False
    assert r.string("name", "shoe") == "shoe"
    assert r.choice("mode", ("rng", "dice"), "dice") == "dice"
    assert r.table("sub", ("a",)).integer("a", 3) == 3


def test_reading_an_undeclared_key_is_a_bug_of_the_component() -> None:
    with pytest.raises(KeyError):
        Reader({}, "dev", ("a",)).integer("b", 1)


def test_the_top_level_reader_names_keys_without_a_prefix() -> None:
    with pytest.raises(ConfigValueError) as info:
        Reader({"tabel": {}}, "", ("table",))
    assert str(info.value) == "tabel: unknown key (allowed: table)"
