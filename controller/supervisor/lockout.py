"""The console's wrong-PIN limits, kept across a restart of the service.

Responsible for counting each supervisor id's consecutive wrong PINs (within `WINDOW_S`), locking
the id for `LOCKOUT_S` after `LOCKOUT_AFTER` of them, and for rebuilding those counters at start
from the journal, where every wrong PIN of a configured supervisor is a ``console_refused`` entry
(`REASON_WRONG` or `REASON_LOCKED`) and every request that passed its PIN is an entry with
``via = "console"`` and the supervisor's id. A restart therefore neither clears a lock nor forgets
the wrong PINs that lead to one. `recent_entries` reads the journal through a read-only connection
(its last `WINDOW_S` only, found by bisecting on seq: a fixed cost for any journal length).
Every channel that checks a supervisor's PIN (the console, the web page's sign-in) counts in the
same book: `shared_book` gives the one book of a journal's table while any channel holds it
(rebuilt from the journal by the first), so a supervisor has one limit, not one per channel.

Must never: write the journal, keep or compare a PIN (the server checks PINs), or trust a clock
it was not given (times are the caller's monotonic clock; journal times are UTC ms).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.journal.audit import connect_read_only

#: Consecutive wrong PINs after which a supervisor id is locked, and for how long (seconds).
LOCKOUT_AFTER = 5
LOCKOUT_S = 60.0
#: Wrong PINs older than this (seconds) no longer count towards a lock.
WINDOW_S = 900.0
#: The journaled reasons of a configured supervisor's wrong PIN (the restart replays them).
REASON_WRONG = "wrong PIN"
REASON_LOCKED = f"wrong PIN; locked for {LOCKOUT_S:g} s"
REFUSAL_EVENT = "console_refused"
#: At most this many entries are read back at start.
MAX_REPLAYED = 100_000
#: How far back (ms) the start reads the journal: a wrong PIN that still counts, or a lock.
REPLAY_MS = int(WINDOW_S * 1000) + int(LOCKOUT_S * 1000)

#: One journal entry as the replay reads it: (ts_ms, type, data).
HistoryEntry = tuple[int, str, Mapping[str, Any]]


def wall_ms() -> int:
    """UTC milliseconds (the journal's clock)."""
    return time.time_ns() // 1_000_000


@dataclass
class _Count:
    wrong: int = 0
    last_wrong: float = 0.0
    locked_until: float = 0.0


class LockoutBook:
    """The counters of every supervisor id; times on the caller's clock (seconds). Thread-safe;
    ``lock`` (reentrant) is held by a channel around one whole attempt (check, PIN, count), so
    two channels sharing the book never both pass a check the other's attempt closes."""

    def __init__(self) -> None:
        self._ids: dict[str, _Count] = {}
        self.lock = threading.RLock()
        #: Journal entries the counters were rebuilt from (`shared_book`).
        self.replayed = 0

    def locked_for(self, supervisor: str, now: float) -> float:
        """Seconds the id stays locked (0: not locked)."""
        with self.lock:
            count = self._ids.get(supervisor)
            return max(0.0, count.locked_until - now) if count is not None else 0.0

    def wrong_pin(self, supervisor: str, now: float) -> str:
        """Count a wrong PIN of a configured supervisor; the reason to journal (`REASON_LOCKED`
        when this one locks the id)."""
        with self.lock:
            count = self._ids.setdefault(supervisor, _Count())
            if count.wrong and now - count.last_wrong > WINDOW_S:
                count.wrong = 0
            count.wrong += 1
            count.last_wrong = now
            if count.wrong >= LOCKOUT_AFTER:
                self.lock_id(supervisor, now)
                return REASON_LOCKED
            return REASON_WRONG

    def lock_id(self, supervisor: str, now: float) -> None:
        with self.lock:
            count = self._ids.setdefault(supervisor, _Count())
            count.wrong = 0
            count.locked_until = now + LOCKOUT_S

    def accepted(self, supervisor: str) -> None:
        """The id gave its PIN: its wrong PINs are forgotten."""
        with self.lock:
            count = self._ids.get(supervisor)
            if count is not None:
                count.wrong = 0

    def replay(self, entries: Iterable[HistoryEntry], now: float, now_ms: int) -> int:
        """Rebuild the counters from journal entries (oldest first), each placed on the caller's
        clock by its age (``now_ms - ts_ms``); how many entries counted."""
        with self.lock:
            return self._replay(entries, now, now_ms)

    def _replay(self, entries: Iterable[HistoryEntry], now: float, now_ms: int) -> int:
        counted = 0
        for ts_ms, kind, data in entries:
            supervisor = data.get("supervisor")
            if not isinstance(supervisor, str):
                continue
            at = now - max(0, now_ms - ts_ms) / 1000.0
            if kind == REFUSAL_EVENT:
                reason = data.get("reason")
                if reason == REASON_WRONG:
                    self.wrong_pin(supervisor, at)
                    counted += 1
                elif reason == REASON_LOCKED:
                    self.lock_id(supervisor, at)
                    counted += 1
            elif data.get("via") == "console":
                self.accepted(supervisor)
                counted += 1
        return counted


def recent_entries(journal: str | Path, since_ms: int) -> list[HistoryEntry]:
    """The journal's entries from ``since_ms`` on (oldest first, at most `MAX_REPLAYED`), read
    read-only; [] when there is no journal yet. The first seq is found by bisection on the
    entries' times (they are appended in time order)."""

    path = Path(journal)
    if not path.exists():
        return []
    conn = connect_read_only(path)
    try:
        row = conn.execute("SELECT max(seq) FROM journal").fetchone()
        last = int(row[0]) if row and row[0] is not None else 0
        lo, hi = 1, last + 1  # the first seq whose ts >= since_ms is in lo..hi
        while lo < hi:
            mid = (lo + hi) // 2
            ts = conn.execute("SELECT ts_ms FROM journal WHERE seq = ?", (mid,)).fetchone()
            if ts is None or int(ts[0]) >= since_ms:
                hi = mid
            else:
                lo = mid + 1
        rows = conn.execute(
            "SELECT ts_ms, type, data FROM journal WHERE seq >= ? ORDER BY seq LIMIT ?",
            (lo, MAX_REPLAYED),
        ).fetchall()
    except sqlite3.Error:
        return []  # the owner reports a damaged journal; the console starts with no counters
    finally:
        conn.close()
    out: list[HistoryEntry] = []
    for ts, kind, text in rows:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            out.append((int(ts), str(kind), data))
    return out


def journal_history(journal: str | Path) -> Callable[[int], list[HistoryEntry]]:
    """The ``history`` a `ConsoleServer` replays at start: the journal's recent entries."""
    return lambda since_ms: recent_entries(journal, since_ms)


_shared: dict[str, tuple[LockoutBook, int]] = {}
_shared_lock = threading.Lock()


def shared_book(
    journal: str | Path,
    *,
    clock: Callable[[], float] = time.monotonic,
    now_ms: Callable[[], int] = wall_ms,
) -> LockoutBook:
    """The one wrong-PIN book of the table whose journal is ``journal``, shared by every channel
    that checks a PIN (the console, the page's sign-in) while any of them holds it: the first
    rebuilds it from the journal's recent entries (a restart clears no lock and forgets no wrong
    PIN), the others get the same book. Pair each call with `release_book`."""
    key = str(Path(journal).resolve())
    with _shared_lock:
        held = _shared.get(key)
        if held is not None:
            _shared[key] = (held[0], held[1] + 1)
            return held[0]
        book = LockoutBook()
        stamp = now_ms()
        book.replayed = book.replay(recent_entries(journal, stamp - REPLAY_MS), clock(), stamp)
        _shared[key] = (book, 1)
        return book


def release_book(book: LockoutBook) -> None:
    """One holder of ``book`` (`shared_book`) is done; the last one's release forgets it (the
    next start rebuilds it from the journal)."""
    with _shared_lock:
        for key, (held, holders) in list(_shared.items()):
            if held is book:
                if holders > 1:
                    _shared[key] = (held, holders - 1)
                else:
                    del _shared[key]
                return
