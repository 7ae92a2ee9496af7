"""Messages of the reference device protocol: type numbers and payload encoding/decoding.

Shared by the controller-side adapters and the simulators so both speak the same bytes. Every
request carries a TAG byte (1..255) that its answer echoes; TAG 0 marks an unsolicited message.
This module must never do I/O or hold state; decoding errors name the message and the byte.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

# Controller -> device requests.
STATUS_REQ: Final = 0x10
SHUFFLE_REQ: Final = 0x11
DISPENSE_REQ: Final = 0x12
# Device -> controller answers.
STATUS_RSP: Final = 0x90
SHUFFLE_RSP: Final = 0x91
DISPENSE_RSP: Final = 0x92
ERROR_RSP: Final = 0x9F

NAMES: Final = {
    STATUS_REQ: "STATUS_REQ",
    SHUFFLE_REQ: "SHUFFLE_REQ",
    DISPENSE_REQ: "DISPENSE_REQ",
    STATUS_RSP: "STATUS_RSP",
    SHUFFLE_RSP: "SHUFFLE_RSP",
    DISPENSE_RSP: "DISPENSE_RSP",
    ERROR_RSP: "ERROR_RSP",
}

# Device kinds in STATUS_RSP.
KIND_SHOE: Final = 1
KIND_SHUFFLER: Final = 2
# Device states in STATUS_RSP.
STATE_READY: Final = 0
STATE_BUSY: Final = 1
STATE_ERROR: Final = 2
STATE_NAMES: Final = {STATE_READY: "ready", STATE_BUSY: "busy", STATE_ERROR: "error"}
# Error codes in STATUS_RSP and ERROR_RSP (0 = none).
ERR_NONE: Final = 0x00
ERR_JAM: Final = 0x01
ERR_MISDEAL: Final = 0x02
ERR_EMPTY: Final = 0x03
ERR_BUSY: Final = 0x04
ERR_BAD_REQUEST: Final = 0x05
ERR_HARDWARE: Final = 0x06
ERROR_NAMES: Final = {
    ERR_NONE: "none",
    ERR_JAM: "jam",
    ERR_MISDEAL: "misdeal",
    ERR_EMPTY: "empty",
    ERR_BUSY: "busy",
    ERR_BAD_REQUEST: "bad request",
    ERR_HARDWARE: "hardware",
}
FLAG_CARD_READING: Final = 0x01
MAX_DETAIL: Final = 64
MAX_CARD: Final = 52


class ProtocolError(ValueError):
    """A payload that does not decode as the message its type says."""


@dataclass(frozen=True)
class StatusReport:
    tag: int
    kind: int
    state: int
    error: int
    count: int
    flags: int


@dataclass(frozen=True)
class ShuffleReport:
    tag: int
    count: int
    deck_id: int


@dataclass(frozen=True)
class DispenseReport:
    tag: int
    stacks: int
    cards: int
    remaining: int
    hands: tuple[tuple[int, ...], ...] | None


@dataclass(frozen=True)
class ErrorReport:
    tag: int
    error: int
    detail: str


def encode_status_req(tag: int) -> bytes:
    return bytes((tag,))


def encode_shuffle_req(tag: int) -> bytes:
    return bytes((tag,))


def encode_dispense_req(tag: int, stacks: int, cards: int) -> bytes:
    return bytes((tag, stacks, cards))


def encode_status_rsp(r: StatusReport) -> bytes:
    return bytes((r.tag, r.kind, r.state, r.error, r.count, r.flags))


def encode_shuffle_rsp(r: ShuffleReport) -> bytes:
    return struct.pack(">BBI", r.tag, r.count, r.deck_id)


def encode_dispense_rsp(r: DispenseReport) -> bytes:
    flags = FLAG_CARD_READING if r.hands is not None else 0
    head = bytes((r.tag, r.stacks, r.cards, r.remaining, flags))
    if r.hands is None:
        return head
    return head + bytes(card for hand in r.hands for card in hand)


def encode_error_rsp(r: ErrorReport) -> bytes:
    return bytes((r.tag, r.error)) + r.detail.encode("ascii", "replace")[:MAX_DETAIL]


def _need(name: str, payload: bytes, n: int, exact: bool = True) -> None:
    if (len(payload) != n) if exact else (len(payload) < n):
        want = f"{n}" if exact else f"at least {n}"
        raise ProtocolError(f"{name}: payload of {len(payload)} bytes, expected {want}")


def decode_request_tag(name: str, payload: bytes) -> int:
    _need(name, payload, 1, exact=False)
    return payload[0]


def decode_dispense_req(payload: bytes) -> tuple[int, int, int]:
    _need("DISPENSE_REQ", payload, 3)
    return payload[0], payload[1], payload[2]


def decode_status_rsp(payload: bytes) -> StatusReport:
    _need("STATUS_RSP", payload, 6)
    tag, kind, state, error, count, flags = payload
    if state not in STATE_NAMES:
        raise ProtocolError(f"STATUS_RSP: byte 2 (state) is 0x{state:02X}, not a known state")
    return StatusReport(tag, kind, state, error, count, flags)


def decode_shuffle_rsp(payload: bytes) -> ShuffleReport:
    _need("SHUFFLE_RSP", payload, 6)
    tag, count, deck_id = struct.unpack(">BBI", payload)
    return ShuffleReport(tag, count, deck_id)


def decode_dispense_rsp(payload: bytes) -> DispenseReport:
    _need("DISPENSE_RSP", payload, 5, exact=False)
    tag, stacks, cards, remaining, flags = payload[:5]
    body = payload[5:]
    if not flags & FLAG_CARD_READING:
        if body:
            raise ProtocolError(f"DISPENSE_RSP: {len(body)} card bytes without the card flag")
        return DispenseReport(tag, stacks, cards, remaining, None)
    if len(body) != stacks * cards:
        raise ProtocolError(
            f"DISPENSE_RSP: {len(body)} card bytes for {stacks} stacks of {cards} cards"
        )
    for i, card in enumerate(body):
        if card > MAX_CARD:
            raise ProtocolError(f"DISPENSE_RSP: byte {5 + i} is card {card}, not a card 0..52")
    if len(set(body)) != len(body):
        raise ProtocolError("DISPENSE_RSP: the same card was reported twice")
    hands = tuple(tuple(body[i * cards : (i + 1) * cards]) for i in range(stacks))
    return DispenseReport(tag, stacks, cards, remaining, hands)


def decode_error_rsp(payload: bytes) -> ErrorReport:
    _need("ERROR_RSP", payload, 2, exact=False)
    detail = payload[2 : 2 + MAX_DETAIL].decode("ascii", "replace")
    return ErrorReport(payload[0], payload[1], detail)
