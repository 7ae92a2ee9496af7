"""systemd's notify protocol (sd_notify(3)) with the standard library: READY, STATUS, WATCHDOG,
STOPPING as datagrams on ``$NOTIFY_SOCKET``.

Responsible for: reading ``NOTIFY_SOCKET`` (a path, or ``@name`` for the abstract namespace),
``WATCHDOG_USEC`` and ``WATCHDOG_PID`` once, sending each message as one non-blocking datagram
(never waiting on systemd: a full socket drops the message, logged once), and `OwnerWatchdog`:
the heartbeat the owner thread itself calls once per loop iteration, which sends ``WATCHDOG=1``
at most every third of the watchdog interval. Progress is observed where it happens: a loop
iteration of the owner that returns (an event processed and committed, or the queue's timeout
looked at). An owner stuck in a step, a commit or a device call never calls it, so the pings
stop and systemd restarts the service after ``WatchdogSec=``; no other thread pings.

Must never: raise into its caller (the owner thread), block, or ping from a thread other than
the owner's. Without ``NOTIFY_SOCKET`` every call does nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

#: ``WATCHDOG=1`` is sent at most every ``interval / PINGS_PER_INTERVAL`` (systemd asks for at
#: least two per interval; three leave room for an owner iteration of up to 0.25 s).
PINGS_PER_INTERVAL = 3


def notify_address(value: str | None) -> str | None:
    """The ``AF_UNIX`` address of ``$NOTIFY_SOCKET``: a filesystem path, or ``@name`` for the
    abstract namespace (returned with a leading NUL). None when unset or not a UNIX socket
    (systemd 254's ``vsock:`` addresses are not supported: logged, nothing is sent)."""
    if not value:
        return None
    if value.startswith("@"):
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    log.warning("NOTIFY_SOCKET=%r is not a UNIX socket path: notifications off", value)
    return None


class Notifier:
    """The service's side of the notify protocol. ``env`` defaults to ``os.environ``."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.address = notify_address(env.get("NOTIFY_SOCKET"))
        self.watchdog_s = _watchdog_interval(env)
        self._sock: socket.socket | None = None
        self._last_status: str | None = None
        self._failed = False

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *fields: str) -> bool:
        """Send ``fields`` (``KEY=value``) as one datagram; False if not sent (off, or an
        error, logged once). Never raises, never blocks."""
        if self.address is None:
            return False
        message = "\n".join(fields).encode("utf-8", "replace")
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(message, socket.MSG_DONTWAIT, self.address)
        except OSError as exc:
            if not self._failed:
                log.warning("systemd notification not sent (%s): %s", fields[0], exc)
                self._failed = True
            return False
        return True

    def ready(self, status: str) -> bool:
        self._last_status = status
        return self.send("READY=1", f"STATUS={_one_line(status)}")

    def status(self, text: str) -> bool:
        """``STATUS=text``, only when it differs from the last one sent."""
        if text == self._last_status:
            return False
        self._last_status = text
        return self.send(f"STATUS={_one_line(text)}")

    def stopping(self, status: str = "stopping") -> bool:
        self._last_status = status
        return self.send("STOPPING=1", f"STATUS={_one_line(status)}")

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def owner_watchdog(self, clock: Callable[[], float] = time.monotonic) -> OwnerWatchdog | None:
        """The heartbeat for the owner loop (`Owner.heartbeat`), None without a watchdog."""
        if not self.enabled or self.watchdog_s is None:
            return None
        return OwnerWatchdog(self, self.watchdog_s / PINGS_PER_INTERVAL, clock)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class OwnerWatchdog:
    """Called by the owner thread once per loop iteration; pings at most every ``every_s``."""

    def __init__(self, notifier: Notifier, every_s: float, clock: Callable[[], float]) -> None:
        self._notifier = notifier
        self.every_s = every_s
        self._clock = clock
        self._last: float | None = None
        self.pings = 0

    def __call__(self) -> None:
        now = self._clock()
        if self._last is not None and now - self._last < self.every_s:
            return
        self._last = now
        if self._notifier.watchdog():
            self.pings += 1


def service_status(snap: Any) -> str:
    """The ``STATUS=`` line of a published snapshot (`controller.service.owner.PublicSnapshot`):
    the table's state, round, rounds completed and journal seq, and any fault by its code."""
    text = (
        f"{snap.state or 'starting'}, round {snap.round_id}, {snap.rounds_completed} rounds, "
        f"journal seq {snap.seq}"
    )
    fault = snap.view.get("fault") if isinstance(snap.view, Mapping) else None
    faults = fault.get("faults") if isinstance(fault, Mapping) else None
    if faults:
        codes = (f.get("code", "?") if isinstance(f, Mapping) else "?" for f in faults)
        text += " | FAULT " + ", ".join(map(str, codes))
    if snap.storage_fault:
        text += f" | STORAGE FAULT: {snap.storage_fault}"
    if getattr(snap, "software_fault", None):
        text += f" | SOFTWARE NOT APPROVED: {snap.software_fault}"
    if getattr(snap, "unapproved_bench", False):
        text += " | UNAPPROVED SOFTWARE (lab bench)"
    return text


def _watchdog_interval(env: Mapping[str, str]) -> float | None:
    """``WATCHDOG_USEC`` in seconds, when it is meant for this process (``WATCHDOG_PID`` unset
    or ours), as sd_watchdog_enabled(3) reads it; None otherwise."""
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    pid = env.get("WATCHDOG_PID")
    if usec <= 0 or (pid and pid != str(os.getpid())):
        return None
    return usec / 1_000_000


def _one_line(text: str) -> str:
    return " ".join(text.split())[:400]
