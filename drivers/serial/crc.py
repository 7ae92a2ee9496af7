"""CRC-16/CCITT-FALSE, the check sequence of every frame on the shoe and shuffler links.

Parameters (Rocksoft model): width 16, poly 0x1021, init 0xFFFF, refin false, refout false,
xorout 0x0000; check value over ASCII "123456789" is 0x29B1. This module must never know about
frames or devices: it only computes the checksum of bytes.
"""

from __future__ import annotations

import binascii

POLY = 0x1021
INIT = 0xFFFF
CHECK = 0x29B1  # crc16_ccitt_false(b"123456789")


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ POLY) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_TABLE = _make_table()


def crc16_ccitt_false(data: bytes | bytearray | memoryview, crc: int = INIT) -> int:
    """CRC-16/CCITT-FALSE of ``data``; pass a previous result as ``crc`` to continue.

    ``binascii.crc_hqx`` is the same polynomial, unreflected, without final XOR (C speed); it
    equals CRC-16/CCITT-FALSE when started from 0xFFFF (checked against the table version)."""
    return binascii.crc_hqx(data, crc)


def crc16_ccitt_false_table(data: bytes | bytearray | memoryview, crc: int = INIT) -> int:
    """The same CRC computed byte by byte from its definition (reference for the tests)."""
    table = _TABLE
    for byte in bytes(data):
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ byte) & 0xFF]
    return crc
