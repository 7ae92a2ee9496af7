"""The table's GPIO devices as one unit: applies output effects, goes to the safe state, closes.

Responsible for checking each GPIO effect (``lights``, ``display``, ``shaker_reset``) and handing
it to the device, and for building the whole set either on gpiozero (``build_gpio_table``) or as
fakes (``build_fake_table``). The owner thread calls :meth:`Table.apply` only after the journal
commit. Must never post events itself, decide a game rule, or import from ``controller``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from drivers.gpio.config import ACCEPTOR_COUNT, PinConfig
from drivers.gpio.devices import (
    DebounceTimes,
    GpioAcceptors,
    GpioDealerPanel,
    GpioDiceShaker,
    GpioLockoutButton,
    GpioNumberDisplay,
)
from drivers.gpio.fakes import (
    FakeAcceptors,
    FakeDealerPanel,
    FakeDiceShaker,
    FakeLockoutButton,
    FakeNumberDisplay,
)
from drivers.gpio.interfaces import (
    GLYPHS,
    LIGHT_STATES,
    OFF,
    Acceptors,
    Clock,
    DealerPanel,
    DiceShaker,
    Glyph,
    LightState,
    LockoutButton,
    NumberDisplay,
    Post,
)
from fsm.round.events import Event

SAFE_LIGHTS: tuple[LightState, ...] = (OFF,) * ACCEPTOR_COUNT
SAFE_GLYPH: Glyph = "blank"


class Table:
    """The five GPIO devices of one table, behind their Protocols."""

    def __init__(
        self,
        acceptors: Acceptors,
        lockout: LockoutButton,
        panel: DealerPanel,
        shaker: DiceShaker,
        display: NumberDisplay,
    ) -> None:
        self.acceptors = acceptors
        self.lockout = lockout
        self.panel = panel
        self.shaker = shaker
        self.display = display
        self._closed = False

    def apply(self, effect: Mapping[str, Any]) -> bool:
        """Apply one effect; True if it was a GPIO effect, False if it is not ours.

        ``{"type": "lights", "states": [6 x "off"|"attract"|"lit"|"locked"|"blinking"]}``,
        ``{"type": "display", "glyph": "1".."7"|"idle"|"locked"|"fault"|"jackpot"|"blank"}``,
        ``{"type": "shaker_reset"}`` (the shake count starts again at 0). Other keys are ignored.
        A malformed GPIO effect raises ValueError naming the key, and changes nothing.
        """
        if not isinstance(effect, Mapping):
            raise ValueError(f"effect: expected a mapping, got {type(effect).__name__}")
        kind = effect.get("type")
        if kind == "lights":
            self.acceptors.set_lights(_light_states(effect))
        elif kind == "display":
            self.display.show(_glyph(effect))
        elif kind == "shaker_reset":
            self.shaker.reset()
        elif isinstance(kind, str):
            return False
        else:
            raise ValueError(f"effect.type: expected a string, got {kind!r}")
        return True

    def safe_state(self, glyph: Glyph = SAFE_GLYPH) -> None:
        """All acceptor lights off (animation stopped), display blank, or ``glyph`` (e.g.
        "fault" when the journal cannot be written and play is refused)."""
        if glyph not in GLYPHS:
            glyph = "fault"  # never leave the safe state half done over a bad argument
        self.acceptors.set_lights(SAFE_LIGHTS)
        self.display.show(glyph)

    def held_switch_events(self) -> list[Event]:
        """The current position of the held switches as the events their changes post, for the
        controller to post once at start-up (a key already turned on posts no edge)."""
        events = [Event("supervisor_key", {"on": self.panel.supervisor_key_on})]
        lid = self.shaker.lid_lifted
        if lid is not None:
            events.append(Event("shaker_lid", {"lifted": lid}))
        return events

    def status(self) -> dict[str, Any]:
        """A fresh JSON-able picture of the devices, for the status page."""
        return {
            "lights": list(self.acceptors.lights),
            "glyph": self.display.glyph,
            "shake_count": self.shaker.count,
            "lid_lifted": self.shaker.lid_lifted,
            "supervisor_key_on": self.panel.supervisor_key_on,
        }

    def close(self) -> None:
        """Close every device (idempotent). Call :meth:`safe_state` first."""
        if self._closed:
            return
        self._closed = True
        errors: list[BaseException] = []
        for device in (self.acceptors, self.lockout, self.panel, self.shaker, self.display):
            try:
                device.close()
            except Exception as exc:  # close the others all the same
                errors.append(exc)
        if errors:
            raise errors[0]


def _light_states(effect: Mapping[str, Any]) -> tuple[LightState, ...]:
    states = effect.get("states")
    if isinstance(states, str) or not isinstance(states, list | tuple):
        raise ValueError(f"effect.states: expected a list of {ACCEPTOR_COUNT} light states")
    if len(states) != ACCEPTOR_COUNT:
        raise ValueError(
            f"effect.states: expected {ACCEPTOR_COUNT} light states, got {len(states)}"
        )
    for i, state in enumerate(states):
        if state not in LIGHT_STATES:
            raise ValueError(
                f"effect.states[{i}]: unknown light state {state!r} "
                f"(allowed: {', '.join(LIGHT_STATES)})"
            )
    return tuple(cast(LightState, s) for s in states)


def _glyph(effect: Mapping[str, Any]) -> Glyph:
    glyph = effect.get("glyph")
    if glyph not in GLYPHS:
        raise ValueError(
            f"effect.glyph: unknown glyph {glyph!r} (allowed: {', '.join(GLYPHS)}; "
            "digits are strings)"
        )
    return cast(Glyph, glyph)


def build_gpio_table(
    pins: PinConfig,
    pin_factory: Any,
    post: Post,
    *,
    clock: Clock = time.monotonic,
    debounce: DebounceTimes | None = None,
) -> Table:
    """Build every device on gpiozero with the given factory (see ``make_pin_factory``).
    The wiring is checked first (ValueError naming the key)."""
    pins.validate()
    opened: list[Any] = []
    common: dict[str, Any] = {"pin_factory": pin_factory, "post": post, "clock": clock}
    common["debounce"] = debounce
    try:
        acceptors = GpioAcceptors(pins.acceptor_sensors, pins.acceptor_lights, **common)
        opened.append(acceptors)
        lockout = GpioLockoutButton(pins.lockout_button, **common)
        opened.append(lockout)
        panel = GpioDealerPanel(pins.panel_next, pins.panel_void, pins.supervisor_key, **common)
        opened.append(panel)
        shaker = GpioDiceShaker(pins.shaker, pins.shaker_lid, **common)
        opened.append(shaker)
        display = GpioNumberDisplay(pins.display_segments, pins.display_dp, pin_factory=pin_factory)
    except BaseException:
        for device in reversed(opened):
            device.close()
        raise
    return Table(acceptors, lockout, panel, shaker, display)


@dataclass(frozen=True)
class FakeTable:
    """The fakes together with the Table over them (tests drive the fakes, read the Table)."""

    table: Table
    acceptors: FakeAcceptors
    lockout: FakeLockoutButton
    panel: FakeDealerPanel
    shaker: FakeDiceShaker
    display: FakeNumberDisplay


def build_fake_table(post: Post, *, lid_fitted: bool = False) -> FakeTable:
    acceptors = FakeAcceptors(post)
    lockout = FakeLockoutButton(post)
    panel = FakeDealerPanel(post)
    shaker = FakeDiceShaker(post, lid_fitted=lid_fitted)
    display = FakeNumberDisplay()
    table = Table(acceptors, lockout, panel, shaker, display)
    return FakeTable(table, acceptors, lockout, panel, shaker, display)
