"""The floor link's transports behind one interface, and the port thread that drives a `SasLink`.

Transports:
- `UartTransport`: the real 9-bit line (the Pi's PL011 UART). pyserial opens it at 19,200 baud;
  then termios sets space parity with ``INPCK|PARMRK`` (pyserial clears both whenever it
  configures the port), so a byte with the wakeup bit arrives as ``FF 00 b``; the chirp goes out
  with mark parity. An answer is written in one ``write`` so the bytes leave back to back (the
  5 ms inter-byte rule).
- `StreamTransport`: a byte stream with no ninth bit, framed by context: a serial device path
  (a pty made by someone else) or a pyserial URL such as ``socket://host:port`` (TCP).
- `PtyTransport`: a pseudo-terminal pair this process creates; the host opens ``slave_path``
  (the simulated table's ``--sas-link``).
`SasPort` runs one reader thread: read, hand the bytes to the link, let the handler answer, write
what the link emits, let time pass. A transport that fails or disappears is reopened with the
shoe's capped exponential backoff (``drivers.serial.port.next_backoff``). This module must never
decide what a poll means (the handler does) nor import from ``controller``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pty
import select
import termios
import threading
import time
import tty
from collections.abc import Callable
from typing import Any, Protocol

import serial

from drivers.sas.sas_link import SasEvent, SasLink, Tx
from drivers.sas.wakeup import ParmrkDecoder, set_space_parity, write_with_wakeup
from drivers.serial.port import PortConfig, next_backoff

SAS_BAUD = 19200
_ERRORS = (serial.SerialException, OSError, ValueError, termios.error)


class SasTransport(Protocol):
    """One floor-link line. ``read`` waits at most ``timeout`` s and returns what arrived."""

    description: str

    def open(self) -> None: ...

    def close(self) -> None: ...

    def read(self, timeout: float) -> bytes: ...

    def deliver(self, link: SasLink, data: bytes, now: float) -> None: ...

    def write(self, tx: Tx) -> None: ...


class _SerialBase:
    def __init__(self, path: str, baudrate: int = SAS_BAUD, tick: float = 0.02) -> None:
        self.path = path
        self.baudrate = baudrate
        self.tick = tick
        self.description = path
        self._serial: Any = None

    def close(self) -> None:
        if self._serial is not None:
            with contextlib.suppress(*_ERRORS):
                self._serial.close()
            self._serial = None

    def read(self, timeout: float) -> bytes:
        """Waits at most the timeout given at open (never set here: pyserial reconfigures the
        port on every timeout change, which clears PARMRK)."""
        ser = self._serial
        if ser is None:
            raise OSError(errno.EBADF, "port closed")
        data: bytes = ser.read(max(1, ser.in_waiting))
        return data


class UartTransport(_SerialBase):
    """The 9-bit UART: space parity, parity errors marked, the chirp with mark parity."""

    def __init__(self, path: str, baudrate: int = SAS_BAUD, tick: float = 0.02) -> None:
        super().__init__(path, baudrate, tick)
        self._decoder = ParmrkDecoder()

    def open(self) -> None:
        self._serial = serial.Serial(
            self.path, self.baudrate, parity=serial.PARITY_SPACE, timeout=self.tick, exclusive=True
        )
        set_space_parity(self._serial.fileno())  # after pyserial: it clears INPCK / PARMRK
        self._decoder = ParmrkDecoder()

    def deliver(self, link: SasLink, data: bytes, now: float) -> None:
        link.receive_marked(self._decoder.feed(data), now)

    def write(self, tx: Tx) -> None:
        ser = self._serial
        if ser is None:
            return
        if tx.wakeup:
            write_with_wakeup(ser.fileno(), tx.data, ser.write)
        else:
            ser.write(tx.data)


class StreamTransport(_SerialBase):
    """A byte stream: a tty path or a pyserial URL (``socket://host:port``)."""

    def open(self) -> None:
        self._serial = serial.serial_for_url(self.path, self.baudrate, timeout=self.tick)

    def deliver(self, link: SasLink, data: bytes, now: float) -> None:
        link.receive(data, now)

    def write(self, tx: Tx) -> None:
        if self._serial is not None:
            self._serial.write(tx.data)


class PtyTransport:
    """A pseudo-terminal pair made here: we hold the master, the host opens ``slave_path``. The
    slave is kept open (raw, no echo) by us too, so a host may close and reopen it."""

    def __init__(self) -> None:
        self._master, self._slave = pty.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.slave_path = os.ttyname(self._slave)
        self.description = f"pty {self.slave_path}"
        self._open = False
        self.stale_flushes = 0

    def open(self) -> None:
        if self._master < 0:
            raise OSError(errno.EBADF, "pty closed")
        self._open = True

    def close(self) -> None:
        self._open = False

    def dispose(self) -> None:
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1

    def read(self, timeout: float) -> bytes:
        if self._master < 0:
            raise OSError(errno.EBADF, "pty closed")
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return b""
        try:
            return os.read(self._master, 4096)
        except BlockingIOError:
            return b""

    def deliver(self, link: SasLink, data: bytes, now: float) -> None:
        link.receive(data, now)

    def write(self, tx: Tx) -> None:
        """Write to the host; a pty left full by nobody reading (chirps while no host is
        connected) is emptied of that stale input first, so the port thread never blocks."""
        if self._master < 0:
            return
        data = tx.data
        for _ in range(2):
            try:
                n = os.write(self._master, data)
            except BlockingIOError:
                termios.tcflush(self._slave, termios.TCIFLUSH)
                self.stale_flushes += 1
                continue
            data = data[n:]
            if not data:
                return


#: The port thread's handler: given the link and its new events, answer the polls (from the
#: port thread; must be quick and never block on the owner).
Handler = Callable[[SasLink, list[SasEvent], float], None]


class SasPort:
    """The reader thread of one floor link. ``start`` launches it; ``stop`` joins it."""

    def __init__(
        self,
        transport: SasTransport,
        link: SasLink,
        handler: Handler,
        *,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        tick: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
        on_output: Callable[[Tx, float], None] | None = None,
    ) -> None:
        self.transport = transport
        self.link = link
        self._handler = handler
        self._backoff = PortConfig(
            transport.description or "sas",
            backoff_initial=backoff_initial,
            backoff_max=backoff_max,
        )
        self._tick = tick
        self._clock = clock
        self._on_output = on_output
        self.start_up = True  # the link's state at start (as last journaled)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.is_open = False
        self.opens = 0
        self.open_failures = 0
        self.handler_errors = 0
        self.last_error = ""

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sas-port", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        self.transport.close()
        self.is_open = False

    def status(self) -> dict[str, object]:
        return {
            "port": self.transport.description,
            "open": self.is_open,
            "opens": self.opens,
            "open_failures": self.open_failures,
            "last_error": self.last_error,
            "link_up": self.link.up,
            **self.link.counters(),
        }

    def _run(self) -> None:
        backoff = self._backoff.backoff_initial
        next_attempt = self._clock()
        self.link.start(self._clock(), up=self.start_up)
        while not self._stop.is_set():
            now = self._clock()
            if not self.is_open:
                if now < next_attempt:
                    self._stop.wait(min(self._tick, next_attempt - now))
                    self._step(b"", self._clock(), write=False)
                    continue
                try:
                    self.transport.open()
                except _ERRORS as exc:
                    self.open_failures += 1
                    self.last_error = f"{self.transport.description}: {exc}"
                    next_attempt = self._clock() + backoff
                    backoff = next_backoff(backoff, self._backoff)
                    continue
                self.is_open = True
                self.opens += 1
                backoff = self._backoff.backoff_initial
            try:
                data = self.transport.read(self._tick)
            except _ERRORS as exc:
                self._lost(exc)
                next_attempt = self._clock() + backoff
                backoff = next_backoff(backoff, self._backoff)
                continue
            self._step(data, self._clock(), write=True)

    def _lost(self, exc: BaseException) -> None:
        self.last_error = f"{self.transport.description}: {exc}"
        self.transport.close()
        self.is_open = False

    def _step(self, data: bytes, now: float, *, write: bool) -> None:
        link = self.link
        if data:
            self.transport.deliver(link, data, now)
        events = link.take_events()
        if events:
            try:
                self._handler(link, events, now)
            except Exception as exc:  # a handler bug must not kill the floor link
                self.handler_errors += 1
                self.last_error = f"handler: {exc!r}"
        link.poll(now)
        more = link.take_events()
        if more:
            try:
                self._handler(link, more, now)
            except Exception as exc:
                self.handler_errors += 1
                self.last_error = f"handler: {exc!r}"
        out = link.take_output()
        if not write:
            return
        for tx in out:
            try:
                self.transport.write(tx)
            except _ERRORS as exc:
                self._lost(exc)
                return
            if self._on_output is not None:
                self._on_output(tx, now)
