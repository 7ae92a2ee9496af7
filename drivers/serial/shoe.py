"""The dealing shoe: its interface (``Shoe``), its configuration and the adapter for the reference
protocol (``ReferenceShoe``).

The adapter turns commands into DISPENSE_REQ / STATUS_REQ and the shoe's answers into the round's
events: ``dealt`` (``remaining``; ``stacks``: the card identities per stack from a card-reading
shoe) and ``fault_raised`` (SHOE_JAM, SHOE_MISDEAL, SHOE_EMPTY, communication faults). It must
never decide a game rule (e.g. that 4 cards must remain).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from drivers.serial import faults, protocol
from drivers.serial.adapter import DeviceAdapter, Post
from drivers.serial.port import LinkPort, Transport
from drivers.serial.settings import ShoeConfig as ShoeConfig  # its old home
from fsm.round.events import JSON, Dealt
from fsm.rules.cards import DECK_SIZE


def dealt(cards: int, remaining: int, hands: list[list[int]] | None) -> Dealt:
    """The round's ``dealt`` for a dispense of stacks of ``cards`` (7, or the 3 and 4 of the
    three-card bonus, NY 5324.41(n)): the stacks as read, in the order dispensed (the machine
    maps them to seats in delivery order and checks them), when the shoe reads cards."""
    stacks = hands if hands is not None and cards in (3, 4, 7) else None
    return Dealt(remaining=remaining, stacks=stacks)


class Shoe(Protocol):
    """The automated dealing shoe, whatever its make."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def status(self) -> dict[str, JSON]: ...

    def request_status(self) -> None: ...

    def dispense(self, stacks: int, cards: int) -> None: ...

    @property
    def cards_remaining(self) -> int | None: ...

    @property
    def card_reading(self) -> bool: ...


class ReferenceShoe(DeviceAdapter):
    """A shoe speaking the reference protocol of docs/device-protocol.md."""

    device = "shoe"

    def __init__(
        self,
        transport: Transport,
        post: Post,
        config: ShoeConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        cfg = config or ShoeConfig()
        super().__init__(
            transport,
            post,
            cfg.answer_timeouts(),
            clock,
            cfg.noise,
        )
        self._remaining: int | None = None
        self._card_reading = False

    @classmethod
    def open(cls, config: ShoeConfig, post: Post) -> ReferenceShoe:
        """The adapter on its own ``LinkPort`` (call ``start()`` to open the port)."""
        return cls(LinkPort("shoe", config.port, config.link), post, config)

    @property
    def cards_remaining(self) -> int | None:
        return self._remaining

    @property
    def card_reading(self) -> bool:
        return self._card_reading

    def status(self) -> dict[str, JSON]:
        out = self._base_status()
        out["cards_remaining"] = self._remaining
        out["card_reading"] = self._card_reading
        return out

    def dispense(self, stacks: int, cards: int) -> None:
        """Command ``stacks`` stacks of ``cards`` cards; the answer arrives as an event."""
        if not 1 <= stacks <= 7:
            raise ValueError(f"dispense: stacks must be 1..7, got {stacks}")
        if not 1 <= cards <= 7:
            raise ValueError(f"dispense: cards must be 1..7, got {cards}")
        if stacks * cards > DECK_SIZE:
            raise ValueError(f"dispense: {stacks} x {cards} cards exceeds the deck of {DECK_SIZE}")
        self._request(
            "dispense",
            protocol.DISPENSE_REQ,
            lambda tag: protocol.encode_dispense_req(tag, stacks, cards),
            (stacks, cards),
        )

    def error_code(self, error: int) -> str:
        return {
            protocol.ERR_JAM: faults.SHOE_JAM,
            protocol.ERR_MISDEAL: faults.SHOE_MISDEAL,
            protocol.ERR_EMPTY: faults.SHOE_EMPTY,
        }.get(error) or super().error_code(error)

    def _on_status(self, report: protocol.StatusReport) -> None:
        if report.kind != protocol.KIND_SHOE:
            raise protocol.ProtocolError(f"STATUS_RSP: device kind {report.kind} is not a shoe")
        self._remaining = report.count
        self._card_reading = bool(report.flags & protocol.FLAG_CARD_READING)
        self._status_report(report)

    def _on_device_message(self, msg_type: int, payload: bytes) -> None:
        if msg_type != protocol.DISPENSE_RSP:
            super()._on_device_message(msg_type, payload)
            return
        report = protocol.decode_dispense_rsp(payload)
        req = self._take_request(report.tag, "dispense")
        if req is None:
            self._unexpected("DISPENSE_RSP", report.tag)
            return
        self._remaining = report.remaining
        if (report.stacks, report.cards) != req.args:
            self._fault(
                faults.SHOE_MISDEAL,
                f"commanded {req.args[0]} stacks of {req.args[1]}, "
                f"shoe reports {report.stacks} of {report.cards}",
            )
            return
        hands = None if report.hands is None else [list(h) for h in report.hands]
        self._post_dispensed(report, hands)

    def _post_dispensed(
        self, report: protocol.DispenseReport, hands: list[list[int]] | None
    ) -> None:
        self._post(dealt(report.cards, report.remaining, hands).envelope())
