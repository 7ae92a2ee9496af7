"""The starting position: dice total or RNG number to a seat, and the order the stacks go round.

Seats: 0 is the dealer, 1..6 are the betting areas. Counting (table-rules.md, NY 5324.2(b)): the
dealer is number 1, then counterclockwise from the area at the dealer's right (numbers 2..7); every
seat is counted whether or not it holds a wager. Which area sits at the dealer's right is the
layout's (``right``: ``game.layout.dealer_right_area``, 1 on the usual layout, so areas 1..6 are
numbers 2..7; with 6, areas 6..1). When a player banks, the bank's seat is number 1 instead
of the dealer and the count goes on counterclockwise from it (NY 5324.41(h)(8)(iii), (h)(9)(iv),
(h)(10)(iii)). Dice: total t (3..18) lands on number ((t - 1) mod 7) + 1. Delivery: the first stack
goes to the starting position, then "moving clockwise around the table" to every other seat
(NY 5324.41(f)(3)(iii)), i.e. against the counting direction. With the three-card bonus
(NY 5324.41(n)(4)-(5), (n)(7)(ii)) no number is counted: the stacks go only to the positions
holding a pai gow wager, the one farthest to the dealer's left (on the usual layout the highest
betting area: area 1 is the dealer's far right) first, then clockwise, the dealer last. Also the
1-7 side wager's payout (NY 5324.41(j)(2)(vi): 5.5:1..6:1, rounded down to the whole dollar).

Must never: draw a random number, know about meters, or see a card.
"""

from __future__ import annotations

from collections.abc import Iterable

SEATS = 7
DEALER = 0


def ring(right: int = 1) -> list[int]:
    """The seats counterclockwise from the dealer: the dealer, then the area at the dealer's right
    (``right``: 1 or 6, the layout's) to the one at the dealer's left."""
    if right == 1:
        return [DEALER, 1, 2, 3, 4, 5, 6]
    if right == 6:
        return [DEALER, 6, 5, 4, 3, 2, 1]
    raise ValueError(f"dealer_right_area: 1 or 6, not {right!r}")


def areas_from_right(right: int = 1) -> list[int]:
    """The betting areas from the dealer's right, counter-clockwise (NY (g)(7), (h)(3))."""
    return ring(right)[1:]


def dice_number(total: int) -> int:
    """The number 1..7 a dice total 3..18 counts to: ((t - 1) mod 7) + 1."""
    if isinstance(total, bool) or not isinstance(total, int) or not 3 <= total <= 18:
        raise ValueError(f"total: three dice total 3..18, not {total!r}")
    return (total - 1) % SEATS + 1


def counting_order(bank_seat: int | None = None, right: int = 1) -> list[int]:
    """Seats in counting order (number 1 first): the dealer or the bank, then counterclockwise."""
    first = DEALER if bank_seat is None else bank_seat
    if not 0 <= first <= 6:
        raise ValueError(f"bank: betting area 1..6, not {bank_seat!r}")
    seats = ring(right)
    at = seats.index(first)
    return [seats[(at + i) % SEATS] for i in range(SEATS)]


def seat_for_number(number: int, bank_seat: int | None = None, right: int = 1) -> int:
    """The seat that receives the first stack when the count (RNG or dice) reaches ``number``."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= SEATS:
        raise ValueError(f"number: starting position 1..7, not {number!r}")
    return counting_order(bank_seat, right)[number - 1]


def seat_for_dice(total: int, bank_seat: int | None = None, right: int = 1) -> int:
    return seat_for_number(dice_number(total), bank_seat, right)


def delivery_order(start_seat: int, right: int = 1) -> list[int]:
    """Seats in the order the seven stacks reach them: the starting position first, then
    clockwise (against the counting direction), every seat, wager or not (NY (f)(3)(iii))."""
    if not 0 <= start_seat <= 6:
        raise ValueError(f"seat: 0..6, not {start_seat!r}")
    seats = ring(right)
    at = seats.index(start_seat)
    return [seats[(at - i) % SEATS] for i in range(SEATS)]


def three_card_order(positions: Iterable[int], right: int = 1) -> list[int]:
    """Seats in the order the three-card bonus procedure delivers its stacks (the stacks of
    three, then the stacks of four): the betting areas holding a pai gow wager, farthest to the
    dealer's left first (NY 5324.41(n)(4), (n)(7)(ii)), then clockwise ((n)(5): on the usual
    layout decreasing area number; with area 6 at the dealer's right increasing), then the dealer
    (seat 0). ``positions`` must be distinct areas 1..6, at least one."""
    areas = list(positions)
    for a in areas:
        if isinstance(a, bool) or not isinstance(a, int) or not 1 <= a <= SEATS - 1:
            raise ValueError(f"positions: betting areas 1..6, not {a!r}")
    if not areas:
        raise ValueError("positions: at least one position holds a pai gow wager")
    if len(set(areas)) != len(areas):
        raise ValueError("positions: each position at most once")
    clockwise = areas_from_right(right)[::-1]  # from the dealer's left
    return [*sorted(areas, key=clockwise.index), DEALER]


def three_card_number(seat: int, right: int = 1) -> int:
    """The number 1..7 the display shows for a seat when no number was counted (the three-card
    procedure): the seat counted from the dealer as number 1 (on the usual layout area a is
    number a + 1; with area 6 at the dealer's right, 8 - a)."""
    if not 0 <= seat <= 6:
        raise ValueError(f"seat: 0..6, not {seat!r}")
    return ring(right).index(seat) + 1
