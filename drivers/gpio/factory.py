"""Choosing gpiozero's pin factory: lgpio on the Pi, MockFactory in simulation and tests.

Responsible for making the choice explicit. gpiozero, left to itself, tries lgpio, then RPi.GPIO,
then pigpio, then native, and quietly takes the first that loads; on a table that could mean a
factory nobody tested. So in "pi" mode we build ``LGPIOFactory`` ourselves and turn any failure
into :class:`PinFactoryError`. Must never fall back to another factory, and never set gpiozero's
global default (every device is given the factory explicitly).
"""

from __future__ import annotations

import importlib
from typing import Any, Literal

PinMode = Literal["pi", "mock"]


class PinFactoryError(RuntimeError):
    """The requested pin factory cannot be used (and no other will be tried)."""


def make_pin_factory(mode: PinMode) -> Any:
    """Return a gpiozero pin factory: ``LGPIOFactory`` for "pi", ``MockFactory`` for "mock".

    Raises PinFactoryError naming the cause if lgpio cannot be loaded or opened, and ValueError
    for any other mode.
    """
    if mode == "mock":
        from gpiozero.pins.mock import MockFactory

        return MockFactory()
    if mode == "pi":
        try:
            module = importlib.import_module("gpiozero.pins.lgpio")
        except ImportError as exc:
            raise PinFactoryError(
                f"pin factory 'pi': the lgpio library cannot be loaded ({exc}); install it "
                "(apt install python3-lgpio, or pip install '.[pi]'); refusing to fall back to "
                "another pin factory"
            ) from exc
        try:
            return module.LGPIOFactory()
        except Exception as exc:
            raise PinFactoryError(
                f"pin factory 'pi': lgpio loaded but could not open the GPIO chip "
                f"({type(exc).__name__}: {exc}); check /dev/gpiochip* permissions; refusing to "
                "fall back to another pin factory"
            ) from exc
    raise ValueError(f"pin factory mode {mode!r}: expected 'pi' or 'mock'")
