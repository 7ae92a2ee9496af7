"""The number display at pin level: each digit and glyph lights exactly the segments of its
drawing. The expected segments come from the 3-line drawings below (written from the 7-segment
figure in docs/wiring.md), parsed here, never from the driver's font table."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory
from test_gpio_rig import DEFAULT_SEGMENT_PINS, GpioRig

from drivers.gpio.devices import GpioNumberDisplay
from fsm.round.effects import Display

#  _      a
# |_|   f g b
# |_|   e d c
DRAWINGS: dict[str, tuple[str, str, str]] = {
    "1": ("   ", "  |", "  |"),
    "2": (" _ ", " _|", "|_ "),
    "3": (" _ ", " _|", " _|"),
    "4": ("   ", "|_|", "  |"),
    "5": (" _ ", "|_ ", " _|"),
    "6": (" _ ", "|_ ", "|_|"),
    "7": (" _ ", "  |", "  |"),
    "-": ("   ", " _ ", "   "),
    "L": ("   ", "|  ", "|_ "),
    "F": (" _ ", "|_ ", "|  "),
    "P": (" _ ", "|_|", "|  "),
    " ": ("   ", "   ", "   "),
}


def segments_of(drawing: tuple[str, str, str]) -> set[str]:
    top, middle, bottom = drawing
    marks = {
        "a": top[1] == "_",
        "f": middle[0] == "|",
        "g": middle[1] == "_",
        "b": middle[2] == "|",
        "e": bottom[0] == "|",
        "d": bottom[1] == "_",
        "c": bottom[2] == "|",
    }
    return {segment for segment, lit in marks.items() if lit}


@pytest.fixture
def rig() -> Iterator[GpioRig]:
    r = GpioRig()
    yield r
    r.close()


def lit_segments(rig: GpioRig) -> set[str]:
    return {seg for seg, pin in DEFAULT_SEGMENT_PINS.items() if rig.level(pin)}


def test_the_parser_reads_an_eight_as_all_seven_segments() -> None:
    assert segments_of((" _ ", "|_|", "|_|")) == set("abcdefg")


@pytest.mark.parametrize("glyph", list(DRAWINGS))
def test_each_glyph_lights_the_segments_of_its_drawing(rig: GpioRig, glyph: str) -> None:
    assert rig.table.apply(Display(glyph)) is True
    assert lit_segments(rig) == segments_of(DRAWINGS[glyph])
    assert rig.table.display.glyph == glyph


def test_the_starting_position_digits_1_to_7_follow_one_another_j1(rig: GpioRig) -> None:
    """NY 5324.41(j)(1): the number 1-7 selected by the random number generator is displayed;
    each new number replaces the previous one entirely."""
    for digit in "7315246":
        rig.table.apply(Display(digit))
        assert lit_segments(rig) == segments_of(DRAWINGS[digit]), digit


def test_no_status_glyph_can_be_read_as_a_digit(rig: GpioRig) -> None:
    patterns: dict[frozenset[str], str] = {}
    for glyph in DRAWINGS:
        rig.table.apply(Display(glyph))
        pattern = frozenset(lit_segments(rig))
        assert pattern not in patterns, f"{glyph} looks like {patterns.get(pattern)}"
        patterns[pattern] = glyph


def test_display_starts_blank(rig: GpioRig) -> None:
    assert lit_segments(rig) == set()
    assert rig.table.display.glyph == " "


@pytest.mark.parametrize(
    ("glyph", "message"),
    [
        (3, "display glyph 3: expected one of "),
        ("8", "display glyph '8': expected one of "),
        ("Idle", "display glyph 'Idle': expected one of "),
        (None, "display glyph None: expected one of "),
    ],
)
def test_an_unknown_glyph_is_refused_and_the_display_keeps_its_glyph(
    rig: GpioRig, glyph: object, message: str
) -> None:
    rig.table.apply(Display("5"))
    with pytest.raises(ValueError) as err:
        rig.table.display.show(glyph)  # type: ignore[arg-type]  # the device's own guard
    assert str(err.value).startswith(message)
    assert lit_segments(rig) == segments_of(DRAWINGS["5"])


def test_a_fitted_decimal_point_never_lights() -> None:
    factory = MockFactory()
    pins = [13, 22, 23, 24, 25, 26, 27]
    display = GpioNumberDisplay(pins, 12, pin_factory=factory)
    try:
        for glyph in DRAWINGS:
            display.show(glyph)  # type: ignore[arg-type]
            assert not factory.pin(12).state, glyph
            lit = {seg for seg, pin in zip("abcdefg", pins, strict=True) if factory.pin(pin).state}
            assert lit == segments_of(DRAWINGS[glyph]), glyph
    finally:
        display.close()
        factory.reset()
