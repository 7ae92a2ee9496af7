"""The page's live feed: follows the owner's publications and the journal's committed entries and
hands every browser the latest frame, keyed to the journal seq.

Responsible for one reader thread (`Feed`) that waits on ``Owner.wait_published``, reads the
entries committed since the last frame over a read-only SQLite connection (``mode=ro``), builds
ONE frame (`controller.web.view.frame`) and hands its JSON text to the page's event loop; and for
the browsers' side of it (`Hub`): each browser keeps only the newest frame not yet sent, so a slow
browser gets fewer frames and never holds up the owner, the feed or another browser. Must never
write the journal, touch the round machine, or block the owner (it only reads publications).
"""

from __future__ import annotations

import collections
import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from controller.web import view

log = logging.getLogger(__name__)

#: The longest the feed waits for a publication before looking at its stop flag (s).
WAIT_S = 0.5
#: Entries read from the journal at a time.
BATCH = 500
#: At start the feed reads only this many of the last entries (enough for the last round's
#: cards and the entry list; a start costs the same for any journal length).
START_WINDOW = 1000


class Publisher(Protocol):
    """What the feed needs of the owner (``controller.service.owner.Owner``)."""

    @property
    def public(self) -> Any: ...

    @property
    def alive(self) -> bool: ...

    def wait_published(self, after_seq: int, timeout: float | None = None) -> Any: ...


class Client(Protocol):
    """One browser's connection: ``send(text)`` starts sending a frame, ``done`` is called back
    (on the loop) when it has gone, so the next one may go."""

    def send(self, text: str, done: Callable[[], None]) -> None: ...


def open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the journal (the owner is its only writer)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=5)
    conn.execute("PRAGMA query_only = ON")
    return conn


def read_entries(
    conn: sqlite3.Connection, after: int, up_to: int, limit: int = BATCH
) -> list[tuple[int, int, int | None, str, dict[str, Any]]]:
    rows = conn.execute(
        "SELECT seq, ts_ms, round_id, type, data FROM journal WHERE seq > ? AND seq <= ? "
        "ORDER BY seq LIMIT ?",
        (after, up_to, limit),
    ).fetchall()
    out = []
    for seq, ts_ms, round_id, etype, data in rows:
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = {}
        out.append(
            (int(seq), int(ts_ms), round_id, str(etype), parsed if isinstance(parsed, dict) else {})
        )
    return out


class Hub:
    """The browsers of one page, on the page's event loop. `publish` keeps the newest frame;
    each client is sent the newest frame once its previous one has gone."""

    def __init__(self) -> None:
        self.latest: str | None = None
        self.latest_seq = 0
        self._pending: dict[Client, str | None] = {}
        self._busy: set[Client] = set()
        self.sent = 0

    @property
    def clients(self) -> int:
        return len(self._pending)

    def add(self, client: Client) -> None:
        self._pending[client] = self.latest
        self._pump(client)

    def remove(self, client: Client) -> None:
        self._pending.pop(client, None)
        self._busy.discard(client)

    def publish(self, seq: int, text: str) -> None:
        self.latest, self.latest_seq = text, seq
        for client in list(self._pending):
            self._pending[client] = text
            self._pump(client)

    def _pump(self, client: Client) -> None:
        if client in self._busy or client not in self._pending:
            return
        text = self._pending[client]
        if text is None:
            return
        self._pending[client] = None
        self._busy.add(client)

        def done() -> None:
            self._busy.discard(client)
            self._pump(client)

        try:
            client.send(text, done)
            self.sent += 1
        except Exception:  # a browser that went away: forget it
            log.debug("page: a browser could not be sent a frame", exc_info=True)
            self.remove(client)


class Feed:
    """The reader thread: one frame per publication, handed to ``deliver(seq, text)`` (which
    must only schedule work on the page's loop). ``extra()`` adds page-side facts to a frame
    (e.g. who is signed in is per browser and is not here; the training marks are)."""

    def __init__(
        self,
        owner: Publisher,
        journal_path: Path,
        deliver: Callable[[int, str], None],
        *,
        mode: str,
        way: Any = None,
        ranking: Any = None,
        extra: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self._owner = owner
        self._path = journal_path
        self._deliver = deliver
        self._mode = mode
        self._extra = extra
        self.hands = view.Hands(way, ranking)
        self.entries: collections.deque[dict[str, Any]] = collections.deque(maxlen=view.ENTRY_LINES)
        self._read_seq = 0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self.frames = 0
        self.latest: dict[str, Any] | None = None

    def start(self) -> None:
        self._conn = open_read_only(self._path)
        head = int(self._owner.public.seq)
        self._read_seq = max(0, head - START_WINDOW)
        self._catch_up(head)
        self._emit(self._owner.public)
        self._thread = threading.Thread(target=self._run, name="page-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _run(self) -> None:
        seq = self._owner.public.seq
        while not self._stopping.is_set():
            try:
                public = self._owner.wait_published(seq, timeout=WAIT_S)
                if public.seq == seq and public.storage_fault is None:
                    if not self._owner.alive:  # wait_published no longer waits: do not spin
                        self._stopping.wait(WAIT_S)
                    continue
                seq = public.seq
                self._catch_up(public.seq)
                self._emit(public)
                if public.storage_fault is not None:
                    self._stopping.wait(WAIT_S)
            except Exception:  # the page must never die of one bad frame
                log.exception("page feed: frame failed")
                self._stopping.wait(WAIT_S)

    def _catch_up(self, up_to: int) -> None:
        """Read the entries committed up to ``up_to`` (the published seq: never past it)."""
        conn = self._conn
        if conn is None:
            return
        while self._read_seq < up_to:
            rows = read_entries(conn, self._read_seq, up_to)
            if not rows:
                break
            for seq, ts_ms, round_id, etype, data in rows:
                self.hands.note(round_id, etype, data)
                self.entries.append(view.entry_line(seq, ts_ms, round_id, etype, data))
                self._read_seq = seq

    def _emit(self, public: Any) -> None:
        extra = self._extra() if self._extra is not None else None
        built = view.frame(public, self.entries, self.hands.last, mode=self._mode, extra=extra)
        self.latest = built
        self.frames += 1
        self._deliver(int(public.seq), json.dumps(built, separators=(",", ":")))
