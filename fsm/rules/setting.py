"""A setting of seven cards into a five-card high hand and a two-card low hand, and its foul check.

NY 5324.41(g)(1), NJ 11.9(a): the five-card high hand must rank equal to or higher than the two-card
low hand; a hand not so set loses (NY (g)(5)(iii), NJ 11.9(g)3), and so does a hand not otherwise
set correctly, e.g. four cards behind and three in front (NY (g)(5)(iv), NJ 11.9(g)4). This module
says whether a setting is correct and, when it is not, exactly why. It must never decide how a hand
*should* be set (that is the house way, ``fsm.rules.houseway``) and never does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fsm.rules.cards import ACE, JOKER, RANK_CHARS, Card, format_card, format_cards
from fsm.rules.ranking import (
    DEFAULT_OPTIONS,
    Category,
    RankingOptions,
    Value,
    high_at_least_low,
    value2,
    value5,
)

RULE_ORDER = "NY 5324.41(g)(1),(g)(5)(iii); NJ 11.9(a),(g)3"
RULE_COUNT = "NY 5324.41(g)(5)(iv); NJ 11.9(g)4"


@dataclass(frozen=True)
class Setting:
    """Five cards for the high (back) hand and two for the low (front) hand.

    The container does not check itself, so a player's wrong setting can be held and judged by
    ``check_setting``; every setting the house way produces passes that check.
    """

    high: tuple[Card, ...]
    low: tuple[Card, ...]

    def cards(self) -> tuple[Card, ...]:
        """All the cards of the setting, high hand first."""
        return self.high + self.low

    def __str__(self) -> str:
        return f"{format_cards(self.high)} / {format_cards(self.low)}"


@dataclass(frozen=True)
class Foul:
    """Why a setting is not a correct setting: the rule broken and a sentence a dealer can read."""

    rule: str
    reason: str

    def __str__(self) -> str:
        return f"{self.reason} ({self.rule})"


class SettingFoul(ValueError):
    """Raised by ``validate_setting`` for a fouled setting; ``.foul`` holds the details."""

    def __init__(self, foul: Foul) -> None:
        super().__init__(str(foul))
        self.foul = foul


_RANK_PLURAL = {
    ACE: "aces",
    13: "kings",
    12: "queens",
    11: "jacks",
}


def _rank_name(r: int) -> str:
    return RANK_CHARS[r - 2] if r != 10 else "10"


def _plural(r: int) -> str:
    return _RANK_PLURAL.get(r, f"{_rank_name(r)}s")


def describe_low(value: Value) -> str:
    """A two-card hand's rank in words: ``pair of 7s``, ``A-K high``."""
    if value[0] == Category.PAIR:
        return f"pair of {_plural(value[1])}"
    return f"{_rank_name(value[1])}-{_rank_name(value[2])} high"


def describe_high(value: Value) -> str:
    """A five-card hand's rank in words, with its deciding rank where it has one."""
    cat = Category(value[0])
    if cat == Category.HIGH_CARD:
        return f"{_rank_name(value[1])} high"
    if cat == Category.PAIR:
        return f"pair of {_plural(value[1])}"
    if cat == Category.TWO_PAIR:
        return f"two pair, {_plural(value[1])} and {_plural(value[2])}"
    if cat == Category.THREE_OF_A_KIND:
        return f"three {_plural(value[1])}"
    if cat == Category.FOUR_OF_A_KIND:
        return f"four {_plural(value[1])}"
    if cat == Category.FULL_HOUSE:
        return f"full house, {_plural(value[1])} over {_plural(value[2])}"
    return cat.label.replace("-", " ")


def check_setting(
    high: Sequence[Card],
    low: Sequence[Card],
    dealt: Sequence[Card] | None = None,
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> Foul | None:
    """None for a correct setting, else the Foul: wrong counts, bad or repeated cards, cards other
    than the seven ``dealt`` (when given), or a low hand that outranks the high hand."""
    if len(high) != 5:
        return Foul(RULE_COUNT, f"high hand has {len(high)} cards; it must have 5")
    if len(low) != 2:
        return Foul(RULE_COUNT, f"low hand has {len(low)} cards; it must have 2")
    seen: set[Card] = set()
    for c in (*high, *low):
        if not isinstance(c, int) or not 0 <= c <= JOKER:
            return Foul(RULE_COUNT, f"{c!r} is not a card of the deck")
        if c in seen:
            return Foul(RULE_COUNT, f"card {format_card(c)} is set twice")
        seen.add(c)
    if dealt is not None:
        dealt_set = set(dealt)
        if len(dealt) != 7 or len(dealt_set) != 7:
            return Foul(RULE_COUNT, f"seven distinct cards must be dealt, got {len(dealt_set)}")
        extra = sorted(seen - dealt_set)
        if extra:
            return Foul(RULE_COUNT, f"card {format_card(extra[0])} was not dealt to this hand")
    hv = value5(high, opts)
    lv = value2(low)
    if not high_at_least_low(hv, lv):
        return Foul(
            RULE_ORDER,
            f"low hand {describe_low(lv)} outranks high hand {describe_high(hv)}",
        )
    return None


def validate_setting(
    setting: Setting,
    dealt: Sequence[Card] | None = None,
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> Setting:
    """The setting itself if it is correct; SettingFoul (a ValueError) with the reason if not."""
    foul = check_setting(setting.high, setting.low, dealt, opts)
    if foul is not None:
        raise SettingFoul(foul)
    return setting


def is_foul(setting: Setting, opts: RankingOptions = DEFAULT_OPTIONS) -> bool:
    """True when the setting breaks NY (g)(1)/(g)(5)(iii),(iv); see ``check_setting`` for why."""
    return check_setting(setting.high, setting.low, None, opts) is not None


__all__ = [
    "Foul",
    "Setting",
    "SettingFoul",
    "check_setting",
    "describe_high",
    "describe_low",
    "is_foul",
    "validate_setting",
]
