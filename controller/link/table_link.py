"""The table's side of many tables (docs/link.md): the journal shipper and the linked pool's client,
on one thread of their own with an asyncio event loop (nats-py), never the owner's.

- The shipper takes committed entries from the journal's tail (``owner.tail``, from its durable
  cursor on) and publishes each, exactly as journaled with its hashes, to JetStream
  (``table.<id>.journal``, ``Nats-Msg-Id: <id>:<seq>:<hash16>``), in order, one at a time; it
  advances its durable cursor (``<db>.link-cursor``) only once the stream acknowledged the entries
  before it. An outage only grows the backlog; an entry resent after a crash carries the same
  Nats-Msg-Id, so the stream keeps one copy. An entry carrying card identities waits, with every
  later one, until its round is resolved.
- The pool's client asks the link controller, every quarter of ``[link] timeout_s``, whether it
  holds the table's contributions up to the last one journaled (``link.<pool>.confirm``). No
  answer for ``timeout_s``: it posts ``link_state`` up=false (the linked wager unplayable); the
  first answer that confirms them posts up=true. It watches the pool's value in the key-value
  bucket (`TableLink.pool`: what the table's display shows), and asks the controller to lock each
  pending hit of the linked level with every line the hand makes (``link.<pool>.hit``; a
  supervisor's corrected line names the line it corrects), posting the pool's decision as
  ``link_hit_locked``: the hit's line, the line the pool paid, its amount and from where.

Must never write the journal, touch the round machine, or post anything but ``link_state`` and
``link_hit_locked``; it opens no listening port (every connection is outbound).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from controller.journal.format import Entry
from controller.journal.tail import Committed, JournalTail, Subscription
from controller.link.keys import load_table_key
from controller.link.link_config import LinkSection
from controller.link.messages import (
    KV_BUCKET,
    carries_cards,
    confirm_subject,
    encode_entry,
    headers_for,
    hit_subject,
    journal_subject,
    movements,
    resolved_round,
)
from fsm.round.events import Event, LinkHitLocked, LinkState

log = logging.getLogger(__name__)

#: How long a stop may spend sending the entries committed last (seconds).
DRAIN_S = 2.0
#: A backlog that has not moved for this long on a connection the client calls up: the
#: connection is dropped and made again (a client wedged after a server's restart).
STALL_S = 10.0


class OwnerView(Protocol):
    @property
    def public(self) -> Any: ...

    def post(self, event: Event) -> None: ...

    def wait_published(self, after_seq: int, timeout: float | None = None) -> Any: ...

    @property
    def tail(self) -> JournalTail: ...


def cursor_path(journal: Path) -> Path:
    return journal.with_name(journal.name + ".link-cursor")


def read_cursor(path: Path) -> int:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return 0
    return int(text) if text.isdigit() else 0


def write_cursor(path: Path, seq: int) -> None:
    """Durably: a new file, fsync, rename over the old one."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    try:
        os.write(fd, f"{seq}\n".encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


@dataclass
class LinkStatus:
    """What the link's thread knows, for the page, the tests and the benchmark."""

    connected: bool = False
    shipped_seq: int = 0
    backlog: int = 0
    last_confirm_ms: int = 0
    held_seq: int = 0
    need_seq: int = 0
    pool: dict[str, Any] | None = None
    pool_seen_ns: int = 0
    #: entries committed and not shipped when the link stopped (0 after a clean stop)
    unshipped: int = 0
    #: why the link controller refused this table's stream (it said so in its reply)
    refused: str | None = None
    #: the controller's last reason for not confirming the table (its terms, its stream)
    refusal: str | None = None


class TableLink:
    """The shipper and the pool's client of one table. ``start`` after the owner runs."""

    def __init__(
        self,
        section: LinkSection,
        table_id: str,
        asset_number: int,
        level: str,
        wager_cents: int,
        owner: OwnerView,
        journal_path: Path,
        *,
        on_pool: Callable[[Mapping[str, Any]], None] | None = None,
        terms: Mapping[str, Any] | None = None,
    ) -> None:
        self.section = section
        self.table_id = table_id
        self.asset = asset_number
        self.level = level
        self.wager_cents = wager_cents
        self.owner = owner
        self.journal_path = Path(journal_path)
        self.cursor_file = cursor_path(self.journal_path)
        cursor = read_cursor(self.cursor_file)
        # what the controller must hold before the table resumes: at least everything shipped
        # before this start (its contributions among it), then each contribution read since
        self.status = LinkStatus(shipped_seq=cursor, need_seq=cursor)
        self._on_pool = on_pool
        #: what every table of the pool must agree on (`link_config.link_terms`), said with
        #: every confirmation request; the controller refuses a table that differs
        self.terms = dict(terms or {})
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakes: dict[str, asyncio.Event] = {}
        self._stop = threading.Event()
        self._pool_cond = threading.Condition()
        self._subscription: Subscription | None = None
        self._inbox_lock = threading.Lock()
        self._inbox: list[Entry] = []  # handed by the journal's tail, not yet buffered
        self._buffer: list[Entry] = []
        self._resolved: set[int] = set()
        self._up: bool | None = None
        self._asked: dict[str, float] = {}
        self.posted: list[Event] = []
        self._progress = time.monotonic()  # the shipper's last move (`STALL_S`)
        #: the table's link key: every shipped entry and request carries its MAC (docs/link.md)
        self.key = None if section.key_file is None else load_table_key(section.key_file, table_id)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        view = self.owner.public.view
        link = view.get("link") if isinstance(view, Mapping) else None
        if not self.section.pool:  # the witness only: the journal shipped, nothing linked
            self._up = True
        elif link is None or link.get("pool") != self.section.pool:
            # a table newly linked: unplayable until the controller confirms it
            self._post_state(False, "linked: waiting for the link controller's confirmation")
        else:
            self._up = not link.get("down", False)
        self._stop.clear()
        self.status.last_confirm_ms = time.time_ns() // 1_000_000
        start = self.status.shipped_seq
        head = int(self.owner.public.seq)
        if head < start:
            # the journal is behind what was shipped (restored from an older copy, or a new
            # journal): ship it from seq 1, so the centre's witness sees the first entry that
            # differs from what it holds and raises its alarm
            log.warning(
                "link: the journal ends at seq %d but seq %d was shipped: shipping it again "
                "from seq 1 (the centre compares it with what it holds)",
                head,
                start,
            )
            start = 0
        self._subscription = self.owner.tail.subscribe("link shipper", self._take, start)
        self._thread = threading.Thread(target=self._run, name="link", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop, after sending what is committed (`DRAIN_S` at most): called once the owner
        made its last commit. What could not go is counted in ``status.unshipped`` and logged:
        it stays in the journal and goes at the next start."""
        self._stop.set()
        self._wake_all()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
        self._thread = None
        if self._subscription is not None:
            self.owner.tail.unsubscribe(self._subscription)
            self._subscription = None
        with contextlib.suppress(Exception):
            head = int(self.owner.public.seq)
            self.status.unshipped = max(0, head - self.status.shipped_seq)
        if self.status.unshipped:
            log.warning(
                "link: stopped with %d entries unshipped (seq %d to %d): they stay in the "
                "journal and are shipped at the next start",
                self.status.unshipped,
                self.status.shipped_seq + 1,
                self.status.shipped_seq + self.status.unshipped,
            )

    @property
    def pool(self) -> dict[str, Any] | None:
        """The pool's value as last published by the link controller (what the display shows)."""
        return self.status.pool

    def wait_pool(self, check: Callable[[Mapping[str, Any]], bool], timeout: float) -> bool:
        with self._pool_cond:
            return self._pool_cond.wait_for(
                lambda: self.status.pool is not None and check(self.status.pool), timeout
            )

    def _wake_all(self) -> None:
        """Wake every task of the link thread (each waits on its own event)."""
        loop = self._loop
        if loop is None:
            return

        def wake() -> None:
            for event in self._wakes.values():
                event.set()

        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(wake)

    # ------------------------------------------------------------------ the link thread
    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception:
            log.exception("link: the link thread failed")

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wakes = {name: asyncio.Event() for name in ("main", "ship", "hits")}
        while not self._stop.is_set():
            nc = await self._connect()
            if nc is None:
                return
            await self._serve(nc)

    async def _connect(self) -> Any:
        """A connection to the servers (None: stopped before one was made)."""
        import nats

        opts = self.section.connection.options()
        while not self._stop.is_set():
            try:
                return await nats.connect(
                    **opts,
                    name=f"table {self.table_id}",
                    connect_timeout=min(2.0, self.section.timeout_s),
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.25,
                    ping_interval=max(1, int(self.section.timeout_s / 2)),
                    max_outstanding_pings=2,
                    disconnected_cb=self._disconnected,
                    reconnected_cb=self._reconnected,
                    error_cb=self._error,
                )
            except Exception as exc:  # no server yet: the backlog grows, retry
                log.info("link: cannot connect to %s: %s", opts["servers"], exc)
                self._check_timeout()
                await self._sleep(0.5, "main")
        return None

    async def _serve(self, nc: Any) -> None:
        """The link's tasks on ``nc`` until the stop (then the drain) or a stalled shipper (a
        backlog that has not moved for `STALL_S` while the client says it is connected: the
        connection is dropped and made again)."""
        self.status.connected = True
        self._progress = time.monotonic()
        tasks = [asyncio.create_task(self._ship(nc))]
        if self.section.pool:  # linked: the pool's client too (not for the witness only)
            tasks += [
                asyncio.create_task(self._confirm(nc)),
                asyncio.create_task(self._watch_pool(nc)),
                asyncio.create_task(self._hits(nc)),
            ]
        stalled = False
        try:
            while not self._stop.is_set() and not stalled:
                await self._sleep(0.1, "main")
                self._check_timeout()  # also when a request hangs in the client
                stalled = bool(self._buffer) and time.monotonic() - self._progress > STALL_S
            if stalled:
                log.warning(
                    "link: nothing shipped for %g s with %d entries waiting: reconnecting",
                    STALL_S,
                    len(self._buffer),
                )
        finally:
            # the shipper ends its publish in hand and its cursor's write (it stops at the
            # stop's wake-up); cancelled mid-write, it would leave what it sent uncounted
            if not stalled:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(tasks[0]), DRAIN_S)
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, 1.0)
            if not stalled:
                with contextlib.suppress(Exception):  # a clean stop leaves no backlog to send
                    await asyncio.wait_for(self._drain(nc), DRAIN_S)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(nc.close(), 2.0)
            self.status.connected = False

    async def _sleep(self, seconds: float, task: str) -> None:
        """Sleep ``seconds`` unless a new commit (or the stop) wakes ``task`` first."""
        wake = self._wakes[task]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), seconds)
        wake.clear()

    async def _disconnected(self) -> None:
        self.status.connected = False

    async def _reconnected(self) -> None:
        self.status.connected = True

    async def _error(self, exc: Exception) -> None:
        log.debug("link: %s", exc)

    # ------------------------------------------------------------------ the shipper
    def _take(self, batch: Sequence[Committed], public: Any) -> None:
        """The journal tail's subscriber (its thread): queue the new entries, wake the tasks."""
        if not batch:
            return
        with self._inbox_lock:
            self._inbox.extend(c.entry for c in batch)
        self._wake_all()

    def _read(self) -> None:
        """Move the entries the tail handed over into the buffer (the link thread)."""
        with self._inbox_lock:
            entries, self._inbox = self._inbox, []
        for entry in entries:
            self._buffer.append(entry)
            done = resolved_round(entry)
            if done is not None:
                self._resolved.add(done)
            if movements(entry, self.level):
                self.status.need_seq = entry.seq

    def _shippable(self) -> int:
        """How many buffered entries may go now (card identities wait for their round)."""
        for i, entry in enumerate(self._buffer):
            if carries_cards(entry) and entry.round_id not in self._resolved:
                return i
        return len(self._buffer)

    async def _publish(self, js: Any, n: int, timeout: float) -> None:
        """Publish the first ``n`` buffered entries in order, then advance the durable cursor
        past those the stream acknowledged (also when a later one failed: the exception goes on
        to the caller)."""
        subject = journal_subject(self.table_id)
        sent = 0
        try:
            for entry in self._buffer[:n]:
                publish = js.publish(
                    subject,
                    encode_entry(entry),
                    timeout=timeout,
                    headers=headers_for(self.table_id, self.asset, entry.seq, self._mac(entry)),
                )  # bounded as a whole: the client's own timeout covers only the reply
                await asyncio.wait_for(publish, timeout + 0.5)
                sent += 1
        finally:
            if sent:
                self._progress = time.monotonic()
                last = self._buffer[sent - 1].seq
                del self._buffer[:sent]
                if not self._buffer:  # every round read so far has gone: forget them
                    self._resolved.clear()
                try:  # durable first; a stop's cancel does not stop the write, nor the count
                    await asyncio.shield(asyncio.to_thread(write_cursor, self.cursor_file, last))
                finally:
                    self.status.shipped_seq = last
                    self.status.backlog = len(self._buffer)

    def _mac(self, entry: Entry) -> str:
        return "" if self.key is None else self.key.entry_header(entry.seq, entry.hash)

    async def _drain(self, nc: Any) -> None:
        """At a stop: send what is committed and may go, once (an outage leaves it queued)."""
        self.owner.tail.catch_up()
        self._read()
        await self._publish(nc.jetstream(), self._shippable(), timeout=1.0)

    async def _ship(self, nc: Any) -> None:
        js = nc.jetstream()
        while not self._stop.is_set():
            self._read()
            n = self._shippable()
            self.status.backlog = len(self._buffer)
            if n == 0:
                self._progress = time.monotonic()  # nothing may go: not a stall
                await self._sleep(0.25, "ship")
                continue
            try:
                await self._publish(js, n, timeout=2.0)
            except Exception as exc:  # an outage: keep the backlog, try again
                log.info("link: publish failed (%s); backlog %d", exc, len(self._buffer))
                await self._sleep(0.5, "ship")

    # ------------------------------------------------------------------ the pool's client
    def _post(self, event: Event) -> None:
        try:
            self.owner.post(event)
            self.posted.append(event)
        except Exception:
            log.exception("link: could not post %s", event.type)

    def _post_state(self, up: bool, detail: str | None, confirmed: int | None = None) -> None:
        self._up = up
        state = LinkState(
            up=up,
            pool=self.section.pool,
            level=self.level,
            confirmed_seq=confirmed,
            detail=detail[:200] if detail else None,
        )
        self._post(state.envelope())

    def _check_timeout(self) -> None:
        if not self.section.pool:  # the witness only: no controller to confirm anything
            return
        last = self.status.last_confirm_ms
        now = time.time_ns() // 1_000_000
        if self._up is not False and now - last > self.section.timeout_s * 1000:
            why = f"no confirmation from the link controller for {self.section.timeout_s:g} s"
            if self.status.refusal:
                why = f"refused by the link controller: {self.status.refusal}"
            self._post_state(False, why)

    async def _confirm(self, nc: Any) -> None:
        period = max(0.05, self.section.timeout_s / 4)
        subject = confirm_subject(self.section.pool)
        while not self._stop.is_set():
            need = self.status.need_seq
            body = {"table": self.table_id, "asset": self.asset, "need_seq": need}
            if self.terms:
                body["terms"] = self.terms
            try:
                ask = nc.request(subject, json.dumps(body).encode(), timeout=period)
                msg = await asyncio.wait_for(ask, period + 0.5)
                reply = json.loads(msg.data)
            except Exception:
                reply = None
            if isinstance(reply, dict) and reply.get("refused"):
                # the pool refused this table's stream: its linked wager is unplayable at once
                self.status.refused = str(reply["refused"])[:300]
                if self._up is not False:
                    self._post_state(False, f"refused by the pool: {self.status.refused}")
                reply = None
            if isinstance(reply, dict) and reply.get("operating"):
                self.status.held_seq = int(reply.get("held_seq", 0))
                self.status.refusal = None if reply.get("ok") else reply.get("reason")
                if reply.get("ok") and self.status.held_seq >= need:
                    self.status.last_confirm_ms = time.time_ns() // 1_000_000
                    if self._up is not True:
                        self._post_state(True, None, self.status.held_seq)
            self._check_timeout()
            await asyncio.sleep(period)

    async def _watch_pool(self, nc: Any) -> None:
        js = nc.jetstream()
        while not self._stop.is_set():
            try:
                kv = await js.key_value(KV_BUCKET)
                watcher = await kv.watch(self.section.pool)
                while not self._stop.is_set():
                    try:
                        update = await watcher.updates(timeout=1.0)
                    except TimeoutError:
                        continue
                    if update is None or not update.value:
                        continue
                    value = json.loads(update.value)
                    with self._pool_cond:
                        self.status.pool = value
                        self.status.pool_seen_ns = time.perf_counter_ns()
                        self._pool_cond.notify_all()
                    if self._on_pool is not None:
                        self._on_pool(value)
            except Exception as exc:  # no bucket yet, or the server went away: again
                log.debug("link: pool watch: %s", exc)
                await asyncio.sleep(0.5)

    async def _hits(self, nc: Any) -> None:
        subject = hit_subject(self.section.pool)
        while not self._stop.is_set():
            public = self.owner.public
            view = public.view
            pending = []
            if public.state == "Open_JackpotPending" and isinstance(view, Mapping):
                rnd = view.get("round") or {}
                pending = [
                    p for p in rnd.get("pending", ())
                    if p.get("level") == self.level and "locked_cents" not in p
                ]  # fmt: skip
            if pending:  # this round's contributions counted in need_seq (on this thread)
                await asyncio.to_thread(self.owner.tail.catch_up)
                self._read()
            for hit in pending:
                # a corrected line (NY 5324.41(k)(3)(ii)) is a hit of its own at the position
                key = f"{public.round_id}:{hit['position']}:{hit['line']}"
                if time.monotonic() - self._asked.get(key, 0.0) < 1.0:
                    continue
                self._asked[key] = time.monotonic()
                body = {
                    "table": self.table_id,
                    "asset": self.asset,
                    "round": public.round_id,
                    "position": int(hit["position"]),
                    "level": self.level,
                    "line": hit["line"],
                    "wager_cents": self.wager_cents,
                    "seq": public.seq,
                    # the pool weighs the hit once it holds the stream this far (k)(6)
                    "need_seq": self.status.need_seq,
                }
                if hit.get("corrects"):  # the line the supervisor voided for this one
                    body["corrects"] = hit["corrects"]
                if hit.get("lines"):  # every line the hand makes: the pool weighs them (g)(8)
                    body["lines"] = list(hit["lines"])
                if self.key is not None:  # made with the table's key (docs/link.md)
                    body = self.key.sign(subject, body)
                try:
                    msg = await nc.request(subject, json.dumps(body).encode(), timeout=2.0)
                    reply = json.loads(msg.data)
                except Exception as exc:
                    log.info("link: hit lock not answered: %s", exc)
                    continue
                if not reply.get("ok"):
                    log.warning("link: hit lock refused: %s", reply.get("reason"))
                    continue
                locked = LinkHitLocked(
                    position=int(hit["position"]),
                    level=self.level,
                    line=hit["line"],  # the round refuses it for another hit there
                    cents=int(reply["cents"]),
                    order=int(reply["order"]),
                    pool=self.section.pool,
                    meter_cents=int(reply["meter_cents"]),
                    paid_line=reply.get("paid_line"),
                    paid_from=reply.get("from"),
                )
                self._post(locked.envelope())
            await self._sleep(0.05, "hits")


class PoolOverlay:
    """The owner's publications with the linked level's displayed amount replaced by the pool's
    value (what the table's displays show of a linked progressive: NY 5321.18(b) keeps them
    current). `wait_published` also returns when the pool's value changes, so the meter sign's
    reader (controller/service/meter_sign.py) follows the pool within its 50 ms idle wait."""

    def __init__(self, owner: OwnerView, link: Callable[[], TableLink | None]) -> None:
        self._owner = owner
        self._link = link
        self._shown: object = None

    def _overlay(self, snapshot: Any) -> Any:

        link = self._link()
        pool = None if link is None else link.pool
        if link is None or pool is None or link.level not in (snapshot.meters or {}):
            return snapshot
        meters = dict(snapshot.meters)
        meters[link.level] = MappingProxyType(
            {**meters[link.level], "display_cents": int(pool["display_cents"])}
        )
        return dataclasses.replace(snapshot, meters=MappingProxyType(meters))

    @property
    def public(self) -> Any:
        return self._overlay(self._owner.public)

    def __getattr__(self, name: str) -> Any:
        """Everything else is the owner's (``post``, ``post_tracked``, ``alive`` ...)."""
        return getattr(self._owner, name)

    def wait_published(self, after_seq: int, timeout: float | None = None) -> Any:
        deadline = time.monotonic() + (1.0 if timeout is None else timeout)
        while True:
            snap = self._owner.wait_published(after_seq, timeout=0.02)
            link = self._link()
            pool = None if link is None else link.pool
            changed = pool is not None and pool is not self._shown
            if snap.seq > after_seq or changed or time.monotonic() >= deadline:
                self._shown = pool
                return self._overlay(snap)
