"""The dealer's layout (`game.layout.dealer_right_area`, NY 5324.41(a)(2)(i)): which end of the
row of betting areas sits at the dealer's right. Every rule that names the dealer's right or left
follows it, tested with both layouts:

- counting (NY 5324.2(b), table-rules.md): the dealer is number 1, then counter-clockwise from
  the dealer's right; the stacks go clockwise from the starting position (NY (f)(3)(iii));
- the three-card bonus's first stack to the pai gow position farthest to the dealer's left
  (NY (n)(4)), then clockwise (n)(5);
- the bank offered from the player farthest to the dealer's right, counter-clockwise (NY (h)(3));
- winners paid from the dealer's right, counter-clockwise (NY (g)(7), NJ 11.9(i)):
  tests/test_round_corrections.py::test_a_chip_tray_hit_waits_for_an_earlier_meter_hit_g7_nj_11_9_i.

Each test drives `RoundMachine` through `tests/round_support.Table`. The expected seats come
from the geometry: with area 1 at the dealer's right the areas run 1..6 counter-clockwise; with
area 6 there, 6..1.
"""

from __future__ import annotations

import pytest
from round_support import Table, of_type, rejection

LAYOUTS = pytest.mark.parametrize("right", [1, 6], ids=["area-1-right", "area-6-right"])
# counter-clockwise from the dealer's right
CCW = {1: [1, 2, 3, 4, 5, 6], 6: [6, 5, 4, 3, 2, 1]}


@LAYOUTS
def test_the_count_goes_counter_clockwise_from_the_dealers_right_5324_2b(right: int) -> None:
    """Number 2 is the area at the dealer's right; the stacks then go clockwise from the
    starting position, every seat (f)(3)(iii)."""
    t = Table(layout={"dealer_right_area": right})
    t.open()
    t.lock(2)
    sp = of_type(t.start(2), "starting_position")[0]
    at_right = CCW[right][0]
    assert sp["seat"] == at_right
    clockwise = [0, *CCW[right][::-1]]  # from the dealer, clockwise: the dealer's left first
    start = clockwise.index(at_right)
    assert list(sp["order"]) == [clockwise[(start + i) % 7] for i in range(7)]


@LAYOUTS
def test_the_three_card_first_stack_goes_farthest_left_n4(right: int) -> None:
    """Pai gow wagers at areas 1 and 5: the first stack goes to the one farthest to the
    dealer's left (area 5 on the usual layout, area 1 when area 6 is at the dealer's right),
    then clockwise, the dealer last (n)(4)-(5)."""
    t = Table(three_card_bonus=True, layout={"dealer_right_area": right})
    t.open()
    t.ev("chip_detected", position=1)
    t.ev("pai_gow_wagers", positions=[1, 5])
    t.ev("lockout_pressed")
    sp = of_type(t.ev("chips_confirmed"), "starting_position")[0]
    first = 5 if right == 1 else 1
    assert list(sp["order"]) == [first, 6 - first, 0]
    # its number counted from the dealer, counter-clockwise from the dealer's right
    assert sp["number"] == CCW[right].index(first) + 2


@LAYOUTS
def test_the_bank_is_offered_from_the_dealers_right_counter_clockwise_h3(right: int) -> None:
    t = Table(player_banking=True, layout={"dealer_right_area": right})
    t.open()
    t.lock()
    t.start()
    t.deal()
    t.ev("play_complete")
    eff = t.ev("shuffle_complete", count=53)
    offer = of_type(eff, "bank_offer")[0]
    assert list(offer["order"]) == CCW[right]
    assert rejection(t.ev("bank_accepted", position=CCW[right][0])) is None
