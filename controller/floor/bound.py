"""The bound on journaled SAS host commands: a host that misbehaves cannot fill the journal.

On main a host sending 01/02, 09 or broadcast 7F in a loop made one journal entry each: 400
entries in 1.6 s, about 5.6 GB a day and the SD card's wear (issue 23). `CommandBound` lets at
most ``LIMIT`` host commands a ``WINDOW_S`` through to the owner; a command over the bound is held
(the host's latest word: it is journaled as soon as the window has room, so the table still ends
in the state the host asked for last) and the held command it replaces is counted; the next
journaled command carries the count (``unjournaled``), like the console's refused PINs.
Pure bookkeeping on the port thread's monotonic clock: it must never post, block or read the
journal.
"""

from __future__ import annotations

import collections
import dataclasses

from fsm.round.events import FloorCommand

#: At most this many host commands journaled in any WINDOW_S seconds (a real floor system sends
#: a few an hour: a shut-down, a start-up, a clock setting).
LIMIT = 10
WINDOW_S = 60.0


class CommandBound:
    """Which host commands to post now (each at most once, in the order they came)."""

    def __init__(self, limit: int = LIMIT, window_s: float = WINDOW_S) -> None:
        self.limit = limit
        self.window_s = window_s
        self._times: collections.deque[float] = collections.deque()
        self._held: FloorCommand | None = None
        self.unjournaled = 0  # commands dropped since the last one journaled

    def _room(self, now: float) -> bool:
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        return len(self._times) < self.limit

    def _take(self, command: FloorCommand, now: float) -> FloorCommand:
        self._times.append(now)
        if self.unjournaled:
            command = dataclasses.replace(command, unjournaled=self.unjournaled)
            self.unjournaled = 0
        return command

    def release(self, now: float) -> list[FloorCommand]:
        """The held command, once the window has room for it (else nothing)."""
        if self._held is None or not self._room(now):
            return []
        held, self._held = self._held, None
        return [self._take(held, now)]

    def admit(self, command: FloorCommand, now: float) -> list[FloorCommand]:
        """The commands to post for a new host ``command`` (a held one first): none when over
        the bound (held, the one it replaces counted)."""
        out = self.release(now)
        if self._held is None and self._room(now):
            out.append(self._take(command, now))
            return out
        if self._held is not None:
            self.unjournaled += 1
        self._held = command
        return out
