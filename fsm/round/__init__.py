"""The round of a pai gow table: states, typed events and effects, meters, starting position,
banking (issue 3, issue 7).

Pure logic only: no I/O, no clock, no randomness, no threads or locks of its own. See machine.py.
"""

from __future__ import annotations

from fsm.round.catalogue import EFFECT_TYPES, EVENT_FIELDS
from fsm.round.config import GameConfig, ProgressiveLevel
from fsm.round.machine import RoundMachine, replay

__all__ = [
    "EFFECT_TYPES",
    "EVENT_FIELDS",
    "GameConfig",
    "ProgressiveLevel",
    "RoundMachine",
    "replay",
]
