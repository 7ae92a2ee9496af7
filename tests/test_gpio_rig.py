"""Test rigs for the GPIO devices: the gpiozero table on MockFactory (driven at pin level) and the
fake table, behind one stimulus/observation interface so one test can run against both.

Holds no tests itself; the test_gpio_* files import it. Must never reach into the devices'
internals: the gpiozero rig only drives input pins and reads output pins.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Protocol

from gpiozero.pins.mock import MockFactory

from drivers.gpio.gpio_table import Table, build_gpio_table
from drivers.gpio.pins import PinConfig
from fsm.round.events import Event

# Segment pins a..g of the default wiring, read from docs/wiring.md, not from the code.
# The rig's wiring: the LEDCharDisplay alternative with no meter sign (no SPI), which may use
# every header pin but the SAS UART; the default plan (MAX7219 digit and sign on SPI0) is
# tested in test_gpio_pinplan.py and test_meter_sign.py.
DEFAULT_SEGMENT_PINS = {"a": 13, "b": 22, "c": 23, "d": 24, "e": 25, "f": 26, "g": 27}
DEFAULT_LIGHT_PINS = (16, 17, 18, 19, 20, 21)
DEFAULT_SENSOR_PINS = (5, 6, 7, 8, 9, 10)
LOCKOUT_PIN, NEXT_PIN, VOID_PIN, KEY_PIN, SHAKER_PIN = 2, 3, 4, 11, 12
SEGMENT_WIRING = PinConfig(
    acceptor_sensors=DEFAULT_SENSOR_PINS,
    acceptor_lights=DEFAULT_LIGHT_PINS,
    lockout_button=LOCKOUT_PIN,
    panel_next=NEXT_PIN,
    panel_void=VOID_PIN,
    supervisor_key=KEY_PIN,
    shaker=SHAKER_PIN,
    display_segments=tuple(DEFAULT_SEGMENT_PINS.values()),
    number_display="segments",
    sign_modules=0,
)


class FakeClock:
    """Monotonic seconds that move only when a test says so (debounce without sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Rig(Protocol):
    name: str
    table: Table
    events: list[Event]

    def drop_chip(self, position: int) -> None: ...
    def press_lockout(self) -> None: ...
    def press_next(self) -> None: ...
    def press_void(self) -> None: ...
    def turn_key(self, on: bool) -> None: ...
    def shake(self) -> None: ...
    def close(self) -> None: ...


class GpioRig:
    """The gpiozero table on a fresh MockFactory; a press is a clean low pulse on the pin."""

    name = "gpiozero"

    def __init__(self, pins: PinConfig | None = None) -> None:
        self.events: list[Event] = []
        self.clock = FakeClock()
        self.factory = MockFactory()
        self.pins = pins or SEGMENT_WIRING
        self.table = build_gpio_table(self.pins, self.factory, self.events.append, clock=self.clock)

    def pin(self, number: int) -> object:
        return self.factory.pin(number)

    def pulse(self, number: int, hold: float = 0.2) -> None:
        """A clean press: quiet for a while, low for ``hold`` seconds, released."""
        pin = self.factory.pin(number)
        self.clock.advance(1.0)
        pin.drive_low()
        self.clock.advance(hold)
        pin.drive_high()

    def level(self, number: int) -> bool:
        return bool(self.factory.pin(number).state)

    def drop_chip(self, position: int) -> None:
        self.pulse(self.pins.acceptor_sensors[position - 1], hold=0.05)

    def press_lockout(self) -> None:
        self.pulse(self.pins.lockout_button)

    def press_next(self) -> None:
        self.pulse(self.pins.panel_next)

    def press_void(self) -> None:
        self.pulse(self.pins.panel_void)

    def turn_key(self, on: bool) -> None:
        pin = self.factory.pin(self.pins.supervisor_key)
        self.clock.advance(1.0)
        if on:
            pin.drive_low()
        else:
            pin.drive_high()

    def shake(self) -> None:
        self.pulse(self.pins.shaker, hold=0.05)

    def close(self) -> None:
        self.table.close()
        self.factory.reset()


RIGS: dict[str, Callable[[], Rig]] = {"gpiozero": GpioRig}


def observed_levels(
    read: Callable[[], tuple[bool, ...]], limit_s: float = 5.0
) -> Iterator[tuple[bool, ...]]:
    """Yield distinct successive readings of ``read()`` until the caller stops or ``limit_s``
    passes (a guard against hanging, not a timing assertion)."""
    deadline = time.monotonic() + limit_s
    last: tuple[bool, ...] | None = None
    while time.monotonic() < deadline:
        now = read()
        if now != last:
            last = now
            yield now
        time.sleep(0.002)
