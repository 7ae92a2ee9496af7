"""The one set of configuration readers: typed getters over a TOML table, for fsm, drivers and
controller alike.

Responsible for reading a value of the table's configuration and refusing it with a message that
starts with the full key path and says what is allowed: an unknown key (the allowed keys listed),
a missing required key, a wrong type (``true`` is never an integer or a number: TOML's booleans
are Python ints), a value out of its range, a number that is NaN or infinite, a choice outside its
list. Like Klipper's config object, a component declares every key it reads when it opens its
section (``Reader(data, where, keys)``), so a misspelt key is an error, never a silent default.

Every problem is a `ConfigValueError` (a ValueError), one at a time; the table's loader
(``controller.config``) collects one per section. Must never: read a file, the clock or the
environment, or accept a value it was not asked to accept (no coercion: ``"5"`` is not 5).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, TypeVar

T = TypeVar("T")

#: The largest amount of money any configuration key, wager or correction may name, in cents
#: ($1,000,000,000.00): far above any table's meter, far below where a sum of a shift's amounts
#: could stop meaning money (SQLite's and JSON's exact integers end at 2**53).
MAX_CENTS: Final = 100_000_000_000
#: The longest time any configuration key may name, in seconds (an hour: no link, device or
#: console time of the table is longer, and a longer one would as good as never fire).
MAX_SECONDS: Final = 3600.0


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of a key that must be given.
REQUIRED: Final = _Required()


class ConfigValueError(ValueError):
    """One configuration problem; ``key`` is the full key path, ``str()`` is ``"key: why"``."""

    def __init__(self, key: str, why: str) -> None:
        self.key = key
        self.why = why
        super().__init__(f"{key}: {why}" if key else why)


def describe(value: object) -> str:
    """A value as the messages show it: its TOML-ish type and its repr (``int 200``)."""
    return f"{type(value).__name__} {value!r}"


def key_path(where: str, key: str | int) -> str:
    """``where.key``, or ``where[i]`` for an index; ``key`` alone at the top."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else key


def _range_text(lo: float | None, hi: float | None, lo_open: bool = False) -> str:
    if lo is not None and hi is not None and not lo_open:
        return f" {lo:g}..{hi:g}" if isinstance(lo, float) else f" {lo}..{hi}"
    parts = []
    if lo is not None:
        parts.append(f"{'>' if lo_open else '>='} {lo:g}")
    if hi is not None:
        parts.append(f"<= {hi:g}")
    return (" " + " and ".join(parts)) if parts else ""


# ------------------------------------------------------------------------------------ parsing
def parse_toml(text: str | bytes) -> dict[str, object]:
    """``tomllib.loads`` for every configuration, pay table and house way: a document nested
    too deeply for the parser (``a = [[[[...`` thousands deep) is a ``TOMLDecodeError`` like any
    other bad syntax, never a RecursionError; bytes that are not UTF-8 likewise."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise tomllib.TOMLDecodeError(f"not UTF-8 text (byte {exc.start})") from None


# ------------------------------------------------------------------------------ single values
def int_value(value: object, key: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer in ``lo..hi`` (either end open when None); never a bool or a float."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigValueError(
            key, f"must be an integer{_range_text(lo, hi)}, got {describe(value)}"
        )
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigValueError(
            key, f"must be an integer{_range_text(lo, hi)}, got {describe(value)}"
        )
    return value


def number_value(
    value: object,
    key: str,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    unit: str = "",
) -> float:
    """A finite number (integer or float, never a bool, NaN or infinity) in range, as a float.
    ``lo_open``: the value must exceed ``lo``. ``unit`` ("seconds") is named in the message."""
    what = f"a finite number{' of ' + unit if unit else ''}{_range_text(lo, hi, lo_open)}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigValueError(key, f"must be {what}, got {describe(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ConfigValueError(key, f"must be {what}, got {describe(value)}")
    if lo is not None and (number <= lo if lo_open else number < lo):
        raise ConfigValueError(key, f"must be {what}, got {describe(value)}")
    if hi is not None and number > hi:
        raise ConfigValueError(key, f"must be {what}, got {describe(value)}")
    return number


def cents_value(value: object, key: str, lo: int = 0) -> int:
    """An amount of money in whole cents, ``lo``..`MAX_CENTS`."""
    return int_value(value, key, lo, MAX_CENTS)


def seconds_value(value: object, key: str, hi: float = MAX_SECONDS) -> float:
    """A positive, finite number of seconds, at most ``hi`` (`MAX_SECONDS` unless the key says
    less): a timeout of 1e308 s is as useless as infinity (it would never fire)."""
    return number_value(value, key, 0, hi, lo_open=True, unit="seconds")


def bool_value(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigValueError(key, f"must be true or false, got {describe(value)}")
    return value


def str_value(
    value: object,
    key: str,
    *,
    empty: bool = False,
    pattern: str | None = None,
    what: str | None = None,
) -> str:
    """A string (non-empty unless ``empty``); with ``pattern`` it must match it whole, and
    ``what`` says in words what is allowed."""
    text = what or ("a string" if empty else "a non-empty string")
    if not isinstance(value, str) or (not empty and not value):
        raise ConfigValueError(key, f"must be {text}, got {describe(value)}")
    if pattern is not None and re.fullmatch(pattern, value) is None:
        raise ConfigValueError(key, f"must be {text}, got {describe(value)}")
    return value


def choice_value(value: object, key: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ConfigValueError(key, f"must be one of {', '.join(choices)}, got {describe(value)}")
    return value


def table_value(value: object, key: str) -> Mapping[str, object]:
    """A TOML table (mapping with string keys)."""
    if not isinstance(value, Mapping):
        raise ConfigValueError(key, f"must be a table, got {describe(value)}")
    for k in value:
        if not isinstance(k, str):
            raise ConfigValueError(key, f"keys must be strings, got {describe(k)}")
    return value


def list_value(
    value: object,
    key: str,
    item: Callable[[object, str], T],
    *,
    length: int | None = None,
    min_length: int = 0,
    what: str = "a list",
) -> tuple[T, ...]:
    """A list (TOML array), each item read by ``item(value, "key[i]")``."""
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise ConfigValueError(key, f"must be {what}, got {describe(value)}")
    if length is not None and len(value) != length:
        raise ConfigValueError(key, f"must be {what} of exactly {length}, got {len(value)}")
    if len(value) < min_length:
        raise ConfigValueError(key, f"must be {what} of at least {min_length}, got {len(value)}")
    return tuple(item(v, key_path(key, i)) for i, v in enumerate(value))


def unknown_keys(
    data: Mapping[str, object], where: str, keys: Iterable[str]
) -> list[ConfigValueError]:
    """One problem per key of ``data`` (in the file's order) that is not one of ``keys``."""
    allowed = tuple(keys)
    listed = ", ".join(sorted(allowed))
    return [
        ConfigValueError(key_path(where, str(key)), f"unknown key (allowed: {listed})")
        for key in data
        if key not in allowed
    ]


def check_keys(data: Mapping[str, object], where: str, keys: Iterable[str]) -> None:
    """Refuse the first key (in the file's order) that is not one of ``keys``."""
    problems = unknown_keys(data, where, keys)
    if problems:
        raise problems[0]


# ------------------------------------------------------------------------------------- reader
class Reader:
    """The typed getters of one table of the configuration at key path ``where``.

    ``keys`` are every key the component reads; any other key in ``data`` is refused when the
    reader is made (unless ``check=False``: a loader that lists every problem calls
    `unknown_keys` itself). A getter's ``default`` is returned when the key is absent
    (`REQUIRED`: the key must be given). Asking for a key not declared is a bug of the component
    (KeyError).
    """

    def __init__(
        self, data: object, where: str, keys: Iterable[str], *, check: bool = True
    ) -> None:
        self.where = where
        self.keys = frozenset(keys)
        self.data = table_value(data, where) if where else _top_table(data)
        if check:  # check=False: the caller collects `unknown_keys` itself
            check_keys(self.data, where, sorted(self.keys))

    def path(self, key: str) -> str:
        return key_path(self.where, key)

    def has(self, key: str) -> bool:
        return self._declared(key) in self.data

    def raw(self, key: str, default: object = REQUIRED, what: str = "a value") -> object:
        """The value as the file has it (``what`` names it when it is required and missing)."""
        if self._declared(key) in self.data:
            return self.data[key]
        if default is REQUIRED:
            raise ConfigValueError(self.path(key), f"required ({what})")
        return default

    def integer(
        self,
        key: str,
        default: int | _Required = REQUIRED,
        lo: int | None = None,
        hi: int | None = None,
    ) -> int:
        value = self.raw(key, default, f"an integer{_range_text(lo, hi)}")
        return int_value(value, self.path(key), lo, hi)

    def number(
        self,
        key: str,
        default: float | _Required = REQUIRED,
        lo: float | None = None,
        hi: float | None = None,
        *,
        lo_open: bool = False,
        unit: str = "",
    ) -> float:
        value = self.raw(key, default, "a finite number")
        return number_value(value, self.path(key), lo, hi, lo_open=lo_open, unit=unit)

    def cents(self, key: str, default: int | _Required = REQUIRED, lo: int = 0) -> int:
        """An amount of money in whole cents, ``lo``..`MAX_CENTS`."""
        value = self.raw(key, default, f"whole cents {lo}..{MAX_CENTS}")
        return cents_value(value, self.path(key), lo)

    def seconds(
        self, key: str, default: float | _Required = REQUIRED, hi: float = MAX_SECONDS
    ) -> float:
        return seconds_value(self.raw(key, default, "a number of seconds"), self.path(key), hi)

    def boolean(self, key: str, default: bool | _Required = REQUIRED) -> bool:
        return bool_value(self.raw(key, default, "true or false"), self.path(key))

    def string(
        self,
        key: str,
        default: str | _Required = REQUIRED,
        *,
        empty: bool = False,
        pattern: str | None = None,
        what: str | None = None,
    ) -> str:
        value = self.raw(key, default, what or "a string")
        return str_value(value, self.path(key), empty=empty, pattern=pattern, what=what)

    def choice(self, key: str, choices: Sequence[str], default: str | _Required = REQUIRED) -> str:
        value = self.raw(key, default, f"one of {', '.join(choices)}")
        return choice_value(value, self.path(key), choices)

    def table(self, key: str, keys: Iterable[str]) -> Reader:
        """The sub-table ``key`` (empty when absent), its own keys declared."""
        return Reader(self.raw(key, {}), self.path(key), keys)

    def mapping(self, key: str) -> Mapping[str, object]:
        """The sub-table ``key`` as a mapping (empty when absent), for a component that reads it
        with its own reader."""
        return table_value(self.raw(key, {}), self.path(key))

    def items(
        self,
        key: str,
        item: Callable[[object, str], T],
        default: Sequence[T] | _Required = REQUIRED,
        *,
        length: int | None = None,
        min_length: int = 0,
        what: str = "a list",
    ) -> tuple[T, ...]:
        if not self.has(key):
            if isinstance(default, _Required):
                raise ConfigValueError(self.path(key), f"required ({what})")
            return tuple(default)
        return list_value(
            self.data[key], self.path(key), item, length=length, min_length=min_length, what=what
        )

    def error(self, key: str, why: str) -> ConfigValueError:
        """A problem of ``key`` found by the component's own rule (raise it)."""
        return ConfigValueError(self.path(key), why)

    def _declared(self, key: str) -> str:
        if key not in self.keys:
            raise KeyError(f"{self.path(key)}: read but not declared by the component")
        return key


def _top_table(data: object) -> Mapping[str, object]:
    if not isinstance(data, Mapping):
        raise ConfigValueError("", f"the configuration must be a table, got {describe(data)}")
    return data
