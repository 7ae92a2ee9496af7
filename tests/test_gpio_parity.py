"""The gpiozero devices on gpiozero's MockFactory (the one GPIO fake: the tests and the simulated
table drive its pins) keep the table's Protocols (checked by mypy on this file and at run time)
and post the round's events and show its states for each table action."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory
from test_gpio_rig import RIGS, SEGMENT_WIRING, Rig

from drivers.gpio import interfaces as api
from drivers.gpio.devices import (
    GpioAcceptors,
    GpioDealerPanel,
    GpioDiceShaker,
    GpioLockoutButton,
    GpioNumberDisplay,
)
from fsm.round.effects import Dispense, Display, Lights
from fsm.round.events import Event


def _gpio_devices(factory: MockFactory) -> list[object]:
    pins = SEGMENT_WIRING
    sink: list[Event] = []
    post = sink.append
    # typed assignments: mypy fails this file if a class stops satisfying its Protocol
    acceptors: api.Acceptors = GpioAcceptors(
        pins.acceptor_sensors, pins.acceptor_lights, pin_factory=factory, post=post
    )
    lockout: api.LockoutButton = GpioLockoutButton(2, pin_factory=factory, post=post)
    panel: api.DealerPanel = GpioDealerPanel(3, 4, 11, pin_factory=factory, post=post)
    shaker: api.DiceShaker = GpioDiceShaker(12, None, pin_factory=factory, post=post)
    assert pins.display_segments is not None
    display: api.NumberDisplay = GpioNumberDisplay(pins.display_segments, None, pin_factory=factory)
    return [acceptors, lockout, panel, shaker, display]


PROTOCOLS = [api.Acceptors, api.LockoutButton, api.DealerPanel, api.DiceShaker, api.NumberDisplay]


def test_the_gpio_devices_satisfy_the_tables_protocols_at_run_time() -> None:
    factory = MockFactory()
    gpio = _gpio_devices(factory)
    try:
        for protocol, real in zip(PROTOCOLS, gpio, strict=True):
            assert isinstance(real, protocol), (protocol, real)
    finally:
        for device in gpio:
            device.close()  # type: ignore[attr-defined]
        factory.reset()


@pytest.fixture(params=list(RIGS))
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    r = RIGS[request.param]()
    yield r
    r.close()


def test_a_betting_round_posts_the_same_events_on_both_d4_k2_h8i(rig: Rig) -> None:
    """Chips (NY 5324.41(d)(4)), the lock-out (k)(2), three shakes (h)(8)(i), the panel and the
    supervisor key, as the owner thread would receive them."""
    rig.drop_chip(2)
    rig.drop_chip(5)
    rig.press_lockout()
    for _ in range(3):
        rig.shake()
    rig.press_next()
    rig.turn_key(True)
    rig.press_void()
    rig.turn_key(False)
    assert rig.events == [
        Event("chip_detected", {"position": 2}),
        Event("chip_detected", {"position": 5}),
        Event("lockout_pressed"),
        Event("shake_detected"),
        Event("shake_detected"),
        Event("shake_detected"),
        Event("panel_next"),
        Event("supervisor_key", {"on": True}),
        Event("panel_void"),
        Event("supervisor_key", {"on": False}),
    ]


def test_effects_leave_the_same_state_on_both(rig: Rig) -> None:
    states = ["lit", "off", "locked", "blink", "attract", "off"]
    assert rig.table.apply(Lights(tuple(states))) is True
    assert rig.table.apply(Display("4")) is True
    assert rig.table.apply(Dispense(7, 7)) is False
    assert rig.table.status() == {
        "lights": states,
        "glyph": "4",
        "lid_lifted": None,
        "supervisor_key_on": False,
        "door_open": None,  # no compartment door switch wired (pins.door)
    }
    rig.table.safe_state()
    assert rig.table.acceptors.lights == ("off",) * 6
    assert rig.table.display.glyph == " "


def test_a_key_already_on_at_start_up_is_reported_by_the_held_switch_events(rig: Rig) -> None:
    assert rig.table.held_switch_events() == [Event("supervisor_key", {"on": False})]
    rig.turn_key(True)
    rig.events.clear()
    assert rig.table.held_switch_events() == [Event("supervisor_key", {"on": True})]
    assert rig.events == [], "asking for the position posts nothing"


def test_safe_state_can_show_the_fault_glyph_with_every_light_off(rig: Rig) -> None:
    rig.table.apply(Lights(tuple(["attract"] * 6)))
    rig.table.safe_state("F")
    assert rig.table.acceptors.lights == ("off",) * 6
    assert rig.table.display.glyph == "F"
    rig.table.safe_state("F")  # type: ignore[arg-type]  # not a glyph: still safe, shows fault
    assert rig.table.display.glyph == "F"
