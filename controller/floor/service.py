"""The floor link as ONE object with ``start`` / ``stop``: the SAS port thread answering polls from
the owner's published snapshot, and a subscriber of the journal's tail deriving the exception
queue from the committed journal.

Threads and what they may do (DESIGN.md "How an event flows"):
- the port thread (``drivers.sas.port.SasPort``) answers each poll from ``owner.public`` and the
  latest `FloorFold` (two attribute reads: one consistent snapshot, never a wait on a commit);
  host commands (01/02, 09, 7F, an acknowledged exception) and link changes are *posted* to the
  owner as ``floor_command`` / ``floor_link`` events, journaled like any input;
- the journal's tail (``owner.tail``) hands it each committed entry, typed, which it folds
  (``controller.floor.exceptions``); it saves the frame log on the tail's calls.
An exception the host acknowledged is skipped at once (kept locally) until its
``exception_acked`` entry is committed and folded. Must never write the journal, touch the
machine, or block the port thread on the owner or the database.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from controller.floor.bound import CommandBound
from controller.floor.exceptions import FloorFold, Queued
from controller.floor.framelog import FrameLog, log_path_for
from controller.floor.responder import Responder
from controller.floor.sas_config import SasSection
from controller.journal.tail import Committed, JournalTail, Subscription
from controller.service.owner import PublicSnapshot
from drivers.sas.port import PtyTransport, SasPort, SasTransport, StreamTransport, UartTransport
from drivers.sas.sas_link import (
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
from fsm.round.config import GameConfig
from fsm.round.events import Event, EventRecord, FloorCommand
from fsm.round.events import FloorLink as FloorLinkEvent

if TYPE_CHECKING:
    from controller.config import TableConfig

log = logging.getLogger(__name__)


class OwnerView(Protocol):
    """What the floor link needs of the owner (``controller.service.owner.Owner``)."""

    @property
    def public(self) -> PublicSnapshot: ...

    def post(self, event: Event) -> None: ...

    @property
    def tail(self) -> JournalTail: ...


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
        self.bound = CommandBound()  # host commands journaled per window (controller/floor/bound)
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
        self._folded = threading.Condition()
        self._subscription: Subscription | None = None
        self._saved = 0.0
        self.posted_errors = 0
        self.link_path: Path | None = None  # a symlink to the pty made for this link

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Fold the journal so far (the queue a power cut left), then serve."""
        self._subscription = self.owner.tail.subscribe("floor link", self._take, self.fold.seq)
        floor = self.owner.public.view.get("floor") or {}
        self.port.start_up = not floor.get("link_blocks", False)
        self.port.start()

    def stop(self) -> None:
        self.port.stop()
        if self._subscription is not None:
            self.owner.tail.unsubscribe(self._subscription)
            self._subscription = None
        self.frames.save(force=True)
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
        through the journal's tail, so a general poll made right after a commit may still see
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

    def _post(self, event: EventRecord) -> None:
        try:
            self.owner.post(event.envelope())
        except Exception:  # the owner refused it (stopping): never kill the port thread
            self.posted_errors += 1
            log.exception("floor link: could not post %s", event.TYPE)

    def _command(self, command: FloorCommand | None, now: float) -> None:
        """Post a host command within the bound (a held one once the window has room)."""
        for admitted in (
            self.bound.release(now) if command is None else self.bound.admit(command, now)
        ):
            self._post(admitted)

    def _handle(self, link: SasLink, events: list[SasEvent], now: float) -> None:
        self._command(None, now)
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
                    self._command(reply.command, now)
                if reply.verified is not None:
                    self._post(reply.verified)
            elif isinstance(ev, Acked):
                if ev.poll.command is None and ev.answer != b"\x00":
                    head = self._delivered
                    if head is not None and head.code == ev.answer[0]:
                        self._acked_local.add(head.key)
                        acked = FloorCommand(
                            command="exception_acked", code=head.code, source_seq=head.source_seq
                        )
                        self._post(acked)
                    self._delivered = None
            elif isinstance(ev, Broadcast):
                self.frames.add("rx", ev.poll.raw, "broadcast " + ev.poll.name)
                reply = self.responder.broadcast(ev.poll, self._wall())
                if reply.command is not None:
                    self._command(reply.command, now)
            elif isinstance(ev, BadFrame):
                self.frames.add("rx", ev.raw, ev.reason)
            elif isinstance(ev, Resent):
                self.frames.add("rx", ev.poll.raw, "repeated: answer resent")
            elif isinstance(ev, LinkDown | LinkUp):
                up = isinstance(ev, LinkUp)
                self.frames.add("rx", b"", "link up" if up else "link down (no poll for 5 s)")
                self._post(
                    FloorLinkEvent(up=up, blocks_progressive=self.sas.progressive_depends_on_link)
                )

    # ------------------------------------------------------------------ the journal's tail
    def _take(self, batch: Sequence[Committed], public: Any) -> None:
        """The journal tail's subscriber: fold the new entries, save the frame log now and then."""
        if batch:
            fold = self.fold
            for c in batch:
                fold = fold.apply(c)
            keys = {q.key for q in fold.queue}
            with self._folded:
                self.fold = fold
                self._acked_local &= keys
                self._folded.notify_all()
        now = time.monotonic()
        if now - self._saved >= 0.5:
            self.frames.save()
            self._saved = now


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
