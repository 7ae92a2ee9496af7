"""The card shuffler: its interface (``Shuffler``), its configuration and the adapter for the
reference protocol (``ReferenceShuffler``).

Events posted (the round's own): ``shuffle_complete`` (``count``, ``deck_id``) when the shuffler
counted 53 cards;
``fault_raised`` with ``DECK_COUNT_<n>`` when it counted n != 53 (NY 5324.41(b): one 52-card deck
and one joker; the round must not deal from that deck), SHUFFLER_JAM and communication faults.
It must never decide any other game rule.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from drivers.serial import faults, protocol
from drivers.serial.adapter import DeviceAdapter, Post
from drivers.serial.port import LinkPort, Transport
from drivers.serial.settings import ShufflerConfig as ShufflerConfig  # its old home
from fsm.round.events import JSON, ShuffleComplete


class Shuffler(Protocol):
    """The automatic card shuffler, whatever its make."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def status(self) -> dict[str, JSON]: ...

    def request_status(self) -> None: ...

    def shuffle(self) -> None: ...

    @property
    def card_count(self) -> int | None: ...

    @property
    def deck_id(self) -> int | None: ...


class ReferenceShuffler(DeviceAdapter):
    """A shuffler speaking the reference protocol of docs/device-protocol.md."""

    device = "shuffler"

    def __init__(
        self,
        transport: Transport,
        post: Post,
        config: ShufflerConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        cfg = config or ShufflerConfig()
        super().__init__(
            transport,
            post,
            cfg.answer_timeouts(),
            clock,
            cfg.noise,
        )
        self._count: int | None = None
        self._deck_id: int | None = None

    @classmethod
    def open(cls, config: ShufflerConfig, post: Post) -> ReferenceShuffler:
        """The adapter on its own ``LinkPort`` (call ``start()`` to open the port)."""
        return cls(LinkPort("shuffler", config.port, config.link), post, config)

    @property
    def card_count(self) -> int | None:
        return self._count

    @property
    def deck_id(self) -> int | None:
        return self._deck_id

    def status(self) -> dict[str, JSON]:
        out = self._base_status()
        out["card_count"] = self._count
        out["deck_id"] = self._deck_id
        return out

    def shuffle(self) -> None:
        """Command a shuffle; the answer arrives as an event."""
        self._request("shuffle", protocol.SHUFFLE_REQ, protocol.encode_shuffle_req)

    def error_code(self, error: int) -> str:
        if error == protocol.ERR_JAM:
            return faults.SHUFFLER_JAM
        return super().error_code(error)

    def _on_status(self, report: protocol.StatusReport) -> None:
        if report.kind != protocol.KIND_SHUFFLER:
            raise protocol.ProtocolError(f"STATUS_RSP: device kind {report.kind} is not a shuffler")
        self._status_report(report)

    def _on_device_message(self, msg_type: int, payload: bytes) -> None:
        if msg_type != protocol.SHUFFLE_RSP:
            super()._on_device_message(msg_type, payload)
            return
        report = protocol.decode_shuffle_rsp(payload)
        if self._take_request(report.tag, "shuffle") is None:
            self._unexpected("SHUFFLE_RSP", report.tag)
            return
        self._count = report.count
        self._deck_id = report.deck_id
        if report.count != faults.EXPECTED_DECK_COUNT:
            self._fault(
                faults.deck_count_code(report.count),
                f"shuffler counted {report.count} cards, expected "
                f"{faults.EXPECTED_DECK_COUNT} (deck id {report.deck_id})",
            )
            return
        self._post(ShuffleComplete(count=report.count, deck_id=report.deck_id).envelope())
