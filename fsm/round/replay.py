"""Replay of journaled events into the round machine (what ``tablectl journal verify`` uses).

Responsible for: feeding each entry's type, data (without its "effects") and timestamp to a fresh
RoundMachine and returning the snapshot and meters it ends with. Must never: read the journal
itself (the controller passes the entries), or skip an entry.
"""

from __future__ import annotations

from fsm.round.machine import replay

__all__ = ["replay"]
