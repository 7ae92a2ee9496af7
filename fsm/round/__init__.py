"""The round of a pai gow table: states, typed events and effects, meters, starting position,
banking (issue 3, issue 7).

Pure logic only: no I/O, no clock, no randomness, no threads or locks of its own. See machine.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fsm.round.catalogue import EFFECT_TYPES, EVENT_FIELDS
    from fsm.round.config import GameConfig, ProgressiveLevel
    from fsm.round.machine import RoundMachine, replay


def __getattr__(name: str) -> Any:
    """The names below, imported when first used (PEP 562): reading a game configuration
    (``fsm.round.config``, which ``tablectl config check`` needs) must not build the round
    machine and its catalogue."""
    if name in ("EFFECT_TYPES", "EVENT_FIELDS"):
        from fsm.round import catalogue as module
    elif name in ("GameConfig", "ProgressiveLevel"):
        from fsm.round import config as module  # type: ignore[no-redef]
    elif name in ("RoundMachine", "replay"):
        from fsm.round import machine as module  # type: ignore[no-redef]
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


__all__ = [
    "EFFECT_TYPES",
    "EVENT_FIELDS",
    "GameConfig",
    "ProgressiveLevel",
    "RoundMachine",
    "replay",
]
