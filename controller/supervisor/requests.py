"""The supervisor's requests, shared by every channel a supervisor uses (the console's socket,
the page's sign-in): their names and usage (`REQUESTS`), and each one turned into the round's
typed event with the supervisor's id and the channel (`build_event`; `RequestError` names a bad
argument).

Pure: no I/O, no clock. Must never decide what an event means (the round machine does), nor
authenticate (`controller.supervisor.gate`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from fsm.configread import MAX_CENTS
from fsm.round.catalogue import AREAS
from fsm.round.events import (
    JSON,
    ChipsResolved,
    ConfigChanged,
    DisplayTest,
    DoorMaintenance,
    Event,
    EventRecord,
    FaultCleared,
    HitAdjusted,
    HitCorrected,
    HitValidated,
    HitVoided,
    KeyHolder,
    LightTest,
    MaintenanceEntered,
    MaintenanceExited,
    MeterCorrected,
    RngVoid,
    SideWagers,
    TableClosed,
    TableOpened,
)
from fsm.round.meters import CORRECTABLE_METERS

MAX_TEXT = 200
POSITIONS = range(1, AREAS + 1)
METERS = CORRECTABLE_METERS  # the round's own list: the console never widens or narrows it

_CONFIG_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\[\]-]{0,99}$")
_CENTS = re.compile(r"^[+-]?[0-9]{1,12}$")
_LINE = re.compile(r"^[a-z][a-z-]{0,39}$")

#: Each request with its usage (shown in errors and by ``tablectl console --help``).
REQUESTS: dict[str, str] = {
    "status": "status",
    "open": "open",
    "close": "close",
    "resolve-chips": "resolve-chips POSITIONS  (e.g. 1,3,5 or 1 3 5; 'none' when none stands)",
    "key-holder": "key-holder  (with the supervisor key on: the panel's steps are journaled in "
    "your name until the key is turned off)",
    "validate-hit": "validate-hit POSITION",
    "void-hit": "void-hit POSITION [--line LINE] REASON  (LINE: the right line, then paid)",
    "correct-hit": "correct-hit POSITION LINE|none REASON  (before it is paid: the right line, "
    "higher or lower, decided at the meter when its turn comes)",
    "adjust-hit": "adjust-hit ROUND POSITION LINE|none REASON  (after payment, the round just "
    "completed: what the right line pays now less what was paid)",
    "clear-fault": "clear-fault [--void]",
    "void-draw": "void-draw REASON",
    "side-wagers": "side-wagers BETS  (POSITION:NUMBER:CENTS each, e.g. 2:5:500 4:1:100; 'none' "
    "when none was placed)",
    "maintenance": "maintenance enter|exit",
    "door-maintenance": "door-maintenance on|off  (on: play goes on with the controller "
    "compartment's door open, for maintenance, until it is closed or 'off')",
    "light-test": "light-test",
    "display-test": "display-test",
    "config-change": "config-change KEY=VALUE...",
    "meter-correct": "meter-correct LEVEL METER DELTA_CENTS REASON  (METER: display, reserve, "
    "overflow; DELTA_CENTS signed whole cents)",
    "verify-software": "verify-software SEED  (1-64 bytes in hex: HMAC-SHA1 keyed by it over "
    "every approved file; docs/software-verification.md)",
}


class RequestError(ValueError):
    """A request that cannot be carried out as written; the message names what is wrong."""


def no_constant(name: str) -> Any:
    """``json.loads``' ``parse_constant``: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not allowed")


def short(value: object) -> str:
    """``value`` as an error message quotes it (at most 40 characters)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _usage(name: str) -> str:
    return f"(usage: {REQUESTS[name]})"


def count_args(name: str, args: Sequence[str], low: int, high: int | None = None) -> None:
    n = len(args)
    if n < low or (high is not None and n > high):
        if high == low:
            want = "no arguments" if low == 0 else f"{low} argument{'s' if low > 1 else ''}"
        elif high is None:
            want = f"at least {low} argument{'s' if low > 1 else ''}"
        else:
            want = f"{low} to {high} arguments"
        raise RequestError(f"{name}: takes {want}, got {n} {_usage(name)}")


def _position(text: str, where: str) -> int:
    if not text.isascii() or not text.strip().isdigit() or int(text) not in POSITIONS:
        raise RequestError(f"{where}: a position is 1..6, got {short(text)}")
    return int(text)


def _text(text: str, where: str) -> str:
    value = text.strip()
    if not value:
        raise RequestError(f"{where}: must not be empty")
    if len(value) > MAX_TEXT:
        raise RequestError(f"{where}: at most {MAX_TEXT} characters, got {len(value)}")
    if any(not ch.isprintable() for ch in value):
        raise RequestError(f"{where}: control characters are not allowed")
    return value


def _positions(args: Sequence[str]) -> list[int]:
    tokens = [t for arg in args for t in arg.replace(",", " ").split()]
    if [t.lower() for t in tokens] == ["none"]:
        return []
    if not tokens:
        raise RequestError(f"POSITIONS: at least one position, or 'none' {_usage('resolve-chips')}")
    out: list[int] = []
    for i, token in enumerate(tokens):
        position = _position(token, f"POSITIONS[{i}]")
        if position in out:
            raise RequestError(f"POSITIONS[{i}]: position {position} appears twice")
        out.append(position)
    return out


def _side_bets(args: Sequence[str]) -> list[JSON]:
    """The 1-7 side wagers of side-wagers: POSITION:NUMBER:CENTS tokens, or 'none' (the round
    checks the ranges; NY 5324.41(j)(2)(i): entered before the RNG is activated)."""
    tokens = [t for arg in args for t in arg.replace(",", " ").split()]
    if [t.lower() for t in tokens] == ["none"]:
        return []
    if not tokens:
        raise RequestError(f"BETS: at least one bet, or 'none' {_usage('side-wagers')}")
    out: list[JSON] = []
    for i, token in enumerate(tokens):
        parts = token.split(":")
        if len(parts) != 3 or not all(p.isdigit() and len(p) <= 9 for p in parts):
            raise RequestError(f"BETS[{i}]: POSITION:NUMBER:CENTS, got {short(token)}")
        position, number, cents = (int(p) for p in parts)
        out.append({"position": position, "number": number, "cents": cents})
    return out


def _config_value(text: str) -> JSON:
    """A VALUE of config-change: JSON when it parses as JSON (numbers, true/false, quoted
    strings, lists, tables), otherwise the text itself (``start_mode=dice``)."""
    try:
        value: JSON = json.loads(text, parse_constant=no_constant)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, float) and not math.isfinite(value):
        return text
    return value


def _changes(args: Sequence[str]) -> dict[str, JSON]:
    changes: dict[str, JSON] = {}
    for i, arg in enumerate(args):
        key, sep, value = arg.partition("=")
        key = key.strip()
        if not sep:
            raise RequestError(f"changes[{i}]: expected KEY=VALUE, got {short(arg)}")
        if not _CONFIG_KEY.match(key):
            raise RequestError(f"changes[{i}]: {short(key)} is not a dotted configuration key")
        if key in changes:
            raise RequestError(f"changes[{i}]: {key} is given twice")
        if not value.strip():
            raise RequestError(f"changes[{i}]: {key}: the new value is empty")
        changes[key] = _config_value(value.strip())
    return changes


def _delta_cents(text: str) -> int:
    value = text.strip()
    if "." in value or "$" in value:
        raise RequestError(
            f"DELTA_CENTS: whole cents without a decimal point (-2500 is -$25.00), got "
            f"{short(text)}"
        )
    if not value.isascii() or not _CENTS.match(value):
        raise RequestError(f"DELTA_CENTS: a signed whole number of cents, got {short(text)}")
    cents = int(value)
    if cents == 0:
        raise RequestError("DELTA_CENTS: must not be zero")
    if abs(cents) > MAX_CENTS:
        raise RequestError(f"DELTA_CENTS: at most {MAX_CENTS} cents either way, got {cents}")
    return cents


def _line_or_none(raw: str) -> str | None:
    """A pay-table line as written (``none``: no win); the round checks it is the table's."""
    line = raw.strip()
    if line == "none":
        return None
    if not _LINE.match(line):
        raise RequestError(
            f"LINE: a pay-table line such as straight-flush, or none, got {short(line)}"
        )
    return line


def build_event(name: str, args: Sequence[str], supervisor: str, via: str = "console") -> Event:
    """The round's event for request ``name`` with ``args`` taken by ``supervisor`` through
    ``via`` (``console``, ``web``). `RequestError` names a bad argument. Pure: the CLI checks its
    arguments with it too."""
    if name not in REQUESTS or name in ("status", "verify-software"):
        raise RequestError(f"request: {short(name)} does not post an event")
    return _request_record(name, args, {"supervisor": supervisor, "via": via}).envelope()


#: The requests without arguments, each the record of its event.
_PLAIN_REQUESTS: dict[str, type[EventRecord]] = {
    "open": TableOpened,
    "close": TableClosed,
    "light-test": LightTest,
    "display-test": DisplayTest,
    "key-holder": KeyHolder,
}


def _request_record(name: str, args: Sequence[str], who: dict[str, str]) -> EventRecord:
    if name in _PLAIN_REQUESTS:
        count_args(name, args, 0, 0)
        return _PLAIN_REQUESTS[name](**who)
    if name == "resolve-chips":
        count_args(name, args, 1)
        return ChipsResolved(**who, positions=list(_positions(args)))
    if name == "validate-hit":
        count_args(name, args, 1, 1)
        return HitValidated(**who, position=_position(args[0], "POSITION"))
    if name == "void-hit":
        count_args(name, args, 2)
        position = _position(args[0], "POSITION")
        rest = list(args[1:])
        line: str | None = None
        if rest and rest[0] == "--line":  # NY 5324.41(k)(3)(ii): the corrected line, paid
            if len(rest) < 3:
                raise RequestError(f"void-hit: --line takes a LINE and a REASON {_usage(name)}")
            line = rest[1].strip()
            if not _LINE.match(line):
                raise RequestError(
                    f"LINE: a pay-table line such as straight-flush, got {short(line)}"
                )
            rest = rest[2:]
        reason = _text(" ".join(rest), "REASON")
        return HitVoided(**who, position=position, reason=reason, line=line)
    if name == "correct-hit":
        count_args(name, args, 3)
        position = _position(args[0], "POSITION")
        line = _line_or_none(args[1])
        return HitCorrected(
            **who, position=position, line=line, reason=_text(" ".join(args[2:]), "REASON")
        )
    if name == "adjust-hit":
        count_args(name, args, 4)
        if not args[0].isdigit() or len(args[0]) > 9:
            raise RequestError(f"ROUND: the round's number, got {short(args[0])}")
        return HitAdjusted(
            **who,
            round_id=int(args[0]),
            position=_position(args[1], "POSITION"),
            line=_line_or_none(args[2]),
            reason=_text(" ".join(args[3:]), "REASON"),
        )
    if name == "clear-fault":
        count_args(name, args, 0, 1)
        if args and args[0] != "--void":
            raise RequestError(f"clear-fault: unknown option {short(args[0])} {_usage(name)}")
        return FaultCleared(**who, void=bool(args))
    if name == "void-draw":
        count_args(name, args, 1)
        return RngVoid(**who, reason=_text(" ".join(args), "REASON"))
    if name == "side-wagers":
        count_args(name, args, 1)
        return SideWagers(**who, bets=_side_bets(args))
    if name == "maintenance":
        count_args(name, args, 1, 1)
        if args[0] not in ("enter", "exit"):
            raise RequestError(f"maintenance: 'enter' or 'exit', got {short(args[0])}")
        return MaintenanceEntered(**who) if args[0] == "enter" else MaintenanceExited(**who)
    if name == "door-maintenance":
        count_args(name, args, 1, 1)
        if args[0] not in ("on", "off"):
            raise RequestError(f"door-maintenance: 'on' or 'off', got {short(args[0])}")
        return DoorMaintenance(**who, allow=args[0] == "on")
    if name == "config-change":
        count_args(name, args, 1)
        return ConfigChanged(**who, changes=_changes(args))
    assert name == "meter-correct"
    count_args(name, args, 4)
    level = _text(args[0], "LEVEL")
    meter = args[1].strip()
    if meter not in METERS:
        raise RequestError(f"METER: one of {', '.join(METERS)}, got {short(args[1])}")
    return MeterCorrected(
        **who,
        level=level,
        meter=meter,
        delta_cents=_delta_cents(args[2]),
        reason=_text(" ".join(args[3:]), "REASON"),
    )


# ------------------------------------------------------------------------------------- serving
