"""Frame layout of the reference serial protocol and the incremental, resynchronising parser.

Layout (byte offsets)::

    0      SOF      0xA5
    1      LEN      payload length, 0..MAX_PAYLOAD
    2      NLEN     LEN xor 0xFF (header check: a damaged length is rejected at once)
    3      SEQ      sequence number 0..255 (for ACK/NAK: the sequence number answered)
    4      TYPE     message type (see ``msgtypes``)
    5..    PAYLOAD  LEN bytes
    5+LEN  CRC      CRC-16/CCITT-FALSE, big-endian, over bytes 1 .. 4+LEN (not the SOF)

The parser accepts any bytes at all and never raises: garbage is counted and skipped, a candidate
with a bad header or CRC is dropped one byte at a time so a valid frame hidden behind it is still
found. This module must never keep link state (sequence, retries, time): that is ``link``'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

from drivers.serial.crc import crc16_ccitt_false

SOF = 0xA5
HEADER_LEN = 5
CRC_LEN = 2
OVERHEAD = HEADER_LEN + CRC_LEN
MAX_PAYLOAD = 128


class FrameError(ValueError):
    """A frame that cannot be encoded (field out of range, payload too long)."""


@dataclass(frozen=True)
class Frame:
    """One frame: ``seq`` and ``type`` are bytes 0..255, ``payload`` at most MAX_PAYLOAD bytes."""

    seq: int
    type: int
    payload: bytes = b""

    def encode(self) -> bytes:
        return encode_frame(self.seq, self.type, self.payload)


def encode_frame(seq: int, msg_type: int, payload: bytes = b"") -> bytes:
    """The wire bytes of one frame; FrameError naming the field if a value is out of range."""
    if not 0 <= seq <= 0xFF:
        raise FrameError(f"seq {seq} is not a byte (0..255)")
    if not 0 <= msg_type <= 0xFF:
        raise FrameError(f"type {msg_type} is not a byte (0..255)")
    if len(payload) > MAX_PAYLOAD:
        raise FrameError(f"payload of {len(payload)} bytes exceeds MAX_PAYLOAD {MAX_PAYLOAD}")
    body = bytes((len(payload), len(payload) ^ 0xFF, seq, msg_type)) + bytes(payload)
    crc = crc16_ccitt_false(body)
    return bytes((SOF,)) + body + bytes((crc >> 8, crc & 0xFF))


@dataclass(frozen=True)
class Damaged:
    """A candidate frame whose header was plausible but whose CRC did not match.

    ``seq`` is the sequence byte as read (untrusted: use only as a hint for a NAK)."""

    seq: int


class FrameParser:
    """Feed bytes in any chunking; get complete, CRC-checked frames out.

    ``feed`` returns the frames completed by the new bytes; ``damaged`` collects CRC failures since
    the last ``take_damaged``. ``flush`` tells the parser that the line went idle: a pending
    incomplete candidate is abandoned (its SOF treated as garbage) and the rest rescanned.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._damaged: list[Damaged] = []
        self.garbage_bytes = 0
        self.crc_errors = 0
        self.header_errors = 0
        self.frames_ok = 0

    @property
    def pending(self) -> bool:
        """True while bytes of an incomplete candidate frame are buffered."""
        return bool(self._buf)

    def take_damaged(self) -> list[Damaged]:
        out, self._damaged = self._damaged, []
        return out

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        self._buf.extend(bytes(data))
        return self._scan()

    def flush(self) -> list[Frame]:
        """Abandon incomplete candidates (line idle) and return any frame found behind them."""
        frames: list[Frame] = []
        while self._buf:
            self._drop(1)
            frames.extend(self._scan())
        return frames

    def _drop(self, n: int) -> None:
        self.garbage_bytes += n
        del self._buf[:n]

    def _scan(self) -> list[Frame]:
        frames: list[Frame] = []
        buf = self._buf
        while buf:
            start = buf.find(SOF)
            if start < 0:
                self._drop(len(buf))
                break
            if start:
                self._drop(start)
            if len(buf) < 3:
                break
            length = buf[1]
            if buf[2] != length ^ 0xFF or length > MAX_PAYLOAD:
                self.header_errors += 1
                self._drop(1)
                continue
            total = OVERHEAD + length
            if len(buf) < total:
                break
            body = bytes(buf[1 : HEADER_LEN + length])
            crc = (buf[total - 2] << 8) | buf[total - 1]
            if crc16_ccitt_false(body) != crc:
                self.crc_errors += 1
                self._damaged.append(Damaged(seq=buf[3]))
                self._drop(1)
                continue
            frames.append(
                Frame(seq=buf[3], type=buf[4], payload=bytes(buf[HEADER_LEN : HEADER_LEN + length]))
            )
            self.frames_ok += 1
            del buf[:total]
        return frames
