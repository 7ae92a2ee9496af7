"""The fake devices and the gpiozero devices are interchangeable: the same Protocols (checked by
mypy on this file and at run time) and the same events and states for the same table actions,
so core tests on the fakes speak for the hardware."""

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
from drivers.gpio.fakes import (
    FakeAcceptors,
    FakeDealerPanel,
    FakeDiceShaker,
    FakeLockoutButton,
    FakeNumberDisplay,
)
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


def _fake_devices() -> list[object]:
    sink: list[Event] = []
    post = sink.append
    acceptors: api.Acceptors = FakeAcceptors(post)
    lockout: api.LockoutButton = FakeLockoutButton(post)
    panel: api.DealerPanel = FakeDealerPanel(post)
    shaker: api.DiceShaker = FakeDiceShaker(post)
    display: api.NumberDisplay = FakeNumberDisplay()
    return [acceptors, lockout, panel, shaker, display]


PROTOCOLS = [api.Acceptors, api.LockoutButton, api.DealerPanel, api.DiceShaker, api.NumberDisplay]


def test_both_implementations_satisfy_the_same_protocols_at_run_time() -> None:
    factory = MockFactory()
    gpio = _gpio_devices(factory)
    try:
        for protocol, real, fake in zip(PROTOCOLS, gpio, _fake_devices(), strict=True):
            assert isinstance(real, protocol), (protocol, real)
            assert isinstance(fake, protocol), (protocol, fake)
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
        Event("shake_detected", {"count": 1}),
        Event("shake_detected", {"count": 2}),
        Event("shake_detected", {"count": 3}),
        Event("panel_next"),
        Event("supervisor_key", {"on": True}),
        Event("panel_void"),
        Event("supervisor_key", {"on": False}),
    ]
    assert rig.table.shaker.count == 3


def test_effects_leave_the_same_state_on_both(rig: Rig) -> None:
    states = ["lit", "off", "locked", "blink", "attract", "off"]
    assert rig.table.apply({"type": "lights", "states": states}) is True
    assert rig.table.apply({"type": "display", "glyph": "4"}) is True
    assert rig.table.apply({"type": "dispense", "stacks": 7, "cards": 7}) is False
    assert rig.table.status() == {
        "lights": states,
        "glyph": "4",
        "shake_count": 0,
        "lid_lifted": None,
        "supervisor_key_on": False,
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
    rig.table.apply({"type": "lights", "states": ["attract"] * 6})
    rig.table.safe_state("F")
    assert rig.table.acceptors.lights == ("off",) * 6
    assert rig.table.display.glyph == "F"
    rig.table.safe_state("F")  # type: ignore[arg-type]  # not a glyph: still safe, shows fault
    assert rig.table.display.glyph == "F"


@pytest.mark.parametrize(
    ("effect", "message"),
    [
        ({"type": "lights"}, "effect.states: expected a list of 6 light states"),
        (
            {"type": "lights", "states": ["lit"] * 5},
            "effect.states: expected 6 light states, got 5",
        ),
        (
            {"type": "lights", "states": ["lit", "on", "off", "off", "off", "off"]},
            "effect.states[1]: unknown light state 'on' (allowed: off, attract, lit, locked,",
        ),
        ({"type": "display"}, "effect.glyph: unknown glyph None"),
        ({"type": 7}, "effect.type: expected a string, got 7"),
        ({}, "effect.type: expected a string, got None"),
    ],
)
def test_a_malformed_effect_is_refused_by_name_and_changes_nothing(
    rig: Rig, effect: dict[str, object], message: str
) -> None:
    rig.table.apply({"type": "lights", "states": ["lit"] * 6})
    with pytest.raises(ValueError) as err:
        rig.table.apply(effect)
    assert str(err.value).startswith(message)
    assert rig.table.acceptors.lights == ("lit",) * 6


def test_a_chip_in_a_position_that_does_not_exist_is_refused_by_the_fake() -> None:
    rig = RIGS["fake"]()
    with pytest.raises(ValueError, match=r"^acceptor position 7: expected 1\.\.6"):
        rig.drop_chip(7)
    assert rig.events == []
