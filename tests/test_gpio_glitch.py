"""The stable-for-N-ms glitch filter on the lock-out, NEXT, VOID and the shaker (issue 9 point
6): one ESD spike on a long cable must not become a journaled press. Clock and timers are
injected, so nothing sleeps."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory
from test_gpio_rig import (
    LOCKOUT_PIN,
    NEXT_PIN,
    SEGMENT_WIRING,
    SHAKER_PIN,
    VOID_PIN,
    FakeClock,
)

from drivers.gpio.devices import DebounceTimes
from drivers.gpio.filters import ManualTimers, StableFilter, TimerThread
from drivers.gpio.gpio_table import Table, build_gpio_table
from fsm.round.events import Event

WINDOW = 0.002  # the default glitch_filter_ms = 2
INPUTS = [
    (LOCKOUT_PIN, "lockout_pressed"),
    (NEXT_PIN, "panel_next"),
    (VOID_PIN, "panel_void"),
    (SHAKER_PIN, "shake_detected"),
]


class Bench:
    def __init__(self) -> None:
        self.clock = FakeClock()
        self.timers = ManualTimers(self.clock)
        self.factory = MockFactory()
        self.events: list[Event] = []
        self.table: Table = build_gpio_table(
            SEGMENT_WIRING,
            self.factory,
            self.events.append,
            clock=self.clock,
            debounce=DebounceTimes(glitch_s=WINDOW),
            timers=self.timers,
        )

    def level(self, pin: int, low: bool, then: float) -> None:
        """Drive ``pin`` (low = active), then let ``then`` seconds pass, running due timers."""
        p = self.factory.pin(pin)
        if low:
            p.drive_low()
        else:
            p.drive_high()
        self.clock.advance(then)
        self.timers.run_due()

    def types(self) -> list[str]:
        return [e.type for e in self.events]


@pytest.fixture
def bench() -> Iterator[Bench]:
    b = Bench()
    b.clock.advance(10.0)
    yield b
    b.table.close()


@pytest.mark.parametrize(("pin", "event"), INPUTS)
def test_a_spike_shorter_than_the_window_is_no_press(bench: Bench, pin: int, event: str) -> None:
    bench.level(pin, low=True, then=0.0005)  # 0.5 ms spike
    bench.level(pin, low=False, then=1.0)
    assert bench.events == []


@pytest.mark.parametrize(("pin", "event"), INPUTS)
def test_a_press_held_for_the_window_counts_once(bench: Bench, pin: int, event: str) -> None:
    bench.level(pin, low=True, then=WINDOW / 2)
    assert bench.events == []  # not yet: still inside the window
    bench.level(pin, low=True, then=WINDOW)
    bench.level(pin, low=False, then=1.0)
    assert bench.types() == [event]


def test_a_line_that_reads_released_when_the_window_ends_is_no_press(bench: Bench) -> None:
    # the release edge was lost (a spike back to high between two samples): the level decides
    bench.level(LOCKOUT_PIN, low=True, then=0.0)
    bench.factory.pin(LOCKOUT_PIN)._state = True  # the level without an edge
    bench.clock.advance(WINDOW)
    bench.timers.run_due()
    assert bench.events == []


def test_contact_bounce_then_a_stable_press_is_one_press_after_the_bounce(bench: Bench) -> None:
    for _ in range(3):  # 3 bounces of 0.3 ms
        bench.level(LOCKOUT_PIN, low=True, then=0.0003)
        bench.level(LOCKOUT_PIN, low=False, then=0.0003)
    bench.level(LOCKOUT_PIN, low=True, then=WINDOW)
    assert bench.types() == ["lockout_pressed"]
    assert bench.table.lockout.glitches == 3  # type: ignore[attr-defined]


def test_a_spike_just_before_a_real_press_does_not_swallow_it(bench: Bench) -> None:
    """A dropped glitch never feeds the quiet-gap debounce, so the press 5 ms later counts."""
    bench.level(NEXT_PIN, low=True, then=0.0002)
    bench.level(NEXT_PIN, low=False, then=0.005)
    bench.level(NEXT_PIN, low=True, then=WINDOW)
    assert bench.types() == ["panel_next"]


def test_shakes_still_count_one_per_stroke(bench: Bench) -> None:
    for _ in range(3):
        bench.level(SHAKER_PIN, low=True, then=0.01)
        bench.level(SHAKER_PIN, low=False, then=0.2)
    assert bench.events == [Event("shake_detected")] * 3


def test_window_zero_passes_every_activation_at_once() -> None:
    seen: list[int] = []
    f = StableFilter(0.0, time.monotonic, None, lambda: True, lambda: seen.append(1))
    f.activation()
    assert seen == [1]
    assert f.deactivation() is True


def test_a_window_without_timers_is_refused() -> None:
    with pytest.raises(ValueError, match="needs timers"):
        StableFilter(0.002, time.monotonic, None, lambda: True, lambda: None)


def test_the_timer_thread_confirms_a_held_press_on_the_real_clock() -> None:
    """The production path: TimerThread on time.monotonic. No timing is asserted: the test
    only waits (up to 5 s) for the confirmation to arrive, and checks a spike never does."""
    factory = MockFactory()
    events: list[Event] = []
    timers = TimerThread()
    table = build_gpio_table(
        SEGMENT_WIRING,
        factory,
        events.append,
        debounce=DebounceTimes(glitch_s=0.02),
        timers=timers,
    )
    try:
        factory.pin(LOCKOUT_PIN).drive_low()
        deadline = time.monotonic() + 5.0
        while not events and time.monotonic() < deadline:
            time.sleep(0.005)
        assert events == [Event("lockout_pressed")]
        factory.pin(LOCKOUT_PIN).drive_high()
        factory.pin(VOID_PIN).drive_low()  # a spike: released at once
        factory.pin(VOID_PIN).drive_high()
        time.sleep(0.1)
        assert events == [Event("lockout_pressed")]
    finally:
        table.close()
        timers.close()
    assert not timers.alive
