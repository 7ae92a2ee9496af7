"""Supervisor sessions of the page: who signed in, in which browser, until when.

Responsible for the session tokens (random, held only in memory, one per signed-in browser),
their idle expiry, and the PIN check of a sign-in, which is the supervisor console's own
(`controller.supervisor.gate.PinGate.authenticate`: scrypt, the refusals journaled, and the
same attempt limits in the same counters: `controller.supervisor.lockout.shared_book`, one book per
table shared with the console and rebuilt from the journal at start, so a supervisor has one
limit across both channels and a restart clears no lock; an unknown or locked id costs the same
scrypt as a known one, and the console's id rule is applied before, in the route). The session
cookie is HttpOnly and
SameSite=Strict (routes set it). Must never log, store or echo a PIN, and never grant anything
without a PIN check.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

COOKIE = "paigow_session"
#: At most this many sessions at once; the oldest goes first.
MAX_SESSIONS = 32


@dataclass
class Session:
    supervisor: str
    expires: float


class Sessions:
    """Tokens to supervisor ids with an idle expiry (``minutes`` after the last use)."""

    def __init__(self, minutes: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = minutes * 60.0
        self._clock = clock
        self._lock = threading.Lock()
        self._by_token: dict[str, Session] = {}

    def create(self, supervisor: str) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            while len(self._by_token) >= MAX_SESSIONS:
                oldest = min(self._by_token, key=lambda t: self._by_token[t].expires)
                del self._by_token[oldest]
            self._by_token[token] = Session(supervisor, self._clock() + self._ttl)
        return token

    def get(self, token: str | None) -> str | None:
        """The supervisor of a live session (its expiry pushed on), or None."""
        if not token:
            return None
        now = self._clock()
        with self._lock:
            session = self._by_token.get(token)
            if session is None:
                return None
            if now >= session.expires:
                del self._by_token[token]
                return None
            session.expires = now + self._ttl
            return session.supervisor

    def drop(self, token: str | None) -> None:
        with self._lock:
            if token:
                self._by_token.pop(token, None)
