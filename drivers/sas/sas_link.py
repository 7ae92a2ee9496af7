"""The SAS link layer, gaming-machine side: framing, CRC check, NACK, implied acknowledgement,
chirp and link-down detection, over the codec of ``codec``.

Sans-I/O like ``drivers.serial.serial_link``: received bytes go in with ``receive`` (a byte stream,
framed by context) or ``receive_marked`` (bytes with their wakeup bit, from the 9-bit UART); time
passes with ``poll(now)``; what to write comes out of ``take_output()`` (chunks with their wakeup
bit) and what happened out of ``take_events()``. ``now`` is the caller's monotonic clock in seconds.
A `PollReceived` is answered by the caller with ``answer(poll, frame_or_None, now)`` at once. This
module must never touch a port, a thread or a clock, nor know what a meter means.

Rules (reference/sas.md, docs/sas.md):
- A host message starts with the wakeup bit (UART) or, on a byte stream, at an idle line with a
  byte that has bit 7 set (general poll) or equals our address or 0 (long poll, its length from
  the poll table). A gap over ``inter_byte_gap`` inside a message drops it.
- Long polls with data carry a CRC: a bad one to our address gets NACK (``address | 0x80``) and
  changes nothing else. An unknown command is never answered; its bytes are skipped. Nothing to
  address 0 is answered (a broadcast 7F is delivered as `Broadcast`).
- Implied acknowledgement: the same poll again means "send it again" (the last answer is resent,
  nothing is delivered twice); any other valid message acknowledges the last answer (`Acked`).
- No valid poll to our address for ``chirp_after`` seconds: chirp (our address with the wakeup
  bit) every ``chirp_interval`` until polled. No valid message at all for ``link_timeout``:
  `LinkDown`; the next valid message: `LinkUp`.
Garbage (anything that does not frame as a valid message) never changes any state but counters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from drivers.sas import codec


@dataclass(frozen=True)
class LinkTiming:
    """Seconds. ``inter_byte_gap`` 0.005 on the UART (the protocol's rule); larger on ptys."""

    inter_byte_gap: float = 0.005
    chirp_after: float = 5.0
    chirp_interval: float = 0.2
    link_timeout: float = 5.0
    chirp: bool = True


@dataclass(frozen=True)
class Poll:
    """A valid message from the host. ``command`` None: a general poll. ``data``: the bytes
    after the command (after the length byte of an M-type poll), without the CRC."""

    address: int
    command: int | None
    data: bytes
    raw: bytes

    @property
    def name(self) -> str:
        return "general poll" if self.command is None else codec.poll_name(self.command)


@dataclass(frozen=True)
class PollReceived:
    poll: Poll


@dataclass(frozen=True)
class Broadcast:
    poll: Poll


@dataclass(frozen=True)
class Acked:
    """The host acknowledged (implicitly) our ``answer`` to ``poll``."""

    poll: Poll
    answer: bytes


@dataclass(frozen=True)
class BadFrame:
    """A frame to our address with a bad CRC (NACK sent) — never a state change."""

    raw: bytes
    reason: str


@dataclass(frozen=True)
class LinkDown:
    silent_for: float


@dataclass(frozen=True)
class LinkUp:
    pass


@dataclass(frozen=True)
class Resent:
    """A repeated poll: the last answer was sent again."""

    poll: Poll


SasEvent = PollReceived | Broadcast | Acked | BadFrame | LinkDown | LinkUp | Resent


@dataclass(frozen=True)
class Tx:
    """Bytes to write; ``wakeup`` True: with the wakeup bit (mark parity), i.e. the chirp."""

    data: bytes
    wakeup: bool = False


@dataclass
class _Counters:
    polls: int = 0
    answers: int = 0
    resends: int = 0
    nacks: int = 0
    crc_errors: int = 0
    unknown: int = 0
    dropped_gap: int = 0
    garbage_bytes: int = 0
    chirps: int = 0
    other_address: int = 0
    extra: dict[str, int] = field(default_factory=dict)


class SasLink:
    """One gaming machine's end of the floor link. Not thread-safe: one thread drives it."""

    def __init__(self, address: int, timing: LinkTiming | None = None) -> None:
        if not 1 <= address <= 127:
            raise ValueError(f"SAS address {address}: must be 1..127")
        self.address = address
        self.timing = timing or LinkTiming()
        self._buf = bytearray()
        self._skip = False
        self._last_byte = 0.0
        self._last_traffic = 0.0
        self._last_ours = 0.0
        self._last_chirp = -1e9
        self._up = True
        self._started = False
        self._awaiting: Poll | None = None
        self._last_poll: Poll | None = None
        self._last_answer: bytes | None = None
        self._out: list[Tx] = []
        self._events: list[SasEvent] = []
        self.stats = _Counters()

    # -- public API ---------------------------------------------------------------------------
    @property
    def up(self) -> bool:
        return self._up

    def start(self, now: float, up: bool = True) -> None:
        """Start the clocks: the link counts as ``up`` (as it was last journaled) until
        ``link_timeout`` passes unpolled (or, when down, until the first valid message)."""
        self._up = up
        self._started = True
        self._last_traffic = now
        self._last_ours = now
        self._last_byte = now

    def counters(self) -> dict[str, int]:
        s = self.stats
        return {k: v for k, v in s.__dict__.items() if isinstance(v, int)}

    def receive(self, data: bytes | bytearray, now: float) -> None:
        """Bytes from a byte stream (no ninth bit): framed by context."""
        for b in bytes(data):
            self._byte(b, None, now)

    def receive_marked(self, items: Iterable[tuple[int, bool]], now: float) -> None:
        """Bytes from the 9-bit UART with their wakeup bit."""
        for b, wake in items:
            self._byte(b, wake, now)

    def answer(self, poll: Poll, frame: bytes | None, now: float) -> None:
        """The caller's answer to the `PollReceived` of ``poll`` (None: no answer)."""
        if poll is not self._awaiting:
            return
        self._awaiting = None
        self._last_poll = poll
        self._last_answer = frame
        if frame:
            self._out.append(Tx(bytes(frame)))
            self.stats.answers += 1
            if len(frame) == 1 and frame[0] == (self.address | 0x80) and poll.command is not None:
                self.stats.nacks += 1

    def poll(self, now: float) -> None:
        """Let time pass: stale partial messages, link down, chirp."""
        if (self._buf or self._skip) and now - self._last_byte > self.timing.inter_byte_gap:
            if self._buf:
                self.stats.dropped_gap += 1
            self._buf.clear()
            self._skip = False
        if not self._started:
            return
        t = self.timing
        if self._up and now - self._last_traffic >= t.link_timeout:
            self._up = False
            self._events.append(LinkDown(now - self._last_traffic))
        if (
            t.chirp
            and now - self._last_ours >= t.chirp_after
            and now - self._last_chirp >= t.chirp_interval
        ):
            self._last_chirp = now
            self._out.append(Tx(bytes((self.address,)), wakeup=True))
            self.stats.chirps += 1

    def take_output(self) -> list[Tx]:
        out, self._out = self._out, []
        return out

    def take_events(self) -> list[SasEvent]:
        out, self._events = self._events, []
        return out

    # -- framing ------------------------------------------------------------------------------
    def _byte(self, b: int, wake: bool | None, now: float) -> None:
        if (self._buf or self._skip) and now - self._last_byte > self.timing.inter_byte_gap:
            if self._buf:
                self.stats.dropped_gap += 1
            self._buf.clear()
            self._skip = False
        self._last_byte = now
        if wake:
            if self._buf:
                self.stats.garbage_bytes += len(self._buf)
            self._buf.clear()
            self._skip = False
            self._begin(b, now, uart=True)
        elif self._buf:
            self._buf.append(b)
            self._advance(now)
        elif self._skip or wake is False:
            self.stats.garbage_bytes += 1
        else:
            self._begin(b, now, uart=False)

    def _begin(self, b: int, now: float, uart: bool) -> None:
        if b & 0x80:
            self._message(bytes((b,)), now)
            return
        if b == self.address or b == 0 or uart:
            self._buf.append(b)
            return
        self.stats.garbage_bytes += 1

    def _advance(self, now: float) -> None:
        n = codec.expected_length(self._buf)
        if n is None:
            return
        if n < 0:
            if self._buf[0] == self.address:
                self.stats.unknown += 1
            else:
                self.stats.garbage_bytes += len(self._buf)
            self._buf.clear()
            self._skip = True
            return
        if len(self._buf) >= n:
            raw = bytes(self._buf[:n])
            self._buf.clear()
            self._message(raw, now)

    # -- messages -----------------------------------------------------------------------------
    def _message(self, raw: bytes, now: float) -> None:
        if len(raw) == 1:
            address, command, data = raw[0] & 0x7F, None, b""
        else:
            address, command = raw[0], raw[1]
            spec = codec.POLLS[command]
            if spec.kind != "R" and not codec.crc_ok(raw):
                if address == self.address:
                    self.stats.crc_errors += 1
                    self._out.append(Tx(codec.nack(self.address)))
                    self.stats.nacks += 1
                    self._events.append(BadFrame(raw, "bad CRC"))
                else:
                    self.stats.garbage_bytes += len(raw)
                return
            if spec.kind == "R":
                data = b""
            elif spec.kind == "S":
                data = raw[2:-2]
            else:
                data = raw[3:-2]
        poll = Poll(address, command, data, raw)
        self._last_traffic = now
        if not self._up:
            self._up = True
            self._events.append(LinkUp())
        if address != self.address:
            self._acknowledge()
            if address == 0 and command is not None:
                self._events.append(Broadcast(poll))
            else:
                self.stats.other_address += 1
            return
        self._last_ours = now
        self.stats.polls += 1
        last = self._last_poll
        if last is not None and last.raw == raw and self._last_answer is not None:
            self._out.append(Tx(self._last_answer))
            self.stats.resends += 1
            self._events.append(Resent(poll))
            return
        self._acknowledge()
        self._awaiting = poll
        self._events.append(PollReceived(poll))

    def _acknowledge(self) -> None:
        last, answer = self._last_poll, self._last_answer
        self._last_poll = None
        self._last_answer = None
        self._awaiting = None
        if last is not None and answer is not None:
            self._events.append(Acked(last, answer))
