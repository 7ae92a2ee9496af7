"""The page's live feed: follows the journal's committed entries and the owner's publications and
hands every browser the latest frame, keyed to the journal seq.

Responsible for the page's subscriber of the journal's one tail (`Feed`, on
``controller.journal.tail.JournalTail``'s thread): it notes the entries committed since the last
frame, builds ONE frame (`controller.web.view.frame`) and hands its JSON text to the page's event
loop; and for the browsers' side of it (`Hub`): each browser keeps only the newest frame not yet
sent, so a slow browser gets fewer frames and never holds up the owner, the feed or another
browser. Must never read the journal itself (the tail hands it entries), write it, touch the
round machine, or block the owner.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from controller.journal.tail import Committed, JournalTail
from controller.web import view

log = logging.getLogger(__name__)

#: At start the feed reads only this many of the last entries (enough for the last round's
#: cards and the entry list; a start costs the same for any journal length).
START_WINDOW = 1000


class Publisher(Protocol):
    """What the feed needs of the owner (``controller.service.owner.Owner``)."""

    @property
    def public(self) -> Any: ...

    @property
    def alive(self) -> bool: ...

    @property
    def tail(self) -> JournalTail: ...


class Client(Protocol):
    """One browser's connection: ``send(text)`` starts sending a frame, ``done`` is called back
    (on the loop) when it has gone, so the next one may go."""

    def send(self, text: str, done: Callable[[], None]) -> None: ...


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
    """The page's subscriber of the journal's tail (``owner.tail``): one frame per publication,
    handed to ``deliver(seq, text)`` (which must only schedule work on the page's loop).
    ``extra()`` adds page-side facts to a frame (e.g. who is signed in is per browser and is not
    here; the training marks are)."""

    def __init__(
        self,
        owner: Publisher,
        deliver: Callable[[int, str], None],
        *,
        mode: str,
        way: Any = None,
        ranking: Any = None,
        extra: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self._owner = owner
        self._deliver = deliver
        self._mode = mode
        self._extra = extra
        self.hands = view.Hands(way, ranking)
        self.entries: collections.deque[dict[str, Any]] = collections.deque(maxlen=view.ENTRY_LINES)
        self._lock = threading.Lock()
        self._subscription: Any = None
        self._shown: Any = None
        self.frames = 0
        self.latest: dict[str, Any] | None = None

    def start(self) -> None:
        """Read the last `START_WINDOW` entries, send the first frame, then follow the tail."""
        head = int(self._owner.public.seq)
        tail = self._owner.tail
        self._subscription = tail.subscribe("page feed", self._take, max(0, head - START_WINDOW))
        self._take((), self._owner.public)

    def stop(self) -> None:
        if self._subscription is not None:
            self._owner.tail.unsubscribe(self._subscription)
            self._subscription = None

    def _take(self, batch: Sequence[Committed], published: Any) -> None:
        with self._lock:
            for c in batch:
                self.hands.note(c.entry.round_id, c.type, c.data)
                self.entries.append(
                    view.entry_line(c.seq, c.entry.ts_ms, c.entry.round_id, c.type, c.data)
                )
            public = self._owner.public  # the page's view of it (a linked pool's value shown)
            if public.seq != published.seq:
                public = published  # never a frame ahead of the entries it lists
            if batch or public != self._shown:
                self._shown = public
                self._emit(public)

    def _emit(self, public: Any) -> None:
        extra = self._extra() if self._extra is not None else None
        built = view.frame(public, self.entries, self.hands.last, mode=self._mode, extra=extra)
        self.latest = built
        self.frames += 1
        self._deliver(int(public.seq), json.dumps(built, separators=(",", ":")))
