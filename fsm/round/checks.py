"""Field checks for the round's planners: a bad field refuses the event with a reason naming it.

Responsible for turning malformed event data into a ``rejected`` effect's reason. Must never raise
anything but ``_Reject`` (which never escapes ``RoundMachine.step``) and never change state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fsm.round.catalogue import AREAS
from fsm.round.events import JSON, Effect


class _Reject(Exception):
    """Raised by a planner: the event is refused with this reason (never escapes step)."""


Plan = tuple[str, Callable[[], None]]


def rejected(event_type: str, reason: str) -> Effect:
    return {"type": "rejected", "event": event_type, "reason": reason}


# --- field checks (raise _Reject naming the field) ------------------------------------------


def _field(data: Mapping[str, JSON], key: str) -> JSON:
    if key not in data:
        raise _Reject(f"{key}: required")
    return data[key]


def _int(data: Mapping[str, JSON], key: str, lo: int, hi: int | None = None) -> int:
    v = _field(data, key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Reject(f"{key}: must be an integer, not {v!r}"[:120])
    if v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise _Reject(f"{key}: must be {rng}, not {v}")
    return v


def _text(data: Mapping[str, JSON], key: str) -> str:
    v = _field(data, key)
    if not isinstance(v, str) or not v.strip():
        raise _Reject(f"{key}: must be a non-empty string")
    return v


def _position(data: Mapping[str, JSON], key: str = "position") -> int:
    return _int(data, key, 1, AREAS)
