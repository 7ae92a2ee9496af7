"""The event that every input posts to the owner thread, and the effect the round answers with.

An Event is plain data (JSON-able), so it can be journaled as it was received and replayed. This
module must never hold behaviour: the round machine decides what an event means.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

JSON = Any
Effect = dict[str, JSON]


@dataclass(frozen=True)
class Event:
    """One input for the round: ``type`` names it (``chip_detected``, ``lockout_pressed``,
    ``fault_raised`` ...), ``data`` carries its JSON-able fields."""

    type: str
    data: Mapping[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        return {"type": self.type, "data": dict(self.data)}
