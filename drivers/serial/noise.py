"""Line noise as a rate over a window: when a serial line's garbage is a fault.

The link layer recovers from noise by itself (resynchronisation after garbage, NAK and
retransmission of a damaged frame), so one stray byte costs nothing and must not stop the table.
A line that keeps carrying garbage is a cable or adapter problem a supervisor must see. This
module counts the damaged units (garbage bytes, CRC and header errors: the port's counters) in a
sliding window and says when they exceed the configured limit (``LINE_NOISE``).

Pure: takes the caller's clock and the counters' totals; never touches a port, posts nothing.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import dataclass

from fsm.configread import MAX_SECONDS, Reader

#: The port's counters that count damaged units on the line.
NOISE_COUNTERS = ("garbage_bytes", "crc_errors", "header_errors")


@dataclass(frozen=True)
class NoiseConfig:
    """``[serial.<device>] noise_limit`` damaged units within ``noise_window`` seconds at most;
    one more is ``LINE_NOISE``."""

    limit: int = 32
    window_s: float = 10.0

    KEYS = ("noise_limit", "noise_window")

    @classmethod
    def read(cls, r: Reader) -> NoiseConfig:
        d = cls()
        return cls(
            limit=r.integer("noise_limit", d.limit, 0, 1_000_000),
            window_s=r.number("noise_window", d.window_s, 0.1, MAX_SECONDS, unit="seconds"),
        )


def noise_total(counters: Mapping[str, object]) -> int:
    """The damaged units a port's status counts so far."""
    return sum(int(v) for k, v in counters.items() if k in NOISE_COUNTERS and isinstance(v, int))


class NoiseRate:
    """The damaged units of one line over the last ``window_s``; `update` says when they exceed
    ``limit``. After a report the window starts afresh (a noisy line is reported again only
    after another ``limit`` of noise)."""

    def __init__(self, config: NoiseConfig, total: int = 0) -> None:
        self.config = config
        self._last_total = total
        self._samples: collections.deque[tuple[float, int]] = collections.deque()
        self._in_window = 0

    def update(self, total: int, now: float) -> int | None:
        """Take the counters' ``total`` at ``now``; the units in the window when they exceed the
        limit (a fault to report), else None."""
        new = max(0, total - self._last_total)
        self._last_total = total
        if new:
            self._samples.append((now, new))
            self._in_window += new
        while self._samples and now - self._samples[0][0] > self.config.window_s:
            self._in_window -= self._samples.popleft()[1]
        if self._in_window <= self.config.limit:
            return None
        seen = self._in_window
        self._samples.clear()
        self._in_window = 0
        return seen
