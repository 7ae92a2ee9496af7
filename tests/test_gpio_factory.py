"""The pin factory is chosen explicitly (DESIGN.md "Hardware": on the Pi the lgpio factory, set
explicitly; tests and simulation MockFactory) and never falls back silently to another one."""

from __future__ import annotations

import sys
import types

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from drivers.gpio.config import PinConfig
from drivers.gpio.factory import PinFactoryError, make_pin_factory
from drivers.gpio.table import build_gpio_table


def test_mock_mode_gives_gpiozero_mock_factory() -> None:
    factory = make_pin_factory("mock")
    try:
        assert isinstance(factory, MockFactory)
    finally:
        factory.close()


def test_pi_mode_without_lgpio_is_a_clear_error_not_a_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # lgpio is not installed here; make sure of it even if it ever is
    monkeypatch.setitem(sys.modules, "lgpio", None)
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", None)
    with pytest.raises(PinFactoryError) as err:
        make_pin_factory("pi")
    message = str(err.value)
    assert message.startswith("pin factory 'pi': the lgpio library cannot be loaded")
    assert "refusing to fall back" in message
    assert "python3-lgpio" in message


def test_pi_mode_when_the_gpio_chip_cannot_be_opened_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # stand-in for gpiozero.pins.lgpio whose factory fails as it does without /dev/gpiochip0
    stand_in = types.ModuleType("gpiozero.pins.lgpio")

    def failing_factory() -> None:
        raise OSError("can not open gpiochip")

    stand_in.LGPIOFactory = failing_factory  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", stand_in)
    with pytest.raises(
        PinFactoryError, match=r"^pin factory 'pi': lgpio loaded but could not open"
    ):
        make_pin_factory("pi")


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^pin factory mode 'rpigpio': expected 'pi' or 'mock'"):
        make_pin_factory("rpigpio")  # type: ignore[arg-type]


def test_every_device_uses_the_given_factory_and_the_global_default_stays_unset() -> None:
    saved = Device.pin_factory
    Device.pin_factory = None
    factory = MockFactory()
    try:
        table = build_gpio_table(PinConfig(), factory, lambda event: None)
        try:
            assert Device.pin_factory is None, "a device fell back to gpiozero's default factory"
            claimed = {pin for _, pin in PinConfig().assignments()}
            assert {int(info.name[4:]) for info in factory.pins} == claimed
        finally:
            table.close()
    finally:
        Device.pin_factory = saved
