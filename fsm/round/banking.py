"""Player banking: who may bank the round, and the rotation of the offer (NY 5324.41(h)).

Rules kept here:
- (h)(2) no player banks at the start of the game, the first round after the shuffle that starts
  a game (``GameConfig.bank_start_of_game``: "table_open" = the first round after the table opens
  or a round is voided and the deck replaced; "every_shuffle" = the first round after any shuffle);
- (h)(3) the offer starts with the player farthest to the dealer's right (betting area 1 on the
  usual layout, area 6 when the layout numbers from the dealer's left) and goes counterclockwise
  (1, 2, ... 6, or 6, 5, ... 1); the first seat offered moves one seat counterclockwise every
  round until it returns to the dealer (a round where the house banks and no offer is made), then
  starts again at the dealer's right; no player banks two consecutive rounds.
- The bank's seat counts as number 1 for the starting position (fsm/round/position.py).
(h)(4) (the bank wagered against the dealer in the last house-banked round and can cover every
wager) is the dealer's check: the machine does not see main-game wagers.

Must never: decide a starting position, touch a meter, or read a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsm.round.position import areas_from_right

AREAS = 6


@dataclass
class BankRotation:
    """The bank's state across rounds (JSON via to_json/from_json)."""

    offer_start: int = 1  # 1..6 = first offered, counted from the dealer's right; 0 = no offer
    last_bank: int | None = None  # the area that banked the previous round
    current: int | None = None  # the area banking the current round
    start_of_game: bool = True  # the current round is the start of the game (h)(2)

    def offer_order(self, right: int = 1) -> list[int]:
        """Areas to offer the bank to this round, in order (empty: no offer this round).
        ``offer_start`` counts the areas from the dealer's right (1 = the area at the dealer's
        right, which the layout names: ``right``, ``game.layout.dealer_right_area``)."""
        if self.start_of_game or self.offer_start == 0:
            return []
        areas = areas_from_right(right)
        order = [areas[(self.offer_start - 1 + i) % AREAS] for i in range(AREAS)]
        return [a for a in order if a != self.last_bank]

    def refusal(self, area: int) -> str | None:
        """Why ``area`` may not bank this round, or None when it may."""
        if self.start_of_game:
            return "no player may bank at the start of the game (NY 5324.41(h)(2))"
        if area == self.last_bank:
            return f"area {area} banked the previous round; never two in a row (NY 5324.41(h)(3))"
        if self.offer_start == 0:
            return "the offer has returned to the dealer: the house banks this round (h)(3)"
        if self.current is not None:
            return f"area {self.current} already banks this round"
        return None

    def new_game(self) -> None:
        """A shuffle that starts the game (the table opened, or a voided round's deck was
        replaced, (h)(2)): no bank this round, the offer starts again at the dealer's right."""
        self.start_of_game = True
        self.offer_start = 1
        self.last_bank = None
        self.current = None

    def round_finished(self) -> None:
        """A completed round: remember its bank, move the first offer one seat on."""
        if not self.start_of_game:
            self.offer_start = (self.offer_start + 1) % (AREAS + 1)
        self.last_bank = self.current
        self.current = None
        self.start_of_game = False

    def to_json(self) -> dict[str, Any]:
        return {
            "offer_start": self.offer_start,
            "last_bank": self.last_bank,
            "current": self.current,
            "start_of_game": self.start_of_game,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BankRotation:
        return cls(
            int(data["offer_start"]),
            None if data["last_bank"] is None else int(data["last_bank"]),
            None if data["current"] is None else int(data["current"]),
            bool(data["start_of_game"]),
        )
