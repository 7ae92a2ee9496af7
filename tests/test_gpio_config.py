"""The `pins` configuration: defaults, and every wiring that cannot work refused with a
ValueError that starts with the key path (house rule; DESIGN.md "Hardware": 14/15 stay free for
the SAS UART)."""

from __future__ import annotations

import re

import pytest
from gpiozero.pins.mock import MockFactory
from hypothesis import given
from hypothesis import strategies as st

from drivers.gpio.config import PinConfig
from drivers.gpio.table import build_gpio_table


def test_empty_section_gives_the_documented_defaults() -> None:
    config = PinConfig.from_mapping({}, where="pins")
    # the table of docs/wiring.md
    assert config.acceptor_sensors == (5, 6, 7, 8, 9, 10)
    assert config.acceptor_lights == (16, 17, 18, 19, 20, 21)
    assert (config.lockout_button, config.panel_next, config.panel_void) == (2, 3, 4)
    assert (config.supervisor_key, config.shaker) == (11, 12)
    assert config.display_segments == (13, 22, 23, 24, 25, 26, 27)
    assert config.shaker_lid is None and config.display_dp is None


def test_defaults_use_each_usable_header_pin_once_and_never_the_sas_uart() -> None:
    pins = [pin for _, pin in PinConfig().assignments()]
    usable = [p for p in range(2, 28) if p not in (14, 15)]
    assert sorted(pins) == usable


def test_a_full_toml_like_section_is_taken_as_given() -> None:
    data = {
        "acceptor_sensors": [27, 26, 25, 24, 23, 22],
        "acceptor_lights": [2, 3, 4, 5, 6, 7],
        "lockout_button": 8,
        "panel_next": 9,
        "panel_void": 10,
        "supervisor_key": 11,
        "shaker": 12,
        "shaker_lid": None,
        "display_segments": [13, 16, 17, 18, 19, 20, 21],
    }
    config = PinConfig.from_mapping(data, where="pins")
    assert config.acceptor_sensors == (27, 26, 25, 24, 23, 22)
    assert config.lockout_button == 8
    assert config.display_segments[1] == 16


@pytest.mark.parametrize("key", ["shaker_lid", "display_dp"])
def test_the_header_has_no_pin_left_for_an_optional_device(key: str) -> None:
    # 24 usable pins (BCM 2..27 without the SAS UART), 24 taken by the required devices
    for pin in [p for p in range(2, 28) if p not in (14, 15)]:
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
            {"acceptor_sensors": [5, 6, 14, 8, 9, 10]},
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
            {"display_segments": [13, 22, 23, 24, 25, 26, "27"]},
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
        PinConfig.from_mapping({"shaker": 17}, where="pins")
    # 17 is acceptor light 2 by default
    assert str(err.value) == "pins.shaker: pin 17 is also used by pins.acceptor_lights[1]"


def test_a_pin_used_twice_within_one_list_names_both_entries() -> None:
    with pytest.raises(ValueError) as err:
        PinConfig.from_mapping({"acceptor_sensors": [5, 6, 7, 8, 9, 5]}, where="pins")
    message = str(err.value)
    assert message.startswith("pins.acceptor_sensors[5]: pin 5")
    assert "pins.acceptor_sensors[0]" in message


def test_fitting_an_optional_device_on_a_used_pin_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"^pins\.shaker_lid: pin 12 is also used by pins\.shaker$"
    ):
        PinConfig.from_mapping({"shaker_lid": 12}, where="pins")


def test_the_section_path_given_by_the_caller_prefixes_the_message() -> None:
    with pytest.raises(ValueError, match=r"^table\.pins\.shaker: pin 14 "):
        PinConfig.from_mapping({"shaker": 14}, where="table.pins")


def test_a_section_that_is_not_a_table_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^pins: expected a table"):
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
