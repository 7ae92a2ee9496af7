"""The device logic of a simulated dealing shoe (reference protocol).

On DISPENSE_REQ it deals stacks from the shared ``SimDeck`` (the shuffler's order) and answers
DISPENSE_RSP with the cards remaining and, when card-reading, each stack's card identities.
Fault injection: ``jam`` (ERROR_RSP JAM, status error until cleared), ``misdeal``. It must never
decide a game rule.
"""

from __future__ import annotations

from drivers.serial import protocol
from drivers.sim.deck import SimDeck


class ShoeSim:
    def __init__(self, deck: SimDeck, card_reading: bool = True) -> None:
        self.deck = deck
        self.card_reading = card_reading
        self.jam = False
        self.misdeal = False

    def handle(self, msg_type: int, payload: bytes) -> list[tuple[int, bytes]]:
        try:
            if msg_type == protocol.DISPENSE_REQ:
                tag, stacks, cards = protocol.decode_dispense_req(payload)
            else:
                tag = protocol.decode_request_tag(protocol.NAMES.get(msg_type, "request"), payload)
        except protocol.ProtocolError as exc:
            return [self._error(0, protocol.ERR_BAD_REQUEST, str(exc))]
        if msg_type == protocol.STATUS_REQ:
            state, error = protocol.STATE_READY, protocol.ERR_NONE
            if self.jam:
                state, error = protocol.STATE_ERROR, protocol.ERR_JAM
            flags = protocol.FLAG_CARD_READING if self.card_reading else 0
            report = protocol.StatusReport(
                tag, protocol.KIND_SHOE, state, error, self.deck.remaining, flags
            )
            return [(protocol.STATUS_RSP, protocol.encode_status_rsp(report))]
        if msg_type == protocol.DISPENSE_REQ:
            if self.jam:
                return [self._error(tag, protocol.ERR_JAM, "card jammed at the gate")]
            if self.misdeal:
                return [self._error(tag, protocol.ERR_MISDEAL, "stack 3 short of one card")]
            if stacks == 0 or cards == 0:
                return [self._error(tag, protocol.ERR_BAD_REQUEST, "zero stacks or cards")]
            taken = self.deck.take(stacks * cards)
            if taken is None:
                return [self._error(tag, protocol.ERR_EMPTY, f"{self.deck.remaining} cards left")]
            hands = None
            if self.card_reading:
                hands = tuple(tuple(taken[i * cards : (i + 1) * cards]) for i in range(stacks))
            dealt = protocol.DispenseReport(tag, stacks, cards, self.deck.remaining, hands)
            return [(protocol.DISPENSE_RSP, protocol.encode_dispense_rsp(dealt))]
        return [self._error(tag, protocol.ERR_BAD_REQUEST, f"type 0x{msg_type:02X}")]

    @staticmethod
    def _error(tag: int, error: int, detail: str) -> tuple[int, bytes]:
        return protocol.ERROR_RSP, protocol.encode_error_rsp(
            protocol.ErrorReport(tag, error, detail)
        )
