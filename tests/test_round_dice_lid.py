"""The dice shaker's lid: NY 5324.41(h)(8)(i), (h)(10)(i) — the shaker is shaken at least three
times covered; the dealer removes the lid to read the dice, and a lid lifted before (by the bank,
or seen by the lid sensor) means the shaker is covered and shaken again.

Each test drives `RoundMachine` through `tests/round_support.Table`; the lid sensor's reports are
the `shaker_lid {"lifted"}` events drivers/gpio posts.
"""

from __future__ import annotations

from round_support import Table, of_type, rejection


def _dice_table() -> Table:
    t = Table(start_mode="dice")
    t.open()
    t.lock(1)
    assert t.state == "Open_StartingPosition_Dice"
    return t


def test_shakes_with_the_lid_off_do_not_count_h8i_h10i() -> None:
    """Lid lifted, three shakes: no shake counted, the total is refused; the lid put back, three
    shakes, the total is taken."""
    t = _dice_table()
    t.ev("shaker_lid", lifted=True)
    for _ in range(3):
        refused = rejection(t.ev("shake_detected"))
        assert refused is not None and "lid" in refused and "(h)(8)(i)" in refused
    assert t.m.snapshot()["round"]["shakes"] == 0
    assert rejection(t.ev("dice_position_entered", total=8)) is not None
    t.ev("shaker_lid", lifted=False)
    for _ in range(3):
        assert rejection(t.ev("shake_detected")) is None
    assert rejection(t.ev("dice_position_entered", total=8)) is None
    assert t.state == "Open_Dealing"


def test_lifting_the_lid_mid_count_is_journaled_and_restarts_the_count_h8i_h10i() -> None:
    t = _dice_table()
    t.ev("shake_detected")
    t.ev("shake_detected")
    eff = t.ev("shaker_lid", lifted=True)
    alert = of_type(eff, "alert")[0]
    assert alert["code"] == "RESHAKE_REQUIRED" and "after 2 shake(s)" in alert["detail"]
    assert t.entries[-1]["type"] == "shaker_lid"  # the lift itself is the journal's entry
    t.ev("shaker_lid", lifted=False)
    t.ev("shake_detected")
    assert "shaken 1 time(s)" in (rejection(t.ev("dice_position_entered", total=8)) or "")
    t.ev("shake_detected")
    t.ev("shake_detected")
    t.ev("shaker_lid", lifted=True)  # the dealer removes the lid after three: the count stands
    assert rejection(t.ev("dice_position_entered", total=8)) is None


def test_the_lid_left_off_between_rounds_still_stops_the_count_h8i() -> None:
    """The lid sensor's state is kept across states: lifted while the table was betting, the
    lid is still off when the dice are shaken."""
    t = Table(start_mode="dice")
    t.open()
    t.ev("shaker_lid", lifted=True)
    t.lock(1)
    assert rejection(t.ev("shake_detected")) is not None
    restored = t.m.snapshot()
    assert restored.get("shaker_lid_lifted") is True
