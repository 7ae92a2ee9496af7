"""The device end of a serial link on a real pseudo-terminal, in its own thread.

Opens a pty (``os.openpty``), points a stable symlink (e.g. ``<dir>/paigow-shoe``) at the slave so
the controller opens it with pyserial like a udev name, runs a device-side ``Link`` and hands
delivered messages to the device logic. Injects line faults: ``silent`` (reads and answers
nothing), ``garbage`` (a noisy line: random bytes between frames, a first burst past the
controller's default noise limit, then more at every turn of the loop), ``unplug``/``replug``
(the pty vanishes, a new one appears under the same name, the device restarts its link). It must
never decide what a message means: the device logic (shoe_sim, shuffler_sim) does.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import random
import select
import threading
import time
import tty
from typing import Protocol

from drivers.serial.serial_link import Delivered, Link, LinkConfig

DEVICE_LINK = LinkConfig(
    ack_timeout=0.05, max_retries=4, heartbeat_interval=None, silence_timeout=None, idle_flush=0.02
)


#: Bytes of the first burst of a ``garbage`` fault (past the controller's default noise limit).
GARBAGE_FIRST_BURST = 48


class DeviceLogic(Protocol):
    def handle(self, msg_type: int, payload: bytes) -> list[tuple[int, bytes]]:
        """Answers (type, payload) to one delivered message."""
        ...


class PtyDevice:
    """A simulated serial device on a pty; ``path`` is the stable name to open."""

    def __init__(
        self,
        name: str,
        path: str,
        logic: DeviceLogic,
        *,
        seed: int = 0,
        link_config: LinkConfig = DEVICE_LINK,
        tick: float = 0.005,
    ) -> None:
        self.name = name
        self.path = path
        self.logic = logic
        self.silent = False
        self._garbage = False
        self._rng = random.Random(seed)
        self._link_config = link_config
        self._tick = tick
        self._session = seed & 0xFFFF
        self._link = self._new_link()
        self._master: int | None = None
        self._slave: int | None = None
        self._commands: queue.Queue[tuple[str, threading.Event]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_garbage = 0.0

    @property
    def garbage(self) -> bool:
        """Whether the line is noisy (the ``garbage`` fault)."""
        return self._garbage

    @garbage.setter
    def garbage(self, on: bool) -> None:
        self._garbage = on
        self._last_garbage = 0.0  # each injection starts with the first, large burst

    def _new_link(self) -> Link:
        self._session += 1
        return Link(self._link_config, session=self._session)

    def start(self) -> None:
        self._plug()
        self._thread = threading.Thread(target=self._run, name=f"sim-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        self._unplug()

    def unplug(self) -> None:
        """The USB adapter is pulled: the pty and its name disappear."""
        self._command("unplug")

    def replug(self) -> None:
        """A new pty appears under the same name; the device restarts its link."""
        self._command("replug")

    def _command(self, what: str) -> None:
        done = threading.Event()
        self._commands.put((what, done))
        done.wait(timeout=5.0)

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line editing: the bytes are binary frames
        fcntl.fcntl(master, fcntl.F_SETFL, fcntl.fcntl(master, fcntl.F_GETFL) | os.O_NONBLOCK)
        self._master, self._slave = master, slave
        tmp = f"{self.path}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.symlink(os.ttyname(slave), tmp)
        os.replace(tmp, self.path)
        self._link = self._new_link()
        self._link.start(time.monotonic())

    def _unplug(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None

    def _run(self) -> None:
        while not self._stop.is_set():
            while not self._commands.empty():
                what, done = self._commands.get()
                if what == "unplug":
                    self._unplug()
                elif what == "replug" and self._master is None:
                    self._plug()
                done.set()
            master = self._master
            if master is None:
                self._stop.wait(self._tick)
                continue
            ready, _, _ = select.select([master], [], [], self._tick)
            data = b""
            if ready:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    data = b""
            if self.silent:
                continue  # a dead device: hears nothing, says nothing
            now = time.monotonic()
            link = self._link
            link.receive(data, now)
            link.poll(now)
            for event in link.take_events():
                if isinstance(event, Delivered):
                    for msg_type, payload in self.logic.handle(event.type, event.payload):
                        link.send(msg_type, payload, now)
            out = link.take_output()
            if self.garbage and now - self._last_garbage >= 0.01:
                # the line turns noisy at once: more than the default LINE_NOISE limit (32
                # damaged bytes in 10 s, drivers/serial/noise.py) in the first burst
                size = GARBAGE_FIRST_BURST if not self._last_garbage else self._rng.randint(1, 24)
                self._last_garbage = now
                burst = bytes(self._rng.randrange(256) for _ in range(size))
                out = burst + out
            if out:
                self._write(master, out)

    def _write(self, fd: int, data: bytes) -> None:
        with contextlib.suppress(OSError):  # buffer full (nobody reading) or pty gone: lost
            os.write(fd, data)
