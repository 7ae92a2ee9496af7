"""Typed records: the machinery behind the round's events and effects (fsm/round/events.py,
fsm/round/effects.py).

A record is a frozen dataclass with a ``TYPE`` (its journal name) and typed fields. This module
reads each record's field annotations once, at definition (the ``@record`` decorator registers it),
and from them alone

- parses JSON data into the record, refusing unknown fields, missing fields, wrong types and values
  out of range with a reason that names the field (``RecordError``), and
- writes the record as JSON (the journal form), fields in definition order, nested records and
  tuples as objects and lists, a field marked ``OMIT_NONE`` left out while it is ``None``.

Supported annotations: ``int`` (never a bool), ``bool``, ``str`` (non-empty unless
``MAY_BE_EMPTY``), ``Literal[...]`` of strings, ``X | None``, ``tuple[X, ...]`` (a JSON list),
``Json`` (any JSON value, checked by the phase that reads it), and another record class (a JSON
object). ``Annotated[int, Between(lo, hi)]`` bounds an integer; ``Key("from")`` names the JSON key
of a field whose name is a Python keyword. Must never hold behaviour beyond that: what a record
means is decided by the round machine.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, Union, dataclass_transform, get_args, get_origin

#: Any JSON value (the phase that reads it checks it further).
Json = Any


class RecordError(ValueError):
    """Data that is not a valid record; the message names the field."""


@dataclass(frozen=True)
class Between:
    """An integer field's bounds (``hi`` None: no upper bound)."""

    lo: int
    hi: int | None = None


@dataclass(frozen=True)
class Key:
    """The JSON key of a field (when its name cannot be the key, e.g. ``from``)."""

    name: str


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: A field left out of the JSON while it is None (the journal form stays as it was).
OMIT_NONE = _Marker("OMIT_NONE")
#: A string field that may be empty.
MAY_BE_EMPTY = _Marker("MAY_BE_EMPTY")


@dataclass(frozen=True)
class FieldSpec:
    """One field of a record as read from its annotation."""

    name: str
    key: str
    kind: Any  # int, bool, str, "json", a record class, ("literal", values), ("tuple", spec)
    optional: bool  # None allowed
    required: bool  # no default
    between: Between | None = None
    omit_none: bool = False
    may_be_empty: bool = False
    item: FieldSpec | None = None  # for tuples

    def describe(self) -> str:
        """The field's type as the catalogue writes it."""
        text = _describe_kind(self)
        return f"{text} or null" if self.optional else text


def _describe_kind(spec: FieldSpec) -> str:
    kind = spec.kind
    if kind is int:
        b = spec.between
        if b is None:
            return "int"
        return f"int {b.lo}..{b.hi}" if b.hi is not None else f"int >= {b.lo}"
    if kind is bool:
        return "bool"
    if kind is str:
        return "str"
    if kind == "json":
        return "JSON"
    if isinstance(kind, tuple) and kind[0] == "literal":
        return "/".join(str(v) for v in kind[1])
    if kind == "tuple":
        assert spec.item is not None
        return f"[{_describe_kind(spec.item)}]"
    if isinstance(kind, type) and issubclass(kind, Record):
        return "{" + ", ".join(f.key for f in kind.FIELDS) + "}"
    return str(kind)


R = TypeVar("R", bound="Record")


class Record:
    """Base of every record: ``TYPE`` names it, ``FIELDS`` is filled in by ``@record``."""

    TYPE: ClassVar[str] = ""
    FIELDS: ClassVar[tuple[FieldSpec, ...]] = ()

    def fields_json(self) -> dict[str, Json]:
        """The record's fields as a JSON object (without its type)."""
        out: dict[str, Json] = {}
        for f in self.FIELDS:
            value = getattr(self, f.name)
            if value is None and f.omit_none:
                continue
            out[f.key] = json_value(value)
        return out

    @classmethod
    def parse(cls: type[R], data: Mapping[str, Json], where: str = "") -> R:
        """The record for JSON ``data``; `RecordError` names the first bad field."""
        if not isinstance(data, Mapping):
            raise RecordError(f"{where or cls.TYPE}: must be a mapping")
        keys = {f.key for f in cls.FIELDS}
        for k in data:
            if k not in keys:
                allowed = ", ".join(f.key for f in cls.FIELDS) or "none"
                raise RecordError(f"{_at(where, str(k))[:60]}: unknown field (fields: {allowed})")
        values: dict[str, Any] = {}
        for f in cls.FIELDS:
            if f.key not in data:
                if f.required:
                    raise RecordError(f"{_at(where, f.key)}: required")
                continue
            values[f.name] = _parse_value(f, data[f.key], _at(where, f.key))
        return cls(**values)


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def json_value(value: Any) -> Json:
    if isinstance(value, Record):
        return value.fields_json()
    if isinstance(value, tuple | list):
        return [json_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    return value


def _parse_int(f: FieldSpec, v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise RecordError(f"{where}: must be an integer, not {v!r}"[:120])
    b = f.between
    if b is not None and (v < b.lo or (b.hi is not None and v > b.hi)):
        rng = f"{b.lo}..{b.hi}" if b.hi is not None else f">= {b.lo}"
        raise RecordError(f"{where}: must be {rng}, not {v}")
    return v


def _parse_bool(f: FieldSpec, v: Any, where: str) -> bool:
    if not isinstance(v, bool):
        raise RecordError(f"{where}: must be true or false")
    return v


def _parse_str(f: FieldSpec, v: Any, where: str) -> str:
    if not isinstance(v, str) or (not f.may_be_empty and not v.strip()):
        raise RecordError(
            f"{where}: must be a {'string' if f.may_be_empty else 'non-empty string'}"
        )
    return v


def _parse_tuple(f: FieldSpec, v: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(v, list | tuple):
        raise RecordError(f"{where}: must be a list")
    assert f.item is not None
    return tuple(_parse_value(f.item, x, f"{where}[{i}]") for i, x in enumerate(v))


_PARSERS: dict[Any, Callable[[FieldSpec, Any, str], Any]] = {
    int: _parse_int,
    bool: _parse_bool,
    str: _parse_str,
    "json": lambda f, v, where: v,
    "tuple": _parse_tuple,
}


def _parse_value(f: FieldSpec, v: Any, where: str) -> Any:
    if v is None:
        if f.optional or f.kind == "json":
            return None
        raise RecordError(f"{where}: must not be null")
    kind = f.kind
    parser = _PARSERS.get(kind) if not isinstance(kind, tuple) else None
    if parser is not None:
        return parser(f, v, where)
    if isinstance(kind, tuple) and kind[0] == "literal":
        if v not in kind[1]:
            raise RecordError(f"{where}: must be one of {', '.join(kind[1])}, not {v!r}"[:160])
        return v
    if isinstance(kind, type) and issubclass(kind, Record):
        return kind.parse(v, where)
    raise RecordError(f"{where}: unsupported field kind {kind!r}")  # pragma: no cover


@dataclass
class _Marks:
    """What an annotation says besides its type: JSON key, bounds, null, emptiness."""

    key: str
    between: Between | None = None
    omit: bool = False
    empty: bool = False
    optional: bool = False


def _mark(marks: _Marks, meta: Iterable[Any]) -> None:
    for m in meta:
        if isinstance(m, Between):
            marks.between = m
        elif isinstance(m, Key):
            marks.key = m.name
        elif m is OMIT_NONE:
            marks.omit = True
        elif m is MAY_BE_EMPTY:
            marks.empty = True


def _unwrap(name: str, hint: Any, marks: _Marks) -> Any:
    """The type under ``Annotated[X | None, ...]`` or ``Annotated[X, ...] | None``."""
    for _ in range(2):
        if get_origin(hint) is typing.Annotated:
            base, *meta = get_args(hint)
            _mark(marks, meta)
            hint = base
        if get_origin(hint) in (Union, types.UnionType):
            args = [a for a in get_args(hint) if a is not type(None)]
            marks.optional = marks.optional or len(args) < len(get_args(hint))
            if len(args) != 1:
                raise TypeError(f"{name}: a union other than X | None")
            hint = args[0]
    return hint


def _kind(name: str, hint: Any) -> tuple[Any, FieldSpec | None]:
    origin = get_origin(hint)
    if hint is Any:
        return "json", None
    if origin is Literal:
        return ("literal", tuple(get_args(hint))), None
    if origin is tuple:
        targs = get_args(hint)
        if len(targs) != 2 or targs[1] is not Ellipsis:
            raise TypeError(f"{name}: only tuple[X, ...]")
        return "tuple", _spec(f"{name}[]", targs[0], False)
    if hint in (int, bool, str) or (isinstance(hint, type) and issubclass(hint, Record)):
        return hint, None
    raise TypeError(f"{name}: unsupported annotation {hint!r}")


def _spec(name: str, hint: Any, has_default: bool) -> FieldSpec:
    marks = _Marks(name)
    kind, item = _kind(name, _unwrap(name, hint, marks))
    return FieldSpec(
        name,
        marks.key,
        kind,
        marks.optional,
        not has_default,
        marks.between,
        marks.omit,
        marks.empty,
        item,
    )


_C = TypeVar("_C", bound=type[Record])


@dataclass_transform(frozen_default=True)
def record(type_name: str, registry: dict[str, type[Any]] | None = None) -> Callable[[_C], _C]:
    """Make a class a frozen record named ``type_name`` (and add it to ``registry``)."""

    def wrap(cls: _C) -> _C:
        dc: Any = dataclass(frozen=True, eq=not issubclass(cls, Mapping))(cls)
        hints = typing.get_type_hints(dc, include_extras=True)
        specs = []
        for f in dataclasses.fields(dc):
            has_default = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            specs.append(_spec(f.name, hints[f.name], has_default))
        dc.TYPE = type_name
        dc.FIELDS = tuple(specs)
        if registry is not None:
            if type_name in registry:
                raise TypeError(f"record type {type_name!r} defined twice")
            registry[type_name] = dc
        return cls

    return wrap


def iter_fields(cls: type[Record]) -> Iterator[FieldSpec]:
    return iter(cls.FIELDS)
