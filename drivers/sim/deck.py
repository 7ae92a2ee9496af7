"""The physical cards moving from the shuffler to the shoe, in the simulated table.

One in-process object shared by the shuffler simulator (which loads a shuffled deck) and the shoe
simulator (which deals from it). Thread-safe. It must never shuffle: the shuffler sim does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence


class SimDeck:
    """The cards now in the shoe, top first, and the id of the deck they came from."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cards: list[int] = []
        self._deck_id = 0

    def load(self, cards: Sequence[int], deck_id: int) -> None:
        with self._lock:
            self._cards = list(cards)
            self._deck_id = deck_id

    def take(self, n: int) -> list[int] | None:
        """The top ``n`` cards, or None (and nothing taken) when fewer remain."""
        with self._lock:
            if n > len(self._cards):
                return None
            taken, self._cards = self._cards[:n], self._cards[n:]
            return taken

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._cards)

    @property
    def deck_id(self) -> int:
        with self._lock:
            return self._deck_id
