"""The `pins` configuration: defaults, and every wiring that cannot work refused with a
ValueError that starts with the key path (house rule; DESIGN.md "Hardware": 14/15 stay free for
the SAS UART)."""

from __future__ import annotations

import re

import pytest
from gpiozero.pins.mock import MockFactory
from hypothesis import given
from hypothesis import strategies as st

from drivers.gpio.gpio_table import build_gpio_table
from drivers.gpio.pins import PinConfig


def test_empty_section_gives_the_documented_defaults() -> None:
    config = PinConfig.from_mapping({}, where="pins")
    # the table of docs/wiring.md
    assert config.acceptor_sensors == (16, 17, 22, 23, 24, 25)
    assert config.acceptor_lights == (18, 19, 20, 21, 26, 27)
    assert (config.lockout_button, config.panel_next, config.panel_void) == (5, 6, 12)
    assert (config.supervisor_key, config.shaker) == (13, 7)
    assert config.display_segments is None and config.number_display == "max7219"
    assert config.shaker_lid is None and config.display_dp is None
    assert (config.sign_modules, config.output_polarity, config.glitch_filter_ms) == (
        1,
        "active_high",
        2,
    )


def test_default_plan_leaves_eeprom_i2c_uart_and_spi0_free() -> None:
    """Issue 9 point 5: BCM 0/1 (HAT ID EEPROM), 2/3 (I2C), 14/15 (SAS UART) and SPI0 (8-11,
    the MAX7219 chain) stay free; the 17 required lines take the 17 others but BCM 4."""
    pins = [pin for _, pin in PinConfig().assignments()]
    assert len(pins) == len(set(pins)) == 17
    assert not set(pins) & {0, 1, 2, 3, 8, 9, 10, 11, 14, 15}
    assert sorted(set(range(2, 28)) - set(pins)) == [2, 3, 4, 8, 9, 10, 11, 14, 15]


def test_outputs_of_the_default_plan_are_on_pins_pulled_down_at_reset() -> None:
    # BCM 9..27 come out of reset pulled down on the BCM2711/2835: a light stays dark before
    # the service claims it (docs/wiring.md; the board's pull-downs hold them after a crash)
    assert all(pin >= 9 for pin in PinConfig().output_pins())


def test_spi0_pins_are_refused_while_the_max7219_chain_uses_them() -> None:
    with pytest.raises(ValueError, match=r"^pins\.shaker: pin 10 belongs to SPI0"):
        PinConfig.from_mapping({"shaker": 10}, where="pins")
    # without the chain (segments digit, no sign) SPI0 is an ordinary set of pins
    config = PinConfig.from_mapping(
        {
            "number_display": "segments",
            "sign_modules": 0,
            "display_segments": [2, 3, 4, 8, 9, 10, 11],
        },
        where="pins",
    )
    assert config.uses_spi is False and config.display_segments == (2, 3, 4, 8, 9, 10, 11)


def test_a_full_toml_like_section_is_taken_as_given() -> None:
    data = {
        "acceptor_sensors": [27, 26, 25, 24, 23, 22],
        "acceptor_lights": [2, 3, 4, 5, 6, 7],
        "lockout_button": 12,
        "panel_next": 13,
        "panel_void": 16,
        "supervisor_key": 17,
        "shaker": 18,
        "shaker_lid": None,
        "number_display": "max7219",
        "sign_modules": 3,
        "sign_intensity": 15,
        "output_polarity": "active_low",
        "glitch_filter_ms": 5,
        "gpio_chip": 0,
    }
    config = PinConfig.from_mapping(data, where="pins")
    assert config.acceptor_sensors == (27, 26, 25, 24, 23, 22)
    assert config.lockout_button == 12
    assert config.spi_chips == 4 and config.active_high is False
    assert (config.glitch_filter_ms, config.gpio_chip) == (5, 0)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"number_display": "lcd"}, "pins.number_display: expected one of 'max7219', 'segments'"),
        ({"number_display": "segments"}, 'pins.display_segments: number_display = "segments"'),
        ({"display_segments": [2, 3, 4, 19, 20, 21, 26]}, "pins.display_segments: the digit is"),
        ({"sign_modules": 8}, "pins.sign_modules: expected an integer 0..7"),
        ({"sign_intensity": -1}, "pins.sign_intensity: expected an integer 0..15"),
        ({"output_polarity": "low"}, "pins.output_polarity: expected one of"),
        ({"glitch_filter_ms": 2.5}, "pins.glitch_filter_ms: expected an integer 0..50"),
        ({"gpio_chip": "gpiochip0"}, "pins.gpio_chip: expected an integer 0..63"),
    ],
)
def test_bad_options_name_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        PinConfig.from_mapping(data, where="pins")


@pytest.mark.parametrize("key", ["shaker_lid"])
def test_the_spare_pin_takes_the_lid_sensor_and_no_used_pin_does(key: str) -> None:
    assert PinConfig.from_mapping({key: 4}, where="pins").shaker_lid == 4
    for _, pin in PinConfig().assignments():
        with pytest.raises(
            ValueError, match=rf"^pins\.\S+: pin {pin} is also used by pins\."
        ) as err:
            PinConfig.from_mapping({key: pin}, where="pins")
        assert f"pins.{key}" in str(err.value)


def test_an_optional_device_may_be_written_as_not_fitted() -> None:
    config = PinConfig.from_mapping({"shaker_lid": None, "display_dp": None}, where="pins")
    assert config.shaker_lid is None and config.display_dp is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"acceptor_sensors": [16, 17, 14, 23, 24, 25]},
            "pins.acceptor_sensors[2]: pin 14 is reserved for the SAS UART",
        ),
        ({"shaker": 15}, "pins.shaker: pin 15 is reserved for the SAS UART"),
        ({"shaker": 28}, "pins.shaker: pin 28 does not exist on the 40-pin header"),
        ({"panel_void": 1}, "pins.panel_void: pin 1 does not exist on the 40-pin header"),
        ({"panel_void": -3}, "pins.panel_void: pin -3 does not exist on the 40-pin header"),
        ({"lockout_button": "GPIO2"}, "pins.lockout_button: expected a BCM pin number"),
        ({"lockout_button": True}, "pins.lockout_button: expected a BCM pin number"),
        ({"lockout_button": 2.0}, "pins.lockout_button: expected a BCM pin number"),
        ({"lockout_button": None}, "pins.lockout_button: expected a BCM pin number"),
        ({"acceptor_lights": 16}, "pins.acceptor_lights: expected a list of 6"),
        ({"acceptor_lights": "16,17"}, "pins.acceptor_lights: expected a list of 6"),
        ({"acceptor_lights": [16, 17, 18]}, "pins.acceptor_lights: expected exactly 6 pins, got 3"),
        (
            {"number_display": "segments", "display_segments": [13, 22, 23, 24, 25, 26, "27"]},
            "pins.display_segments[6]: expected a BCM pin number",
        ),
        ({"lockout": 2}, "pins.lockout: unknown key"),
    ],
)
def test_bad_pin_values_name_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        PinConfig.from_mapping(data, where="pins")


def test_a_pin_used_twice_names_both_keys() -> None:
    with pytest.raises(ValueError) as err:
        PinConfig.from_mapping({"shaker": 19}, where="pins")
    # 19 is acceptor light 2 by default
    assert str(err.value) == "pins.shaker: pin 19 is also used by pins.acceptor_lights[1]"


def test_a_pin_used_twice_within_one_list_names_both_entries() -> None:
    with pytest.raises(ValueError) as err:
        PinConfig.from_mapping({"acceptor_sensors": [4, 16, 17, 22, 23, 4]}, where="pins")
    message = str(err.value)
    assert message.startswith("pins.acceptor_sensors[5]: pin 4")
    assert "pins.acceptor_sensors[0]" in message


def test_fitting_an_optional_device_on_a_used_pin_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^pins\.shaker_lid: pin 7 is also used by pins\.shaker$"):
        PinConfig.from_mapping({"shaker_lid": 7}, where="pins")


def test_the_section_path_given_by_the_caller_prefixes_the_message() -> None:
    with pytest.raises(ValueError, match=r"^table\.pins\.shaker: pin 14 "):
        PinConfig.from_mapping({"shaker": 14}, where="table.pins")


def test_a_section_that_is_not_a_table_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^pins: must be a table, got list"):
        PinConfig.from_mapping([2, 3], where="pins")  # type: ignore[arg-type]


def test_a_wiring_built_in_code_is_checked_before_any_device_is_opened() -> None:
    factory = MockFactory()
    bad = PinConfig(shaker=14)
    with pytest.raises(ValueError, match=r"^pins\.shaker: pin 14 is reserved for the SAS UART"):
        build_gpio_table(bad, factory, lambda event: None)
    assert not factory.pins, "no pin may be claimed for a refused wiring"
    with pytest.raises(ValueError, match=r"^pins\.acceptor_lights: expected exactly 6 pins"):
        PinConfig(acceptor_lights=(16, 17)).validate()


KEYS = [
    "acceptor_sensors",
    "acceptor_lights",
    "lockout_button",
    "panel_next",
    "panel_void",
    "supervisor_key",
    "shaker",
    "shaker_lid",
    "display_segments",
    "display_dp",
    "number_display",
    "sign_modules",
    "output_polarity",
    "glitch_filter_ms",
    "bogus",
]
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 40) | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=8),
    max_leaves=10,
)


@given(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=5))
def test_any_pins_section_is_either_a_valid_wiring_or_a_value_error_naming_a_key(
    data: dict[str, object],
) -> None:
    try:
        config = PinConfig.from_mapping(data, where="pins")
    except ValueError as exc:
        assert str(exc).startswith("pins.")
        return
    pins = [pin for _, pin in config.assignments()]
    assert len(pins) == len(set(pins))
    assert all(2 <= pin <= 27 and pin not in (14, 15) for pin in pins)
