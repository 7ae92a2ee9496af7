"""A serial port carrying one link: pyserial opened exclusively, one reader thread, reopen with
capped exponential backoff when the USB adapter disappears.

The reader thread only moves bytes between the port and the ``Link``, lets time pass on the link
and hands link events to the listener (the device adapter), which posts events for the owner
thread. ``send`` may be called from any thread. This module must never interpret a message or
decide a game rule.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import serial

from drivers.serial.serial_link import Link, LinkEvent
from drivers.serial.settings import LinkConfig
from drivers.serial.settings import PortConfig as PortConfig  # its old home


class LinkListener(Protocol):
    """What a port tells its device adapter (all calls come from the port's reader thread)."""

    def on_link_event(self, event: LinkEvent, now: float) -> None: ...

    def on_port_state(self, is_open: bool, detail: str, now: float) -> None: ...

    def on_tick(self, now: float) -> None: ...


class Transport(Protocol):
    """What a device adapter needs from a port (``LinkPort`` or a test double)."""

    def send(self, msg_type: int, payload: bytes) -> int: ...

    def set_listener(self, listener: LinkListener) -> None: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def status(self) -> dict[str, object]: ...


def next_backoff(current: float, config: PortConfig) -> float:
    """The delay after ``current``: doubling, capped at ``backoff_max``."""
    return min(current * 2.0, config.backoff_max)


SerialFactory = Callable[..., Any]


class LinkPort:
    """One device's port and link. ``start`` launches the reader thread; ``stop`` joins it."""

    def __init__(
        self,
        name: str,
        port: PortConfig,
        link: LinkConfig | None = None,
        *,
        session: int | None = None,
        serial_factory: SerialFactory = serial.Serial,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.port_config = port
        self.link = Link(link, session=session)
        self._factory = serial_factory
        self._clock = clock
        self._lock = threading.Lock()
        self._serial: Any = None
        self._listener: LinkListener | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.opens = 0
        self.open_failures = 0
        self.write_timeouts = 0
        self.listener_errors = 0
        self.last_error = ""

    def set_listener(self, listener: LinkListener) -> None:
        self._listener = listener

    @property
    def is_open(self) -> bool:
        return self._serial is not None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"serial-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        with self._lock:
            self._close()

    def send(self, msg_type: int, payload: bytes) -> int:
        """Queue a message on the link and write what the link emits (thread-safe)."""
        with self._lock:
            handle = self.link.send(msg_type, payload, self._clock())
            self._flush_output()
        return handle

    def status(self) -> dict[str, object]:
        with self._lock:
            counters = self.link.counters()
        return {
            "path": self.port_config.path,
            "open": self.is_open,
            "opens": self.opens,
            "open_failures": self.open_failures,
            "write_timeouts": self.write_timeouts,
            "last_error": self.last_error,
            "peer_silent": self.link.peer_silent,
            **counters,
        }

    # -- reader thread ------------------------------------------------------------------------

    def _run(self) -> None:
        cfg = self.port_config
        backoff = cfg.backoff_initial
        next_attempt = self._clock()
        reported_lost = False
        with self._lock:
            self.link.start(self._clock())
            self._output_dropped()
        while not self._stop.is_set():
            now = self._clock()
            if self._serial is None:
                if now >= next_attempt:
                    error = self._try_open()
                    now = self._clock()
                    if error is None:
                        backoff = cfg.backoff_initial
                        reported_lost = False
                        with self._lock:
                            self.link.reconnect(now)
                            self._flush_output()
                        self._notify_port(True, f"opened {cfg.path}", now)
                    else:
                        if not reported_lost:
                            self._notify_port(False, error, now)
                            reported_lost = True
                        next_attempt = now + backoff
                        backoff = next_backoff(backoff, cfg)
                if self._serial is None:
                    self._stop.wait(min(cfg.read_tick, max(0.0, next_attempt - now)))
                data = b""
            else:
                ser = self._serial
                try:
                    data = ser.read(max(1, ser.in_waiting))
                except Exception as exc:  # SerialException, OSError, or closed under us
                    detail = f"{cfg.path}: {exc}"
                    with self._lock:
                        self._close()
                    self.last_error = detail
                    self._notify_port(False, detail, self._clock())
                    reported_lost = True
                    next_attempt = self._clock() + backoff
                    backoff = next_backoff(backoff, cfg)
                    data = b""
            now = self._clock()
            with self._lock:
                if data:
                    self.link.receive(data, now)
                self.link.poll(now)
                self._flush_output()
                events = self.link.take_events()
            listener = self._listener
            if listener is not None:
                try:
                    for event in events:
                        listener.on_link_event(event, now)
                    listener.on_tick(now)
                except Exception as exc:  # an adapter bug must not kill the reader thread
                    self.last_error = f"listener: {exc!r}"
                    self.listener_errors += 1

    def _try_open(self) -> str | None:
        cfg = self.port_config
        try:
            self._serial = self._factory(
                cfg.path,
                cfg.baudrate,
                timeout=cfg.read_tick,
                write_timeout=cfg.write_timeout,
                exclusive=True,
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            self.open_failures += 1
            self.last_error = f"{cfg.path}: {exc}"
            return self.last_error
        self.opens += 1
        return None

    def _notify_port(self, is_open: bool, detail: str, now: float) -> None:
        if self._listener is not None:
            try:
                self._listener.on_port_state(is_open, detail, now)
            except Exception as exc:  # an adapter bug must not kill the reader thread
                self.last_error = f"listener: {exc!r}"
                self.listener_errors += 1

    def _close(self) -> None:
        if self._serial is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                self._serial.close()
            self._serial = None

    def _output_dropped(self) -> None:
        if self._serial is None:
            self.link.take_output()

    def _flush_output(self) -> None:
        """Write the link's output; called with the lock held. Bytes for a closed port are
        dropped (the link retransmits what matters)."""
        out = self.link.take_output()
        if not out or self._serial is None:
            return
        try:
            self._serial.write(out)
        except serial.SerialTimeoutException:
            self.write_timeouts += 1
        except (serial.SerialException, OSError) as exc:
            self.last_error = f"{self.port_config.path}: {exc}"
            self._close()  # the reader thread notices the closed port and reopens it
