"""The dealing procedure of the three-card bonus, by the letter of NY 5324.41(n).

- (n)(3): the cards go into the automated shoe, then "no more bets" (the lock-out);
- (n)(4)-(5): stacks of three only to the players holding a pai gow wager, then the dealer; the
  starting position is the pai gow position farthest to the dealer's LEFT (no RNG, no dice), then
  clockwise, the dealer last. Area 1 is the dealer's far right (table-rules.md counting: dealer 1,
  then counterclockwise area 1 = 2 ... area 6 = 7), so the farthest left is the highest area and
  clockwise goes down the area numbers;
- (n)(6): the three-card bonus is settled before the rest is dealt;
- (n)(7)(ii): stacks of four to the same players in the same order, then the dealer; 53 - 7(p + 1)
  cards remain (four only with six players); any other count is a misdeal;
- (k)(1): only a player with a pai gow wager may make a progressive wager;
- (j)(1): the 1-7 side wager needs an RNG, which the three-card procedure does not have.

Real parts: the round machine, GameConfig.from_mapping; the last test runs ``tablectl simulate
--headless`` through the pty shoe and shuffler simulators and ``tablectl journal verify``.
Expected values come from the rule text above, not from the code.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from round_support import SUP, Table, of_type, rejection

from controller import cli
from controller.config import SIMULATED_TABLE
from controller.journal.audit import connect_read_only
from fsm.round.config import GameConfig, with_changes
from fsm.round.events import Event
from fsm.round.machine import RoundMachine, replay

THREE = {"three_card_bonus": True}


def _err(data: dict[str, Any]) -> str:
    with pytest.raises(ValueError) as info:
        GameConfig.from_mapping(data, "game")
    return str(info.value)


def _to_lockout(t: Table, wagers: list[int], pai_gow: list[int] | None) -> None:
    t.open()
    for a in wagers:
        t.ev("chip_detected", position=a)
    if pai_gow is not None:
        assert rejection(t.ev("pai_gow_wagers", positions=pai_gow)) is None
    t.ev("lockout_pressed")
    assert t.state == "Open_LockedOut"


def _dealing(wagers: list[int], pai_gow: list[int], **game: Any) -> tuple[Table, list[Any]]:
    t = Table(**THREE, **game)
    _to_lockout(t, wagers, pai_gow)
    eff = t.ev("chips_confirmed")
    assert t.state == "Open_Dealing", eff
    return t, eff


# --- configuration (n)(4), (j)(1) ----------------------------------------------------------


def test_three_card_bonus_starts_by_the_pai_gow_positions_not_a_draw_n4() -> None:
    cfg = GameConfig.from_mapping(THREE, "game")
    assert cfg.start_mode == "three_card"
    again = GameConfig.from_mapping(cfg.to_mapping(), "game")
    assert again == cfg


@pytest.mark.parametrize("mode", ["rng", "dice"])
def test_rng_or_dice_start_refused_with_the_three_card_bonus_n4(mode: str) -> None:
    msg = _err({**THREE, "start_mode": mode})
    assert msg.startswith("game.start_mode:") and "(n)(4)" in msg


def test_three_card_start_mode_refused_without_the_bonus_n2() -> None:
    msg = _err({"start_mode": "three_card"})
    assert msg.startswith("game.start_mode:") and "three_card_bonus" in msg


def test_side_wager_refused_with_the_three_card_bonus_j1() -> None:
    msg = _err({**THREE, "side_wager": {"offered": True, "odds": "6:1"}})
    assert msg.startswith("game.side_wager.offered:") and "(j)(1)" in msg


def test_turning_the_bonus_on_needs_the_start_mode_too_n4() -> None:
    """A supervisor's config change is validated as a whole: the RNG start cannot stay."""
    rng_table = GameConfig.from_mapping({}, "game")
    with pytest.raises(ValueError, match=r"^game\.start_mode: .*\(n\)\(4\)"):
        with_changes(rng_table, {"three_card_bonus": True})
    changed = with_changes(rng_table, {"three_card_bonus": True, "start_mode": "three_card"})
    assert changed.three_card_bonus and changed.start_mode == "three_card"


# --- the pai gow positions the dealer enters (n)(4), (k)(1) --------------------------------


def test_pai_gow_positions_entered_without_the_three_card_bonus_enforce_k1() -> None:
    """NY 5324.41(k)(1) in every mode: entered at an RNG table, the pai gow positions must hold
    every progressive wager before the count is confirmed (tests/test_round_limits.py)."""
    t = Table()
    t.open()
    t.ev("chip_detected", position=2)
    assert rejection(t.ev("pai_gow_wagers", positions=[1, 2])) is None


@pytest.mark.parametrize(
    ("positions", "field"),
    [
        ([], "positions:"),
        ("1,2", "positions:"),
        ([0], "positions[0]:"),
        ([2, 7], "positions[1]:"),
        ([3, True], "positions[1]:"),
        ([4, 4], "positions[1]:"),
    ],
)
def test_bad_pai_gow_positions_are_refused_naming_the_field(positions: Any, field: str) -> None:
    t = Table(**THREE)
    t.open()
    reason = rejection(t.ev("pai_gow_wagers", positions=positions))
    assert reason is not None and reason.startswith(field), reason
    assert t.m.snapshot()["round"]["pai_gow"] is None


def test_a_lit_progressive_wager_must_be_at_a_pai_gow_position_k1() -> None:
    t = Table(**THREE)
    t.open()
    t.ev("chip_detected", position=3)
    reason = rejection(t.ev("pai_gow_wagers", positions=[1, 2]))
    assert reason is not None and "position 3" in reason and "(k)(1)" in reason
    assert rejection(t.ev("pai_gow_wagers", positions=[1, 3])) is None


def test_a_chip_after_the_positions_blocks_the_deal_until_they_include_it_k1() -> None:
    t = Table(**THREE)
    t.open()
    t.ev("pai_gow_wagers", positions=[2])
    t.ev("chip_detected", position=5)
    t.ev("lockout_pressed")
    meters = t.m.meters()
    reason = rejection(t.ev("chips_confirmed"))
    assert reason is not None and "position 5" in reason and "(k)(1)" in reason
    assert t.state == "Open_LockedOut" and t.m.meters() == meters  # nothing contributed
    t.ev("pai_gow_wagers", positions=[2, 5])  # LockedOut, before the count is confirmed
    t.ev("chips_confirmed")
    assert t.state == "Open_Dealing"


def test_no_deal_before_the_dealer_enters_the_pai_gow_positions_n4() -> None:
    t = Table(**THREE)
    _to_lockout(t, [1], None)
    for event in ("chips_confirmed", "panel_next"):
        reason = rejection(t.ev(event))
        assert reason is not None and "pai_gow_wagers" in reason and "(n)(4)" in reason
    assert t.state == "Open_LockedOut"


def test_supervisor_resolved_wagers_must_be_pai_gow_positions_k1() -> None:
    t = Table(**THREE)
    t.open()
    t.ev("pai_gow_wagers", positions=[1])
    t.ev("chip_detected", position=1)
    t.ev("chip_detected", position=4)
    t.ev("lockout_pressed")
    t.ev("chips_mismatch", counted=1)
    reason = rejection(t.ev("chips_resolved", supervisor=SUP, positions=[4]))
    assert reason is not None and "position 4" in reason and "(k)(1)" in reason
    eff = t.ev("chips_resolved", supervisor=SUP, positions=[1])
    assert t.state == "Open_Dealing", eff
    assert of_type(eff, "starting_position")[0]["order"] == [1, 0]
    assert t.m.snapshot()["round"]["wagers"] == {"1": 100}


def test_positions_cannot_change_once_the_count_is_confirmed_n3() -> None:
    t, _ = _dealing([2], [2])
    reason = rejection(t.ev("pai_gow_wagers", positions=[2, 6]))
    assert reason is not None and "not accepted in state Open_Dealing" in reason


# --- starting position and delivery order (n)(4), (n)(5), (n)(7)(ii) -----------------------


@pytest.mark.parametrize(
    ("pai_gow", "order"),
    [
        ([1], [1, 0]),
        ([6], [6, 0]),
        ([1, 3], [3, 1, 0]),
        ([5, 2, 4], [5, 4, 2, 0]),
        ([1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1, 0]),
    ],
)
def test_first_stack_to_the_pai_gow_position_farthest_left_then_clockwise_n4_n5(
    pai_gow: list[int], order: list[int]
) -> None:
    wagers = pai_gow[:1]
    t, eff = _dealing(wagers, pai_gow)
    (start,) = of_type(eff, "starting_position")
    assert start["seat"] == order[0] and start["order"] == order
    assert not of_type(t.all_effects, "draw_rng")  # no RNG, no dice
    # (n)(5): stacks of three, one per pai gow position, one for the dealer
    assert of_type(eff, "dispense") == [{"type": "dispense", "stacks": len(order), "cards": 3}]


def test_no_random_number_is_drawn_or_accepted_n4() -> None:
    t, _ = _dealing([3], [3])
    assert rejection(t.ev("rng_drawn", value=4)) is not None
    assert t.m.snapshot()["round"]["rng_draws"] == 0


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_remaining_cards_after_threes_and_fours_n5_n7ii(players: int) -> None:
    """53 - 3(p + 1) after the threes, 53 - 7(p + 1) after the fours: four only with six."""
    pai_gow = list(range(1, players + 1))
    t, _ = _dealing([1], pai_gow)
    t.ev("dealt", remaining=53 - 3 * (players + 1))
    assert t.m.snapshot()["round"]["stage"] == "three_dealt"
    eff = t.ev("three_card_settled")
    assert of_type(eff, "dispense") == [{"type": "dispense", "stacks": players + 1, "cards": 4}]
    left = 53 - 7 * (players + 1)
    assert (left == 4) == (players == 6)
    t.ev("dealt", remaining=left)
    assert t.state == "Open_Play"


@pytest.mark.parametrize(("stage", "remaining"), [("three", 32), ("four", 4), ("four", 24)])
def test_a_different_remainder_is_a_misdeal_and_the_round_is_voided_n7ii(
    stage: str, remaining: int
) -> None:
    t, _ = _dealing([2, 4], [2, 4])  # 3 seats: 44 left after the threes, 32 after the fours
    if stage == "four":
        t.ev("dealt", remaining=44)
        t.ev("three_card_settled")
    eff = t.ev("dealt", remaining=remaining)
    assert t.state == "Fault"
    assert of_type(eff, "alert")[0]["code"] == f"MISDEAL_REMAINING_{remaining}"
    eff = t.ev("fault_cleared", supervisor=SUP)
    assert t.state == "Open_Shuffling"
    assert {e["position"] for e in of_type(eff, "refund")} == {2, 4}


def test_the_fours_wait_for_the_three_card_bonus_to_be_settled_n6() -> None:
    t, _ = _dealing([1], [1, 2])
    eff = t.ev("dealt", remaining=53 - 9)
    assert not of_type(eff, "dispense")  # nothing more is dealt until the dealer settles
    assert t.m.next_deadline_ms() is None
    assert rejection(t.ev("dealt", remaining=53 - 21)) is not None
    eff = t.ev("panel_next")  # the dealer's NEXT: three-card bonus wagers settled
    assert of_type(eff, "dispense") == [{"type": "dispense", "stacks": 3, "cards": 4}]
    assert rejection(t.ev("three_card_settled")) is not None  # once


# --- the card-reading shoe and the progressive outcomes -----------------------------------


SEAT5_THREE, SEAT5_FOUR = ["Ac", "Ad", "Ah"], ["Kc", "Kd", "2s", "7h"]  # a full house
SEAT2_THREE, SEAT2_FOUR = ["2c", "5d", "9h"], ["Jc", "4s", "8d", "Qh"]  # no line
DEALER_THREE, DEALER_FOUR = ["3c", "6d", "Th"], ["Js", "3h", "8c", "Kh"]


def test_read_stacks_go_to_the_seats_in_the_delivery_order_n4_n7ii() -> None:
    """The shoe's stacks, in the order dispensed, belong to area 5 (farthest left), area 2,
    the dealer; only positions with a progressive wager get an outcome."""
    t, _ = _dealing([2, 5], [2, 5], card_reading_shoe=True)
    t.ev("dealt", remaining=44, stacks=[SEAT5_THREE, SEAT2_THREE, DEALER_THREE])
    t.ev("three_card_settled")
    t.ev("dealt", remaining=32, stacks=[SEAT5_FOUR, SEAT2_FOUR, DEALER_FOUR])
    assert t.state == "Open_Play"
    eff = t.ev("play_complete")
    pays = of_type(eff, "pay")
    assert [(p["position"], p["line"]) for p in pays] == [(5, "full-house")]
    assert t.m.snapshot()["round"]["outcomes"] == {"2": None, "5": "full-house"}


def test_read_hands_must_be_the_seats_dealt_and_cards_never_twice_n5() -> None:
    t, _ = _dealing([2], [2, 5], card_reading_shoe=True)
    four_stacks = [SEAT5_THREE, SEAT2_THREE, DEALER_THREE, ["4c", "4d", "4h"]]
    reason = rejection(t.ev("dealt", remaining=44, stacks=four_stacks))
    assert reason == "stacks: must be the 3 stacks in the order dispensed"
    reason = rejection(
        t.ev("dealt", remaining=44, hands={"1": SEAT2_THREE, "5": SEAT5_THREE, "dealer": []})
    )
    assert reason is not None and reason.startswith("hands: need exactly the seats dealt")
    t.ev("dealt", remaining=44, hands={"2": SEAT2_THREE, "5": SEAT5_THREE, "dealer": DEALER_THREE})
    t.ev("three_card_settled")
    again = [["Ac", "2h", "3d", "4s"], SEAT2_FOUR, DEALER_FOUR]  # the ace of clubs was dealt
    assert rejection(t.ev("dealt", remaining=32, stacks=again)) == "hands: a card appears twice"
    t.ev("dealt", remaining=32, stacks=[SEAT5_FOUR, SEAT2_FOUR, DEALER_FOUR])
    assert t.state == "Open_Play" and t.m.snapshot()["round"]["hands_known"]
    assert "threes" not in t.m.public_view()["round"]  # hidden cards stay private


def test_simultaneous_hits_are_paid_from_the_dealers_right_g7_n4() -> None:
    """Simultaneous hits are paid from the dealer's right, counter-clockwise (NY 5324.41(g)(7)),
    not in the order the stacks reached the seats (farthest left first, (n)(4)), which this
    test asserted before."""
    t, _ = _dealing([1, 4], [1, 3, 4])
    t.ev("dealt", remaining=53 - 12)
    t.ev("three_card_settled")
    t.ev("dealt", remaining=53 - 28)
    t.ev("play_complete")
    t.ev("progressive_outcome", position=1, line="straight-flush")
    t.ev("progressive_outcome", position=4, line="straight-flush")
    assert t.state == "Open_JackpotPending"
    assert [p["position"] for p in t.m.snapshot()["round"]["pending"]] == [1, 4]


def test_restore_and_replay_in_the_middle_of_the_three_card_deal() -> None:
    t, _ = _dealing([2, 5], [2, 5], card_reading_shoe=True)
    t.ev("dealt", remaining=44, stacks=[SEAT5_THREE, SEAT2_THREE, DEALER_THREE])
    snap = json.loads(json.dumps(t.m.snapshot()))
    m = RoundMachine.restore(t.cfg, snap)
    assert m.snapshot() == t.m.snapshot()
    assert replay(t.cfg, t.entries)[0] == t.m.snapshot()
    for machine in (m, t.m):
        machine.step(Event("three_card_settled", {}), t.t + 1)
        stacks = [SEAT5_FOUR, SEAT2_FOUR, DEALER_FOUR]
        machine.step(Event("dealt", {"remaining": 32, "stacks": stacks}), t.t + 2)
    assert m.snapshot() == t.m.snapshot()
    assert m.snapshot()["round"]["hands"]["5"] == t.m.snapshot()["round"]["hands"]["5"]
    assert len(m.snapshot()["round"]["hands"]["5"]) == 7


# --- the simulated table, end to end -------------------------------------------------------


def _rows(db: Path) -> list[tuple[str, dict[str, Any]]]:
    conn = connect_read_only(db)
    try:
        rows = conn.execute("SELECT type, data FROM journal ORDER BY seq").fetchall()
    finally:
        conn.close()
    return [(t, json.loads(d)) for t, d in rows]


def test_ten_simulated_three_card_rounds_verify_n4_n5_n6_n7ii(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tablectl simulate --headless`` on the simulated table with the three-card bonus (pty
    shoe and shuffler), then ``tablectl journal verify``; every round's stacks go to the pai
    gow positions and the dealer, threes then fours, with the counts the rule gives."""
    text = SIMULATED_TABLE.read_text("utf-8")
    text = text.replace('start_mode = "rng"\n', "")
    text = text.replace("three_card_bonus = false", "three_card_bonus = true")
    text = text.replace('side_wager = { offered = true, odds = "6:1" }\n', "")
    assert "three_card_bonus = true" in text and "side_wager" not in text
    config = tmp_path / "three-card.toml"
    config.write_text(text, "utf-8")
    db = tmp_path / "j.db"
    argv = ["simulate", "--headless", "--rounds", "10", "--seed", "31", "--db", str(db)]
    assert cli.main([*argv, "--config", str(config)]) == 0
    capsys.readouterr()
    assert cli.main(["journal", "verify", "--db", str(db)]) == 0
    assert "journal verify: ok:" in capsys.readouterr().out
    # game recall says where the first stack went, not a number that was never drawn (n)(4)
    assert cli.main(["report", "rounds", "--db", str(db)]) == 0
    recall = capsys.readouterr().out
    assert "first stack to area" in recall and " by rng" not in recall
    rows = _rows(db)
    types = Counter(t for t, _ in rows)
    assert types["round_completed"] == 10
    assert types["rng_drawn"] == 0 and types["dice_position_entered"] == 0
    assert types["pai_gow_wagers"] >= 10 and types["three_card_settled"] == 10
    # the simulated shoe reads cards: both dispenses reach the machine, which finds each
    # position's progressive line itself, so the dealer never has to enter an outcome
    assert types["progressive_outcome"] == 0
    assert all("stacks" in data for etype, data in rows if etype == "dealt")
    pai_gow: list[int] = []
    lit: set[int] = set()
    dispenses: list[dict[str, Any]] = []
    for etype, data in rows:
        if etype == "shuffle_complete":
            lit, dispenses = set(), []
        if etype == "chip_detected" and not of_type(data["effects"], "rejected"):
            lit.add(data["position"])
        if etype == "pai_gow_wagers":
            pai_gow = data["positions"]
        for e in of_type(data["effects"], "starting_position"):
            assert lit <= set(pai_gow)  # (k)(1)
            assert e["order"] == [*sorted(pai_gow, reverse=True), 0]  # (n)(4), (n)(5)
        dispenses += of_type(data["effects"], "dispense")
        if etype == "dealt" and not of_type(data["effects"], "rejected"):
            seats = len(pai_gow) + 1
            assert [(d["stacks"], d["cards"]) for d in dispenses] in (
                [(seats, 3)],
                [(seats, 3), (seats, 4)],
            )
            per_seat = sum(d["cards"] for d in dispenses)
            assert data["remaining"] == 53 - per_seat * seats


def test_three_card_order_checks_its_positions() -> None:
    from fsm.round.position import three_card_order

    assert three_card_order([2, 6, 1]) == [6, 2, 1, 0]
    for bad, msg in (([], "at least one"), ([0], "1..6"), ([3, 3], "at most once")):
        with pytest.raises(ValueError, match=msg):
            three_card_order(bad)


def test_a_restart_while_the_dealer_settles_the_threes_does_not_void_the_round_n6() -> None:
    """Between the stacks of three and the fours nothing is in flight (the dealer settles the
    three-card bonus, (n)(6)): a power-up there is no interrupted deal; during a dispense it is."""
    t, _ = _dealing([3], [3, 4])
    t.ev("dealt", remaining=53 - 9)
    m = RoundMachine.restore(t.cfg, t.m.snapshot())
    m.step(Event("power_up", {}), t.t + 5)
    assert m.next_deadline_ms() is None
    m.step(Event("three_card_settled", {}), t.t + 6)
    m.step(Event("power_up", {}), t.t + 7)  # restarted while the fours were dispensed
    eff = m.step(Event("deadline", {}), t.t + 7)
    assert m.state == "Fault" and of_type(eff, "alert")[0]["code"] == "DEAL_INTERRUPTED"
