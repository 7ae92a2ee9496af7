"""The table's GPIO devices as one unit: applies output effects, goes to the safe state, closes.

Responsible for handing each GPIO effect (the typed ``lights`` and ``display`` records of
fsm/round/effects.py) to its device, and for building the whole set on gpiozero
(``build_gpio_table``: the MAX7219 chain on SPI0 for the 1-7 digit and the meter sign when
configured, the glitch filter's timer thread); the tests and the simulated table build it on
gpiozero's MockFactory. The inputs are attached to their pins by :meth:`Table.arm`, which the
controller calls once the owner thread runs. The owner thread calls :meth:`Table.apply` only after
the journal commit. Must never post events itself, decide a game rule, or import from
``controller``.
"""

from __future__ import annotations

import time
from typing import Any

from drivers.gpio.devices import (
    DebounceTimes,
    GpioAcceptors,
    GpioDealerPanel,
    GpioDiceShaker,
    GpioLockoutButton,
    GpioNumberDisplay,
)
from drivers.gpio.door import GpioDoor
from drivers.gpio.filters import Timers, TimerThread
from drivers.gpio.interfaces import (
    GLYPHS,
    OFF,
    Acceptors,
    Clock,
    DealerPanel,
    DiceShaker,
    Glyph,
    LightState,
    LockoutButton,
    MeterSign,
    NumberDisplay,
    Post,
)
from drivers.gpio.max7219 import (
    Max7219Chain,
    Max7219MeterSign,
    Max7219NumberDisplay,
    SpiBus,
    open_spi,
)
from drivers.gpio.pins import ACCEPTOR_COUNT, PinConfig
from fsm.round.effects import Display, Effect, Lights
from fsm.round.events import Door, Event, ShakerLid, SupervisorKey
from fsm.round.vocabulary import BLANK, FAULT

SAFE_LIGHTS: tuple[LightState, ...] = (OFF,) * ACCEPTOR_COUNT
SAFE_GLYPH: Glyph = BLANK


class Table:
    """The GPIO devices of one table, behind their Protocols (``sign``: the progressive meter
    sign, None when not fitted; ``extras``: what is closed after the devices, e.g. the SPI
    chain and the filter timers)."""

    def __init__(
        self,
        acceptors: Acceptors,
        lockout: LockoutButton,
        panel: DealerPanel,
        shaker: DiceShaker,
        display: NumberDisplay,
        sign: MeterSign | None = None,
        extras: tuple[Any, ...] = (),
        door: Any = None,
    ) -> None:
        self.acceptors = acceptors
        self.door = door  # the compartment door switch (drivers/gpio/door.py), None: not fitted
        self.lockout = lockout
        self.panel = panel
        self.shaker = shaker
        self.display = display
        self.sign = sign
        self._extras = extras
        self._closed = False

    def arm(self) -> None:
        """Attach every input's handlers to its pin: call once the owner thread that receives
        the events runs (an edge before this is not seen; `held_switch_events` then gives the
        held switches' positions)."""
        for device in (self.acceptors, self.lockout, self.panel, self.shaker):
            device.arm()
        if self.door is not None:
            self.door.arm()

    def apply(self, effect: Effect) -> bool:
        """Apply one effect; True if it was a GPIO effect (``lights``: the six acceptor lights,
        ``display``: the digit or status glyph, in the round's vocabulary,
        fsm/round/vocabulary.py), False if it is not ours. The records were checked when the
        machine made them: they are applied as they are."""
        if isinstance(effect, Lights):
            self.acceptors.set_lights(effect.states)
        elif isinstance(effect, Display):
            self.display.show(effect.glyph)
        else:
            return False
        return True

    def safe_state(self, glyph: Glyph = SAFE_GLYPH) -> None:
        """All acceptor lights off (animation stopped), display blank, or ``glyph`` (e.g.
        "F" when the journal cannot be written and play is refused)."""
        if glyph not in GLYPHS:
            glyph = FAULT  # never leave the safe state half done over a bad argument
        self.acceptors.set_lights(SAFE_LIGHTS)
        self.display.show(glyph)

    def held_switch_events(self) -> list[Event]:
        """The current position of the held switches as the events their changes post, for the
        controller to post once at start-up (a key already turned on posts no edge)."""
        events = [SupervisorKey(on=self.panel.supervisor_key_on).envelope()]
        lid = self.shaker.lid_lifted
        if lid is not None:
            events.append(ShakerLid(lifted=lid).envelope())
        if self.door is not None:  # a door opened while the controller was off is journaled
            events.append(Door(open=self.door.open).envelope())
        return events

    def status(self) -> dict[str, Any]:
        """A fresh JSON-able picture of the devices, for the status page."""
        return {
            "lights": list(self.acceptors.lights),
            "glyph": self.display.glyph,
            "lid_lifted": self.shaker.lid_lifted,
            "supervisor_key_on": self.panel.supervisor_key_on,
            "door_open": None if self.door is None else self.door.open,
        }

    def close(self) -> None:
        """Close every device (idempotent). Call :meth:`safe_state` first."""
        if self._closed:
            return
        self._closed = True
        errors: list[BaseException] = []
        devices: list[Any] = [self.acceptors, self.lockout, self.panel, self.shaker, self.display]
        if self.door is not None:
            devices.append(self.door)
        if self.sign is not None:
            devices.append(self.sign)
        for device in [*devices, *self._extras]:
            try:
                device.close()
            except Exception as exc:  # close the others all the same
                errors.append(exc)
        if errors:
            raise errors[0]


def build_gpio_table(
    pins: PinConfig,
    pin_factory: Any,
    post: Post,
    *,
    clock: Clock = time.monotonic,
    debounce: DebounceTimes | None = None,
    timers: Timers | None = None,
    arm: bool = True,
    spi: SpiBus | None = None,
) -> Table:
    """Build every device on gpiozero with the given factory (see ``make_pin_factory``).
    The wiring is checked first (ValueError naming the key). With ``arm=False`` the inputs are
    claimed but see no edge until :meth:`Table.arm`. A glitch filter (``debounce.glitch_s``)
    runs on ``timers`` (default: a :class:`TimerThread` on ``clock``, closed with the table).
    ``spi`` replaces SPI0 of the factory for the MAX7219 chain (the simulated table passes a
    ``SimulatedChain``)."""
    pins.validate()
    opened: list[Any] = []
    times = debounce or DebounceTimes()
    if timers is None and times.glitch_s > 0:
        timers = TimerThread(clock)
        opened.append(timers)
    extras: list[Any] = list(opened)
    common: dict[str, Any] = {
        "pin_factory": pin_factory,
        "post": post,
        "clock": clock,
        "debounce": times,
        "arm": False,
    }
    filtered = {**common, "timers": timers}
    try:
        acceptors = GpioAcceptors(
            pins.acceptor_sensors, pins.acceptor_lights, active_high=pins.active_high, **common
        )
        opened.append(acceptors)
        lockout = GpioLockoutButton(pins.lockout_button, **filtered)
        opened.append(lockout)
        panel = GpioDealerPanel(pins.panel_next, pins.panel_void, pins.supervisor_key, **filtered)
        opened.append(panel)
        shaker = GpioDiceShaker(pins.shaker, pins.shaker_lid, **filtered)
        opened.append(shaker)
        door = None
        if pins.door is not None:
            door = GpioDoor(pins.door, pin_factory=pin_factory, post=post, arm=False)
            opened.append(door)
        display: NumberDisplay
        sign: MeterSign | None = None
        if pins.uses_spi:
            chain = Max7219Chain(
                spi or open_spi(pin_factory), pins.spi_chips, intensity=pins.sign_intensity
            )
            opened.append(chain)
            extras.insert(0, chain)
            first = 0
            if pins.number_display == "max7219":
                display = Max7219NumberDisplay(chain, chip=0)
                first = 1
            if pins.sign_modules:
                sign = Max7219MeterSign(chain, pins.sign_modules, first_chip=first)
            chain.configure()
            chain.blank()
        if pins.number_display == "segments":
            assert pins.display_segments is not None  # validate() checked it
            display = GpioNumberDisplay(
                pins.display_segments,
                pins.display_dp,
                pin_factory=pin_factory,
                active_high=pins.active_high,
            )
    except BaseException:
        for device in reversed(opened):
            device.close()
        raise
    table = Table(acceptors, lockout, panel, shaker, display, sign, tuple(extras), door)
    if arm:
        table.arm()
    return table
