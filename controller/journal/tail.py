"""The journal's one tail: one follower reads each committed entry once and hands it, typed, to
every reader of committed entries (the page's feed, the floor link's exception queue, the link's
shipper, the simulated table's narrator).

Responsible for (cf. Litestream's one WAL follower feeding every replica):
- `read_entries` / `read_committed`: the one way a reader turns journal rows into `Entry` objects,
  over the one read-only opener (``controller.journal.audit.connect_read_only``);
- `Committed`: an entry with its event and effects as the typed records of ``fsm.round`` (a
  reader switches on effect types and reads the facts the effects carry);
- `JournalTail`: one thread that waits on the owner's publications, reads the entries committed
  up to the published seq (never past it) over ONE read-only connection, and calls each
  subscriber with them, in seq order. A subscriber that starts behind (the floor link folding the
  whole journal, the shipper from its durable cursor, the page from its window) is first handed
  the entries it missed, on the subscribing thread, before `subscribe` returns.

Subscribers are called one at a time (under the tail's lock), with each batch of new entries and
the publication that made them visible, and at least every ``wait_s`` with an empty batch (time
for periodic work, e.g. saving the SAS frame log). A callback must be quick and must not call the
tail back. A subscriber that raises is logged and keeps its subscription.

Must never write the journal, touch the round machine, or read past the owner's publication.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from controller.journal.audit import connect_read_only
from controller.journal.format import Entry, decode_object
from fsm.round.effects import Effect, Rejected, parse_effect
from fsm.round.events import Event, EventRecord, parse_event
from fsm.round.records import RecordError

log = logging.getLogger(__name__)

#: The longest the tail waits for a publication before calling its subscribers anyway (s).
WAIT_S = 0.25
#: Entries read at a time.
BATCH = 500

_COLUMNS = "seq, ts_ms, round_id, type, data, prev_hash, hash, state_hash, mac"
_ROWS = f"SELECT {_COLUMNS} FROM journal WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?"


def read_entries(
    conn: sqlite3.Connection, after: int, up_to: int | None = None, limit: int = BATCH
) -> list[Entry]:
    """The committed entries after ``after`` up to ``up_to`` (None: the last), at most
    ``limit``; an entry whose data is not a JSON object is read with empty data."""
    upper = (1 << 62) if up_to is None else up_to
    out = []
    for seq, ts_ms, round_id, type_, data, prev, digest, s_hash, mac in conn.execute(
        _ROWS, (after, upper, limit)
    ):
        try:
            obj = decode_object(data, f"seq {seq}: data")
        except (TypeError, ValueError):
            obj = {}
        out.append(
            Entry(int(seq), int(ts_ms), round_id, str(type_), obj, prev, digest, s_hash, mac)
        )
    return out


def read_committed(path: str | Path, after: int = 0) -> Iterator[Committed]:
    """Every committed entry of the journal at ``path`` after ``after``, typed (offline readers:
    tests, the narration of a finished run)."""
    conn = connect_read_only(path)
    try:
        while True:
            batch = read_entries(conn, after)
            if not batch:
                return
            for entry in batch:
                yield Committed(entry)
            after = batch[-1].seq
    finally:
        conn.close()


@dataclass(frozen=True)
class Committed:
    """One committed entry, with its event and its effects as typed records (parsed once, on
    first use, by whichever subscriber asks first)."""

    entry: Entry

    @property
    def seq(self) -> int:
        return self.entry.seq

    @property
    def round_id(self) -> int:
        return int(self.entry.round_id or 0)

    @property
    def type(self) -> str:
        return self.entry.type

    @property
    def data(self) -> dict[str, Any]:
        """The event's data as journaled (with ``effects``)."""
        return self.entry.data

    @cached_property
    def effects(self) -> tuple[Effect, ...]:
        """The entry's effects as records; one that does not parse (a journal written by an
        older release) is left out and logged."""
        raw = self.entry.data.get("effects")
        out = []
        for i, item in enumerate(raw if isinstance(raw, list) else ()):
            try:
                out.append(parse_effect(item, f"seq {self.seq}: effects[{i}]"))
            except RecordError as exc:
                log.warning("journal tail: %s", exc)
        return tuple(out)

    @cached_property
    def event(self) -> EventRecord | None:
        """The event as its record (None: a refused event whose data does not parse)."""
        data = {k: v for k, v in self.entry.data.items() if k != "effects"}
        try:
            return parse_event(Event(self.entry.type, data))
        except RecordError:
            return None

    @property
    def rejected(self) -> Rejected | None:
        """The refusal of the event (nothing else happened), or None."""
        return next((e for e in self.effects if isinstance(e, Rejected)), None)


class Publisher(Protocol):
    """What the tail needs of the owner (``controller.service.owner.Owner``)."""

    @property
    def public(self) -> Any: ...

    @property
    def alive(self) -> bool: ...

    def wait_published(self, after_seq: int, timeout: float | None = None) -> Any: ...


#: A subscriber: ``callback(new entries, the publication)``.
Subscriber = Callable[[Sequence[Committed], Any], None]


@dataclass(eq=False)
class Subscription:
    name: str
    callback: Subscriber


class JournalTail:
    """The one follower of a journal's commits. `subscribe` starts it, the last `unsubscribe`
    stops it."""

    def __init__(self, owner: Publisher, path: str | Path, *, wait_s: float = WAIT_S) -> None:
        self._owner = owner
        self.path = Path(path)
        self._wait_s = wait_s
        self._lock = threading.RLock()
        self._subs: list[Subscription] = []
        self._conn: sqlite3.Connection | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        #: the last seq handed to the subscribers (never past the published seq)
        self.seq = 0
        self.read = 0  # entries read from the journal by the follower (each once)

    # ------------------------------------------------------------------ subscribers' API
    def subscribe(
        self, name: str, callback: Subscriber, after_seq: int | None = None
    ) -> Subscription:
        """Call ``callback`` with every entry committed after ``after_seq`` (None: from now on):
        those already published first, on this thread, before returning; later ones from the
        tail's thread. `JournalError` if the journal cannot be opened."""
        sub = Subscription(name, callback)
        with self._lock:
            if self._thread is None:
                self._connection()  # fails here, on the subscriber's thread, when it cannot
                self.seq = int(self._owner.public.seq)
                self._stopping.clear()
                self._thread = threading.Thread(target=self._run, name="journal-tail", daemon=True)
                self._thread.start()
            public = self._owner.public
            if after_seq is not None and after_seq < self.seq:
                self._replay(sub, after_seq, public)
            self._subs.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop calling ``sub``; the last one stops the tail (its thread, its connection)."""
        with self._lock:
            with contextlib.suppress(ValueError):
                self._subs.remove(sub)
            if self._subs:
                return
            thread, self._thread = self._thread, None
            self._stopping.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(5.0)
        with self._lock:
            if self._thread is None:
                self._close()

    def catch_up(self) -> None:
        """Hand the subscribers, now and on this thread, what is published and not yet handed
        (a subscriber that stops wants the entries committed last)."""
        with self._lock:
            if self._thread is not None:
                self._advance(self._owner.public)

    # ------------------------------------------------------------------ the follower
    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect_read_only(self.path)
        return self._conn

    def _close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def _replay(self, sub: Subscription, after: int, public: Any) -> None:
        while after < self.seq:
            batch = [Committed(e) for e in read_entries(self._connection(), after, self.seq)]
            if not batch:
                break
            self._call(sub, batch, public)
            after = batch[-1].seq

    def _run(self) -> None:
        owner = self._owner
        while not self._stopping.is_set():
            try:
                public = owner.wait_published(self.seq, timeout=self._wait_s)
                if public.seq <= self.seq and (
                    public.storage_fault is not None or not owner.alive
                ):  # nothing more will come: do not spin
                    self._stopping.wait(self._wait_s)
                with self._lock:
                    if self._stopping.is_set():
                        break
                    self._advance(public)
            except Exception:  # a journal that cannot be read now: try again
                log.exception("journal tail: reading the journal failed")
                with self._lock:
                    self._close()
                self._stopping.wait(self._wait_s)

    def _advance(self, public: Any) -> None:
        up_to = int(public.seq)
        handed = False
        while self.seq < up_to:
            batch = [Committed(e) for e in read_entries(self._connection(), self.seq, up_to)]
            if not batch:
                break
            self.read += len(batch)
            self.seq = batch[-1].seq
            for sub in list(self._subs):
                self._call(sub, batch, public)
            handed = True
        if not handed:
            for sub in list(self._subs):
                self._call(sub, (), public)

    @staticmethod
    def _call(sub: Subscription, batch: Sequence[Committed], public: Any) -> None:
        try:
            sub.callback(batch, public)
        except Exception:  # one reader's bug must not stop the others
            log.exception("journal tail: subscriber %s failed", sub.name)
