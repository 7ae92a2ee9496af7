"""The table's GPIO devices on gpiozero: acceptors, lock-out button, dealer panel, dice shaker,
number display.

Responsible for turning pin edges into posted events and output commands into pin levels. The
input handlers run on gpiozero's callback thread (lgpio's notification thread on the Pi) and do
nothing but filter contact bounce and post an ``Event``: they must never decide a game rule,
touch an output or block. Outputs are driven by the owner thread (through ``Table.apply``), except
the attract chase and the win blink, which a background thread of :class:`GpioAcceptors`
animates.

Wiring (docs/wiring.md): every input is a switch or open-collector sensor to ground with the
Pi's internal pull-up, so active-low; lights and segments are active-high (a driver transistor
per output, common-cathode display).

Debounce: a press is accepted on its *first* edge, provided the line has had no edge for the
debounce window before it (a quiet-gap filter, clock injectable so tests need no sleeping).
Kernel debouncing (gpiozero ``bounce_time`` with lgpio) is a stability filter: it reports an edge
only after the level has been stable for the whole period, which would add that period to the
lock-out latency. So momentary inputs use only the quiet-gap filter; the chip sensors also get a
short kernel glitch filter (a false chip is money), and the held switches (supervisor key, lid)
a longer one, as their latency does not matter. gpiozero's MockFactory ignores ``bounce_time``.

Push buttons are ``DigitalInputDevice`` rather than ``Button``: a ``Button`` runs a hold-detection
thread polling ten times a second, which we never use and which delays ``close()`` (up to its
``hold_time`` while pressed), i.e. the shutdown on SIGTERM.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpiozero import DigitalInputDevice, LEDBoard, LEDCharDisplay

from drivers.gpio.font import SEGMENTS
from drivers.gpio.interfaces import GLYPHS, OFF, Clock, Glyph, LightState, Post
from fsm.round.events import Event

#: Kernel glitch filter on the chip sensors, seconds (gpiozero ``bounce_time``).
CHIP_GLITCH_FILTER_S = 0.005
#: Kernel stability filter on held switches (supervisor key, shaker lid), seconds.
HELD_SWITCH_FILTER_S = 0.05
#: One step of the light animation: the attract chase moves one position per step, the win
#: blink is two steps on, two steps off (2 Hz).
ANIMATION_STEP_S = 0.125


@dataclass(frozen=True)
class DebounceTimes:
    """Quiet-gap debounce windows, seconds: an activation counts only after this long without
    any edge on the line."""

    button_s: float = 0.03
    chip_s: float = 0.03
    shaker_s: float = 0.08


class QuietGapFilter:
    """Accepts an activation only if the line has been quiet (no edge at all) for ``window``
    seconds before it. Bounce on press and on release both fall inside the window."""

    def __init__(self, window: float, clock: Clock) -> None:
        self._window = window
        self._clock = clock
        self._last_edge = -math.inf
        self._lock = threading.Lock()

    def activation(self) -> bool:
        """Record an activating edge; True if it starts a new press."""
        with self._lock:
            now = self._clock()
            accepted = now - self._last_edge >= self._window
            self._last_edge = now
            return accepted

    def deactivation(self) -> None:
        """Record a releasing edge (it restarts the quiet gap)."""
        with self._lock:
            self._last_edge = self._clock()


def frame_levels(states: Sequence[LightState], step: int) -> tuple[bool, ...]:
    """Pin level of each light at animation ``step``: off low; lit and locked high (a locked
    wager's light stays illuminated for the dealer's count, NY 5324.41(k)(2), and for the payout
    check, (k)(3)(i)); blinking two steps high, two low; attract a chase: exactly one of the
    positions in attract is high at each step, moving to the next one each step."""
    attract = [i for i, state in enumerate(states) if state == "attract"]
    chase = attract[step % len(attract)] if attract else -1
    blink_on = (step // 2) % 2 == 0
    levels: list[bool] = []
    for i, state in enumerate(states):
        if state == "attract":
            levels.append(i == chase)
        elif state == "blinking":
            levels.append(blink_on)
        else:
            levels.append(state in ("lit", "locked"))
    return tuple(levels)


def _on_edge(post_if: Callable[[], None]) -> Callable[[], None]:
    # a plain closure with no parameters, so gpiozero calls it without arguments
    def handler() -> None:
        post_if()

    return handler


class GpioAcceptors:
    """Six acceptors: chip sensors (active-low, pulled up) and lights on an ``LEDBoard``."""

    def __init__(
        self,
        sensor_pins: Sequence[int],
        light_pins: Sequence[int],
        *,
        pin_factory: Any,
        post: Post,
        clock: Clock = time.monotonic,
        debounce: DebounceTimes | None = None,
    ) -> None:
        window = (debounce or DebounceTimes()).chip_s
        self._post = post
        self._sensors: list[Any] = []
        self._board: Any = None
        self._states: tuple[LightState, ...] = (OFF,) * len(light_pins)
        self._step = 0
        self._generation = 0
        self._closed = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        try:
            for index, pin in enumerate(sensor_pins):
                sensor = DigitalInputDevice(
                    pin, pull_up=True, bounce_time=CHIP_GLITCH_FILTER_S, pin_factory=pin_factory
                )
                self._sensors.append(sensor)
                gap = QuietGapFilter(window, clock)
                sensor.when_activated = _on_edge(self._chip_handler(gap, index + 1))
                sensor.when_deactivated = _on_edge(gap.deactivation)
            self._board = LEDBoard(*light_pins, initial_value=False, pin_factory=pin_factory)
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._animate, name="acceptor-lights", daemon=True)
        self._thread.start()

    def _chip_handler(self, gap: QuietGapFilter, position: int) -> Callable[[], None]:
        def on_chip() -> None:
            if gap.activation():
                self._post(Event("chip_detected", {"position": position}))

        return on_chip

    @property
    def lights(self) -> tuple[LightState, ...]:
        with self._cond:
            return self._states

    def set_lights(self, states: Sequence[LightState]) -> None:
        with self._cond:
            if self._closed:
                raise RuntimeError("acceptor lights are closed")
            self._states = tuple(states)
            self._step = 0
            self._generation += 1
            self._write(frame_levels(self._states, 0))
            self._cond.notify_all()

    def _write(self, levels: tuple[bool, ...]) -> None:
        # lights going dark first, then those lighting up: a chase step never shows two lit
        pairs = list(zip(self._board.leds, levels, strict=True))
        for led, level in pairs:
            if not level:
                led.value = False
        for led, level in pairs:
            if level:
                led.value = True

    def _animate(self) -> None:
        with self._cond:
            while not self._closed:
                if not any(s in ("attract", "blinking") for s in self._states):
                    self._cond.wait()
                    continue
                generation = self._generation
                self._cond.wait(ANIMATION_STEP_S)
                if self._closed or generation != self._generation:
                    continue  # closed, or set_lights already drew step 0 of new states
                self._step += 1
                self._write(frame_levels(self._states, self._step))

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        if self._board is not None:
            self._board.close()
        for sensor in self._sensors:
            sensor.close()


class GpioLockoutButton:
    """The lock-out button ("no more bets"), active-low with pull-up; posts ``lockout_pressed``
    once per press."""

    def __init__(
        self,
        pin: int,
        *,
        pin_factory: Any,
        post: Post,
        clock: Clock = time.monotonic,
        debounce: DebounceTimes | None = None,
    ) -> None:
        gap = QuietGapFilter((debounce or DebounceTimes()).button_s, clock)
        self._button = DigitalInputDevice(
            pin, pull_up=True, bounce_time=None, pin_factory=pin_factory
        )

        def on_press() -> None:
            if gap.activation():
                post(Event("lockout_pressed"))

        self._button.when_activated = on_press
        self._button.when_deactivated = _on_edge(gap.deactivation)

    @property
    def is_pressed(self) -> bool:
        return bool(self._button.is_active)

    def close(self) -> None:
        self._button.close()


class GpioDealerPanel:
    """NEXT and VOID (momentary, active-low) and the supervisor key switch (held: closed = on)."""

    def __init__(
        self,
        next_pin: int,
        void_pin: int,
        key_pin: int,
        *,
        pin_factory: Any,
        post: Post,
        clock: Clock = time.monotonic,
        debounce: DebounceTimes | None = None,
    ) -> None:
        window = (debounce or DebounceTimes()).button_s
        self._devices: list[Any] = []
        try:
            for pin, name in ((next_pin, "panel_next"), (void_pin, "panel_void")):
                button = DigitalInputDevice(
                    pin, pull_up=True, bounce_time=None, pin_factory=pin_factory
                )
                self._devices.append(button)
                gap = QuietGapFilter(window, clock)
                button.when_activated = self._momentary(gap, name, post)
                button.when_deactivated = _on_edge(gap.deactivation)
            self._key = DigitalInputDevice(
                key_pin, pull_up=True, bounce_time=HELD_SWITCH_FILTER_S, pin_factory=pin_factory
            )
            self._devices.append(self._key)
        except BaseException:
            self.close()
            raise
        # a held switch: every change of level is posted (gpiozero fires only on a change)
        self._key.when_activated = lambda: post(Event("supervisor_key", {"on": True}))
        self._key.when_deactivated = lambda: post(Event("supervisor_key", {"on": False}))

    @staticmethod
    def _momentary(gap: QuietGapFilter, name: str, post: Post) -> Callable[[], None]:
        def on_press() -> None:
            if gap.activation():
                post(Event(name))

        return on_press

    @property
    def supervisor_key_on(self) -> bool:
        return bool(self._key.is_active)

    def close(self) -> None:
        for device in self._devices:
            device.close()


class GpioDiceShaker:
    """The dice-shaker sensor (a vibration switch, active-low) counting shakes, and optionally
    the lid sensor (a reed switch closed while the lid is on: a broken wire reads "lifted")."""

    def __init__(
        self,
        shaker_pin: int,
        lid_pin: int | None,
        *,
        pin_factory: Any,
        post: Post,
        clock: Clock = time.monotonic,
        debounce: DebounceTimes | None = None,
    ) -> None:
        gap = QuietGapFilter((debounce or DebounceTimes()).shaker_s, clock)
        self._count = 0
        self._lock = threading.Lock()
        self._lid: Any = None
        self._sensor = DigitalInputDevice(
            shaker_pin, pull_up=True, bounce_time=None, pin_factory=pin_factory
        )

        def on_shake() -> None:
            if gap.activation():
                with self._lock:
                    self._count += 1
                    count = self._count
                post(Event("shake_detected", {"count": count}))

        self._sensor.when_activated = on_shake
        self._sensor.when_deactivated = _on_edge(gap.deactivation)
        if lid_pin is not None:
            try:
                self._lid = DigitalInputDevice(
                    lid_pin,
                    pull_up=True,
                    bounce_time=HELD_SWITCH_FILTER_S,
                    pin_factory=pin_factory,
                )
            except BaseException:
                self._sensor.close()
                raise
            self._lid.when_deactivated = lambda: post(Event("shaker_lid", {"lifted": True}))
            self._lid.when_activated = lambda: post(Event("shaker_lid", {"lifted": False}))

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    @property
    def lid_lifted(self) -> bool | None:
        return None if self._lid is None else not self._lid.is_active

    def reset(self) -> None:
        with self._lock:
            self._count = 0

    def close(self) -> None:
        self._sensor.close()
        if self._lid is not None:
            self._lid.close()


class GpioNumberDisplay:
    """The single 7-segment digit on ``LEDCharDisplay`` with the font of ``drivers.gpio.font``
    (common cathode: segments active-high; the decimal point, if wired, stays dark)."""

    def __init__(self, segment_pins: Sequence[int], dp_pin: int | None, *, pin_factory: Any):
        self._glyph: Glyph = "blank"
        self._display = LEDCharDisplay(
            *segment_pins,
            dp=dp_pin,
            font=dict(SEGMENTS),
            active_high=True,
            initial_value="blank",
            pin_factory=pin_factory,
        )

    @property
    def glyph(self) -> Glyph:
        return self._glyph

    def show(self, glyph: Glyph) -> None:
        if glyph not in GLYPHS:
            raise ValueError(f"display glyph {glyph!r}: expected one of {', '.join(GLYPHS)}")
        self._display.value = glyph
        self._glyph = glyph

    def close(self) -> None:
        self._display.close()
