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

import base64
import collections
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from controller.config import SCRYPT_N, SCRYPT_P, SCRYPT_R, check_pin
from controller.supervisor.lockout import LOCKOUT_AFTER, LockoutBook
from fsm.round.events import ConsoleRefused, Event

log = logging.getLogger(__name__)

#: Refusals journaled per minute at most; the rest are counted in memory.
JOURNALED_REFUSALS_PER_MINUTE = 10
#: How long a refusal waits for the owner to commit it (seconds).
COMMIT_TIMEOUT_S = 10.0
#: A supervisor id: 1-32 lowercase letters, digits, '_' or '-', starting with a letter or digit.
SUPERVISOR_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
SUPERVISOR_ID_RULE = "a supervisor id (1-32 lowercase letters, digits, '_' or '-')"


def valid_supervisor_id(text: object) -> bool:
    """The rule for a supervisor id every channel applies (the console's and the page's)."""
    return isinstance(text, str) and SUPERVISOR_ID.match(text) is not None


def dummy_pin_hash(stored: Iterable[str]) -> str:
    """A stored PIN hash no PIN matches, with the scrypt cost of the first configured one (the
    defaults without any): checked for an unknown id, it takes the time a real check takes."""
    params = f"n={SCRYPT_N},r={SCRYPT_R},p={SCRYPT_P}"
    for text in stored:
        parts = text.split("$")
        if len(parts) == 4 and parts[0] == "scrypt":
            params = parts[1]
            break
    salt = base64.b64encode(os.urandom(16)).decode()
    digest = base64.b64encode(os.urandom(32)).decode()
    return f"scrypt${params}${salt}${digest}"


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
        # an unknown id (or a locked one) costs one scrypt too: the answer's time does not say
        # whether an id exists (issue 23: 2-5 ms against 79 ms at the page's sign-in)
        self._dummy_hash = dummy_pin_hash(s.pin_hash for s in self._supervisors.values())
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
                check_pin(self._dummy_hash, pin)  # the same time as a PIN check
                reason, always = f"locked after {LOCKOUT_AFTER} wrong PINs", False
                answer = (
                    f"refused: {supervisor} is locked after {LOCKOUT_AFTER} wrong PINs; try "
                    f"again in {math.ceil(locked)} s"
                )
            elif known is not None and check_pin(known.pin_hash, pin):
                self.book.accepted(supervisor)
                return None
            elif known is None:
                check_pin(self._dummy_hash, pin)  # the same time as a known id's wrong PIN
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
