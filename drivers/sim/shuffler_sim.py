"""The device logic of a simulated shuffler (reference protocol).

On SHUFFLE_REQ it shuffles the 53-card deck with its seeded ``random.Random`` (simulation only),
loads the order into the shared ``SimDeck`` (the cards go to the shoe) and answers SHUFFLE_RSP
with the count and a deck id. Fault injection: ``count`` (report and load N cards instead of 53),
``jam``. It must never be used as the RNG of a real table.
"""

from __future__ import annotations

import random

from drivers.serial import protocol
from drivers.sim.deck import SimDeck
from fsm.rules.cards import DECK, DECK_SIZE


class ShufflerSim:
    def __init__(self, deck: SimDeck, seed: int) -> None:
        self.deck = deck
        self._rng = random.Random(seed)
        self.count: int | None = None  # injected wrong count, None = the true 53
        self.jam = False
        self.deck_id = 0
        self.last_count = 0

    def handle(self, msg_type: int, payload: bytes) -> list[tuple[int, bytes]]:
        try:
            tag = protocol.decode_request_tag(protocol.NAMES.get(msg_type, "request"), payload)
        except protocol.ProtocolError as exc:
            err = protocol.ErrorReport(0, protocol.ERR_BAD_REQUEST, str(exc))
            return [(protocol.ERROR_RSP, protocol.encode_error_rsp(err))]
        if msg_type == protocol.STATUS_REQ:
            state = protocol.STATE_ERROR if self.jam else protocol.STATE_READY
            error = protocol.ERR_JAM if self.jam else protocol.ERR_NONE
            report = protocol.StatusReport(
                tag, protocol.KIND_SHUFFLER, state, error, self.last_count, 0
            )
            return [(protocol.STATUS_RSP, protocol.encode_status_rsp(report))]
        if msg_type == protocol.SHUFFLE_REQ:
            if self.jam:
                err = protocol.ErrorReport(tag, protocol.ERR_JAM, "cards jammed in the elevator")
                return [(protocol.ERROR_RSP, protocol.encode_error_rsp(err))]
            order = list(DECK)
            self._rng.shuffle(order)
            count = DECK_SIZE if self.count is None else self.count
            # fewer cards: some missing; more: extra cards from another deck got in
            order = order[:count] if count <= DECK_SIZE else order + order[: count - DECK_SIZE]
            self.deck_id = (self.deck_id + 1) & 0xFFFFFFFF
            self.last_count = count
            self.deck.load(order, self.deck_id)
            done = protocol.ShuffleReport(tag, min(count, 255), self.deck_id)
            return [(protocol.SHUFFLE_RSP, protocol.encode_shuffle_rsp(done))]
        err = protocol.ErrorReport(tag, protocol.ERR_BAD_REQUEST, f"type 0x{msg_type:02X}")
        return [(protocol.ERROR_RSP, protocol.encode_error_rsp(err))]
