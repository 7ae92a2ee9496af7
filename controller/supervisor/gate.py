"""The supervisors' PIN gate, shared by every channel a supervisor signs in through (the console,
the page): checks an id and PIN against the configuration's scrypt hashes, counts wrong PINs in
the table's one book (`controller.supervisor.lockout`: a lock after `LOCKOUT_AFTER`, rebuilt from
the journal), and journals each refusal as ``console_refused`` (never the PIN): every wrong PIN
of a configured supervisor, and of the others at most `JOURNALED_REFUSALS_PER_MINUTE` a minute,
the next one journaled carrying how many were not (``unjournaled``).

Must never log, echo or journal a PIN, touch the round machine or write the journal itself (it
posts to the owner).
"""

from __future__ import annotations

import collections
import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from controller.config import check_pin
from controller.supervisor.lockout import LOCKOUT_AFTER, LockoutBook
from fsm.round.events import ConsoleRefused, Event

log = logging.getLogger(__name__)

#: Refusals journaled per minute at most; the rest are counted in memory.
JOURNALED_REFUSALS_PER_MINUTE = 10
#: How long a refusal waits for the owner to commit it (seconds).
COMMIT_TIMEOUT_S = 10.0


class GateOwner(Protocol):
    """What the gate needs of the owner: posting the refusals."""

    def post_tracked(self, event: Event) -> Any: ...


class PinCheck(Protocol):
    """A configured supervisor (``controller.config.Supervisor``)."""

    @property
    def pin_hash(self) -> str: ...


class PinGate:
    """One table's PIN check for every channel (``book``: the table's shared one)."""

    def __init__(
        self,
        owner: GateOwner,
        supervisors: Mapping[str, PinCheck],
        book: LockoutBook,
        *,
        clock: Callable[[], float] = time.monotonic,
        commit_timeout_s: float = COMMIT_TIMEOUT_S,
    ) -> None:
        self._owner = owner
        self._supervisors = dict(supervisors)
        self.book = book
        self._clock = clock
        self._commit_timeout_s = commit_timeout_s
        self._journaled: collections.deque[float] = collections.deque()
        self._unjournaled = 0
        #: Every refused authentication since the start (journaled or not).
        self.refusals = 0

    @property
    def replayed(self) -> int:
        """Journal entries the shared book's wrong-PIN counters were rebuilt from."""
        return self.book.replayed

    def authenticate(self, supervisor: str, pin: str, request: str) -> str | None:
        """None when the PIN is the supervisor's; otherwise the refusal (journaled, counted
        against the limits every channel sharing the book counts in)."""
        with self.book.lock:  # one attempt at a time across the channels sharing the book
            now = self._clock()
            locked = self.book.locked_for(supervisor, now)
            known = self._supervisors.get(supervisor)
            if locked > 0:
                reason, always = f"locked after {LOCKOUT_AFTER} wrong PINs", False
                answer = (
                    f"refused: {supervisor} is locked after {LOCKOUT_AFTER} wrong PINs; try "
                    f"again in {math.ceil(locked)} s"
                )
            elif known is not None and check_pin(known.pin_hash, pin):
                self.book.accepted(supervisor)
                return None
            elif known is None:
                reason, always = "unknown supervisor", False
                answer = "refused: supervisor id or PIN not accepted"
            else:  # always journaled: the restart counts them (at most LOCKOUT_AFTER per lock)
                reason, always = self.book.wrong_pin(supervisor, now), True
                answer = "refused: supervisor id or PIN not accepted"
        self._refuse(supervisor, request, reason, always=always)
        return answer

    def _refuse(self, supervisor: str, request: str, reason: str, *, always: bool = False) -> None:
        self.refusals += 1
        now = self._clock()
        while self._journaled and now - self._journaled[0] >= 60.0:
            self._journaled.popleft()
        if not always and len(self._journaled) >= JOURNALED_REFUSALS_PER_MINUTE:
            self._unjournaled += 1
            log.warning("console: refusal not journaled (rate bound): %s %s", supervisor, reason)
            return
        if not always:
            self._journaled.append(now)
        refused = ConsoleRefused(
            supervisor=supervisor,
            request=request,
            reason=reason,
            unjournaled=self._unjournaled or None,
        )
        self._unjournaled = 0
        log.warning("console: refused %s for %s: %s", request, supervisor, reason)
        receipt = self._owner.post_tracked(refused.envelope())
        receipt.wait(self._commit_timeout_s)
