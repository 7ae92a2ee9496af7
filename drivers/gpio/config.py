"""Which BCM pin each table device is wired to: the `pins` section of the configuration.

Responsible for the default wiring and for refusing a wiring that cannot work (a pin used twice, a
pin of the SAS UART, a number that is not on the 40-pin header, a value of the wrong type) with a
ValueError that names the key. Must never touch a pin: it only validates numbers.

Defaults (BCM numbers; see docs/wiring.md for the reasons):

=====================  ===========================  ==========================================
key                    default                      device
=====================  ===========================  ==========================================
acceptor_sensors       [5, 6, 7, 8, 9, 10]          chip sensor of acceptor 1..6 (in)
acceptor_lights        [16, 17, 18, 19, 20, 21]     light of acceptor 1..6 (out)
lockout_button         2                            lock-out button, "no more bets" (in)
panel_next             3                            dealer panel NEXT (in)
panel_void             4                            dealer panel VOID (in)
supervisor_key         11                           supervisor key switch (in, held)
shaker                 12                           dice-shaker sensor (in)
shaker_lid             absent (not fitted)          shaker lid-lifted sensor (in, held)
display_segments       [13, 22, 23, 24, 25, 26, 27] number display segments a..g (out)
display_dp             absent (not fitted)          number display decimal point (out)
=====================  ===========================  ==========================================

The 40-pin header offers BCM 2..27 minus 14/15 (kept for the SAS UART): 24 pins, and the defaults
use all 24, so ``shaker_lid`` and ``display_dp`` can only be fitted on a table that frees a pin.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

ACCEPTOR_COUNT = 6
FIRST_HEADER_PIN = 2
LAST_HEADER_PIN = 27
SAS_UART_PINS = (14, 15)


@dataclass(frozen=True)
class PinConfig:
    """BCM pin numbers of every GPIO device of the table (validated by :meth:`from_mapping`)."""

    acceptor_sensors: tuple[int, ...] = (5, 6, 7, 8, 9, 10)
    acceptor_lights: tuple[int, ...] = (16, 17, 18, 19, 20, 21)
    lockout_button: int = 2
    panel_next: int = 3
    panel_void: int = 4
    supervisor_key: int = 11
    shaker: int = 12
    shaker_lid: int | None = None
    display_segments: tuple[int, ...] = (13, 22, 23, 24, 25, 26, 27)
    display_dp: int | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str = "pins") -> PinConfig:
        """Build from the `pins` table of the configuration; missing keys take the defaults.

        Raises ValueError whose message starts with the full key path, e.g.
        ``pins.acceptor_sensors[2]: pin 14 is reserved for the SAS UART``.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected a table of pin numbers, got {_kind(data)}")
        allowed = [f.name for f in fields(cls)]
        for key in data:
            if key not in allowed:
                raise ValueError(
                    f"{where}.{key}: unknown key (allowed: {', '.join(allowed)})"
                    if isinstance(key, str)
                    else f"{where}: keys must be strings, got {key!r}"
                )
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
            return _pin_list(data[name], f"{where}.{name}", len(fallback))

        config = cls(
            acceptor_sensors=many("acceptor_sensors", d.acceptor_sensors),
            acceptor_lights=many("acceptor_lights", d.acceptor_lights),
            lockout_button=one("lockout_button", d.lockout_button),
            panel_next=one("panel_next", d.panel_next),
            panel_void=one("panel_void", d.panel_void),
            supervisor_key=one("supervisor_key", d.supervisor_key),
            shaker=one("shaker", d.shaker),
            shaker_lid=maybe("shaker_lid", d.shaker_lid),
            display_segments=many("display_segments", d.display_segments),
            display_dp=maybe("display_dp", d.display_dp),
        )
        config.validate(where)
        return config

    def validate(self, where: str = "pins") -> None:
        """Check this wiring as :meth:`from_mapping` does (for a PinConfig built in code)."""
        for f in fields(self):
            value = getattr(self, f.name)
            key = f"{where}.{f.name}"
            if isinstance(getattr(PinConfig, f.name, None), tuple):
                _pin_list(value, key, len(getattr(PinConfig, f.name)))
            elif value is not None or f.name not in ("shaker_lid", "display_dp"):
                _pin(value, key)
        self._check_unique(where)

    def assignments(self, where: str = "pins") -> list[tuple[str, int]]:
        """Every (key path, pin) of this wiring, in declaration order, fitted devices only."""
        out: list[tuple[str, int]] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, tuple):
                out.extend((f"{where}.{f.name}[{i}]", pin) for i, pin in enumerate(value))
            else:
                out.append((f"{where}.{f.name}", value))
        return out

    def _check_unique(self, where: str) -> None:
        seen: dict[int, str] = {}
        for key, pin in self.assignments(where):
            if pin in seen:
                raise ValueError(f"{key}: pin {pin} is also used by {seen[pin]}")
            seen[pin] = key


def _kind(value: object) -> str:
    return f"{type(value).__name__} {value!r}"


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
