"""Every fault code a serial device adapter can raise, in one place.

A fault reaches the round as the record ``FaultRaised(code, device, detail)``; the round
machine decides what it means for the game. This module must never decide a game rule: it only
names faults (docs/device-protocol.md lists them with their causes).
"""

from __future__ import annotations

from typing import Final

# Communication faults (any serial device), held in the fault set until the device answers again
# (`device_recovered`); PROTOCOL_ERROR alone is cleared by a supervisor.
LINK_TIMEOUT: Final = "LINK_TIMEOUT"  # no valid frame from the device past its silence timeout
PORT_LOST: Final = "PORT_LOST"  # the serial port vanished or cannot be opened (USB unplugged)
COMMAND_NOT_DELIVERED: Final = "COMMAND_NOT_DELIVERED"  # retries exhausted / device silent
RESPONSE_TIMEOUT: Final = "RESPONSE_TIMEOUT"  # command acknowledged, no answer in time
PROTOCOL_ERROR: Final = "PROTOCOL_ERROR"  # a malformed or unexpected message from the device
# Garbage or damaged frames past the line's noise rate (drivers/serial/noise.py); the link itself
# recovered every time, so no healthy report follows: a supervisor clears it.
LINE_NOISE: Final = "LINE_NOISE"

# Errors reported by the shoe.
SHOE_JAM: Final = "SHOE_JAM"
SHOE_MISDEAL: Final = "SHOE_MISDEAL"  # a stack was not dealt with the cards commanded
SHOE_EMPTY: Final = "SHOE_EMPTY"  # not enough cards for the dispense commanded

# Errors reported by the shuffler.
SHUFFLER_JAM: Final = "SHUFFLER_JAM"

# Errors either device may report.
DEVICE_BUSY: Final = "DEVICE_BUSY"
DEVICE_REJECTED: Final = "DEVICE_REJECTED"  # the device refused a command as malformed
DEVICE_HARDWARE: Final = "DEVICE_HARDWARE"

DECK_COUNT_PREFIX: Final = "DECK_COUNT_"
EXPECTED_DECK_COUNT: Final = 53  # NY 5324.41(b): 52 cards and one joker

COMMUNICATION_FAULTS: Final = frozenset(
    {LINK_TIMEOUT, PORT_LOST, COMMAND_NOT_DELIVERED, RESPONSE_TIMEOUT, PROTOCOL_ERROR}
)
DEVICE_FAULTS: Final = frozenset(
    {
        SHOE_JAM,
        SHOE_MISDEAL,
        SHOE_EMPTY,
        SHUFFLER_JAM,
        DEVICE_BUSY,
        DEVICE_REJECTED,
        DEVICE_HARDWARE,
    }
)


def deck_count_code(count: int) -> str:
    """``DECK_COUNT_52`` for a shuffler that counted 52 cards instead of 53."""
    return f"{DECK_COUNT_PREFIX}{count}"


def is_fault_code(code: str) -> bool:
    """True for every code this module defines (DECK_COUNT_n for any n >= 0 other than 53)."""
    if code in COMMUNICATION_FAULTS or code in DEVICE_FAULTS:
        return True
    if code.startswith(DECK_COUNT_PREFIX):
        digits = code[len(DECK_COUNT_PREFIX) :]
        return digits.isdigit() and int(digits) != EXPECTED_DECK_COUNT
    return False
