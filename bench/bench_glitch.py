"""The glitch filter's cost on the lock-out: press -> posted event, with and without the filter.

On gpiozero's MockFactory the lock-out pin is driven low and held; with ``glitch_s`` = 2 ms (the
default ``glitch_filter_ms``) the press is confirmed on the filter's ``TimerThread`` once the
line stayed low for the window; without it, the callback posts at once. Both run in the same
process, interleaved, ``PRESSES`` times each.

Figures (``python -m bench bench_glitch``):
- ``glitch_press_to_post_p99_ms``: p99 of edge -> post with the 2 ms filter;
- ``unfiltered_press_to_post_p99_ms``: the same without the filter (the baseline);
- ``glitch_overshoot_p99_ms``: how late after its window the timer thread confirms (p99 of the
  filtered latency minus 2 ms), i.e. what the filter adds beyond its window;
- ``glitch_added_ratio``: filtered p99 over (baseline p99 + the window): 1.0 = nothing beyond the
  window itself.
Must never be imported by the service.
"""

from __future__ import annotations

import math
import threading
import time

from gpiozero.pins.mock import MockFactory

from drivers.gpio.devices import DebounceTimes, GpioLockoutButton
from drivers.gpio.filters import TimerThread
from fsm.round.events import Event

PRESSES = 200
WINDOW_S = 0.002


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def _latencies(factory: MockFactory, pin: int, glitch_s: float, timers: TimerThread) -> list[float]:
    posted = threading.Event()
    at: list[float] = []

    def post(event: Event) -> None:
        at.append(time.perf_counter())
        posted.set()

    button = GpioLockoutButton(
        pin,
        pin_factory=factory,
        post=post,
        debounce=DebounceTimes(button_s=0.0, glitch_s=glitch_s),
        timers=timers,
    )
    out: list[float] = []
    try:
        for _ in range(PRESSES):
            posted.clear()
            start = time.perf_counter()
            factory.pin(pin).drive_low()
            if not posted.wait(2.0):
                raise RuntimeError("a held press was never confirmed")
            out.append((at[-1] - start) * 1000)
            factory.pin(pin).drive_high()
            time.sleep(0.001)
    finally:
        button.close()
    return out


def run() -> dict[str, float | int | str]:
    factory = MockFactory()
    timers = TimerThread()
    try:
        filtered = _latencies(factory, 5, WINDOW_S, timers)
        baseline = _latencies(factory, 6, 0.0, timers)
    finally:
        timers.close()
    p99_f, p99_b = _p99(filtered), _p99(baseline)
    return {
        "glitch_press_to_post_p99_ms": round(p99_f, 3),
        "unfiltered_press_to_post_p99_ms": round(p99_b, 3),
        "glitch_overshoot_p99_ms": round(p99_f - WINDOW_S * 1000, 3),
        "glitch_added_ratio": round(p99_f / (p99_b + WINDOW_S * 1000), 3),
        "glitch_presses": PRESSES,
    }
