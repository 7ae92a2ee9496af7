"""Exact enumeration of seven-card hands by rank pattern and suit combinatorics (par sheets).

Every seven-card hand of a deck (the 53-card pai gow deck, or a reduced deck of fewer ranks and
suits for checking) falls into a *class*: its rank pattern (how many cards of each rank, and
whether it holds the joker) and its flush suit, the one suit holding at least five naturals (four
with the joker), with the set S of ranks it holds there. Seven cards have at most one such suit
(two would need 8 cards, or 8 naturals with the joker), so the classes partition the hands; a
class's count is ``suits * prod C(suits-1, c_r - 1) (r in S) * prod C(suits-1, c_r) (r not in S)``
and the pattern's flushless count is what remains of ``prod C(suits, c_r)``.

Within a class every five of the seven is suited exactly when all its naturals are S cards, so
``ranking.value5`` on two stand-in hands (one with every five unsuited, one with the S cards of one
suit) gives every five's value; a hand's *key* (the set of (category, natural, the other two a
pair) over its 21 fives, its seven-card straight flush, its insurance line, its pai gow high card
and, in a class that holds a royal flush, whether it holds a royal match) then decides every pay
table. The one line that looks at suits outside the flush suit, the royal match (NY (c)(6)(ii)),
is settled by expanding the few classes holding a royal flush into their actual suit assignments.
The bonus lines of each key are then read from ``fsm.rules.sevencard`` and
``fsm.rules.progressive`` on a real hand of that key (``representative``), never re-derived here.

Must never do I/O, read a clock or draw a random number; never hold a payout.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from math import comb

from fsm.rules.cards import ACE, JOKER, Card, make, rank
from fsm.rules.ranking import (
    DEFAULT_OPTIONS,
    RANK_CODE,
    Category,
    RankingOptions,
    rank_tables,
    value2,
    value5,
)
from fsm.rules.sevencard import insurance_line, royal_plus_royal_match, seven_card_straight_flush


@dataclass(frozen=True)
class Deck:
    """A deck to enumerate: ranks (2..14), a number of suits (1..4, c d h s first) and the joker.

    ``FULL_DECK`` is the game's 53 cards; reduced decks exist so that every hand can also be
    evaluated one by one and the two methods compared (tests/test_parsheet.py)."""

    ranks: tuple[int, ...] = tuple(range(2, 15))
    suits: int = 4
    joker: bool = True

    def __post_init__(self) -> None:
        if not 1 <= self.suits <= 4:
            raise ValueError(f"suits: 1 to 4, not {self.suits}")
        if len(set(self.ranks)) != len(self.ranks) or not all(2 <= r <= 14 for r in self.ranks):
            raise ValueError(f"ranks: distinct ranks 2..14, not {self.ranks}")

    @property
    def cards(self) -> tuple[Card, ...]:
        naturals = tuple(make(r, s) for r in sorted(self.ranks) for s in range(self.suits))
        return (*naturals, JOKER) if self.joker else naturals

    def hands(self, size: int = 7) -> int:
        return comb(len(self.cards), size)


FULL_DECK = Deck()

# (category, natural, rest-is-a-pair) as one bit: category * 4 + natural * 2 + pair
CLAIM_BITS = 44


def claim_bit(category: int, natural: bool, pair: bool) -> int:
    return 1 << (category * 4 + (2 if natural else 0) + (1 if pair else 0))


def claims_of_bits(bits: int) -> frozenset[tuple[Category, bool, bool]]:
    """The (category, natural, pair) triples a key's bit set holds."""
    out = []
    for i in range(CLAIM_BITS):
        if bits >> i & 1:
            out.append((Category(i // 4), bool(i & 2), bool(i & 1)))
    return frozenset(out)


def best_category(bits: int) -> tuple[Category, bool]:
    """The best five-card category of a key and whether a natural five makes it."""
    top = bits.bit_length() - 1
    cat = Category(top // 4)
    mask = 0b1111 << (cat * 4)
    return cat, bool(bits & mask & 0b1100 << (cat * 4))


@dataclass(frozen=True)
class HandKey:
    """Everything the pay tables read from seven cards (module docstring).

    ``claims``: bit set of (category, natural, pair) over the 21 fives (``claim_bit``);
    ``seven_sf``: "no-joker" / "with-joker" / None; ``insurance``: the insurance line or None;
    ``high``: the highest rank of a pai gow (no hand at all), else 0; ``royal_match``: (king-queen,
    ace-king) royal match flags."""

    claims: int
    seven_sf: str | None
    insurance: str | None
    high: int
    royal_match: tuple[bool, bool] = (False, False)


_FIVES: tuple[tuple[int, tuple[int, ...], tuple[int, int]], ...] = tuple(
    (
        sum(1 << i for i in five),
        five,
        tuple(i for i in range(7) if i not in five),  # type: ignore[misc]
    )
    for five in combinations(range(7), 5)
)


RawKey = tuple[int, str | None, str | None, int, tuple[bool, bool]]
_NO_MATCH = (False, False)


@dataclass
class Enumeration:
    """The result: hands per key, one real hand of each key, and totals for checking."""

    deck: Deck
    opts: RankingOptions
    raw: dict[RawKey, int] = field(default_factory=dict)
    raw_reps: dict[RawKey, tuple[Card, ...]] = field(default_factory=dict)
    patterns: int = 0
    classes: int = 0
    expanded: int = 0

    @property
    def counts(self) -> dict[HandKey, int]:
        return {HandKey(*k): n for k, n in self.raw.items()}

    @property
    def representative(self) -> dict[HandKey, tuple[Card, ...]]:
        return {HandKey(*k): h for k, h in self.raw_reps.items()}

    @property
    def total(self) -> int:
        return sum(self.raw.values())


def _patterns(ranks: tuple[int, ...], cards: int, most: int) -> Iterator[tuple[int, ...]]:
    """Count vectors over ``ranks`` (each 0..most) summing to ``cards``."""
    n = len(ranks)
    counts = [0] * n

    def rec(i: int, left: int) -> Iterator[tuple[int, ...]]:
        if i == n - 1:
            if left <= most:
                counts[i] = left
                yield tuple(counts)
            return
        for c in range(min(most, left) + 1):
            if left - c > most * (n - 1 - i):
                continue
            counts[i] = c
            yield from rec(i + 1, left - c)
        counts[i] = 0

    if n == 0:
        if cards == 0:
            yield ()
        return
    yield from rec(0, cards)


def enumerate_hands(deck: Deck = FULL_DECK, opts: RankingOptions = DEFAULT_OPTIONS) -> Enumeration:
    """Every seven-card hand of ``deck``, counted by key, by rank pattern and suit combinatorics."""
    ranks = tuple(sorted(deck.ranks))
    ns = deck.suits
    result = Enumeration(deck, opts)
    jokers = (0, 1) if deck.joker else (0,)
    for joker in jokers:
        naturals = 7 - joker
        threshold = 5 - joker
        for vec in _patterns(ranks, naturals, ns):
            result.patterns += 1
            _pattern(result, ranks, vec, joker == 1, ns, threshold)
    return result


def _add(result: Enumeration, key: RawKey, count: int, hand: tuple[Card, ...]) -> None:
    counts = result.raw
    if key in counts:
        counts[key] += count
    else:
        counts[key] = count
        result.raw_reps[key] = hand


def _pattern(
    result: Enumeration,
    ranks: tuple[int, ...],
    vec: tuple[int, ...],
    joker: bool,
    ns: int,
    threshold: int,
) -> None:
    opts = result.opts
    present = [(r, c) for r, c in zip(ranks, vec, strict=True) if c]
    # positions 0..6: the copies of each rank (its first copy first), the joker last
    pos_rank: list[int] = []
    first_pos: dict[int, int] = {}
    for r, c in present:
        first_pos[r] = len(pos_rank)
        pos_rank.extend([r] * c)
    # P: every five unsuited (each suit below the threshold): the copies of each rank, the most
    # numerous ranks first, dealt round the suits in turn
    load = [0] * ns
    p_suits: dict[int, list[int]] = {}
    turn = 0
    for r, c in sorted(present, key=lambda rc: -rc[1]):
        chosen = [(turn + k) % ns for k in range(c)]
        turn = (turn + c) % ns
        for s in chosen:
            load[s] += 1
        p_suits[r] = chosen
    plain_hand: list[Card] = []
    for r, _c in present:
        plain_hand.extend(make(r, s) for s in p_suits[r])
    if joker:
        plain_hand.append(JOKER)
    plain_ok = max(load) < threshold
    jbit = 1 << 6 if joker else 0

    total = 1
    for _r, c in present:
        total *= comb(ns, c)

    # plain values of the 21 fives, from ranking's own tables (those ``value5`` answers from): a
    # five's rank-pattern key is the seven's key less the two cards left out
    plain_table, flush_table = rank_tables(opts)
    codes = [RANK_CODE[c] for c in plain_hand]
    key7 = sum(codes)
    pranks = [ACE if c == JOKER else rank(c) for c in plain_hand]
    by_bit: dict[int, int] = {}  # plain claim bit -> union of the masks of its fives
    plain_values = []
    for mask, _five, (x, y) in _FIVES:
        v = plain_table[key7 - codes[x] - codes[y]]
        plain_values.append(v)
        bit = 1 << (v[0] * 4 + (0 if mask & jbit else 2) + (1 if pranks[x] == pranks[y] else 0))
        by_bit[bit] = by_bit.get(bit, 0) | mask
    plain_bits = 0
    for bit in by_bit:
        plain_bits |= bit
    high = 0
    if plain_bits < 1 << 4:  # no five better than high card: a pai gow
        high = max(plain_values)[1]
    # insurance_line's first rule: seven ranks (the joker an ace) not all different make no line
    distinct_ranks = len(present) + (1 if joker and ACE not in first_pos else 0)
    ins_plain = insurance_line(plain_hand) if plain_ok and distinct_ranks == 7 else None

    flush_total = 0
    distinct = [r for r, _c in present]
    if len(distinct) >= threshold:
        a = {r: comb(ns - 1, c - 1) for r, c in present}
        b = {r: comb(ns - 1, c) for r, c in present}
        # claim bits of the suited fives inside a mask of positions (the S cards and the joker),
        # built up from the masks one card smaller: every five inside M lies inside some M - {i}
        suited: dict[int, int] = {}
        royal_bits = 0b1111 << (Category.ROYAL_FLUSH * 4)
        for size in range(threshold, len(distinct) + 1):
            for subset in combinations(distinct, size):
                n = ns
                m = jbit
                for r in distinct:
                    if r in subset:
                        n *= a[r]
                        m |= 1 << first_pos[r]
                    else:
                        n *= b[r]
                    if not n:
                        break
                if not n:
                    continue
                result.classes += 1
                flush_total += n
                bits = 0
                for bit, union in by_bit.items():
                    if union & ~m:
                        bits |= bit
                fb = suited.get(m)
                if fb is None:
                    fb = _suited_bits(m, suited, codes, pranks, jbit, flush_table)
                bits |= fb
                royal = bool(fb & royal_bits)
                seven_sf: str | None = None
                hand: tuple[Card, ...] | None = None
                if size == len(pos_rank):
                    hand = _class_hand(present, set(subset), joker)
                    seven_sf = seven_card_straight_flush(hand)
                # insurance_line: five naturals of a suit are a flush (no line); the joker never
                # completes one, so four and the joker leave the flushless line (NY (c)(7))
                ins = None if size >= 5 else ins_plain
                if royal:
                    result.expanded += 1
                    for each in _suit_assignments(present, set(subset), joker, ns):
                        rm = (
                            royal_plus_royal_match(each, "king-queen"),
                            royal_plus_royal_match(each, "ace-king"),
                        )
                        _add(result, (bits, seven_sf, ins, 0, rm), ns, each)
                    continue
                key = (bits, seven_sf, ins, 0, _NO_MATCH)
                if key not in result.raw:
                    hand = hand or _class_hand(present, set(subset), joker)
                _add(result, key, n, hand or ())
    plain_count = total - flush_total
    if plain_count:
        if not plain_ok:
            raise AssertionError(f"no flushless stand-in for pattern {vec} (joker {joker})")
        result.classes += 1
        _add(result, (plain_bits, None, ins_plain, high, _NO_MATCH), plain_count, tuple(plain_hand))


def _suited_bits(
    m: int,
    memo: dict[int, int],
    codes: list[int],
    pranks: list[int],
    jbit: int,
    flush_table: dict[int, tuple[int, ...]],
) -> int:
    """Claim bits of every five inside position mask ``m``, all of them suited (memoized)."""
    positions = [i for i in range(7) if m >> i & 1]
    if len(positions) == 5:
        v = flush_table[sum(codes[i] for i in positions)]
        x, y = (i for i in range(7) if not m >> i & 1)
        bit = 1 << (v[0] * 4 + (0 if m & jbit else 2) + (1 if pranks[x] == pranks[y] else 0))
    else:
        bit = 0
        for i in positions:
            sub = m & ~(1 << i)
            got = memo.get(sub)
            if got is None:
                got = _suited_bits(sub, memo, codes, pranks, jbit, flush_table)
            bit |= got
    memo[m] = bit
    return bit


def _class_hand(present: list[tuple[int, int]], in_s: set[int], joker: bool) -> tuple[Card, ...]:
    """A real hand of the class: the S ranks' first copies in clubs, every other card in d, h, s."""
    hand: list[Card] = []
    for r, c in present:
        start = 0 if r in in_s else 1
        hand.extend(make(r, s) for s in range(start, start + c))
    if joker:
        hand.append(JOKER)
    return tuple(hand)


def _suit_assignments(
    present: list[tuple[int, int]], in_s: set[int], joker: bool, ns: int
) -> Iterator[tuple[Card, ...]]:
    """Every hand of the class with the flush suit clubs: the other cards on every choice of the
    other suits (each stands for ``ns`` hands, one per flush suit)."""
    choices: list[list[tuple[Card, ...]]] = []
    for r, c in present:
        extra = c - 1 if r in in_s else c
        base = (make(r, 0),) if r in in_s else ()
        choices.append(
            [base + tuple(make(r, s) for s in ss) for ss in combinations(range(1, ns), extra)]
        )

    def rec(i: int, acc: tuple[Card, ...]) -> Iterator[tuple[Card, ...]]:
        if i == len(choices):
            yield (*acc, JOKER) if joker else acc
            return
        for cards in choices[i]:
            yield from rec(i + 1, acc + cards)

    yield from rec(0, ())


def key_of(cards: tuple[Card, ...], opts: RankingOptions = DEFAULT_OPTIONS) -> HandKey:
    """The key of one seven-card hand computed directly (the brute force's and the tests' view)."""
    bits = 0
    best: tuple[int, ...] = ()
    for _mask, five, rest in _FIVES:
        fc = [cards[i] for i in five]
        v = value5(fc, opts)
        pair = value2((cards[rest[0]], cards[rest[1]]))[0] == Category.PAIR
        bits |= claim_bit(v[0], JOKER not in fc, pair)
        best = max(best, v)
    royal = bits & (0b1111 << (Category.ROYAL_FLUSH * 4))
    rm = (
        (royal_plus_royal_match(cards, "king-queen"), royal_plus_royal_match(cards, "ace-king"))
        if royal
        else (False, False)
    )
    high = best[1] if best[0] == Category.HIGH_CARD else 0
    return HandKey(bits, seven_card_straight_flush(cards), insurance_line(cards), high, rm)


__all__ = [
    "FULL_DECK",
    "Deck",
    "Enumeration",
    "HandKey",
    "best_category",
    "claim_bit",
    "claims_of_bits",
    "enumerate_hands",
    "key_of",
]
