"""How a planner refuses an event: ``_Reject`` with the reason (and its one-word cause), turned by
``RoundMachine.step`` into a journaled ``rejected`` effect.

Field types, presence and ranges are checked before a planner runs, by the event's record
(fsm/round/events.py); a planner checks what depends on the round (an element of a list, a rule of
the state). Must never raise anything but ``_Reject`` (which never escapes ``RoundMachine.step``)
and never change state.
"""

from __future__ import annotations

from fsm.round.context import Plan
from fsm.round.effects import RejectCause, Rejected


class _Reject(Exception):
    """Raised by a planner: the event is refused with this reason (never escapes step)."""

    def __init__(self, reason: str, cause: RejectCause = "refused", position: int | None = None):
        super().__init__(reason)
        self.cause: RejectCause = cause
        self.position = position


def _invalid(reason: str) -> _Reject:
    """A field whose content is not of the form its event needs (an element of a list ...)."""
    return _Reject(reason, "invalid")


def rejected(
    event_type: str, reason: str, cause: RejectCause = "refused", position: int | None = None
) -> Rejected:
    return Rejected(event_type, reason, cause, position)


__all__ = ["Plan", "_Reject", "_invalid", "rejected"]
