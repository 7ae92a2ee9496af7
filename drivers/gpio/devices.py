"""The table's GPIO devices on gpiozero: acceptors, lock-out button, dealer panel, dice shaker,
number display.

Responsible for turning pin edges into posted events and output commands into pin levels. The
input handlers run on gpiozero's callback thread (lgpio's notification thread on the Pi) and do
nothing but filter contact bounce and post an ``Event``: they must never decide a game rule,
touch an output or block. Outputs are driven by the owner thread (through ``Table.apply``), except
the attract chase and the win blink, which a background thread of :class:`GpioAcceptors`
animates.

Wiring (docs/wiring.md): every input is a switch or open-collector sensor to ground with the
Pi's internal pull-up, so active-low; lights and segments are active-high by default (a driver
per output sourcing the lamp) or active-low (``output_polarity``), never driven from the pin.

Guarded handlers: lgpio calls every pin's callback on one thread with no guard, so one exception
would silently stop every later edge on every pin. Every handler here therefore catches
everything and posts a ``fault_raised`` (code ``GPIO_INPUT``, the device, the exception) instead;
the service watches the callback thread itself (``drivers.gpio.factory.callback_thread_alive``).
Inputs are attached to their pins only by :meth:`arm` (``arm=False`` at construction lets the
controller build the devices before the owner thread that receives the events exists).

Glitch filter (``DebounceTimes.glitch_s``, the ``glitch_filter_ms`` option): on the lock-out,
NEXT, VOID and the shaker an activation counts only once the line has stayed active that long
(``drivers.gpio.filters.StableFilter``, confirmed on a timer thread, never by sleeping in the
callback); a shorter pulse is dropped. It runs before the quiet-gap debounce below.

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

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpiozero import DigitalInputDevice, LEDBoard, LEDCharDisplay

from drivers.gpio.filters import QuietGapFilter, StableFilter, Timers
from drivers.gpio.font import SEGMENTS
from drivers.gpio.interfaces import GLYPHS, OFF, Clock, Glyph, LightState, Post
from fsm.round.events import (
    ChipDetected,
    EventRecord,
    FaultRaised,
    LockoutPressed,
    PanelNext,
    PanelVoid,
    ShakeDetected,
    ShakerLid,
    SupervisorKey,
)
from fsm.round.vocabulary import BLANK

log = logging.getLogger(__name__)

#: The fault code a failing input handler posts.
INPUT_FAULT = "GPIO_INPUT"

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
    #: stable-for-N glitch filter of the lock-out, NEXT, VOID and shaker, seconds (0: off).
    glitch_s: float = 0.0


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
        elif state == "blink":
            levels.append(blink_on)
        else:
            levels.append(state in ("lit", "locked"))
    return tuple(levels)


def guarded(device: str, post: Post, fn: Callable[[], None]) -> Callable[[], None]:
    """``fn`` as a pin handler that never raises into the callback thread: any exception is
    logged and posted as ``fault_raised {code: GPIO_INPUT, device, detail}`` (and a post that
    fails in turn is only logged). A plain closure with no parameters, so gpiozero calls it
    without arguments."""

    def handler() -> None:
        try:
            fn()
        except BaseException as exc:  # one raise here would stop every pin's callbacks
            log.exception("GPIO input handler of %s failed", device)
            detail = f"input handler failed: {type(exc).__name__}: {exc}"[:200]
            try:
                post(FaultRaised(code=INPUT_FAULT, device=device, detail=detail).envelope())
            except BaseException:
                log.exception("posting the fault of %s failed", device)

    return handler


class _FilteredInput:
    """One momentary input: the glitch filter, then the quiet-gap debounce, then ``on_press``;
    handlers guarded, attached to the pin by :meth:`arm`."""

    def __init__(
        self,
        device: Any,
        name: str,
        post: Post,
        on_press: Callable[[], None],
        *,
        gap_s: float,
        glitch_s: float,
        clock: Clock,
        timers: Timers | None,
    ) -> None:
        self.device = device
        self._gap = QuietGapFilter(gap_s, clock)
        self._on_press = on_press
        self.stable = StableFilter(
            glitch_s,
            clock,
            timers,
            lambda: bool(device.is_active),
            guarded(name, post, self._gap_in),
        )
        self._activated = guarded(name, post, self.stable.activation)
        self._deactivated = guarded(name, post, self._released)

    def _gap_in(self) -> None:
        if self._gap.activation():
            self._on_press()

    def _released(self) -> None:
        if self.stable.deactivation():
            self._gap.deactivation()

    def arm(self) -> None:
        self.device.when_activated = self._activated
        self.device.when_deactivated = self._deactivated


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
        active_high: bool = True,
        arm: bool = True,
    ) -> None:
        window = (debounce or DebounceTimes()).chip_s
        self._post = post
        self._sensors: list[Any] = []
        self._handlers: list[tuple[Any, Callable[[], None], Callable[[], None]]] = []
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
                name = f"acceptor{index + 1}"
                self._handlers.append(
                    (
                        sensor,
                        guarded(name, post, self._chip_handler(gap, index + 1)),
                        guarded(name, post, gap.deactivation),
                    )
                )
            self._board = LEDBoard(
                *light_pins, active_high=active_high, initial_value=False, pin_factory=pin_factory
            )
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._animate, name="acceptor-lights", daemon=True)
        self._thread.start()
        if arm:
            self.arm()

    def arm(self) -> None:
        """Attach the chip handlers to the sensor pins (edges before this are not seen)."""
        for sensor, on_chip, on_release in self._handlers:
            sensor.when_activated = on_chip
            sensor.when_deactivated = on_release

    def _chip_handler(self, gap: QuietGapFilter, position: int) -> Callable[[], None]:
        def on_chip() -> None:
            if gap.activation():
                self._post(ChipDetected(position=position).envelope())

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
                if not any(s in ("attract", "blink") for s in self._states):
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
        timers: Timers | None = None,
        arm: bool = True,
    ) -> None:
        times = debounce or DebounceTimes()
        self._button = DigitalInputDevice(
            pin, pull_up=True, bounce_time=None, pin_factory=pin_factory
        )
        self._input = _FilteredInput(
            self._button,
            "lockout",
            post,
            lambda: post(LockoutPressed().envelope()),
            gap_s=times.button_s,
            glitch_s=times.glitch_s,
            clock=clock,
            timers=timers,
        )
        if arm:
            self.arm()

    def arm(self) -> None:
        self._input.arm()

    @property
    def glitches(self) -> int:
        """Activations dropped by the glitch filter."""
        return self._input.stable.dropped

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
        timers: Timers | None = None,
        arm: bool = True,
    ) -> None:
        times = debounce or DebounceTimes()
        self._devices: list[Any] = []
        self._inputs: list[_FilteredInput] = []
        try:
            buttons = ((next_pin, "panel_next", PanelNext()), (void_pin, "panel_void", PanelVoid()))
            for pin, name, pressed in buttons:
                button = DigitalInputDevice(
                    pin, pull_up=True, bounce_time=None, pin_factory=pin_factory
                )
                self._devices.append(button)
                self._inputs.append(
                    _FilteredInput(
                        button,
                        name,
                        post,
                        self._momentary(pressed, post),
                        gap_s=times.button_s,
                        glitch_s=times.glitch_s,
                        clock=clock,
                        timers=timers,
                    )
                )
            self._key = DigitalInputDevice(
                key_pin, pull_up=True, bounce_time=HELD_SWITCH_FILTER_S, pin_factory=pin_factory
            )
            self._devices.append(self._key)
        except BaseException:
            self.close()
            raise
        # a held switch: every change of level is posted (gpiozero fires only on a change)
        self._key_on = guarded(
            "supervisor_key", post, lambda: post(SupervisorKey(on=True).envelope())
        )
        self._key_off = guarded(
            "supervisor_key", post, lambda: post(SupervisorKey(on=False).envelope())
        )
        if arm:
            self.arm()

    def arm(self) -> None:
        for item in self._inputs:
            item.arm()
        self._key.when_activated = self._key_on
        self._key.when_deactivated = self._key_off

    @staticmethod
    def _momentary(pressed: EventRecord, post: Post) -> Callable[[], None]:
        def on_press() -> None:
            post(pressed.envelope())

        return on_press

    @property
    def supervisor_key_on(self) -> bool:
        return bool(self._key.is_active)

    def close(self) -> None:
        for device in self._devices:
            device.close()


class GpioDiceShaker:
    """The dice-shaker sensor (a vibration switch, active-low) posting each shake, and optionally
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
        timers: Timers | None = None,
        arm: bool = True,
    ) -> None:
        times = debounce or DebounceTimes()
        self._lid: Any = None
        self._sensor = DigitalInputDevice(
            shaker_pin, pull_up=True, bounce_time=None, pin_factory=pin_factory
        )

        def on_shake() -> None:  # the round machine counts the shakes (one count, journaled)
            post(ShakeDetected().envelope())

        self._input = _FilteredInput(
            self._sensor,
            "shaker",
            post,
            on_shake,
            gap_s=times.shaker_s,
            glitch_s=times.glitch_s,
            clock=clock,
            timers=timers,
        )
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
        self._lid_lifted = guarded(
            "shaker_lid", post, lambda: post(ShakerLid(lifted=True).envelope())
        )
        self._lid_on = guarded("shaker_lid", post, lambda: post(ShakerLid(lifted=False).envelope()))
        if arm:
            self.arm()

    def arm(self) -> None:
        self._input.arm()
        if self._lid is not None:
            self._lid.when_deactivated = self._lid_lifted
            self._lid.when_activated = self._lid_on

    @property
    def lid_lifted(self) -> bool | None:
        return None if self._lid is None else not self._lid.is_active

    def close(self) -> None:
        self._sensor.close()
        if self._lid is not None:
            self._lid.close()


class GpioNumberDisplay:
    """The single 7-segment digit on ``LEDCharDisplay`` with the font of ``drivers.gpio.font``
    (segments active-high by default, i.e. a common-cathode digit behind source drivers; the
    decimal point, if wired, stays dark)."""

    def __init__(
        self,
        segment_pins: Sequence[int],
        dp_pin: int | None,
        *,
        pin_factory: Any,
        active_high: bool = True,
    ):
        self._glyph: Glyph = BLANK
        self._display = LEDCharDisplay(
            *segment_pins,
            dp=dp_pin,
            font=dict(SEGMENTS),
            active_high=active_high,
            initial_value=BLANK,
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
