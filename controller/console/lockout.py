"""The console's wrong-PIN limits, kept across a restart of the service.

Responsible for counting each supervisor id's consecutive wrong PINs (within `WINDOW_S`), locking
the id for `LOCKOUT_S` after `LOCKOUT_AFTER` of them, and for rebuilding those counters at start
from the journal, where every wrong PIN of a configured supervisor is a ``console_refused`` entry
(`REASON_WRONG` or `REASON_LOCKED`) and every request that passed its PIN is an entry with
``via = "console"`` and the supervisor's id. A restart therefore neither clears a lock nor forgets
the wrong PINs that lead to one. `recent_entries` reads the journal through a read-only connection
(its last `WINDOW_S` only, found by bisecting on seq: a fixed cost for any journal length).

Must never: write the journal, keep or compare a PIN (the server checks PINs), or trust a clock
it was not given (times are the caller's monotonic clock; journal times are UTC ms).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    """The counters of every supervisor id; times on the caller's clock (seconds)."""

    def __init__(self) -> None:
        self._ids: dict[str, _Count] = {}

    def locked_for(self, supervisor: str, now: float) -> float:
        """Seconds the id stays locked (0: not locked)."""
        count = self._ids.get(supervisor)
        return max(0.0, count.locked_until - now) if count is not None else 0.0

    def wrong_pin(self, supervisor: str, now: float) -> str:
        """Count a wrong PIN of a configured supervisor; the reason to journal (`REASON_LOCKED`
        when this one locks the id)."""
        count = self._ids.setdefault(supervisor, _Count())
        if count.wrong and now - count.last_wrong > WINDOW_S:
            count.wrong = 0
        count.wrong += 1
        count.last_wrong = now
        if count.wrong >= LOCKOUT_AFTER:
            self.lock(supervisor, now)
            return REASON_LOCKED
        return REASON_WRONG

    def lock(self, supervisor: str, now: float) -> None:
        count = self._ids.setdefault(supervisor, _Count())
        count.wrong = 0
        count.locked_until = now + LOCKOUT_S

    def accepted(self, supervisor: str) -> None:
        """The id gave its PIN: its wrong PINs are forgotten."""
        count = self._ids.get(supervisor)
        if count is not None:
            count.wrong = 0

    def wrong_count(self, supervisor: str) -> int:
        count = self._ids.get(supervisor)
        return count.wrong if count is not None else 0

    def replay(self, entries: Iterable[HistoryEntry], now: float, now_ms: int) -> int:
        """Rebuild the counters from journal entries (oldest first), each placed on the caller's
        clock by its age (``now_ms - ts_ms``); how many entries counted."""
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
                    self.lock(supervisor, at)
                    counted += 1
            elif data.get("via") == "console":
                self.accepted(supervisor)
                counted += 1
        return counted


def recent_entries(journal: str | Path, since_ms: int) -> list[HistoryEntry]:
    """The journal's entries from ``since_ms`` on (oldest first, at most `MAX_REPLAYED`), read
    read-only; [] when there is no journal yet. The first seq is found by bisection on the
    entries' times (they are appended in time order)."""
    from controller.journal.audit import connect_read_only

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
