"""Settlement of the pai gow poker wager against the dealer (or the bank): win, push or lose.

NY 5324.41(g)(3),(5)-(8) and NJ 13:69F-11.9(e),(g)-(j): a wager wins only if both of the player's
hands rank higher than the dealer's; a copy hand goes to the dealer/bank; a player's foul loses;
a winning wager is paid 1:1 less a vigorish of 5% of the amount won, which may be rounded up to
the next multiple of 25 cents; EZ pai gow (NJ 11.9(h)3,(j)) takes no vigorish and pushes every
wager when the dealer's seven cards are a queen dragon. Surrender (NY (g)(3), NJ 11.9(e)).
Two adjacent betting areas: the order of setting (NY (i)(2)).

The dealer's (or bank's) setting is taken as given: a wrongly set bank is never fouled but reset by
the house way (NY (q)); resetting it is the caller's job. Money is integer cents. This module must
never do I/O, read a clock, draw a random number, or create or lose a cent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from fsm.rules.cards import JOKER, QUEEN, Card, CardError, check_distinct, format_card
from fsm.rules.ranking import (
    DEFAULT_OPTIONS,
    Category,
    RankingOptions,
    best_five_of_seven,
    high_at_least_low,
    value2,
    value5,
)
from fsm.rules.setting import Setting  # the house way's setting type, re-exported here

Outcome = Literal["win", "push", "lose"]
VigRule = Literal["round-up-25", "exact"]
VIG_RULES: tuple[VigRule, ...] = ("round-up-25", "exact")

__all__ = [
    "DEFAULT_OPTIONS",
    "VIG_RULES",
    "Outcome",
    "Setting",
    "Settlement",
    "SurrenderRefused",
    "VigRule",
    "is_queen_dragon",
    "setting_order",
    "settle",
    "settle_hands",
    "surrender",
    "vigorish",
]


class HasHands(Protocol):
    """Anything holding a high (five-card) and a low (two-card) hand, e.g. a house-way setting."""

    @property
    def high(self) -> Sequence[Card]: ...

    @property
    def low(self) -> Sequence[Card]: ...


@dataclass(frozen=True)
class Settlement:
    """The result of one pai gow poker wager.

    ``won_cents`` is the amount won at 1:1 (0 on a push or a loss); ``vig_cents`` the vigorish
    collected from it; a losing wager forfeits ``wager_cents``. ``reason`` names the rule applied.
    """

    outcome: Outcome
    won_cents: int
    vig_cents: int
    wager_cents: int
    reason: str

    @property
    def net_cents(self) -> int:
        """The player's gain: win minus vigorish, 0 on a push, minus the wager on a loss."""
        if self.outcome == "win":
            return self.won_cents - self.vig_cents
        if self.outcome == "lose":
            return -self.wager_cents
        return 0

    def to_json(self) -> dict[str, object]:
        """The ``tablectl settle`` contract: outcome, won_cents, vig_cents."""
        return {"outcome": self.outcome, "won_cents": self.won_cents, "vig_cents": self.vig_cents}


class SurrenderRefused(ValueError):
    """A surrender the rules do not allow (NY (g)(3), NJ 11.9(e))."""


# --- vigorish ---------------------------------------------------------------------------------


def vigorish(won_cents: int, rule: VigRule = "round-up-25") -> int:
    """The vigorish on an amount won (NY (g)(8), (h)(12),(14); NJ 11.9(j)).

    "round-up-25": 5% of the amount won, rounded up to 25 cents or the next highest multiple of 25
    cents (the option the regulation allows): ceil(won * 5 / 100 / 25) * 25 = ceil(won / 500) * 25.
    "exact": 5% of the amount won, a fraction of a cent dropped (rounded down), because the only
    rounding up the regulation allows is to a multiple of 25 cents.
    Either way the vigorish never exceeds the amount won (a win below 25 cents is never turned into
    a loss by the rounding).
    """
    _check_cents(won_cents, "won_cents")
    if rule == "round-up-25":
        vig = -(-won_cents // 500) * 25
    elif rule == "exact":
        vig = won_cents * 5 // 100
    else:
        raise ValueError(f"vig: {rule!r} is not one of {', '.join(VIG_RULES)}")
    return min(vig, won_cents)


# --- EZ pai gow -------------------------------------------------------------------------------


def is_queen_dragon(cards7: Sequence[Card]) -> bool:
    """NJ 11.9(h)3: the dealer's/playerbank's seven cards are a queen dragon.

    A pai gow (no pair, no straight, no flush in any five of the seven cards) whose highest card is
    a queen. The joker counts as an ace unless it completes a straight or flush (NY (c)(1),(3)), so
    seven cards holding the joker are never a queen dragon (they are ace high or better).
    """
    if len(cards7) != 7:
        raise CardError(f"a queen dragon is judged on 7 cards, got {len(cards7)}")
    check_distinct(cards7)
    best = best_five_of_seven(cards7)
    return best[0] == Category.HIGH_CARD and best[1] == QUEEN


# --- settlement -------------------------------------------------------------------------------


def settle(
    player: HasHands,
    dealer: HasHands,
    wager_cents: int,
    *,
    ez: bool = False,
    vig: VigRule = "round-up-25",
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> Settlement:
    """Settle one pai gow poker wager of ``player`` against ``dealer`` (or the bank).

    Order of the rules:
    1. the player's foul loses: a split other than 5 + 2 (NY (g)(5)(iv), NJ 11.9(g)4), or a low hand
       outranking the high hand (NY (g)(5)(iii), NJ 11.9(g)3) - even in EZ pai gow with a queen
       dragon (the foul is a wager not played by the rules; documented in docs/settlement.md);
    2. EZ pai gow: a queen dragon in the dealer's seven cards pushes the wager (NJ 11.9(h)3, (i));
    3. both hands higher: win 1:1 (NY (g)(7),(8)), less the vigorish unless EZ (NJ 11.9(j));
    4. one hand higher, the other lower or a copy: push (NY (g)(6)(i),(ii));
    5. otherwise (both lower, or a copy and the other not higher): lose (NY (g)(5)(i),(ii)).

    The dealer's setting must be 5 + 2 and not fouled: the bank's hand is reset by the house way,
    never fouled (NY (q)); the caller resets it. ValueError/CardError name the fault precisely.
    """
    _check_cents(wager_cents, "wager_cents")
    if vig not in VIG_RULES:
        raise ValueError(f"vig: {vig!r} is not one of {', '.join(VIG_RULES)}")
    p_high, p_low = tuple(player.high), tuple(player.low)
    d_high, d_low = tuple(dealer.high), tuple(dealer.low)
    _check_cards(p_high, p_low, d_high, d_low)
    if len(p_high) + len(p_low) != 7:
        raise CardError(
            f"player: a setting holds 7 cards, got {len(p_high)} high + {len(p_low)} low"
        )
    if len(d_high) != 5 or len(d_low) != 2:
        raise CardError(
            f"dealer: the dealer's/bank's hands must be 5 + 2 cards, got {len(d_high)} + "
            f"{len(d_low)} (a wrongly set bank is reset by the house way, NY (q))"
        )
    dh, dl = value5(d_high, opts), value2(d_low)
    if not high_at_least_low(dh, dl):
        raise ValueError(
            "dealer: the dealer's/bank's low hand outranks its high hand; reset it by the house "
            "way before settling (NY (q))"
        )
    if len(p_high) != 5 or len(p_low) != 2:
        return Settlement("lose", 0, 0, wager_cents, "foul: not set 5 + 2 (NY (g)(5)(iv))")
    ph, pl = value5(p_high, opts), value2(p_low)
    if not high_at_least_low(ph, pl):
        return Settlement(
            "lose", 0, 0, wager_cents, "foul: low hand outranks high hand (NY (g)(5)(iii))"
        )
    if ez and is_queen_dragon((*d_high, *d_low)):
        return Settlement("push", 0, 0, wager_cents, "EZ pai gow queen dragon (NJ 11.9(h)3)")
    high_wins, low_wins = ph > dh, pl > dl
    if high_wins and low_wins:
        commission = 0 if ez else vigorish(wager_cents, vig)
        why = "both hands higher (NY (g)(7))" + (", no commission in EZ (NJ 11.9(j))" if ez else "")
        return Settlement("win", wager_cents, commission, wager_cents, why)
    if high_wins:
        return Settlement(
            "push", 0, 0, wager_cents, "high hand higher, low hand not (NY (g)(6)(i))"
        )
    if low_wins:
        return Settlement(
            "push", 0, 0, wager_cents, "low hand higher, high hand not (NY (g)(6)(ii))"
        )
    if ph == dh or pl == dl:
        return Settlement(
            "lose", 0, 0, wager_cents, "copy hand goes to the dealer/bank (NY (g)(5)(ii))"
        )
    return Settlement("lose", 0, 0, wager_cents, "both hands lower (NY (g)(5)(i))")


def settle_hands(
    player_high: Sequence[Card],
    player_low: Sequence[Card],
    dealer_high: Sequence[Card],
    dealer_low: Sequence[Card],
    wager_cents: int,
    *,
    ez: bool = False,
    vig: VigRule = "round-up-25",
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> Settlement:
    """``tablectl settle``: the four hands as card codes; for EZ the dealer's seven cards are
    dealer_high + dealer_low.

    Validates: every card a card of the deck, the 14 cards distinct, the player's 7 cards and the
    dealer's 5 + 2 (CardError naming the hand). A player's 7 cards split other than 5 + 2 are a
    foul and lose (NY (g)(5)(iv)) rather than an error: the regulation settles that wager.
    """
    return settle(
        Setting(tuple(player_high), tuple(player_low)),
        Setting(tuple(dealer_high), tuple(dealer_low)),
        wager_cents,
        ez=ez,
        vig=vig,
        opts=opts,
    )


def surrender(
    wager_cents: int,
    *,
    allowed: bool,
    progressive_wager: bool = False,
    seven_card_bonus_wager: bool = False,
    ez_optional_wager: bool = False,
    hands_exposed: bool = False,
) -> Settlement:
    """A player's surrender: the wager is collected (NY (g)(3)(i), NJ 11.9(e)1).

    Refused (SurrenderRefused) when the table does not allow it (a configuration choice), when the
    player has a progressive payout wager or a seven-card bonus wager (NY (g)(3), NJ 11.9(e)) or an
    optional EZ pai gow wager (NJ 11.9(e)), or once the dealer has exposed the player's hands.
    """
    _check_cents(wager_cents, "wager_cents")
    if not allowed:
        raise SurrenderRefused("surrender: not offered at this table (configuration)")
    if progressive_wager:
        raise SurrenderRefused(
            "surrender: refused, the player has a progressive payout wager (NY (g)(3))"
        )
    if seven_card_bonus_wager:
        raise SurrenderRefused(
            "surrender: refused, the player has a seven-card bonus wager (NY (g)(3))"
        )
    if ez_optional_wager:
        raise SurrenderRefused(
            "surrender: refused, the player has an optional EZ pai gow wager (NJ 11.9(e))"
        )
    if hands_exposed:
        raise SurrenderRefused(
            "surrender: refused, the dealer has already exposed the player's hands (NY (g)(3))"
        )
    return Settlement("lose", 0, 0, wager_cents, "surrender: wager collected (NY (g)(3)(i))")


# --- two adjacent betting areas ----------------------------------------------------------------


def setting_order(areas: Sequence[tuple[int, int]]) -> list[int]:
    """NY (i)(2): the order in which a player with two adjacent betting areas sets the hands.

    ``areas`` are (betting area 1..6, wager_cents). The hand with the larger wager is set first;
    with equal wagers, counter-clockwise: betting area 1 is farthest to the dealer's right and
    counter-clockwise runs 1 -> 6 (reference/table-rules.md), so the lower area first. At most two
    areas, adjacent (NY (i)(1)); ValueError otherwise.
    """
    if not 1 <= len(areas) <= 2:
        raise ValueError(f"areas: a player wagers on one or two betting areas, got {len(areas)}")
    for area, wager in areas:
        if isinstance(area, bool) or not isinstance(area, int) or not 1 <= area <= 6:
            raise ValueError(f"areas: betting area {area!r} is not 1..6")
        _check_cents(wager, f"areas[{area}].wager_cents")
    if len(areas) == 2:
        (a, _), (b, _) = areas
        if abs(a - b) != 1:
            raise ValueError(f"areas: betting areas {a} and {b} are not adjacent (NY (i)(1))")
    return [area for area, _ in sorted(areas, key=lambda aw: (-aw[1], aw[0]))]


# --- validation helpers -------------------------------------------------------------------------


def _check_cents(amount: int, name: str) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise ValueError(f"{name}: an amount is an integer number of cents, not {amount!r}")
    if amount < 0:
        raise ValueError(f"{name}: an amount cannot be negative ({amount})")


def _check_cards(
    p_high: Sequence[Card], p_low: Sequence[Card], d_high: Sequence[Card], d_low: Sequence[Card]
) -> None:
    seen: dict[Card, str] = {}
    for name, hand in (
        ("player_high", p_high),
        ("player_low", p_low),
        ("dealer_high", d_high),
        ("dealer_low", d_low),
    ):
        for c in hand:
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= JOKER:
                raise CardError(f"{name}: no card with code {c!r}")
            if c in seen:
                raise CardError(
                    f"{name}: duplicate card {format_card(c)} (also in {seen[c]}): the deck holds "
                    "each card once"
                )
            seen[c] = name
