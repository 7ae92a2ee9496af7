"""The device adapter between the round's effects and the table's drivers
(controller/service/devices.py):
every light state and glyph the round machine can emit is shown by the real GPIO drivers on
gpiozero's MockFactory (a vocabulary mismatch would be a fault at the table), the serial adapters'
answers become the round's events, and a noisy serial line becomes a journaled fault."""

from __future__ import annotations

from typing import Any

import pytest
from test_gpio_rig import SEGMENT_WIRING

from controller.service.devices import TableDevices
from drivers.gpio.devices import DebounceTimes
from drivers.gpio.factory import make_pin_factory
from drivers.gpio.font import SEGMENTS
from drivers.gpio.gpio_table import build_gpio_table
from drivers.serial.shoe import dealt
from fsm.round import machine
from fsm.round.effects import Acceptors, Dispense, Display, Lights, Shuffle
from fsm.round.events import Event, ShuffleComplete
from fsm.round.phases import table as table_phase

PINS = SEGMENT_WIRING  # the LEDCharDisplay alternative: the segments are pins here


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[int, ...]]] = []
        self.stopped = False

    def shuffle(self) -> None:
        self.calls.append(("shuffle", ()))

    def dispense(self, stacks: int, cards: int) -> None:
        self.calls.append(("dispense", (stacks, cards)))

    def stop(self) -> None:
        self.stopped = True


def _table() -> tuple[TableDevices, Any, Recorder, Recorder]:
    factory = make_pin_factory("mock")
    posted: list[Event] = []
    gpio = build_gpio_table(PINS, factory, posted.append, debounce=DebounceTimes(0, 0, 0))
    shuffler, shoe = Recorder(), Recorder()
    return TableDevices(gpio, shuffler, shoe), factory, shuffler, shoe


def _segments(factory: Any) -> tuple[int, ...]:
    assert PINS.display_segments is not None
    return tuple(int(factory.pin(n).state) for n in PINS.display_segments)


def test_every_glyph_the_round_emits_is_shown_by_the_gpio_display() -> None:
    """The round's display vocabulary (table_phase.DISPLAY_TEST: 1-7 and the status glyphs) reaches
    the 7-segment display through the adapter; the digits light the font's segments."""
    devices, factory, _, _ = _table()
    try:
        for glyph in table_phase.DISPLAY_TEST:
            devices.apply(Display(glyph))
            if glyph.isdigit():
                assert _segments(factory) == SEGMENTS[glyph]  # type: ignore[index]
        devices.apply(Display("1"))
        assert _segments(factory) == (0, 1, 1, 0, 0, 0, 0)  # segments b and c
        devices.apply(Display("3"))
        assert any(_segments(factory))
        devices.apply(Display(" "))
        assert not any(_segments(factory))
    finally:
        devices.close()


def test_every_light_state_the_round_emits_is_shown_by_the_acceptor_lights() -> None:
    """The round's light vocabulary (table_phase.LIGHT_TEST, plus "locked" after the lock-out,
    NY 5324.41(k)(2)) is accepted by the acceptor lights; lit/locked drive the pin high."""
    devices, factory, _, _ = _table()
    try:
        for state in (*table_phase.LIGHT_TEST, "locked"):
            devices.apply(Lights(tuple([state] * 6)))
        devices.apply(Lights(tuple(["lit", "off", "locked", "off", "off", "off"])))
        levels = [bool(factory.pin(n).state) for n in PINS.acceptor_lights]
        assert levels == [True, False, True, False, False, False]
    finally:
        devices.close()


def test_an_unknown_glyph_is_refused_with_its_name() -> None:
    devices, _, _, _ = _table()
    try:
        with pytest.raises(ValueError, match="'Q'"):
            devices.apply(Display("Q"))  # type: ignore[arg-type]
    finally:
        devices.close()


def test_shuffle_and_dispense_go_to_the_serial_devices_and_safe_state_darkens() -> None:
    devices, factory, shuffler, shoe = _table()
    devices.apply(Shuffle())
    devices.apply(Dispense(7, 7))
    devices.apply(Acceptors(True))
    devices.apply(Lights(tuple(["lit"] * 6)))
    assert shuffler.calls == [("shuffle", ())] and shoe.calls == [("dispense", (7, 7))]
    assert devices.armed
    devices.safe_state()
    assert not devices.armed
    assert not any(factory.pin(n).state for n in PINS.acceptor_lights)
    assert not any(_segments(factory))
    devices.close()
    assert shuffler.stopped and shoe.stopped


def test_adapter_answers_are_the_rounds_events() -> None:
    """The serial adapters post the round's own events (fsm/round/events.py): nothing between
    them and the owner translates."""
    assert ShuffleComplete(count=53, deck_id=1).envelope() == Event(
        "shuffle_complete", {"count": 53, "deck_id": 1}
    )
    hands = [[i * 7 + k for k in range(7)] for i in range(7)]
    assert dealt(7, 4, hands).envelope() == Event("dealt", {"remaining": 4, "stacks": hands})
    # the three-card bonus (NY 5324.41(n)): stacks of three, then of four, each read by the shoe
    threes = [[i * 3 + k for k in range(3)] for i in range(4)]
    assert dealt(3, 41, threes).envelope() == Event("dealt", {"remaining": 41, "stacks": threes})
    fours = [[12 + i * 4 + k for k in range(4)] for i in range(4)]
    assert dealt(4, 25, fours).envelope() == Event("dealt", {"remaining": 25, "stacks": fours})
    assert dealt(7, 4, None).envelope() == Event("dealt", {"remaining": 4})  # a blind shoe
    for kind in ("shuffle_complete", "dealt"):
        assert kind in machine.EVENT_FIELDS


def test_every_event_the_gpio_drivers_post_is_an_event_of_the_round() -> None:
    """drivers/gpio's vocabulary (interfaces.EVENT_NAMES) reaches the round unchanged, and the
    round machine knows every one of them: a button the machine cannot hear is a wiring bug."""
    from drivers.gpio.interfaces import EVENT_NAMES

    for name in EVENT_NAMES:
        assert name in machine.EVENT_FIELDS, name
