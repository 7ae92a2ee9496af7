"""Is the system clock synchronised? For marking journal timestamps taken before it was.

A Raspberry Pi 4 or 5 has no battery-backed clock unless one is fitted: until NTP (or another
source) has set the time, it starts from the last time systemd-timesyncd saved, so the journal's
timestamps can be minutes or months off. ``power_up`` journals ``clock_synced`` (this module's
answer at start-up), and when the clock becomes synchronised later the service journals
``device_recovered {device: "clock", code: "TIME_SYNC"}``: every entry between the two carries a
timestamp taken before synchronisation.

Responsible only for the question. Must never set the clock. Sources, in order: the flag file
systemd-timesyncd touches on synchronisation (``/run/systemd/timesync/synchronized``), then the
kernel's answer to ``adjtimex`` (``TIME_ERROR``: not synchronised), which seccomp may refuse
under ``ProtectClock=`` (then: unknown, reported as not synchronised).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from pathlib import Path

TIMESYNCD_FLAG = Path("/run/systemd/timesync/synchronized")
TIME_ERROR = 5  # adjtimex(2): the clock is not synchronised
_TIMEX_SIZE = 256  # struct timex is 208 bytes on 64-bit Linux; modes = 0 only reads


def _adjtimex_state() -> int | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        buf = ctypes.create_string_buffer(_TIMEX_SIZE)
        state = int(libc.adjtimex(buf))
    except (OSError, AttributeError):
        return None
    return None if state < 0 else state


def clock_synchronised(flag: Path = TIMESYNCD_FLAG) -> bool:
    """True once the clock is known to be synchronised; False when it is not, or unknown."""
    if flag.exists():
        return True
    state = _adjtimex_state()
    return state is not None and state != TIME_ERROR
