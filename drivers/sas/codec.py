"""The SAS wire codec: CRC-16/KERMIT, packed BCD, the poll table and the bytes of every frame the
gaming-machine side of the floor link receives or sends (docs/sas.md, reference/sas.md).

Responsible only for turning values into bytes and bytes into values, byte for byte as the
protocol lays them out. Must never keep state, touch a port or a clock, or know what a meter
means to the table (the floor package maps the table's meters onto these fields).

Layouts (``a`` address, ``c`` command, ``CRC`` two bytes, low byte first):
    general poll        0x80 | a                          answer: one exception byte
    R-type long poll    a c                               (no CRC)
    S-type long poll    a c data(fixed length) CRC
    M-type long poll    a c length data(length) CRC       (2F, 6F, AF)
    data answer         a c data CRC;  ACK = a;  NACK = a | 0x80
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

KERMIT_POLY = 0x8408  # 0x1021 reflected
KERMIT_CHECK = 0x2189  # crc16_kermit(b"123456789")


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ KERMIT_POLY if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _make_table()


def crc16_kermit(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-16/KERMIT: poly 0x1021 reflected, init 0, no final xor. Over a frame that ends with
    its own CRC (low byte first) the result is 0."""
    for byte in bytes(data):
        crc = (crc >> 8) ^ _TABLE[(crc ^ byte) & 0xFF]
    return crc


def with_crc(body: bytes | bytearray) -> bytes:
    """``body`` followed by its CRC, low byte first."""
    crc = crc16_kermit(body)
    return bytes(body) + bytes((crc & 0xFF, crc >> 8))


def crc_ok(frame: bytes | bytearray) -> bool:
    return len(frame) >= 3 and crc16_kermit(frame) == 0


class BcdError(ValueError):
    """A byte that is not two decimal digits."""


def bcd_max(size: int) -> int:
    """The largest number ``size`` BCD bytes carry: 4 bytes 99,999,999, 5 bytes 9,999,999,999."""
    return int(10 ** (2 * size)) - 1


def bcd(value: int, size: int) -> bytes:
    """``value`` as ``size`` bytes of packed BCD, most significant digit first. A value that
    does not fit shows its lowest digits (SAS meters roll over); a negative one is an error."""
    if value < 0:
        raise ValueError(f"BCD of a negative number: {value}")
    digits = f"{value % (10 ** (2 * size)):0{2 * size}d}"
    return bytes(int(digits[i : i + 2], 16) for i in range(0, 2 * size, 2))


def from_bcd(data: bytes | bytearray | Sequence[int]) -> int:
    """The number in packed BCD ``data``; BcdError names a byte that is not two digits."""
    value = 0
    for byte in data:
        hi, lo = byte >> 4, byte & 0x0F
        if hi > 9 or lo > 9:
            raise BcdError(f"0x{byte:02X} is not a BCD byte")
        value = value * 100 + hi * 10 + lo
    return value


# ------------------------------------------------------------------------------------ polls
@dataclass(frozen=True)
class PollSpec:
    """How a long poll is framed: ``kind`` R (a c), S (a c data[size] CRC) or M (a c len data
    CRC)."""

    command: int
    name: str
    kind: str
    size: int = 0


def _specs(items: Iterable[tuple[int, str, str, int]]) -> dict[int, PollSpec]:
    return {c: PollSpec(c, n, k, s) for c, n, k, s in items}


#: Every long poll the table answers (the minimum list of reference/sas.md).
POLLS: dict[int, PollSpec] = _specs(
    [
        (0x01, "shut down (refuse progressive wagers)", "S", 0),
        (0x02, "start up (accept progressive wagers)", "S", 0),
        (0x09, "enable/disable game N", "S", 3),
        (0x0F, "meters 10-15", "R", 0),
        (0x10, "cancelled credits", "R", 0),
        (0x11, "coin in", "R", 0),
        (0x12, "coin out", "R", 0),
        (0x13, "drop", "R", 0),
        (0x14, "jackpot", "R", 0),
        (0x15, "games played", "R", 0),
        (0x16, "games won", "R", 0),
        (0x17, "games lost", "R", 0),
        (0x18, "games since power up / door", "R", 0),
        (0x19, "meters 11-15", "R", 0),
        (0x1A, "current credits", "R", 0),
        (0x1B, "handpay information", "R", 0),
        (0x1C, "meters", "R", 0),
        (0x1F, "machine ID and information", "R", 0),
        (0x21, "ROM signature verification", "S", 2),
        (0x2F, "selected meters for game N", "M", 0),
        (0x51, "number of games", "R", 0),
        (0x52, "game N meters", "S", 2),
        (0x53, "game N configuration", "S", 2),
        (0x54, "SAS version and serial number", "R", 0),
        (0x55, "selected game number", "R", 0),
        (0x56, "enabled game numbers", "R", 0),
        (0x6F, "extended meters for game N", "M", 0),
        (0xAF, "extended meters for game N (alt)", "M", 0),
        (0x7E, "current date and time", "R", 0),
        (0x7F, "set date and time", "S", 7),
        (0x83, "cumulative progressive wins", "S", 2),
        (0x84, "last progressive win", "R", 0),
    ]
)

#: Exception codes the table raises (general poll answers).
EXCEPTIONS: dict[int, str] = {
    0x00: "none",
    0x11: "door opened",
    0x12: "door closed",
    0x17: "AC power applied",
    0x18: "AC power lost",
    0x20: "general tilt",
    0x3C: "operator changed options",
    0x51: "handpay pending",
    0x52: "handpay reset",
    0x54: "progressive win",
    0x70: "exception buffer overflow",
    0x7A: "soft meters reset",
    0x7E: "game started",
    0x7F: "game ended",
    0x86: "out of service",
}

#: Meter codes (2F / 6F / AF) whose values are 5 BCD bytes; every other code is 4.
FIVE_BYTE_METERS = frozenset({0x0D, 0x0E, 0x0F, 0x10, *range(0x80, 0xBD, 2)})


def meter_size(code: int) -> int:
    return 5 if code in FIVE_BYTE_METERS else 4


def general_poll(address: int) -> bytes:
    return bytes((0x80 | address,))


def r_poll(address: int, command: int) -> bytes:
    return bytes((address, command))


def s_poll(address: int, command: int, data: bytes = b"") -> bytes:
    return with_crc(bytes((address, command)) + data)


def m_poll(address: int, command: int, data: bytes) -> bytes:
    return with_crc(bytes((address, command, len(data))) + data)


def poll_name(command: int) -> str:
    spec = POLLS.get(command)
    return spec.name if spec else f"unknown poll 0x{command:02X}"


def expected_length(head: bytes | bytearray) -> int | None:
    """Total length of the long poll that starts with ``head`` (address, command[, length]), or
    None while more bytes are needed to know it. -1: an unknown command (cannot be framed)."""
    if len(head) < 2:
        return None
    spec = POLLS.get(head[1])
    if spec is None:
        return -1
    if spec.kind == "R":
        return 2
    if spec.kind == "S":
        return 2 + spec.size + 2
    if len(head) < 3:
        return None
    return 3 + head[2] + 2


# ------------------------------------------------------------------------------------ answers
def ack(address: int) -> bytes:
    return bytes((address,))


def nack(address: int) -> bytes:
    return bytes((address | 0x80,))


def answer(address: int, command: int, data: bytes) -> bytes:
    return with_crc(bytes((address, command)) + data)


def meters_answer(address: int, command: int, values: Sequence[int], size: int = 4) -> bytes:
    """0F, 10-17, 19, 1A, 1C: the values as BCD fields in order."""
    return answer(address, command, b"".join(bcd(v, size) for v in values))


def handpay_answer(
    address: int, group: int, level: int, amount_cents: int, partial_cents: int, reset_id: int
) -> bytes:
    """1B: group, level, amount (5 BCD), partial pay (2 BCD), reset ID, 10 unused bytes."""
    data = bytes((group, level)) + bcd(amount_cents, 5) + bcd(partial_cents, 2)
    return answer(address, 0x1B, data + bytes((reset_id,)) + bytes(10))


def _ascii(text: str, size: int, what: str) -> bytes:
    raw = text.encode("ascii")
    if len(raw) != size:
        raise ValueError(f"{what}: {text!r} must be {size} ASCII characters")
    return raw


def machine_info(
    game_id: str,
    additional_id: str,
    denomination: int,
    max_bet: int,
    progressive_group: int,
    game_options: int,
    paytable_id: str,
    base_percent: str,
) -> bytes:
    return (
        _ascii(game_id, 2, "game id")
        + _ascii(additional_id, 3, "additional id")
        + bytes((denomination, max_bet, progressive_group))
        + game_options.to_bytes(2, "little")
        + _ascii(paytable_id, 6, "paytable id")
        + _ascii(base_percent, 4, "base percentage")
    )


def version_answer(address: int, version: str, serial_number: str) -> bytes:
    """54: length, version (3 ASCII), serial number (ASCII, up to 40)."""
    body = _ascii(version, 3, "SAS version") + serial_number.encode("ascii")
    if len(body) > 43:
        raise ValueError("serial number: at most 40 ASCII characters")
    return answer(address, 0x54, bytes((len(body),)) + body)


def rom_signature_answer(address: int, signature: int) -> bytes:
    """21: the 16-bit ROM signature, binary, low byte first (docs/sas.md, "21")."""
    return answer(address, 0x21, signature.to_bytes(2, "little"))


def game_number_answer(address: int, command: int, game: int) -> bytes:
    """51 (number of games) and 55 (selected game): 2 BCD."""
    return answer(address, command, bcd(game, 2))


def enabled_games_answer(address: int, games: Sequence[int]) -> bytes:
    """56: length, number of games, the game numbers (2 BCD each)."""
    body = bytes((len(games),)) + b"".join(bcd(g, 2) for g in games)
    return answer(address, 0x56, bytes((len(body),)) + body)


def game_meters_answer(
    address: int, game: int, coin_in: int, coin_out: int, jackpot: int, games: int
) -> bytes:
    """52: game (2 BCD), coin in, coin out, jackpot, games played (4 BCD each)."""
    data = bcd(game, 2) + b"".join(bcd(v, 4) for v in (coin_in, coin_out, jackpot, games))
    return answer(address, 0x52, data)


def selected_meters_answer(address: int, game: int, meters: Sequence[tuple[int, int]]) -> bytes:
    """2F: length, game (2 BCD), then code (1 byte) and value (4 or 5 BCD) for each code."""
    body = bcd(game, 2) + b"".join(
        bytes((code,)) + bcd(value, meter_size(code)) for code, value in meters
    )
    return answer(address, 0x2F, bytes((len(body),)) + body)


def extended_meters_answer(
    address: int, command: int, game: int, meters: Sequence[tuple[int, int | None]]
) -> bytes:
    """6F / AF: length, game (2 BCD), then code (2 bytes, LSB first), size, value (size BCD);
    an unsupported meter (value None) has size 0 and no value."""
    parts = [bcd(game, 2)]
    for code, value in meters:
        if value is None:
            parts.append(code.to_bytes(2, "little") + b"\x00")
        else:
            size = meter_size(code)
            parts.append(code.to_bytes(2, "little") + bytes((size,)) + bcd(value, size))
    body = b"".join(parts)
    return answer(address, command, bytes((len(body),)) + body)


def date_time_bytes(month: int, day: int, year: int, hour: int, minute: int, second: int) -> bytes:
    """MMDDYYYY HHMMSS in BCD (7 bytes)."""
    return (
        bcd(month, 1) + bcd(day, 1) + bcd(year, 2) + bcd(hour, 1) + bcd(minute, 1) + bcd(second, 1)
    )


def parse_date_time(data: bytes | bytearray) -> tuple[int, int, int, int, int, int]:
    """(month, day, year, hour, minute, second) of 7 BCD bytes; BcdError for bad BCD, ValueError
    for an impossible date or time."""
    if len(data) != 7:
        raise ValueError("date and time: 7 bytes expected")
    month, day, year = from_bcd(data[0:1]), from_bcd(data[1:2]), from_bcd(data[2:4])
    hour, minute, second = from_bcd(data[4:5]), from_bcd(data[5:6]), from_bcd(data[6:7])

    datetime.datetime(year, month, day, hour, minute, second)  # raises ValueError
    return month, day, year, hour, minute, second


def date_time_answer(
    address: int, month: int, day: int, year: int, hour: int, minute: int, second: int
) -> bytes:
    return answer(address, 0x7E, date_time_bytes(month, day, year, hour, minute, second))


def cumulative_progressive_answer(address: int, game: int, amount: int) -> bytes:
    """83: game (2 BCD), cumulative progressive wins (4 BCD credits)."""
    return answer(address, 0x83, bcd(game, 2) + bcd(amount, 4))


def last_progressive_answer(address: int, group: int, level: int, amount_cents: int) -> bytes:
    """84: group, level, amount (5 BCD cents)."""
    return answer(address, 0x84, bytes((group, level)) + bcd(amount_cents, 5))


def game_config_answer(address: int, game: int, info: bytes) -> bytes:
    """53: game (2 BCD) then the machine information of 1F."""
    return answer(address, 0x53, bcd(game, 2) + info)
