"""A small SAS host for wiring checks and tests: builds a poll, sends it with the wakeup bit on
its first byte, and reads the answer until the line is quiet.

Responsible only for the host side of one exchange (``tablectl sas poll``, the benchmark). Must
never be used by the gaming-machine side, and never interpret an answer beyond naming it.
"""

from __future__ import annotations

import time
from typing import Any

import serial

from drivers.sas import codec
from drivers.sas.wakeup import write_with_wakeup


def build_request(address: int, poll: str, data: bytes = b"") -> bytes:
    """The frame of ``poll`` ("general" or a hex command such as "1A") to ``address``, with
    ``data`` after the command (an M-type poll gets its length byte added)."""
    if not 0 <= address <= 127:
        raise ValueError(f"address {address}: must be 0..127")
    if poll.lower() in ("general", "gp", "80"):
        return codec.general_poll(address)
    try:
        command = int(poll, 16)
    except ValueError:
        raise ValueError(f"poll {poll!r}: 'general' or a hex command such as 1A") from None
    spec = codec.POLLS.get(command)
    if spec is None or not 0 <= command <= 0xFF:
        known = " ".join(f"{c:02X}" for c in sorted(codec.POLLS))
        raise ValueError(f"poll {poll!r}: not a poll the table answers ({known})")
    if spec.kind == "R":
        if data:
            raise ValueError(f"poll {command:02X} takes no data")
        return codec.r_poll(address, command)
    if spec.kind == "S":
        if len(data) != spec.size:
            raise ValueError(f"poll {command:02X} takes {spec.size} data bytes, got {len(data)}")
        return codec.s_poll(address, command, data)
    return codec.m_poll(address, command, data)


def describe_answer(address: int, request: bytes, answer: bytes) -> str:
    if not answer:
        return "no answer"
    if len(request) == 1:
        code = answer[0]
        return f"exception {code:02X} ({codec.EXCEPTIONS.get(code, 'unknown')})"
    if answer == codec.ack(address):
        return "ACK"
    if answer == codec.nack(address):
        return "NACK"
    if len(answer) >= 4 and answer[1] == request[1]:
        ok = "CRC ok" if codec.crc_ok(answer) else "BAD CRC"
        return f"{codec.poll_name(answer[1])}: {len(answer) - 4} data bytes, {ok}"
    return "unexpected bytes"


class HostPort:
    """The host end of a line: ``stream`` (pty, TCP URL) or ``uart`` (wakeup bit by parity)."""

    def __init__(self, path: str, transport: str = "stream", baudrate: int = 19200) -> None:
        self.transport = transport
        if transport == "uart":
            self.serial: Any = serial.Serial(
                path, baudrate, parity=serial.PARITY_SPACE, timeout=0.005
            )
        else:
            self.serial = serial.serial_for_url(path, baudrate, timeout=0.005)
        self.serial.reset_input_buffer()

    def close(self) -> None:
        self.serial.close()

    def send(self, frame: bytes) -> None:
        if self.transport == "uart":
            write_with_wakeup(self.serial.fileno(), frame[:1], self.serial.write)
            self.serial.write(frame[1:])
        else:
            self.serial.write(frame)
        self.serial.flush()

    def read_answer(
        self, timeout: float = 1.0, quiet: float = 0.05, length: int | None = None
    ) -> bytes:
        """Bytes until ``length`` arrived, or ``quiet`` s without a byte after the first, or
        ``timeout``."""
        out = bytearray()
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            chunk = self.serial.read(max(1, self.serial.in_waiting))
            now = time.monotonic()
            if chunk:
                out += chunk
                last = now
                if length is not None and len(out) >= length:
                    break
            elif last is not None and now - last >= quiet:
                break
        return bytes(out)
