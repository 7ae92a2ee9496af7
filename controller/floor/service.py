"""The floor link as ONE object with ``start`` / ``stop``: the SAS port thread answering polls from
the owner's published snapshot, and a follower thread deriving the exception queue from the
committed journal.

Threads and what they may do (DESIGN.md "How an event flows"):
- the port thread (``drivers.sas.port.SasPort``) answers each poll from ``owner.public`` and the
  latest `FloorFold` (two attribute reads: one consistent snapshot, never a wait on a commit);
  host commands (01/02, 09, 7F, an acknowledged exception) and link changes are *posted* to the
  owner as ``floor_command`` / ``floor_link`` events, journaled like any input;
- the follower thread waits for new publications, reads the newly committed entries through a
  read-only connection and folds them (``controller.floor.exceptions``), and saves the frame log.
An exception the host acknowledged is skipped at once (kept locally) until its
``exception_acked`` entry is committed and folded. Must never write the journal, touch the
machine, or block the port thread on the owner or the database.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from controller.floor.config import SasSection
from controller.floor.exceptions import FloorFold, Queued
from controller.floor.framelog import FrameLog, log_path_for
from controller.floor.responder import Responder
from controller.journal.audit import connect_read_only
from controller.service.owner import PublicSnapshot
from drivers.sas.link import (
    Acked,
    BadFrame,
    Broadcast,
    LinkDown,
    LinkTiming,
    LinkUp,
    PollReceived,
    Resent,
    SasEvent,
    SasLink,
    Tx,
)
from drivers.sas.port import PtyTransport, SasPort, SasTransport, StreamTransport, UartTransport
from fsm.round.config import GameConfig
from fsm.round.events import Event

if TYPE_CHECKING:
    from controller.config import TableConfig

log = logging.getLogger(__name__)


class OwnerView(Protocol):
    """What the floor link needs of the owner (``controller.service.owner.Owner``)."""

    @property
    def public(self) -> PublicSnapshot: ...

    def post(self, event: Event) -> None: ...

    def wait_published(self, after_seq: int, timeout: float | None = None) -> PublicSnapshot: ...


def make_transport(sas: SasSection, port: str | None = None) -> SasTransport:
    """The configured line: the 9-bit UART, or a byte stream (tty path or socket:// URL)."""
    path = port or sas.port
    if sas.transport == "uart":
        return UartTransport(path)
    return StreamTransport(path)


class FloorLink:
    """SAS in the gaming-machine role for one table. ``start`` after the owner runs."""

    def __init__(
        self,
        sas: SasSection,
        game: GameConfig,
        owner: OwnerView,
        journal_path: Path,
        transport: SasTransport,
        *,
        serial_number: str = "",
        log_path: Path | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.sas = sas
        self.owner = owner
        self.journal_path = Path(journal_path)
        self.transport = transport
        self.responder = Responder(sas, game, serial_number or sas.serial_number)
        self.frames = FrameLog(
            sas.frame_log, sas.address, log_path or log_path_for(self.journal_path)
        )
        self.fold = FloorFold(capacity=sas.exception_queue)
        self._wall = wall_clock
        timing = LinkTiming(inter_byte_gap=sas.gap_s, chirp=sas.chirp)
        self.link = SasLink(sas.address, timing)
        self.port = SasPort(transport, self.link, self._handle, on_output=self._sent)
        self._acked_local: set[tuple[int, int]] = set()
        self._delivered: Queued | None = None
        self._stop = threading.Event()
        self._folded = threading.Condition()
        self._follower: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self.posted_errors = 0
        self.link_path: Path | None = None  # a symlink to the pty made for this link

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Fold the journal so far (the queue a power cut left), then serve."""
        self._catch_up()
        self._close_connection()  # the follower thread opens its own
        floor = self.owner.public.view.get("floor") or {}
        self.port.start_up = not floor.get("link_blocks", False)
        self._stop.clear()
        self._follower = threading.Thread(target=self._follow, name="sas-follower", daemon=True)
        self._follower.start()
        self.port.start()

    def stop(self) -> None:
        self._stop.set()
        self.port.stop()
        if self._follower is not None:
            self._follower.join(timeout=5.0)
            self._follower = None
        self.frames.save(force=True)
        self._close_connection()
        if isinstance(self.transport, PtyTransport):
            self.transport.dispose()
        if self.link_path is not None:
            with contextlib.suppress(OSError):
                if self.link_path.is_symlink():
                    self.link_path.unlink()

    def status(self) -> dict[str, object]:
        return {**self.port.status(), "queued": len(self.pending())}

    def wait_folded(self, seq: int, timeout: float | None = None) -> bool:
        """Block until the exception queue has folded the journal up to ``seq`` (e.g. the
        owner's ``public.seq``) or ``timeout``; True when it has. The queue follows the commits
        through the follower thread, so a general poll made right after a commit may still see
        the queue before it (the exception comes at the next poll); whoever must see it in the
        very next answer (a test) waits here first."""
        with self._folded:
            return self._folded.wait_for(lambda: self.fold.seq >= seq, timeout)

    # ------------------------------------------------------------------ the queue
    def pending(self) -> list[Queued]:
        """The exceptions still to deliver, oldest first."""
        return [q for q in self.fold.queue if q.key not in self._acked_local]

    # ------------------------------------------------------------------ port thread
    def _sent(self, tx: Tx, now: float) -> None:
        self.frames.add("tx", tx.data, "chirp" if tx.wakeup else "")

    def _post(self, etype: str, data: dict[str, Any]) -> None:
        try:
            self.owner.post(Event(etype, data))
        except Exception:  # the owner refused it (stopping): never kill the port thread
            self.posted_errors += 1
            log.exception("floor link: could not post %s", etype)

    def _handle(self, link: SasLink, events: list[SasEvent], now: float) -> None:
        for ev in events:
            if isinstance(ev, PollReceived):
                poll = ev.poll
                self.frames.add("rx", poll.raw)
                if poll.command is None:
                    pending = self.pending()
                    head = pending[0] if pending else None
                    self._delivered = head
                    link.answer(poll, bytes((0 if head is None else head.code,)), now)
                    continue
                reply = self.responder.respond(poll, self.owner.public, self.fold, self._wall())
                link.answer(poll, reply.frame, now)
                if reply.frame is None and reply.reason:
                    self.frames.add("rx", b"", f"not answered: {reply.reason}")
                if reply.command is not None:
                    self._post("floor_command", reply.command)
                if reply.verified is not None:
                    self._post("software_verified", reply.verified)
            elif isinstance(ev, Acked):
                if ev.poll.command is None and ev.answer != b"\x00":
                    head = self._delivered
                    if head is not None and head.code == ev.answer[0]:
                        self._acked_local.add(head.key)
                        self._post(
                            "floor_command",
                            {
                                "command": "exception_acked",
                                "code": head.code,
                                "source_seq": head.source_seq,
                            },
                        )
                    self._delivered = None
            elif isinstance(ev, Broadcast):
                self.frames.add("rx", ev.poll.raw, "broadcast " + ev.poll.name)
                reply = self.responder.broadcast(ev.poll, self._wall())
                if reply.command is not None:
                    self._post("floor_command", reply.command)
            elif isinstance(ev, BadFrame):
                self.frames.add("rx", ev.raw, ev.reason)
            elif isinstance(ev, Resent):
                self.frames.add("rx", ev.poll.raw, "repeated: answer resent")
            elif isinstance(ev, LinkDown | LinkUp):
                up = isinstance(ev, LinkUp)
                self.frames.add("rx", b"", "link up" if up else "link down (no poll for 5 s)")
                self._post(
                    "floor_link",
                    {"up": up, "blocks_progressive": self.sas.progressive_depends_on_link},
                )

    # ------------------------------------------------------------------ follower thread
    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect_read_only(self.journal_path)
        return self._conn

    def _close_connection(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def _catch_up(self) -> None:
        fold = self.fold
        try:
            rows = self._connection().execute(
                "SELECT seq, type, data FROM journal WHERE seq > ? ORDER BY seq", (fold.seq,)
            )
            for seq, etype, data in rows:
                try:
                    decoded = json.loads(data)
                except (TypeError, ValueError):
                    decoded = {}
                fold = fold.apply(
                    int(seq), str(etype), decoded if isinstance(decoded, dict) else {}
                )
        except sqlite3.Error:
            log.exception("floor link: reading the journal failed")
            self._close_connection()
            return
        keys = {q.key for q in fold.queue}
        with self._folded:
            self.fold = fold
            self._acked_local &= keys
            self._folded.notify_all()

    def _follow(self) -> None:
        last_save = 0.0
        while not self._stop.is_set():
            snap = self.owner.wait_published(self.fold.seq, timeout=0.25)
            if snap.seq > self.fold.seq:
                self._catch_up()
            now = time.monotonic()
            if self._stop.is_set():
                break
            if now - last_save >= 0.5:
                self.frames.save()
                last_save = now
        self._close_connection()


def sas_link_problem(link_path: Path) -> str | None:
    """Why ``--sas-link PATH`` cannot be made (None: it can): its directory must exist, and
    PATH must be free or a symlink (never a file of someone's, which is never deleted)."""
    if not link_path.parent.is_dir():
        return f"--sas-link: directory {link_path.parent} does not exist"
    if link_path.exists() and not link_path.is_symlink():
        return f"--sas-link: {link_path} exists and is not a symlink (not replaced)"
    return None


def pty_floor_link(
    sas: SasSection,
    game: GameConfig,
    owner: OwnerView,
    journal_path: Path,
    link_path: Path,
    *,
    serial_number: str = "",
) -> FloorLink:
    """The simulated table's floor link: a pty whose host side is symlinked at ``link_path``."""
    link_path = Path(link_path)
    problem = sas_link_problem(link_path)
    if problem:
        raise ValueError(problem)
    transport = PtyTransport()
    if link_path.is_symlink():  # a link left by an earlier run: replaced
        link_path.unlink()
    link_path.symlink_to(transport.slave_path)
    stream = SasSection(**{**sas.__dict__, "transport": "stream"})
    floor = FloorLink(stream, game, owner, journal_path, transport, serial_number=serial_number)
    floor.link_path = link_path
    return floor


def start_floor(
    config: TableConfig,
    owner: OwnerView,
    journal_path: Path,
    link_path: Path | None = None,
) -> FloorLink | None:
    """The one call run and simulate make after the owner runs: the floor link on the
    configured port (``link_path`` given: on a new pty symlinked there), started; None when
    ``[sas]`` is disabled and no link path asks for it."""
    if link_path is None and not config.sas.enabled:
        return None
    serial_number = config.sas.serial_number or str(config.table.asset_number)
    if link_path is not None:
        floor = pty_floor_link(
            config.sas, config.game, owner, journal_path, link_path, serial_number=serial_number
        )
    else:
        floor = FloorLink(
            config.sas,
            config.game,
            owner,
            journal_path,
            make_transport(config.sas),
            serial_number=serial_number,
        )
    floor.start()
    return floor
