"""The ninth (wakeup) bit on Linux: parity-mark decoding of what a UART in space parity with
``INPCK|PARMRK`` delivers, and the termios flags that make it do so.

With space parity every byte the host sends with the wakeup bit set has a parity error; with
``PARMRK`` the kernel marks it as ``FF 00 b``, and a literal ``FF`` arrives doubled as ``FF FF``.
The decoder keeps state across reads (a mark may be split between two reads). To send a byte
with the wakeup bit (the chirp) the port is switched to mark parity for that byte. This module
must never open a port, frame a message or know a poll.
"""

from __future__ import annotations

import termios
from typing import Any

CMSPAR = getattr(termios, "CMSPAR", 0o10000000000)  # "stick" parity (Linux)


class ParmrkDecoder:
    """Turns the PARMRK byte stream into (byte, wakeup) pairs."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self.errors = 0  # FF followed by anything but 00 / FF (a framing slip): dropped

    def feed(self, data: bytes | bytearray) -> list[tuple[int, bool]]:
        out: list[tuple[int, bool]] = []
        buf = self._pending + bytes(data)
        i, n = 0, len(buf)
        while i < n:
            b = buf[i]
            if b != 0xFF:
                out.append((b, False))
                i += 1
                continue
            if i + 1 >= n:
                break  # wait for the next read
            nxt = buf[i + 1]
            if nxt == 0xFF:
                out.append((0xFF, False))
                i += 2
            elif nxt == 0x00:
                if i + 2 >= n:
                    break
                out.append((buf[i + 2], True))
                i += 3
            else:
                self.errors += 1
                i += 1
        self._pending = bytearray(buf[i:])
        return out


def encode_marked(items: list[tuple[int, bool]]) -> bytes:
    """What a UART with PARMRK would deliver for ``items`` (the decoder's inverse; for tests and
    for the byte-stream side of a simulated 9-bit line)."""
    out = bytearray()
    for b, wake in items:
        if wake:
            out += bytes((0xFF, 0x00, b))
        elif b == 0xFF:
            out += b"\xff\xff"
        else:
            out.append(b)
    return bytes(out)


def space_parity_attrs(attrs: list[Any]) -> list[Any]:
    """termios attributes for receiving with space parity, parity errors marked (FF 00 b)."""
    iflag, oflag, cflag, lflag = attrs[0], attrs[1], attrs[2], attrs[3]
    iflag |= termios.INPCK | termios.PARMRK
    iflag &= ~(termios.IGNPAR | termios.ISTRIP)
    cflag |= termios.PARENB | CMSPAR
    cflag &= ~termios.PARODD
    return [iflag, oflag, cflag, lflag, *attrs[4:]]


def mark_parity_attrs(attrs: list[Any]) -> list[Any]:
    """The same, with mark parity: what goes out carries the wakeup bit."""
    new = space_parity_attrs(attrs)
    new[2] |= termios.PARODD
    return new


def set_space_parity(fd: int) -> None:
    termios.tcsetattr(fd, termios.TCSANOW, space_parity_attrs(termios.tcgetattr(fd)))


def write_with_wakeup(fd: int, data: bytes, write: Any) -> None:
    """Write ``data`` with the wakeup bit: mark parity, write, drain, space parity again."""
    attrs = termios.tcgetattr(fd)
    termios.tcdrain(fd)
    termios.tcsetattr(fd, termios.TCSANOW, mark_parity_attrs(attrs))
    try:
        write(data)
        termios.tcdrain(fd)
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, space_parity_attrs(attrs))
