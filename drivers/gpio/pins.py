"""Which BCM pin each table device is wired to, and how: the `pins` section of the configuration.

Responsible for the default wiring and for refusing a wiring that cannot work (a pin used twice, a
pin of the SAS UART or the HAT ID EEPROM, a pin of SPI0 while the MAX7219 display chain uses it, a
number that is not on the 40-pin header, a value of the wrong type) with a ValueError that names
the key. Must never touch a pin: it only validates numbers and options.

Default pin plan (BCM numbers; docs/wiring.md draws the header and gives the reasons):

=====================  ===========================  ==========================================
key                    default                      device
=====================  ===========================  ==========================================
lockout_button         5                            lock-out button, "no more bets" (in)
panel_next             6                            dealer panel NEXT (in)
shaker                 7                            dice-shaker sensor (in; CE1, freed by
                                                    ``dtoverlay=spi0-1cs``)
panel_void             12                           dealer panel VOID (in)
supervisor_key         13                           supervisor key switch (in, held)
acceptor_sensors       [16, 17, 22, 23, 24, 25]     chip sensor of acceptor 1..6 (in)
acceptor_lights        [18, 19, 20, 21, 26, 27]     light of acceptor 1..6 (out)
shaker_lid             absent (BCM 4 is spare)      shaker lid-lifted sensor (in, held)
door                   absent (BCM 4 is spare)      controller compartment door switch (in,
                                                    held; closed to ground while shut)
display_segments       absent (MAX7219 digit)       segments a..g with ``number_display =
                                                    "segments"`` (out)
display_dp             absent                       decimal point of that digit (out)
=====================  ===========================  ==========================================

Left free on purpose: BCM 0/1 (HAT ID EEPROM), 2/3 (I2C, e.g. an I/O expander), 14/15 (the SAS
UART) and SPI0 (MOSI 10, SCLK 11, CE0 8 and MISO 9, claimed by the SPI driver) for the MAX7219
chain that drives the progressive meter sign and, by default, the 1-7 digit.

Options of the same section: ``number_display`` ("max7219": the digit is chip 0 of the SPI chain;
"segments": gpiozero ``LEDCharDisplay`` on ``display_segments``), ``sign_modules`` (8-digit MAX7219
modules of the meter sign, 0..7; 0 = no sign), ``sign_intensity`` (0..15), ``output_polarity``
("active_high": a high pin lights its lamp or segment; "active_low" for drivers that invert),
``glitch_filter_ms`` (0..50: how long the lock-out, NEXT, VOID and shaker lines must stay active
before an edge counts) and ``gpio_chip`` (absent: found by its label; a number forces
``/dev/gpiochipN``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Literal, cast, get_args

from fsm.configread import Reader, describe

ACCEPTOR_COUNT = 6
FIRST_HEADER_PIN = 2
LAST_HEADER_PIN = 27
SAS_UART_PINS = (14, 15)
ID_EEPROM_PINS = (0, 1)
I2C_PINS = (2, 3)
#: SPI0 as the MAX7219 chain uses it: CE0, MISO (claimed by the driver), MOSI, SCLK.
SPI0_PINS = (8, 9, 10, 11)
SEGMENT_COUNT = 7
MAX_SIGN_MODULES = 7  # eight chips on one chain: the 1-7 digit and up to seven sign modules

NumberDisplayKind = Literal["max7219", "segments"]
NUMBER_DISPLAY_KINDS: tuple[NumberDisplayKind, ...] = get_args(NumberDisplayKind)
OutputPolarity = Literal["active_high", "active_low"]
OUTPUT_POLARITIES: tuple[OutputPolarity, ...] = get_args(OutputPolarity)

#: The keys that hold pins (the others are options of the wiring).
PIN_KEYS = (
    "acceptor_sensors",
    "acceptor_lights",
    "lockout_button",
    "panel_next",
    "panel_void",
    "supervisor_key",
    "shaker",
    "shaker_lid",
    "door",
    "display_segments",
    "display_dp",
)
_OPTIONAL_PINS = ("shaker_lid", "door", "display_segments", "display_dp")
_LIST_LENGTHS = {
    "acceptor_sensors": ACCEPTOR_COUNT,
    "acceptor_lights": ACCEPTOR_COUNT,
    "display_segments": SEGMENT_COUNT,
}


@dataclass(frozen=True)
class PinConfig:
    """BCM pin numbers and options of every GPIO device of the table (validated by
    :meth:`from_mapping`)."""

    acceptor_sensors: tuple[int, ...] = (16, 17, 22, 23, 24, 25)
    acceptor_lights: tuple[int, ...] = (18, 19, 20, 21, 26, 27)
    lockout_button: int = 5
    panel_next: int = 6
    panel_void: int = 12
    supervisor_key: int = 13
    shaker: int = 7
    shaker_lid: int | None = None
    door: int | None = None
    display_segments: tuple[int, ...] | None = None
    display_dp: int | None = None
    number_display: NumberDisplayKind = "max7219"
    sign_modules: int = 1
    sign_intensity: int = 8
    output_polarity: OutputPolarity = "active_high"
    glitch_filter_ms: int = 2
    gpio_chip: int | None = None

    @property
    def uses_spi(self) -> bool:
        """True when the MAX7219 chain on SPI0 is fitted (the digit or the meter sign)."""
        return self.number_display == "max7219" or self.sign_modules > 0

    @property
    def spi_chips(self) -> int:
        """Chips on the MAX7219 chain: the digit (chip 0) when it is there, then the sign."""
        return (1 if self.number_display == "max7219" else 0) + self.sign_modules

    @property
    def active_high(self) -> bool:
        return self.output_polarity == "active_high"

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str = "pins") -> PinConfig:
        """Build from the `pins` table of the configuration; missing keys take the defaults.

        Raises ValueError whose message starts with the full key path, e.g.
        ``pins.acceptor_sensors[2]: pin 14 is reserved for the SAS UART``.
        """
        # fsm.configread: a table with string keys, every key one of the fields
        data = Reader(data, where, [f.name for f in fields(cls)]).data
        d = cls()

        def one(name: str, fallback: int) -> int:
            return _pin(data[name], f"{where}.{name}") if name in data else fallback

        def maybe(name: str, fallback: int | None) -> int | None:
            if name not in data:
                return fallback
            return None if data[name] is None else _pin(data[name], f"{where}.{name}")

        def many(name: str, fallback: tuple[int, ...]) -> tuple[int, ...]:
            if name not in data:
                return fallback
            return _pin_list(data[name], f"{where}.{name}", _LIST_LENGTHS[name])

        segments = data.get("display_segments", d.display_segments)
        config = cls(
            acceptor_sensors=many("acceptor_sensors", d.acceptor_sensors),
            acceptor_lights=many("acceptor_lights", d.acceptor_lights),
            lockout_button=one("lockout_button", d.lockout_button),
            panel_next=one("panel_next", d.panel_next),
            panel_void=one("panel_void", d.panel_void),
            supervisor_key=one("supervisor_key", d.supervisor_key),
            shaker=one("shaker", d.shaker),
            shaker_lid=maybe("shaker_lid", d.shaker_lid),
            door=maybe("door", d.door),
            display_segments=None
            if segments is None
            else _pin_list(segments, f"{where}.display_segments", SEGMENT_COUNT),
            display_dp=maybe("display_dp", d.display_dp),
            number_display=cast(
                NumberDisplayKind,
                _choice(data, "number_display", d.number_display, NUMBER_DISPLAY_KINDS, where),
            ),
            sign_modules=_int(data, "sign_modules", d.sign_modules, 0, MAX_SIGN_MODULES, where),
            sign_intensity=_int(data, "sign_intensity", d.sign_intensity, 0, 15, where),
            output_polarity=cast(
                OutputPolarity,
                _choice(data, "output_polarity", d.output_polarity, OUTPUT_POLARITIES, where),
            ),
            glitch_filter_ms=_int(data, "glitch_filter_ms", d.glitch_filter_ms, 0, 50, where),
            gpio_chip=None
            if data.get("gpio_chip") is None
            else _int(data, "gpio_chip", 0, 0, 63, where),
        )
        config.validate(where)
        return config

    def validate(self, where: str = "pins") -> None:
        """Check this wiring as :meth:`from_mapping` does (for a PinConfig built in code)."""
        for name in PIN_KEYS:
            value = getattr(self, name)
            key = f"{where}.{name}"
            if value is None and name in _OPTIONAL_PINS:
                continue
            if name in _LIST_LENGTHS:
                _pin_list(value, key, _LIST_LENGTHS[name])
            else:
                _pin(value, key)
        if self.number_display not in NUMBER_DISPLAY_KINDS:
            raise ValueError(
                f"{where}.number_display: {self.number_display!r} is not one of "
                f"{', '.join(NUMBER_DISPLAY_KINDS)}"
            )
        if self.number_display == "segments" and self.display_segments is None:
            raise ValueError(
                f'{where}.display_segments: number_display = "segments" needs the '
                f"{SEGMENT_COUNT} segment pins a..g"
            )
        if self.number_display == "max7219" and self.display_segments is not None:
            raise ValueError(
                f"{where}.display_segments: the digit is on the MAX7219 chain "
                '(number_display = "max7219"); set number_display = "segments" to use pins'
            )
        if self.display_dp is not None and self.display_segments is None:
            raise ValueError(f"{where}.display_dp: only with display_segments")
        if self.uses_spi:
            for key, pin in self.assignments(where):
                if pin in SPI0_PINS:
                    raise ValueError(
                        f"{key}: pin {pin} belongs to SPI0 (BCM 8-11), which drives the MAX7219 "
                        'display chain (number_display = "max7219" or sign_modules > 0)'
                    )
        self._check_unique(where)

    def assignments(self, where: str = "pins") -> list[tuple[str, int]]:
        """Every (key path, pin) of this wiring, in declaration order, fitted devices only."""
        out: list[tuple[str, int]] = []
        for name in PIN_KEYS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, tuple):
                out.extend((f"{where}.{name}[{i}]", pin) for i, pin in enumerate(value))
            else:
                out.append((f"{where}.{name}", value))
        return out

    def output_pins(self) -> list[int]:
        """The pins driven as outputs (lights and, with ``number_display = "segments"``, the
        segments): what the safe state must leave dark."""
        pins = list(self.acceptor_lights)
        if self.display_segments is not None:
            pins.extend(self.display_segments)
        if self.display_dp is not None:
            pins.append(self.display_dp)
        return pins

    def _check_unique(self, where: str) -> None:
        seen: dict[int, str] = {}
        for key, pin in self.assignments(where):
            if pin in seen:
                raise ValueError(f"{key}: pin {pin} is also used by {seen[pin]}")
            seen[pin] = key


def _kind(value: object) -> str:
    return describe(value)


def _choice(
    data: Mapping[str, object], name: str, default: str, allowed: tuple[str, ...], where: str
) -> str:
    value = data.get(name, default)
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(
            f"{where}.{name}: expected one of {', '.join(repr(a) for a in allowed)}, "
            f"got {_kind(value)}"
        )
    return value


def _int(
    data: Mapping[str, object], name: str, default: int, low: int, high: int, where: str
) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{where}.{name}: expected an integer {low}..{high}, got {_kind(value)}")
    return value


def _pin(value: object, key: str) -> int:
    # bool is an int subclass: `true` in TOML must not silently mean pin 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key}: expected a BCM pin number (integer), got {_kind(value)}")
    if value in SAS_UART_PINS:
        raise ValueError(f"{key}: pin {value} is reserved for the SAS UART (BCM 14/15)")
    if not FIRST_HEADER_PIN <= value <= LAST_HEADER_PIN:
        raise ValueError(
            f"{key}: pin {value} does not exist on the 40-pin header "
            f"(usable BCM {FIRST_HEADER_PIN}..{LAST_HEADER_PIN}; 0/1 hold the HAT ID EEPROM)"
        )
    return value


def _pin_list(value: object, key: str, count: int) -> tuple[int, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise ValueError(f"{key}: expected a list of {count} BCM pin numbers, got {_kind(value)}")
    if len(value) != count:
        raise ValueError(f"{key}: expected exactly {count} pins, got {len(value)}")
    return tuple(_pin(item, f"{key}[{i}]") for i, item in enumerate(value))
