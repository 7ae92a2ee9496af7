"""``[sas]``: the floor link's configuration, validated at load (docs/sas.md lists every key).

Responsible for the keys of ``[sas]`` and their allowed values, with messages that name the key.
Must never open a port or read the journal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drivers.sas import codec

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


def _kind(value: object) -> str:
    return f"{type(value).__name__} {value!r}"


def _ascii(
    data: Mapping[str, Any], key: str, default: str, lo: int, hi: int, problems: list[str]
) -> str:
    value = data.get(key, default)
    if (
        not isinstance(value, str)
        or not value.isascii()
        or not value.isprintable()
        or not lo <= len(value) <= hi
    ):
        size = f"{lo}" if lo == hi else f"{lo} to {hi}"
        problems.append(f"sas.{key}: must be {size} printable ASCII characters, got {_kind(value)}")
        return default
    return value


def _bool(data: Mapping[str, Any], key: str, default: bool, problems: list[str]) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        problems.append(f"sas.{key}: must be true or false, got {_kind(value)}")
        return default
    return value


def _int(
    data: Mapping[str, Any], key: str, default: int, lo: int, hi: int, problems: list[str]
) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        problems.append(f"sas.{key}: must be an integer {lo}..{hi}, got {_kind(value)}")
        return default
    return value


def _hex_code(text: object, where: str, problems: list[str]) -> int | None:
    if isinstance(text, str) and len(text) == 2:
        try:
            return int(text, 16)
        except ValueError:
            pass
    problems.append(f'{where}: {text!r} is not a two-digit hex code such as "1A"')
    return None


def parse_sas(raw: object, problems: list[str]) -> SasSection:
    """The validated ``[sas]`` table; each problem appended names its key."""
    from controller.floor.meters import SOURCES

    if not isinstance(raw, Mapping):
        problems.append(f"sas: must be a table ([sas]), got {_kind(raw)}")
        return SasSection()
    data = raw
    for key in data:
        if key not in KEYS:
            problems.append(f"sas.{key}: unknown key (allowed: {', '.join(KEYS)})")
    d = SasSection()
    enabled = _bool(data, "enabled", True, problems)
    address = _int(data, "address", 1, 1, 127, problems)
    transport = data.get("transport", d.transport)
    if transport not in TRANSPORTS:
        problems.append(
            f"sas.transport: must be one of {', '.join(TRANSPORTS)}, got {_kind(transport)}"
        )
        transport = d.transport
    port = data.get("port", SAS_DEFAULT_PORT)
    if not isinstance(port, str) or not port:
        problems.append(f"sas.port: must be a non-empty string, got {_kind(port)}")
        port = SAS_DEFAULT_PORT
    elif transport == "uart" and not port.startswith("/dev/"):
        problems.append(f"sas.port: must be a device path under /dev/, got {port!r}")
    elif transport == "stream" and not (port.startswith("/dev/") or port.startswith("socket://")):
        problems.append(
            f"sas.port: a stream is a device path under /dev/ or socket://HOST:PORT, got {port!r}"
        )
    version = data.get("sas_version", d.sas_version)
    if not isinstance(version, str) or len(version) != 3 or not version.isdigit():
        problems.append(f'sas.sas_version: must be 3 digits such as "602", got {_kind(version)}')
        version = d.sas_version
    polls_raw = data.get("enabled_polls", None)
    polls = d.enabled_polls
    if polls_raw is not None:
        if not isinstance(polls_raw, list):
            problems.append(
                f"sas.enabled_polls: must be a list of hex codes, got {_kind(polls_raw)}"
            )
        else:
            chosen: list[int] = []
            for i, item in enumerate(polls_raw):
                code = _hex_code(item, f"sas.enabled_polls[{i}]", problems)
                if code is None:
                    continue
                if code not in codec.POLLS:
                    known = " ".join(f"{c:02X}" for c in ALL_POLLS)
                    problems.append(
                        f"sas.enabled_polls[{i}]: {item!r} is not a poll the table answers "
                        f"({known})"
                    )
                    continue
                chosen.append(code)
            polls = tuple(sorted(set(chosen)))
    gap = data.get("inter_byte_gap", None)
    if gap is not None and (
        isinstance(gap, bool) or not isinstance(gap, int | float) or not 0.001 <= gap <= 1.0
    ):
        problems.append(f"sas.inter_byte_gap: must be 0.001 to 1.0 seconds, got {_kind(gap)}")
        gap = None
    meters_raw = data.get("meters", {})
    meters = dict(DEFAULT_METERS)
    if not isinstance(meters_raw, Mapping):
        problems.append(
            f'sas.meters: must be a table of "CODE" = "source", got {_kind(meters_raw)}'
        )
    else:
        for key, source in meters_raw.items():
            code = _hex_code(key, f"sas.meters.{key}", problems)
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
        port=str(port),
        transport=str(transport),
        sas_version=str(version),
        serial_number=_ascii(data, "serial_number", "", 0, 40, problems),
        game_id=_ascii(data, "game_id", d.game_id, 2, 2, problems),
        additional_id=_ascii(data, "additional_id", d.additional_id, 3, 3, problems),
        paytable_id=_ascii(data, "paytable_id", d.paytable_id, 6, 6, problems),
        base_percent=_ascii(data, "base_percent", d.base_percent, 4, 4, problems),
        enabled_polls=polls,
        inter_byte_gap=None if gap is None else float(gap),
        clock_setting_allowed=_bool(data, "clock_setting_allowed", False, problems),
        progressive_depends_on_link=_bool(data, "progressive_depends_on_link", False, problems),
        chirp=_bool(data, "chirp", True, problems),
        exception_queue=_int(data, "exception_queue", 20, 20, 1000, problems),
        frame_log=_int(data, "frame_log", 500, 10, 100_000, problems),
        meters=meters,
    )
