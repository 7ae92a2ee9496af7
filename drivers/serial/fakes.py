"""In-memory fakes of the shoe and the shuffler for tests of the owner loop and the round wiring:
no port, no link, no thread. They satisfy the ``Shoe`` and ``Shuffler`` protocols and post the
same events as the reference adapters, synchronously, from the caller's thread.

Fault injection by attribute: ``FakeShuffler.count`` (cards counted), ``.jam``; ``FakeShoe.jam``,
``.misdeal``, ``.card_reading``; ``.silent`` on either (commands are lost: nothing is posted).
The shuffle uses a seeded ``random.Random`` (simulation only). Fakes must never be wired on a
real table.
"""

from __future__ import annotations

import random

from drivers.serial import faults
from drivers.serial.adapter import Post
from drivers.serial.shoe import dealt
from fsm.round.events import JSON, FaultRaised, ShuffleComplete
from fsm.rules.cards import DECK, DECK_SIZE


class FakeShuffler:
    device = "shuffler"

    def __init__(self, post: Post, seed: int = 0) -> None:
        self._post = post
        self._rng = random.Random(seed)
        self.count = DECK_SIZE
        self.jam = False
        self.silent = False
        self.order: list[int] = []
        self._deck_id: int | None = None
        self._count: int | None = None

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def status(self) -> dict[str, JSON]:
        return {
            "device": self.device,
            "connected": not self.silent,
            "state": "error" if self.jam else "ready",
            "fault": faults.SHUFFLER_JAM if self.jam else None,
            "card_count": self._count,
            "deck_id": self._deck_id,
        }

    def request_status(self) -> None:
        pass

    @property
    def card_count(self) -> int | None:
        return self._count

    @property
    def deck_id(self) -> int | None:
        return self._deck_id

    def shuffle(self) -> None:
        if self.silent:
            return
        if self.jam:
            self._fault(faults.SHUFFLER_JAM, "fake jam")
            return
        order = list(DECK)
        self._rng.shuffle(order)
        self.order = order[: self.count] + order[: max(0, self.count - DECK_SIZE)]
        self._deck_id = (self._deck_id or 0) + 1
        self._count = self.count
        if self.count != faults.EXPECTED_DECK_COUNT:
            self._fault(faults.deck_count_code(self.count), f"fake counted {self.count} cards")
            return
        self._post(ShuffleComplete(count=self.count, deck_id=self._deck_id).envelope())

    def _fault(self, code: str, detail: str) -> None:
        self._post(FaultRaised(code=code, device=self.device, detail=detail).envelope())


class FakeShoe:
    device = "shoe"

    def __init__(self, post: Post, shuffler: FakeShuffler, card_reading: bool = True) -> None:
        self._post = post
        self._shuffler = shuffler
        self._taken_from: int | None = None
        self._cards: list[int] = []
        self.card_reading_flag = card_reading
        self.jam = False
        self.misdeal = False
        self.silent = False

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def _load(self) -> None:
        if self._shuffler.deck_id != self._taken_from:  # a new deck left the shuffler
            self._taken_from = self._shuffler.deck_id
            self._cards = list(self._shuffler.order)

    def status(self) -> dict[str, JSON]:
        self._load()
        return {
            "device": self.device,
            "connected": not self.silent,
            "state": "error" if self.jam else "ready",
            "fault": faults.SHOE_JAM if self.jam else None,
            "cards_remaining": len(self._cards),
            "card_reading": self.card_reading_flag,
        }

    def request_status(self) -> None:
        pass

    @property
    def cards_remaining(self) -> int | None:
        self._load()
        return len(self._cards)

    @property
    def card_reading(self) -> bool:
        return self.card_reading_flag

    def dispense(self, stacks: int, cards: int) -> None:
        if not 1 <= stacks <= 7 or not 1 <= cards <= 7:
            raise ValueError(f"dispense: stacks and cards must be 1..7, got {stacks} x {cards}")
        if self.silent:
            return
        self._load()
        if self.jam:
            self._fault(faults.SHOE_JAM, "fake jam")
            return
        if self.misdeal:
            self._fault(faults.SHOE_MISDEAL, "fake misdeal")
            return
        if stacks * cards > len(self._cards):
            self._fault(faults.SHOE_EMPTY, f"{len(self._cards)} cards left")
            return
        taken, self._cards = self._cards[: stacks * cards], self._cards[stacks * cards :]
        hands = [taken[i * cards : (i + 1) * cards] for i in range(stacks)]
        read = hands if self.card_reading_flag else None
        self._post(dealt(cards, len(self._cards), read).envelope())

    def _fault(self, code: str, detail: str) -> None:
        self._post(FaultRaised(code=code, device=self.device, detail=detail).envelope())
