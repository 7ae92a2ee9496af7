"""The link layer of a serial device: ACK/NAK, retransmission, heartbeat, silence detection,
session synchronisation and duplicate suppression, over the frames of ``frame``.

Sans-I/O: bytes go in with ``receive(data, now)``, time passes with ``poll(now)``, bytes to write
come out of ``take_output()`` and link events out of ``take_events()``. ``now`` is any monotonic
clock in seconds supplied by the caller, so tests drive it without sleeping. This module must
never touch a port, a thread, a clock or a device's meaning of a message.

Rules (docs/device-protocol.md has the figures):
- Stop-and-wait: one sequenced frame outstanding per direction; the next waits for its ACK.
- Every valid sequenced frame is answered by ``ACK`` carrying its SEQ, duplicates included.
- A frame is delivered once: a SEQ that is not ahead of the last delivered one (mod 256, window
  1..127) is a duplicate, acknowledged and dropped.
- A damaged frame (plausible header, bad CRC) is answered by ``NAK``; a NAK makes the sender
  retransmit its outstanding frame early. No ACK within ``ack_timeout`` also retransmits; after
  ``max_retries`` retransmissions the message fails (``SendFailed``).
- ``SYNC`` (payload: session u32, epoch u16, flags u8) opens a session: the receiver takes its SEQ
  as the last delivered one. A link sends SYNC first, and again after silence or a port reopen,
  with flag REPLY set; a link receiving a new SYNC with REPLY answers with its own SYNC (REPLY
  clear), so both directions are resynchronised whichever side restarted.
- With a heartbeat interval set, an idle link sends ``PING`` (sequenced, acknowledged); no valid
  frame from the peer for ``silence_timeout`` gives ``PeerSilent`` (queued messages fail), the
  next valid frame gives ``PeerAlive``.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from dataclasses import dataclass

from drivers.serial.frame import MAX_PAYLOAD, Frame, FrameParser, encode_frame
from drivers.serial.settings import LinkConfig as LinkConfig  # its old home

ACK = 0x00
NAK = 0x01
SYNC = 0x02
PING = 0x03
SYNC_REPLY = 0x01
_SYNC_FORMAT = ">IHB"
_SYNC_LEN = struct.calcsize(_SYNC_FORMAT)
FIRST_APP_TYPE = 0x10

_SEQ_WINDOW = 128


@dataclass(frozen=True)
class Delivered:
    """An application message from the peer, delivered exactly once."""

    type: int
    payload: bytes
    seq: int


@dataclass(frozen=True)
class Acked:
    """The peer acknowledged the message sent under ``handle``."""

    handle: int


@dataclass(frozen=True)
class SendFailed:
    """The message sent under ``handle`` was given up: ``reason`` says why."""

    handle: int
    type: int
    reason: str


@dataclass(frozen=True)
class PeerSilent:
    """No valid frame from the peer for ``silence_timeout`` seconds."""

    silent_for: float


@dataclass(frozen=True)
class PeerAlive:
    """A valid frame arrived from a peer that had been silent."""


@dataclass(frozen=True)
class PeerSynced:
    """The peer opened a new session (it started, restarted or resynchronised)."""

    session: int
    epoch: int


LinkEvent = Delivered | Acked | SendFailed | PeerSilent | PeerAlive | PeerSynced


@dataclass
class _Pending:
    handle: int
    type: int
    payload: bytes
    seq: int = -1
    tries: int = 0
    sent_at: float = 0.0
    wire: bytes = b""

    @property
    def internal(self) -> bool:
        return self.type < FIRST_APP_TYPE


class Link:
    """One end of a link. Not thread-safe: the owner of the port serialises calls."""

    def __init__(self, config: LinkConfig | None = None, session: int | None = None) -> None:
        self.config = config or LinkConfig()
        self.session = session if session is not None else int.from_bytes(os.urandom(4), "big")
        if not 0 <= self.session <= 0xFFFFFFFF:
            raise ValueError(f"session {self.session} is not a u32")
        self._epoch = 0
        self._parser = FrameParser()
        self._out = bytearray()
        self._events: list[LinkEvent] = []
        self._queue: deque[_Pending] = deque()
        self._outstanding: _Pending | None = None
        self._next_seq = 0
        self._next_handle = 1
        self._last_rx_seq: int | None = None
        self._peer_session: tuple[int, int] | None = None
        self._resync_needed = True
        self._sync_due = True
        self._sync_flags = SYNC_REPLY
        self._silent = False
        self._await_contact = True
        self._started = False
        self._last_rx = 0.0
        self._last_byte = 0.0
        self._last_new_tx = 0.0
        self.stats: dict[str, int] = {
            "frames_tx": 0,
            "frames_rx": 0,
            "retransmits": 0,
            "duplicates": 0,
            "naks_tx": 0,
            "naks_rx": 0,
            "send_failed": 0,
        }

    # -- public API ---------------------------------------------------------------------------

    @property
    def peer_silent(self) -> bool:
        return self._silent

    @property
    def idle(self) -> bool:
        """Nothing outstanding or queued."""
        return self._outstanding is None and not self._queue

    def counters(self) -> dict[str, int]:
        """Link and parser counters (fresh dict)."""
        out = dict(self.stats)
        out["garbage_bytes"] = self._parser.garbage_bytes
        out["crc_errors"] = self._parser.crc_errors
        out["header_errors"] = self._parser.header_errors
        return out

    def start(self, now: float) -> None:
        """Open the session: queue a SYNC and start the silence clock."""
        self._started = True
        self._last_rx = now
        self._last_byte = now
        self._last_new_tx = now
        self._resync_needed = True
        self._sync_due = True
        self._await_contact = True
        self._pump(now)

    def reconnect(self, now: float) -> None:
        """The port was reopened: drop half-received bytes and resynchronise the session."""
        self._parser = _carry_counters(self._parser)
        self._resync_needed = True
        self._sync_due = True
        self._await_contact = True
        if self._outstanding is not None:
            self._outstanding.sent_at = now - self.config.ack_timeout  # retransmit at next poll
        self._last_byte = now
        self._pump(now)

    def send(self, msg_type: int, payload: bytes, now: float) -> int:
        """Queue an application message for reliable delivery; returns its handle.

        A type below 0x10 (reserved for the link) or a payload over MAX_PAYLOAD raises ValueError.
        A message refused at once (peer silent, queue full) gets a ``SendFailed`` event."""
        if not FIRST_APP_TYPE <= msg_type <= 0xFF:
            raise ValueError(
                f"message type 0x{msg_type:02X} is reserved for the link or not a byte"
            )
        if len(payload) > MAX_PAYLOAD:
            raise ValueError(f"payload of {len(payload)} bytes exceeds MAX_PAYLOAD {MAX_PAYLOAD}")
        handle = self._new_handle()
        if self._silent:
            self._fail(_Pending(handle, msg_type, bytes(payload)), "peer silent")
        elif len(self._queue) >= self.config.queue_limit:
            self._fail(_Pending(handle, msg_type, bytes(payload)), "queue full")
        else:
            self._queue.append(_Pending(handle, msg_type, bytes(payload)))
            self._pump(now)
        return handle

    def receive(self, data: bytes | bytearray | memoryview, now: float) -> None:
        """Bytes read from the port (any chunking, any content)."""
        if not data:
            return
        self._last_byte = now
        frames = self._parser.feed(data)
        self._after_parse(frames, now)

    def poll(self, now: float) -> None:
        """Let time pass: idle flush, retransmission, retry limit, silence, heartbeat."""
        cfg = self.config
        if self._parser.pending and now - self._last_byte >= cfg.idle_flush:
            self._after_parse(self._parser.flush(), now)
        out = self._outstanding
        if out is not None and now - out.sent_at >= cfg.ack_timeout:
            if out.tries > cfg.max_retries:
                self._outstanding = None
                self._fail(out, "retries exhausted")
            else:
                self._transmit(out, now)
                self.stats["retransmits"] += 1
        if (
            self._started
            and cfg.silence_timeout is not None
            and not self._silent
            and now - self._last_rx >= cfg.silence_timeout
        ):
            self._silent = True
            self._resync_needed = True
            self._sync_due = True
            self._events.append(PeerSilent(now - self._last_rx))
            if self._outstanding is not None and not self._outstanding.internal:
                self._fail(self._outstanding, "peer silent")
                self._outstanding = None
            while self._queue:
                self._fail(self._queue.popleft(), "peer silent")
        if (
            self._started
            and cfg.heartbeat_interval is not None
            and self.idle
            and now - self._last_new_tx >= cfg.heartbeat_interval
        ):
            if self._resync_needed:
                self._sync_due = True
            else:
                self._queue.append(_Pending(self._new_handle(), PING, b""))
        self._pump(now)

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[LinkEvent]:
        out, self._events = self._events, []
        return out

    # -- internals ----------------------------------------------------------------------------

    def _new_handle(self) -> int:
        handle = self._next_handle
        self._next_handle += 1
        return handle

    def _fail(self, item: _Pending, reason: str) -> None:
        if item.internal:
            return
        self.stats["send_failed"] += 1
        self._events.append(SendFailed(item.handle, item.type, reason))

    def _write(self, wire: bytes) -> None:
        self._out.extend(wire)
        self.stats["frames_tx"] += 1

    def _transmit(self, item: _Pending, now: float) -> None:
        item.tries += 1
        item.sent_at = now
        self._write(item.wire)

    def _pump(self, now: float) -> None:
        if self._outstanding is not None or not self._started:
            return
        if self._resync_needed and self._sync_due:
            if self._queue and self._queue[0].type == PING:
                self._queue.popleft()
            self._sync_due = False
            payload = struct.pack(_SYNC_FORMAT, self.session, self._epoch, self._sync_flags)
            self._sync_flags = SYNC_REPLY
            self._epoch = (self._epoch + 1) & 0xFFFF
            item = _Pending(self._new_handle(), SYNC, payload)
        elif self._queue:
            item = self._queue.popleft()
        else:
            return
        item.seq = self._next_seq
        self._next_seq = (self._next_seq + 1) & 0xFF
        item.wire = encode_frame(item.seq, item.type, item.payload)
        self._outstanding = item
        self._last_new_tx = now
        self._transmit(item, now)

    def _after_parse(self, frames: list[Frame], now: float) -> None:
        damaged = self._parser.take_damaged()
        if damaged:
            self._write(encode_frame(damaged[-1].seq, NAK))
            self.stats["naks_tx"] += 1
        for frame in frames:
            self._on_frame(frame, now)
        self._pump(now)

    def _on_frame(self, frame: Frame, now: float) -> None:
        self.stats["frames_rx"] += 1
        self._last_rx = now
        if self._silent or self._await_contact:
            self._silent = False
            self._await_contact = False
            self._events.append(PeerAlive())
        out = self._outstanding
        if frame.type == ACK:
            if out is not None and frame.seq == out.seq:
                self._outstanding = None
                if out.type == SYNC:
                    self._resync_needed = False
                if not out.internal:
                    self._events.append(Acked(out.handle))
            return
        if frame.type == NAK:
            self.stats["naks_rx"] += 1
            if (
                out is not None
                and now - out.sent_at >= self.config.nak_holdoff
                and out.tries <= self.config.max_retries
            ):
                self._transmit(out, now)
                self.stats["retransmits"] += 1
            return
        if frame.type == SYNC:
            if len(frame.payload) != _SYNC_LEN:
                return  # not a SYNC of this protocol: no ACK, the sender will give up
            self._write(encode_frame(frame.seq, ACK))
            session, epoch, flags = struct.unpack(_SYNC_FORMAT, frame.payload)
            if self._sync_is_new(session, epoch):
                self._peer_session = (session, epoch)
                self._last_rx_seq = frame.seq
                self._events.append(PeerSynced(session, epoch))
                out = self._outstanding
                if flags & SYNC_REPLY and (out is None or out.type != SYNC):
                    self._resync_needed = True
                    self._sync_due = True
                    self._sync_flags = 0
            return
        self._write(encode_frame(frame.seq, ACK))
        if not self._seq_is_new(frame.seq):
            self.stats["duplicates"] += 1
            return
        self._last_rx_seq = frame.seq
        if frame.type == PING or frame.type < FIRST_APP_TYPE:
            return
        self._events.append(Delivered(frame.type, frame.payload, frame.seq))

    def _seq_is_new(self, seq: int) -> bool:
        if self._last_rx_seq is None:
            return True
        return 1 <= (seq - self._last_rx_seq) % 256 < _SEQ_WINDOW

    def _sync_is_new(self, session: int, epoch: int) -> bool:
        if self._peer_session is None or self._peer_session[0] != session:
            return True
        return 1 <= (epoch - self._peer_session[1]) % 0x10000 < 0x8000


def _carry_counters(old: FrameParser) -> FrameParser:
    new = FrameParser()
    new.garbage_bytes = old.garbage_bytes + len(old._buf)
    new.crc_errors = old.crc_errors
    new.header_errors = old.header_errors
    new.frames_ok = old.frames_ok
    return new
