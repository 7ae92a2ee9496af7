"""``[sas]``: the floor link's configuration, validated at load (docs/sas.md lists every key).

Responsible for the keys of ``[sas]`` and their allowed values, with messages that name the key,
read with `fsm.configread` (the one reader set: NaN, infinity, booleans as numbers refused as
everywhere). Must never open a port or read the journal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from controller.floor.meters import SOURCES
from drivers.sas import codec
from fsm.configread import (
    REQUIRED,
    ConfigValueError,
    Reader,
    describe,
    str_value,
    unknown_keys,
)

SAS_DEFAULT_PORT = "/dev/ttyAMA0"
TRANSPORTS = ("uart", "stream")
#: Where each SAS meter code (2F / 6F / AF and the fixed polls) takes its value from: a source
#: of ``controller.floor.meters.SOURCES``. Codes are two hex digits; see docs/sas.md.
DEFAULT_METERS: dict[int, str] = {
    0x00: "wagered_cents",  # coin in: progressive wagers, in cents (denomination 01)
    0x01: "tray_paid_cents",  # coin out: fixed awards paid from the rack
    0x02: "meter_paid_cents",  # jackpot: meter-funded awards, hand paid
    0x04: "zero",  # cancelled credits
    0x05: "progressive_in",  # games played: qualifying progressive wagers
    0x06: "wins",  # games won
    0x07: "losses",  # games lost
    0x0C: "zero",  # current credits (always 0: chips, not credits)
    0x1C: "tray_paid_cents",  # machine-paid paytable win
    0x1D: "zero",  # machine-paid progressive win (every meter award is hand paid)
    0x1F: "zero",  # attendant-paid paytable win
    0x20: "meter_paid_cents",  # attendant-paid progressive win
    0x22: "paid_cents",  # total won credits
    0x24: "zero",  # drop
}
ALL_POLLS = tuple(sorted(codec.POLLS))


@dataclass(frozen=True)
class SasSection:
    """``[sas]``: the floor-system link (SAS gaming-machine role on the PL011 UART)."""

    enabled: bool = True
    address: int = 1
    port: str = SAS_DEFAULT_PORT
    transport: str = "uart"
    sas_version: str = "602"
    serial_number: str = ""
    game_id: str = "PG"
    additional_id: str = "000"
    paytable_id: str = "PGPROG"
    base_percent: str = "0000"
    enabled_polls: tuple[int, ...] = ALL_POLLS
    inter_byte_gap: float | None = None  # None: 0.005 s on the UART, 0.05 s on a stream
    clock_setting_allowed: bool = False
    progressive_depends_on_link: bool = False
    chirp: bool = True
    exception_queue: int = 20
    frame_log: int = 500
    meters: Mapping[int, str] = field(default_factory=lambda: dict(DEFAULT_METERS))

    @property
    def gap_s(self) -> float:
        if self.inter_byte_gap is not None:
            return self.inter_byte_gap
        return 0.005 if self.transport == "uart" else 0.05


KEYS = (
    "enabled",
    "address",
    "port",
    "transport",
    "sas_version",
    "serial_number",
    "game_id",
    "additional_id",
    "paytable_id",
    "base_percent",
    "enabled_polls",
    "inter_byte_gap",
    "clock_setting_allowed",
    "progressive_depends_on_link",
    "chirp",
    "exception_queue",
    "frame_log",
    "meters",
)


T = TypeVar("T")


def _collect(problems: list[str], default: T, read: Callable[[], T]) -> T:
    """``read()``, or ``default`` with its `ConfigValueError` appended to ``problems``."""
    try:
        return read()
    except ConfigValueError as exc:
        problems.append(str(exc))
        return default


def _ascii_reader(lo: int, hi: int) -> Callable[[object, str], str]:
    size = f"{lo}" if lo == hi else f"{lo} to {hi}"

    def read(value: object, key: str) -> str:
        text = str_value(value, key, empty=True, what=f"{size} printable ASCII characters")
        if not text.isascii() or not text.isprintable() or not lo <= len(text) <= hi:
            raise ConfigValueError(
                key, f"must be {size} printable ASCII characters, got {describe(value)}"
            )
        return text

    return read


def _hex_code(text: object, where: str) -> int:
    if (
        isinstance(text, str)
        and len(text) == 2
        and all(c in "0123456789abcdefABCDEF" for c in text)
    ):
        return int(text, 16)
    raise ConfigValueError(where, f'{text!r} is not a two-digit hex code such as "1A"')


def _poll_code(item: object, where: str) -> int:
    code = _hex_code(item, where)
    if code not in codec.POLLS:
        known = " ".join(f"{c:02X}" for c in ALL_POLLS)
        raise ConfigValueError(where, f"{item!r} is not a poll the table answers ({known})")
    return code


def _port(value: object, key: str, transport: str) -> str:
    port = str_value(value, key, what="a non-empty string")
    if not port.isprintable():
        raise ConfigValueError(key, f"control characters are not allowed, got {port!r}")
    if transport == "uart" and not port.startswith("/dev/"):
        raise ConfigValueError(key, f"must be a device path under /dev/, got {port!r}")
    if transport == "stream" and not (port.startswith("/dev/") or port.startswith("socket://")):
        raise ConfigValueError(
            key, f"a stream is a device path under /dev/ or socket://HOST:PORT, got {port!r}"
        )
    return port


def parse_sas(raw: object, problems: list[str]) -> SasSection:
    """The validated ``[sas]`` table, read with `fsm.configread` (the one reader set); each
    problem appended names its key."""

    if not isinstance(raw, Mapping):
        problems.append(f"sas: must be a table ([sas]), got {describe(raw)}")
        return SasSection()
    r = Reader(raw, "sas", KEYS, check=False)
    problems.extend(str(p) for p in unknown_keys(raw, "sas", KEYS))
    d = SasSection()

    def get(default: T, read: Callable[[], T]) -> T:
        return _collect(problems, default, read)

    def text(key: str, default: str, lo: int, hi: int) -> str:
        return get(default, lambda: _ascii_reader(lo, hi)(r.raw(key, default), r.path(key)))

    enabled = get(True, lambda: r.boolean("enabled", True))
    address = get(1, lambda: r.integer("address", 1, 1, 127))
    transport = get(d.transport, lambda: r.choice("transport", TRANSPORTS, d.transport))
    port = get(
        SAS_DEFAULT_PORT, lambda: _port(r.raw("port", SAS_DEFAULT_PORT), r.path("port"), transport)
    )
    version = get(
        d.sas_version,
        lambda: r.string(
            "sas_version", d.sas_version, pattern="[0-9]{3}", what='3 digits such as "602"'
        ),
    )
    polls = d.enabled_polls
    if r.has("enabled_polls"):
        items = r.data["enabled_polls"]
        if not isinstance(items, list):
            problems.append(
                f"sas.enabled_polls: must be a list of hex codes, got {describe(items)}"
            )
        else:
            chosen: set[int] = set()
            for i, item in enumerate(items):
                where = f"sas.enabled_polls[{i}]"
                poll: int | None = get(None, partial(_poll_code, item, where))
                if poll is not None:
                    chosen.add(poll)
            polls = tuple(sorted(chosen))
    gap: float | None = None
    if r.has("inter_byte_gap"):
        gap = get(None, lambda: r.number("inter_byte_gap", REQUIRED, 0.001, 1.0, unit="seconds"))
    meters = dict(DEFAULT_METERS)
    empty: Mapping[str, object] = {}
    meters_raw = get(empty, lambda: r.mapping("meters"))
    for key, source in meters_raw.items():
        code: int | None = get(None, partial(_hex_code, key, f"sas.meters.{key}"))
        if code is None:
            continue
        if source not in SOURCES:
            problems.append(
                f"sas.meters.{key}: {source!r} is not a source ({', '.join(sorted(SOURCES))})"
            )
            continue
        meters[code] = str(source)
    return SasSection(
        enabled=enabled,
        address=address,
        port=port,
        transport=transport,
        sas_version=version,
        serial_number=text("serial_number", "", 0, 40),
        game_id=text("game_id", d.game_id, 2, 2),
        additional_id=text("additional_id", d.additional_id, 3, 3),
        paytable_id=text("paytable_id", d.paytable_id, 6, 6),
        base_percent=text("base_percent", d.base_percent, 4, 4),
        enabled_polls=polls,
        inter_byte_gap=gap,
        clock_setting_allowed=get(False, lambda: r.boolean("clock_setting_allowed", False)),
        progressive_depends_on_link=get(
            False, lambda: r.boolean("progressive_depends_on_link", False)
        ),
        chirp=get(True, lambda: r.boolean("chirp", True)),
        exception_queue=get(20, lambda: r.integer("exception_queue", 20, 20, 1000)),
        frame_log=get(500, lambda: r.integer("frame_log", 500, 10, 100_000)),
        meters=meters,
    )
