"""The gpiozero devices at pin level on MockFactory, as gpiozero's own tests do: drive input pins
low/high, read output pins' state. Wiring from docs/wiring.md: inputs active-low, outputs
active-high. Background animation (attract chase, win blink) is observed by polling with a
bounded wait, never by timing."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory
from hypothesis import given
from hypothesis import strategies as st
from test_gpio_rig import (
    DEFAULT_LIGHT_PINS,
    DEFAULT_SENSOR_PINS,
    KEY_PIN,
    LOCKOUT_PIN,
    NEXT_PIN,
    SHAKER_PIN,
    VOID_PIN,
    FakeClock,
    GpioRig,
    observed_levels,
)

from drivers.gpio.devices import GpioDiceShaker, QuietGapFilter, frame_levels
from fsm.round.effects import Display, Lights, Shuffle
from fsm.round.events import Event


@pytest.fixture
def rig() -> Iterator[GpioRig]:
    r = GpioRig()
    yield r
    r.close()


def chatter(rig: GpioRig, pin_number: int, edges: int, step: float = 0.001) -> None:
    """``edges`` alternating edges 1 ms apart, starting with a fall (contact bounce)."""
    pin = rig.factory.pin(pin_number)
    for i in range(edges):
        if i % 2 == 0:
            pin.drive_low()
        else:
            pin.drive_high()
        rig.clock.advance(step)


def bouncy_press(rig: GpioRig, pin_number: int) -> None:
    """One real press: quiet, 5 bouncing edges ending low, held 200 ms, 5 bouncing edges on
    release ending high."""
    rig.clock.advance(1.0)
    chatter(rig, pin_number, 5)
    rig.clock.advance(0.2)
    pin = rig.factory.pin(pin_number)
    for i in range(5):
        if i % 2 == 0:
            pin.drive_high()
        else:
            pin.drive_low()
        rig.clock.advance(0.001)
    assert pin.state, "the press must end released"


def lights(rig: GpioRig) -> tuple[bool, ...]:
    return tuple(rig.level(n) for n in DEFAULT_LIGHT_PINS)


# --- acceptors --------------------------------------------------------------------------------


def test_inputs_idle_high_with_pull_ups_and_post_nothing(rig: GpioRig) -> None:
    for number in (*DEFAULT_SENSOR_PINS, LOCKOUT_PIN, NEXT_PIN, VOID_PIN, KEY_PIN, SHAKER_PIN):
        assert rig.level(number), f"GPIO{number} should idle high (pull-up, active-low)"
    assert rig.events == []


def test_a_chip_drop_posts_its_position_and_lights_nothing_by_itself_d4(rig: GpioRig) -> None:
    """NY 5324.41(d)(4): the player checks that the acceptor light shows the accepted wager, so
    only the round lights it; the sensor itself only reports the chip."""
    for position in (3, 1, 6):
        rig.drop_chip(position)
    assert rig.events == [
        Event("chip_detected", {"position": 3}),
        Event("chip_detected", {"position": 1}),
        Event("chip_detected", {"position": 6}),
    ]
    assert lights(rig) == (False,) * 6
    assert rig.table.acceptors.lights == ("off",) * 6


def test_a_bouncing_chip_sensor_posts_one_chip(rig: GpioRig) -> None:
    bouncy_press(rig, DEFAULT_SENSOR_PINS[1])
    assert rig.events == [Event("chip_detected", {"position": 2})]


def test_steady_light_states_drive_the_right_pin_levels_k2_k3(rig: GpioRig) -> None:
    """lit and locked are both steadily illuminated (NY 5324.41(k)(2): the dealer counts lights
    illuminated after the lock-out; (k)(3)(i): the light is checked before a payout)."""
    rig.table.apply(Lights(tuple(["off", "lit", "locked", "off", "locked", "lit"])))
    assert lights(rig) == (False, True, True, False, True, True)
    rig.table.apply(Lights(tuple(["locked", "off", "off", "lit", "off", "off"])))
    assert lights(rig) == (True, False, False, True, False, False)


def test_blinking_lights_go_on_and_off_in_the_background_while_steady_ones_hold(
    rig: GpioRig,
) -> None:
    rig.table.apply(Lights(tuple(["blink", "lit", "off", "blink", "off", "off"])))
    seen: list[bool] = []
    for reading in observed_levels(lambda: (rig.level(16),)):
        seen.append(reading[0])
        if seen[:3] == [True, False, True]:
            break
    assert seen[:3] == [True, False, True]
    # the steady ones never moved: one recorded state each since construction/apply
    assert [s.state for s in rig.factory.pin(17).states] == [False, True]
    assert [s.state for s in rig.factory.pin(18).states] == [False]


def test_attract_chases_across_the_attract_positions_in_order(rig: GpioRig) -> None:
    rig.table.apply(Lights(("attract", "attract", "lit", "attract", "off", "attract")))
    order: list[int] = []
    for reading in observed_levels(lambda: lights(rig)):
        chased = [i for i in (0, 1, 3, 5) if reading[i]]
        assert len(chased) <= 1, f"two attract lights lit at once: {reading}"
        if chased and (not order or order[-1] != chased[0]):
            order.append(chased[0])
        if len(order) >= 6:
            break
    assert order[:6] == [0, 1, 3, 5, 0, 1]
    assert [s.state for s in rig.factory.pin(18).states] == [False, True]  # lit, held
    assert [s.state for s in rig.factory.pin(20).states] == [False]  # off, never lit


def test_animation_frames_chase_one_light_and_blink_two_on_two_off() -> None:
    states = ("attract", "blink", "attract", "off", "attract", "lit")
    frames = [frame_levels(states, step) for step in range(8)]  # type: ignore[arg-type]
    chase_positions = [[i for i in (0, 2, 4) if frame[i]] for frame in frames]
    assert chase_positions == [[0], [2], [4], [0], [2], [4], [0], [2]]
    assert [frame[1] for frame in frames] == [True, True, False, False] * 2
    assert all(frame[3] is False and frame[5] is True for frame in frames)


# --- lock-out button and dealer panel ------------------------------------------------------------


def test_lockout_button_posts_once_per_press_despite_bounce_k2(rig: GpioRig) -> None:
    """NY 5324.41(k)(2): the dealer presses the lock-out button once; bounce is not a press."""
    bouncy_press(rig, LOCKOUT_PIN)
    assert rig.events == [Event("lockout_pressed")]
    bouncy_press(rig, LOCKOUT_PIN)
    assert rig.events == [Event("lockout_pressed")] * 2


def test_a_second_press_inside_the_debounce_window_is_bounce(rig: GpioRig) -> None:
    pin = rig.factory.pin(LOCKOUT_PIN)
    pin.drive_low()
    rig.clock.advance(0.005)
    pin.drive_high()
    rig.clock.advance(0.01)  # 10 ms of quiet: still inside the 30 ms window
    pin.drive_low()
    rig.clock.advance(0.2)
    pin.drive_high()
    rig.clock.advance(0.05)  # 50 ms of quiet: a new press
    pin.drive_low()
    assert rig.events == [Event("lockout_pressed")] * 2


def test_panel_next_and_void_post_their_own_events(rig: GpioRig) -> None:
    bouncy_press(rig, NEXT_PIN)
    bouncy_press(rig, VOID_PIN)
    bouncy_press(rig, NEXT_PIN)
    assert rig.events == [Event("panel_next"), Event("panel_void"), Event("panel_next")]


def test_supervisor_key_is_a_held_switch_posting_each_change(rig: GpioRig) -> None:
    assert rig.table.panel.supervisor_key_on is False
    rig.turn_key(True)
    assert rig.table.panel.supervisor_key_on is True
    rig.turn_key(True)  # no edge: nothing new
    rig.turn_key(False)
    assert rig.table.panel.supervisor_key_on is False
    assert rig.events == [
        Event("supervisor_key", {"on": True}),
        Event("supervisor_key", {"on": False}),
    ]


# --- dice shaker --------------------------------------------------------------------------------


def test_shaker_posts_each_distinct_shake_once_and_ignores_bounce_h8i(rig: GpioRig) -> None:
    """NY 5324.41(h)(8)(i): the bank shakes at least three times; each shake (a burst of
    contact chatter) is posted once, with no count of its own (the round machine counts them:
    one count, journaled)."""
    for _ in range(4):
        rig.clock.advance(0.3)
        chatter(rig, SHAKER_PIN, 7)  # ends low
        rig.clock.advance(0.02)
        rig.factory.pin(SHAKER_PIN).drive_high()
    assert rig.events == [Event("shake_detected")] * 4


def test_the_gpio_table_applies_only_its_own_effects(rig: GpioRig) -> None:
    """Lights and display are the GPIO table's; any other effect is not (``shaker_reset`` is no
    effect of the round: the machine counts shakes)."""
    assert rig.table.apply(Display("3")) is True
    assert rig.table.apply(Shuffle()) is False


def test_shaker_lid_sensor_reports_lifted_and_closed_h8i() -> None:
    """NY 5324.41(h)(8)(i): if the bank lifts the lid, the shaker must be covered and re-shaken;
    the lid sensor reports it (reed switch closed = lid on; an open circuit reads lifted)."""
    factory = MockFactory()
    events: list[Event] = []
    lid_pin = factory.pin(13)
    shaker = GpioDiceShaker(12, 13, pin_factory=factory, post=events.append, clock=FakeClock())
    try:
        assert shaker.lid_lifted is True  # nothing closes the reed switch yet: reads lifted
        lid_pin.drive_low()  # lid put on
        assert shaker.lid_lifted is False
        lid_pin.drive_high()  # lid lifted
        assert shaker.lid_lifted is True
        assert events == [
            Event("shaker_lid", {"lifted": False}),
            Event("shaker_lid", {"lifted": True}),
        ]
    finally:
        shaker.close()
        factory.reset()


def test_shaker_without_a_lid_sensor_says_so(rig: GpioRig) -> None:
    assert rig.table.shaker.lid_lifted is None


# --- safe state and close ----------------------------------------------------------------------


def test_safe_state_then_close_leaves_every_output_low_and_stops_the_animation(
    rig: GpioRig,
) -> None:
    rig.table.apply(Lights(tuple(["attract"] * 3 + ["blink", "lit", "locked"])))
    rig.table.apply(Display("P"))
    rig.table.safe_state()
    rig.table.close()
    outputs = (*DEFAULT_LIGHT_PINS, 13, 22, 23, 24, 25, 26, 27)
    assert [rig.level(n) for n in outputs] == [False] * len(outputs)
    assert not [t for t in threading.enumerate() if t.name == "acceptor-lights" and t.is_alive()]
    rig.table.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        rig.table.acceptors.set_lights(["lit"] * 6)


# --- the quiet-gap filter as a property ----------------------------------------------------------

BURSTS = st.lists(
    st.tuples(
        st.integers(0, 4),  # extra bounce pairs inside the burst
        st.floats(0.0, 0.009),  # spacing of its edges (window 30 ms)
        st.floats(0.031, 5.0),  # quiet time before the burst
    ),
    min_size=1,
    max_size=20,
)


@given(BURSTS)
def test_each_burst_of_bounce_after_a_quiet_gap_is_one_press(
    bursts: list[tuple[int, float, float]],
) -> None:
    """However a press bounces on press and on release (edges less than the 30 ms window
    apart), it counts once; every press after a quiet gap of at least the window counts."""
    clock = FakeClock()
    gap = QuietGapFilter(0.03, clock)
    accepted = 0
    for bounce_pairs, spacing, quiet in bursts:
        clock.advance(quiet)
        accepted += gap.activation()
        for _ in range(bounce_pairs):
            clock.advance(spacing)
            gap.deactivation()
            clock.advance(spacing)
            accepted += gap.activation()
        clock.advance(0.1)  # held, then released, bouncing as much
        gap.deactivation()
        for _ in range(bounce_pairs):
            clock.advance(spacing)
            accepted += gap.activation()
            clock.advance(spacing)
            gap.deactivation()
    assert accepted == len(bursts)


def test_active_low_outputs_light_on_a_low_pin_and_rest_high() -> None:
    """issue 9 point 7: output polarity is configurable (drivers that invert)."""
    from dataclasses import replace

    from test_gpio_rig import DEFAULT_SEGMENT_PINS, SEGMENT_WIRING

    from drivers.gpio.gpio_table import build_gpio_table

    factory = MockFactory()
    pins = replace(SEGMENT_WIRING, output_polarity="active_low")
    table = build_gpio_table(pins, factory, lambda e: None)
    try:
        levels = lambda ns: [bool(factory.pin(n).state) for n in ns]  # noqa: E731
        assert levels(DEFAULT_LIGHT_PINS) == [True] * 6  # dark = high
        table.apply(Lights(tuple(["lit", "off", "locked", "off", "off", "off"])))
        assert levels(DEFAULT_LIGHT_PINS) == [False, True, False, True, True, True]
        table.apply(Display("1"))  # segments b and c
        segs = dict(zip(DEFAULT_SEGMENT_PINS, levels(DEFAULT_SEGMENT_PINS.values()), strict=True))
        assert [k for k, high in segs.items() if not high] == ["b", "c"]
    finally:
        table.close()
