"""The table's GPIO devices: acceptors, lock-out button, dealer panel, dice shaker, number display,
progressive meter sign.

Interfaces in ``interfaces``, gpiozero implementations in ``devices``, input filters in ``filters``,
the MAX7219 chain on SPI0 in ``max7219``, the sign's text and font in ``sign``, the whole set in
``table`` (tests and the simulated table use gpiozero's MockFactory), pins in ``config``, the pin
factory (the header's GPIO chip found by its label) in ``factory``. Must never import from
``controller``; input callbacks only post events (see docs/wiring.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drivers.gpio.factory import PinFactoryError, make_pin_factory
    from drivers.gpio.gpio_table import Table, build_gpio_table
    from drivers.gpio.pins import PinConfig

# Imported when first used (PEP 562): reading the pin plan (``drivers.gpio.pins``, which
# ``tablectl config check`` needs) must not import gpiozero and every device.
_EXPORTS = {
    "PinConfig": "drivers.gpio.pins",
    "PinFactoryError": "drivers.gpio.factory",
    "Table": "drivers.gpio.gpio_table",
    "build_gpio_table": "drivers.gpio.gpio_table",
    "make_pin_factory": "drivers.gpio.factory",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "PinConfig",
    "PinFactoryError",
    "Table",
    "build_gpio_table",
    "make_pin_factory",
]
