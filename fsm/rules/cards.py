"""Cards of the 53-card pai gow deck (52 cards plus one joker): identity, parsing and printing.

NY 5324.41(b): one deck with one joker. A card is a small int so hands can be compared and hashed
cheaply: 0..51 are ``(rank - 2) * 4 + suit`` with suits c, d, h, s = 0..3, and 52 is the joker.
Notation (DESIGN.md): rank then suit, ranks ``2-9 T J Q K A`` (also ``10``), suits ``c d h s``,
the joker ``JK``; all case-insensitive. This module must never draw a random card or know any rule
of play.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Card = int

JOKER: Card = 52
SUITS = "cdhs"
RANK_CHARS = "23456789TJQKA"
ACE = 14
KING = 13
QUEEN = 12
JACK = 11

DECK: tuple[Card, ...] = tuple(range(53))
DECK_SIZE = 53


class CardError(ValueError):
    """A card string that is not a card of the deck, or a wrong set of cards."""


def make(rank: int, suit: int) -> Card:
    """The card of ``rank`` (2..14, ace = 14) and ``suit`` (0..3 = c, d, h, s)."""
    if not 2 <= rank <= 14 or not 0 <= suit <= 3:
        raise CardError(f"no card with rank {rank} and suit {suit}")
    return (rank - 2) * 4 + suit


def rank(card: Card) -> int:
    """Rank 2..14 of a natural card (ace = 14). The joker has no rank: callers check first."""
    return card // 4 + 2


def suit(card: Card) -> int:
    """Suit 0..3 (c, d, h, s) of a natural card."""
    return card % 4


def parse_card(text: str) -> Card:
    """One card from its notation (``As``, ``Td``, ``10d``, ``JK``); a precise error otherwise."""
    t = text.strip()
    if not t:
        raise CardError("empty card")
    up = t.upper()
    if up in ("JK", "JOKER"):
        return JOKER
    if len(up) == 3 and up.startswith("10"):
        up = "T" + up[2]
    if len(up) != 2:
        raise CardError(
            f"unknown card {text!r}: expected rank then suit, e.g. 'As', 'Td', '10d' or 'JK'"
        )
    r, s = up[0], up[1].lower()
    if r not in RANK_CHARS:
        raise CardError(f"unknown card {text!r}: rank {up[0]!r} is not one of 2-9 T J Q K A")
    if s not in SUITS:
        raise CardError(f"unknown card {text!r}: suit {up[1]!r} is not one of c d h s")
    return make(RANK_CHARS.index(r) + 2, SUITS.index(s))


def parse_cards(
    text: str | Sequence[str], count: int | Iterable[int] | None = None
) -> tuple[Card, ...]:
    """Cards separated by spaces or commas (or a sequence of card strings).

    Raises CardError naming the offending card on an unknown card, a duplicate (the deck holds each
    card once, one joker included), or a count other than ``count`` (an int or a set of ints).
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else [str(t) for t in text]
    cards: list[Card] = []
    seen: set[Card] = set()
    for tok in tokens:
        c = parse_card(tok)
        if c in seen:
            raise CardError(f"duplicate card {format_card(c)}: the deck holds each card once")
        seen.add(c)
        cards.append(c)
    if count is not None:
        allowed = {count} if isinstance(count, int) else set(count)
        if len(cards) not in allowed:
            want = " or ".join(str(n) for n in sorted(allowed))
            raise CardError(f"expected {want} cards, got {len(cards)}")
    return tuple(cards)


def format_card(card: Card) -> str:
    """The canonical notation of one card (``As``, ``Td``, ``JK``)."""
    if card == JOKER:
        return "JK"
    if not 0 <= card < 52:
        raise CardError(f"no card with code {card}")
    return RANK_CHARS[rank(card) - 2] + SUITS[suit(card)]


def format_cards(cards: Iterable[Card]) -> str:
    """Cards in canonical notation separated by single spaces."""
    return " ".join(format_card(c) for c in cards)


def check_distinct(cards: Sequence[Card]) -> None:
    """Raise CardError unless every card is a card of the deck and none repeats."""
    seen: set[Card] = set()
    for c in cards:
        if not 0 <= c <= JOKER:
            raise CardError(f"no card with code {c}")
        if c in seen:
            raise CardError(f"duplicate card {format_card(c)}")
        seen.add(c)
