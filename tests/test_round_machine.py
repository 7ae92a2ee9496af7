"""Scenario tests of the round machine, one rule each, citing NY 5324.41 / table-rules.md."""

from __future__ import annotations

import json

import pytest
from round_support import SUP, Table, config, of_type, reach, refusal, rejection

from fsm.round.effects import Effect, Lights, Wagers
from fsm.round.events import Event
from fsm.round.machine import EVENT_FIELDS, RoundMachine
from fsm.round.states import LEAF_STATES

# --- table open / shuffle ------------------------------------------------------------------


def test_open_table_shuffles_then_arms_acceptors_with_attract_lights() -> None:
    t = Table()
    eff = t.ev("table_opened", supervisor=SUP)
    assert t.state == "Open_Shuffling"
    assert {"type": "shuffle"} in eff
    eff = t.ev("shuffle_complete", count=53)
    assert t.state == "Open_Betting"
    assert {"type": "acceptors", "armed": True} in eff
    assert {"type": "lights", "states": ["attract"] * 6} in eff
    assert t.m.round_id == 1


@pytest.mark.parametrize("count", [52, 54, 0, 106])
def test_deck_count_other_than_53_faults_and_never_deals(count: int) -> None:
    """table-rules.md (NJ 13:69F-31.10): a deck counted other than 53 never deals a round."""
    t = Table()
    t.ev("table_opened", supervisor=SUP)
    eff = t.ev("shuffle_complete", count=count)
    assert t.state == "Fault"
    alert = of_type(eff, "alert")[0]
    assert alert["code"] == f"DECK_COUNT_{count}"
    # no wager, no card while in fault
    assert rejection(t.ev("chip_detected", position=1)) is not None
    assert rejection(t.ev("dealt", remaining=4)) is not None
    eff = t.ev("fault_cleared", supervisor=SUP)
    assert t.state == "Open_Shuffling"  # back to the shuffle, never to betting
    assert {"type": "shuffle"} in eff
    assert not of_type(t.all_effects, "dispense")


# --- betting and lock-out (k)(2) -----------------------------------------------------------


def test_chip_lights_its_position_and_a_second_chip_there_is_rejected_d4() -> None:
    t = Table()
    t.open()
    eff = t.ev("chip_detected", position=3)
    lights = ("attract", "attract", "lit", "attract", "attract", "attract")
    assert eff == [Wagers((3,), 100), Lights(lights)]  # NY (d)(4): the player checks the light
    again = refusal(t.ev("chip_detected", position=3))
    assert again is not None and again.cause == "already_lit" and "already lit" in again.reason


def test_late_chip_after_lockout_is_rejected_k2() -> None:
    t = Table()
    t.open()
    t.ev("chip_detected", position=1)
    eff = t.ev("lockout_pressed")
    assert {"type": "acceptors", "armed": False} in eff
    eff = t.ev("chip_detected", position=2)
    assert eff[0]["type"] == "rejected" and "(k)(2)" in eff[0]["reason"]
    assert len(eff) == 1  # nothing else happens: no light
    assert t.m.snapshot()["round"]["wagers"] == {"1": 100}
    # still rejected later in the round, and journaled as a rejected entry
    t.ev("chips_confirmed")
    assert "lock-out" in (rejection(t.ev("chip_detected", position=4)) or "")
    assert t.entries[-1]["data"]["effects"][0]["type"] == "rejected"


def test_chip_count_mismatch_waits_for_supervisor_k2() -> None:
    t = Table()
    t.open()
    for a in (1, 2, 3):
        t.ev("chip_detected", position=a)
    t.ev("lockout_pressed")
    eff = t.ev("chips_mismatch", counted=2)
    assert of_type(eff, "alert")[0]["code"] == "CHIP_COUNT_MISMATCH"
    assert t.state == "Open_LockedOut"
    assert rejection(t.ev("chips_confirmed")) is not None  # the dealer cannot wave it through
    assert rejection(t.ev("chips_resolved", supervisor=SUP, positions=[4])) is not None
    eff = t.ev("chips_resolved", supervisor=SUP, positions=[1, 3])
    assert t.state == "Open_LockedOut"  # the dealer activates the RNG next ((h)(8)(ii))
    assert t.m.meters()["progressive"]["progressive_in"] == 2
    assert of_type(eff, "meter_movement")[0]["display_cents"] == 42  # 2 x 21% of $1


# --- contributions (k)(5) --------------------------------------------------------------------


def test_contribution_is_rate_of_progression_of_each_wager_k5() -> None:
    t = Table(levels=[{"name": "p", "initial_cents": 1000, "rate_bp": 2150, "hidden_rate_bp": 333}])
    t.open()
    t.lock(1, 2, 3)
    m = t.m.meters()["p"]
    # 3 x 21.5% of 100 cents = 64.5 cents: 64 shown, the half cent carried, never lost
    assert m["display_cents"] == 1000 + 64
    assert m["carry_units"]["display"] == 5000
    # 3 x 3.33% of 100 cents = 9.99 cents -> 9 in the reserve + 0.99 carried
    assert m["reserve_cents"] == 9 and m["carry_units"]["reserve"] == 9900
    assert m["progressive_in"] == 3 and m["wagered_cents"] == 300


def test_five_dollar_wager_contributes_27_percent_k5() -> None:
    t = Table(
        progressive_wager_cents=500,
        levels=[{"name": "p", "initial_cents": 0, "rate_bp": 2700}],
    )
    t.open()
    t.lock(6)
    assert t.m.meters()["p"]["display_cents"] == 135  # 27% of 500


def test_contribution_above_limit_goes_to_overflow_nj_1_39a() -> None:
    t = Table(levels=[{"name": "p", "initial_cents": 990, "rate_bp": 2100, "limit_cents": 1000}])
    t.open()
    t.lock(1)
    m = t.m.meters()["p"]
    assert (m["display_cents"], m["overflow_cents"]) == (1000, 11)


# --- starting position --------------------------------------------------------------------


def test_one_rng_draw_per_round_and_shown_value_is_drawn_value() -> None:
    t = Table()
    t.open()
    eff = t.lock(2)
    assert of_type(eff, "draw_rng") == [{"type": "draw_rng"}]
    eff = t.ev("rng_drawn", value=5)
    assert {"type": "display", "glyph": "5"} in eff
    sp = of_type(eff, "starting_position")[0]
    assert sp["number"] == 5 and sp["seat"] == 4  # dealer=1, area 1=2 ... area 4=5
    assert rejection(t.ev("rng_drawn", value=2)) is not None
    assert t.m.snapshot()["round"]["rng_value"] == 5


def test_rng_redraw_only_through_supervisor_void_j() -> None:
    t = Table(side_wager={"offered": True, "odds": "6:1"})
    t.open()
    t.lock(1)
    t.ev("rng_drawn", value=3)
    assert t.state == "Open_SideWagers"
    assert rejection(t.ev("rng_drawn", value=4)) is not None
    eff = t.ev("rng_void", supervisor=SUP, reason="display failed")
    assert t.state == "Open_StartingPosition_Rng" and {"type": "draw_rng"} in eff
    eff = t.ev("rng_drawn", value=4)
    r = t.m.snapshot()["round"]
    assert r["rng_value"] == 4 and r["rng_draws"] == 2
    assert r["rng_voids"] == [{"value": 3, "supervisor": SUP, "reason": "display failed"}]


def test_side_wager_settled_before_any_card_j2v() -> None:
    """NY 5324.41(j)(2)(iv),(v): losing side wagers collected, winners paid, before any card."""
    t = Table(side_wager={"offered": True, "odds": "5.5:1"})
    t.open()
    bets = [
        {"position": 1, "number": 4, "cents": 300},
        {"position": 2, "number": 6, "cents": 500},
    ]
    t.lock(1, side=bets)
    eff = t.ev("rng_drawn", value=4)
    assert not of_type(eff, "dispense")
    assert rejection(t.ev("dealt", remaining=4)) is not None  # no card before settlement
    eff = t.ev("side_wagers_settled")
    kinds = [e["type"] for e in eff]
    assert kinds.index("side_wager_settled") < kinds.index("dispense")
    res = of_type(eff, "side_wager_settled")[0]["results"]
    # $3 at 5.5:1 = $16.50, rounded down to the whole dollar (j)(2)(vi)
    assert res[0]["payout_cents"] == 1600 and res[1]["payout_cents"] == 0


def test_side_wager_bad_field_is_rejected_naming_the_key() -> None:
    t = Table(side_wager={"offered": True})
    t.open()
    t.ev("lockout_pressed")
    reason = rejection(t.ev("side_wagers", bets=[{"position": 1, "number": 9, "cents": 100}]))
    assert reason is not None and reason.startswith("bets[0].number")


def test_dice_need_three_shakes_h8i() -> None:
    t = Table(start_mode="dice")
    t.open()
    t.lock(1)
    assert t.state == "Open_StartingPosition_Dice"
    t.ev("shake_detected")
    t.ev("shake_detected")
    reason = rejection(t.ev("dice_position_entered", total=8))
    assert reason is not None and "(h)(8)(i)" in reason
    t.ev("shake_detected")
    eff = t.ev("dice_position_entered", total=8)
    assert of_type(eff, "starting_position")[0]["seat"] == 0  # 8 lands on the dealer
    assert t.state == "Open_Dealing"


def test_bank_lifting_the_lid_requires_a_reshake_h8i() -> None:
    t = Table(start_mode="dice", player_banking=True)
    t.open()
    assert rejection(t.ev("bank_accepted", position=3)) is not None  # start of the game (h)(2)
    t.lock()
    t.start()
    t.deal()
    t.ev("play_complete")
    assert t.state == "Open_Shuffling"  # no wagers: round complete, next shuffle
    t.ev("shuffle_complete", count=53)
    t.ev("bank_accepted", position=3)
    t.ev("lockout_pressed")
    t.ev("chips_confirmed")
    for _ in range(3):
        t.ev("shake_detected")
    eff = t.ev("lid_lifted_by_bank")
    assert of_type(eff, "alert")[0]["code"] == "RESHAKE_REQUIRED"
    assert rejection(t.ev("dice_position_entered", total=8)) is not None
    for _ in range(3):
        t.ev("shake_detected")
    eff = t.ev("dice_position_entered", total=8)
    sp = of_type(eff, "starting_position")[0]
    # the bank (area 3) counts as number 1: 8 -> number 1 -> the bank's seat (h)(10)(iii)
    assert sp["seat"] == 3 and sp["bank"] == 3


# --- dealing --------------------------------------------------------------------------------


def test_dispense_seven_stacks_of_seven_and_four_cards_remain() -> None:
    t = Table()
    t.open()
    t.lock(1)
    eff = t.ev("rng_drawn", value=1)
    assert {"type": "dispense", "stacks": 7, "cards": 7} in eff
    eff = t.ev("dealt", remaining=5)
    assert t.state == "Fault" and of_type(eff, "alert")[0]["code"] == "MISDEAL_REMAINING_5"


def test_three_card_bonus_deals_threes_then_fours_n2() -> None:
    """NY 5324.41(n)(2): stacks of three first, then (after (n)(6)) stacks of four; here with
    every betting area holding a pai gow wager (the full procedure: test_round_three_card.py)."""
    t = Table(three_card_bonus=True)
    t.open()
    t.ev("chip_detected", position=1)
    t.ev("pai_gow_wagers", positions=[1, 2, 3, 4, 5, 6])
    t.ev("lockout_pressed")
    eff = t.ev("chips_confirmed")
    assert {"type": "dispense", "stacks": 7, "cards": 3} in eff
    t.ev("dealt", remaining=32)
    assert t.m.next_deadline_ms() is None  # the dealer settles the threes: no shoe timeout
    assert rejection(t.ev("dealt", remaining=4)) is not None  # threes not settled yet
    eff = t.ev("three_card_settled")
    assert {"type": "dispense", "stacks": 7, "cards": 4} in eff
    assert t.m.next_deadline_ms() == t.t + t.cfg.dispense_timeout_ms
    t.ev("dealt", remaining=4)
    assert t.state == "Open_Play"


# --- settlement (k)(3)-(k)(6) ---------------------------------------------------------------


def test_fixed_win_not_deducted_is_paid_from_chip_tray_k5() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(1, 2)
    before = t.m.meters()["progressive"]["display_cents"]
    eff = t.outcomes({1: "four-of-a-kind-and-pair", 2: None})
    pay = of_type(eff, "pay")
    assert pay == [
        {
            "type": "pay",
            "position": 1,
            "level": "progressive",
            "line": "four-of-a-kind-and-pair",
            "cents": 4000,
            "from": "chip_tray",
        }
    ]
    m = t.m.meters()["progressive"]
    assert m["display_cents"] == before and m["tray_paid_cents"] == 4000 and m["hits"] == 0
    # the round completed (round_completed posted and stepped), the deck goes to the shuffler
    assert t.state == "Open_Shuffling"
    assert [e["data"]["round_id"] for e in t.entries if e["type"] == "round_completed"] == [1]


@pytest.mark.parametrize(
    ("wager", "line", "deducted"),
    [
        (100, "straight-flush", True),  # any straight flush
        (100, "four-of-a-kind-and-pair", False),  # $40 < $50
        (100, "straight-flush-and-pair", True),
        (100, "royal-flush", True),  # $100 >= $50
        (500, "four-of-a-kind", False),  # $100 < $250
        (500, "four-of-a-kind-and-pair", False),  # $200 < $250
        (500, "royal-flush", True),  # $500 >= $250
        (500, "straight-flush", True),
        (100, "natural-royal-flush", True),  # a share of the meter
    ],
)
def test_which_payouts_are_deducted_from_the_meter_k5(
    wager: int, line: str, deducted: bool
) -> None:
    rate = 2100 if wager == 100 else 2700
    t = Table(
        progressive_wager_cents=wager,
        levels=[{"name": "p", "initial_cents": 100_000, "rate_bp": rate}],
    )
    t.open()
    t.round_to_settlement(4)
    eff = t.outcomes({4: line})
    if deducted:
        assert t.state == "Open_JackpotPending" and of_type(eff, "hit_pending")
        assert not of_type(eff, "pay")
    else:
        assert of_type(eff, "pay")[0]["from"] == "chip_tray"
        assert t.state == "Open_Betting" or t.state == "Open_Shuffling"


def test_deducted_hit_waits_for_supervisor_validation_k3iii() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(2)
    eff = t.outcomes({2: "straight-flush"})
    assert t.state == "Open_JackpotPending"
    assert {"type": "display", "glyph": "P"} in eff
    meters_before = t.m.meters()["progressive"]
    assert rejection(t.ev("round_completed", round_id=1)) is not None
    assert rejection(t.ev("hit_validated", position=3, supervisor=SUP)) is not None
    assert t.m.meters()["progressive"] == meters_before  # nothing paid before validation
    eff = t.ev("hit_validated", position=2, supervisor=SUP)
    pay = of_type(eff, "pay")[0]
    assert pay["from"] == "meter" and pay["cents"] == 2500 and pay["supervisor"] == SUP
    m = t.m.meters()["progressive"]
    # 100,021 - 2,500 is below the reset amount: the level is reset to 100,000
    assert meters_before["display_cents"] == 100_021 and m["display_cents"] == 100_000
    assert m["hits"] == 1 and m["meter_paid_cents"] == 2500
    assert m["last_hits"][0]["round_id"] == 1 and m["last_hits"][0]["position"] == 2


def test_meter_share_paid_at_meter_value_at_payment_time_k6() -> None:
    """Two 10%-of-meter hits in one round: the second is 10% of the meter when it is paid,
    after the first payment, not of the meter when the cards were dealt (k)(6). They are paid
    from the dealer's right, counter-clockwise (NY (g)(7)): area 1 before area 5, whatever the
    starting position (this test asserted the dealing order before: area 5 first)."""
    t = Table(levels=[{"name": "p", "initial_cents": 500_000, "reset_cents": 0, "rate_bp": 2100}])
    t.open()
    t.round_to_settlement(1, 5, number=1)  # starting seat 0: stacks go 0, 6, 5, ..., 1
    t.outcomes({1: "five-aces", 5: "natural-royal-flush"})
    meter = t.m.meters()["p"]["display_cents"]
    assert meter == 500_042
    assert "validate position 1 first" in (
        rejection(t.ev("hit_validated", position=5, supervisor=SUP)) or ""
    )
    first = of_type(t.ev("hit_validated", position=1, supervisor=SUP), "pay")[0]["cents"]
    second = of_type(t.ev("hit_validated", position=5, supervisor=SUP), "pay")[0]["cents"]
    assert first == meter // 10
    assert second == (meter - first) // 10
    assert t.m.meters()["p"]["display_cents"] == meter - first - second


def test_reset_after_hit_is_funded_by_reserve_then_house() -> None:
    t = Table(
        levels=[
            {
                "name": "p",
                "initial_cents": 30_000,
                "reset_cents": 25_000,
                "rate_bp": 2100,
                "hidden_rate_bp": 500,
            }
        ]
    )
    t.open()
    t.round_to_settlement(1)
    # 100% of a $300.21 meter (above the $200 of the royal flush and pair the hand also makes)
    t.outcomes({1: "natural-royal-flush-and-pair"})
    eff = t.ev("hit_validated", position=1, supervisor=SUP)
    assert of_type(eff, "pay")[0]["cents"] == 30_021
    reset = next(e for e in of_type(eff, "meter_movement") if e["kind"] == "reset")
    assert reset["reserve_cents"] == -5 and reset["house_cents"] == 24_995
    m = t.m.meters()["p"]
    assert m["display_cents"] == 25_000 and m["reserve_cents"] == 0
    assert m["house_funded_cents"] == 24_995


def test_card_reading_shoe_hands_stay_hidden_and_decide_outcomes() -> None:
    t = Table(card_reading_shoe=True)
    t.open()
    t.lock(1, 2)
    t.start(1)
    hands = {
        "dealer": ["2c", "3d", "4h", "5s", "7c", "8d", "9h"],
        "1": ["Ah", "Kh", "Qh", "Jh", "Th", "2d", "3c"],  # natural royal flush
        "2": ["2h", "2s", "5c", "8c", "Tc", "Jd", "Qs"],  # pair: loses
        "3": ["3h", "4c", "6c", "9c", "Td", "Qd", "Ks"],
        "4": ["4d", "5d", "6d", "9d", "Jc", "Kd", "As"],
        "5": ["6h", "7h", "8h", "Ts", "Js", "Qc", "Kc"],
        "6": ["3s", "4s", "6s", "7s", "9s", "Ad", "Ac"],
    }
    eff = t.ev("dealt", remaining=4, hands=hands)
    eff += t.ev("play_complete")
    dumped = json.dumps([e.to_json() for e in eff]) + json.dumps(t.m.public_view())
    for cards in hands.values():
        for c in cards:
            assert f'"{c}"' not in dumped
    assert "hands" not in t.m.public_view()["round"]
    assert t.m.snapshot()["round"]["hands"]["1"][0] == 50  # Ah = (14-2)*4+2, kept privately
    assert of_type(eff, "hit_pending")[0]["line"] == "natural-royal-flush"
    assert t.m.snapshot()["round"]["outcomes"] == {"1": "natural-royal-flush", "2": None}


def test_bad_hands_from_shoe_are_rejected_without_naming_a_card() -> None:
    t = Table(card_reading_shoe=True)
    t.open()
    t.lock(1)
    t.start(1)
    hands = {str(k): ["Ah", "Kh", "Qh", "Jh", "Th", "2d", "3c"] for k in range(1, 7)}
    hands["dealer"] = ["Ah", "Kh", "Qh", "Jh", "Th", "2d", "3c"]
    reason = rejection(t.ev("dealt", remaining=4, hands=hands))
    assert reason == "hands: a card appears twice"
    assert t.state == "Open_Dealing"


# --- round ids, completion, restore ---------------------------------------------------------


def test_round_completed_is_posted_and_round_id_increments() -> None:
    """Every round is followed by a shuffle and its count (NY 5324.41(n)(8): each deck is
    counted; changed for issue 8: rounds_per_shuffle = 2 dealt a round with no shuffle or count,
    and is now refused at load)."""
    t = Table()
    t.open()
    t.round_to_settlement(1)
    eff = t.outcomes({1: None})
    assert {
        "type": "post",
        "event": {"type": "round_completed", "data": {"round_id": 1}},
    } in eff
    assert t.state == "Open_Shuffling" and t.m.round_id == 1
    assert sum(1 for e in t.entries if e["type"] == "round_completed") == 1
    t.ev("shuffle_complete", count=53)
    assert t.state == "Open_Betting" and t.m.round_id == 2


def test_restore_reapplies_outputs_of_committed_state() -> None:
    t = Table()
    t.open()
    t.lock(3, 4)
    snap = json.loads(json.dumps(t.m.snapshot()))
    m2 = RoundMachine.restore(t.cfg, snap)
    assert m2.state == "Open_StartingPosition_Rng"
    out = m2.outputs()
    assert {"type": "draw_rng"} in out  # the draw was never journaled: ask again
    assert {"type": "lights", "states": ["off", "off", "locked", "locked", "off", "off"]} in out
    assert m2.snapshot() == t.m.snapshot()


def test_every_event_type_with_bad_data_is_rejected_not_raised() -> None:
    m = RoundMachine(config())
    for etype in EVENT_FIELDS:
        for data in ({}, {"position": "x", "value": None, "supervisor": 3}, {"count": True}):
            eff = m.step(Event(etype, data), 5)
            assert all(isinstance(e, Effect) for e in eff)
            assert [e.TYPE for e in eff] in (["rejected"], [])
    assert rejection(m.step(Event("no_such_event", {}), 5)) is not None
    assert rejection(m.step(Event("chip_detected", "oops"), 5)) is not None  # type: ignore[arg-type]


def test_each_table_builds_its_machine_once_and_models_are_not_registered() -> None:
    m = RoundMachine(config())
    hsm = m._hsm
    t = Table()
    t.open()
    t.round_to_settlement(2)
    assert t.m._hsm is not hsm  # one machine per table: no queue shared between tables
    assert hsm.models == [] and t.m._hsm.models == []  # nothing accumulates
    assert set(hsm.states) == {"Closed", "Open", "Fault", "Maintenance"}
    assert len(LEAF_STATES) == 14


# --- inputs of the table's devices -------------------------------------------------------------


def test_panel_next_is_the_step_the_dealer_owes() -> None:
    t = Table()
    t.open()
    t.ev("chip_detected", position=1)
    t.ev("lockout_pressed")
    t.ev("panel_next")  # = chips_confirmed
    assert t.state == "Open_LockedOut"
    t.ev("panel_next")  # = rng_activated by the dealer (NY 5324.41(h)(8)(ii))
    assert t.state == "Open_StartingPosition_Rng"
    assert t.m.snapshot()["round"]["rng_activated_by"] == "dealer"
    assert rejection(t.ev("panel_next")) is not None  # the RNG answers here, not the dealer
    t.ev("rng_drawn", value=2)
    t.ev("dealt", remaining=4)
    t.ev("panel_next")  # = play_complete
    assert t.state == "Open_Settlement"


def test_lid_lifted_before_three_shakes_requires_reshake_h8i() -> None:
    t = Table(start_mode="dice")
    t.open()
    t.lock(1)
    t.ev("shake_detected", count=1)
    t.ev("shake_detected", count=2)
    eff = t.ev("shaker_lid", lifted=True)
    assert of_type(eff, "alert")[0]["code"] == "RESHAKE_REQUIRED"
    t.ev("shaker_lid", lifted=False)  # covered again (shakes count only with the lid on)
    for n in range(3):
        t.ev("shake_detected", count=n + 1)
    assert t.ev("shaker_lid", lifted=True) == []  # the dealer lifts it to read the dice
    t.ev("dice_position_entered", total=12)
    assert t.state == "Open_Dealing"


@pytest.mark.parametrize("state", ["Closed", "Open_Play", "Fault", "Maintenance"])
def test_power_up_and_informational_inputs_change_nothing(state: str) -> None:
    t = reach(state)
    snap = t.m.snapshot()
    assert t.ev("power_up", software_hash="ab", storage={"ok": True}, restored_seq=9) == []
    assert t.ev("supervisor_key", on=True) == []
    assert t.ev("device_recovered", device="shoe", code="LINK_LOST") == []
    after = t.m.snapshot()
    assert after.pop("supervisor_key") is True  # kept for the panel (test_round_panel.py)
    snap.pop("supervisor_key")
    assert after == snap


def test_side_wagers_recorded_before_rng_activation_cannot_change_after_draw_j2i() -> None:
    """NY 5324.41(j)(2)(i): the side wagers are made before the RNG is activated; recorded in
    LockedOut they are settled on the drawn number and cannot be replaced once it is known.
    (Changed for issue 8 item 5: a side wager entered after the draw used to be accepted and
    settled; now the activation closes them and a later one is refused as late.)"""
    t = Table(side_wager={"offered": True, "odds": "6:1"})
    t.open()
    t.ev("chip_detected", position=2)
    t.ev("lockout_pressed")
    t.ev("side_wagers", bets=[{"position": 2, "number": 5, "cents": 500}])
    t.ev("chips_confirmed")
    t.ev("rng_activated")
    t.ev("rng_drawn", value=5)
    late = [{"position": 2, "number": 5, "cents": 10_000}]
    rej = refusal(t.ev("side_wagers", bets=late))
    assert rej is not None and rej.cause == "late" and "(j)(2)(i)" in rej.reason
    eff = t.ev("side_wagers_settled")
    res = of_type(eff, "side_wager_settled")[0]["results"]
    assert res == [{"position": 2, "number": 5, "cents": 500, "payout_cents": 3000}]
    assert of_type(eff, "dispense")


def test_side_wagers_refused_where_not_offered() -> None:
    t = Table()
    t.open()
    t.ev("lockout_pressed")
    reason = rejection(t.ev("side_wagers", bets=[]))
    assert reason is not None and "not offered" in reason
