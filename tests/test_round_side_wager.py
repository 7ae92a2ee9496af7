"""The 1-7 side wager's integrity and the RNG's activation, through the real round machine
(issue 8: blocker 1, majors 5-7, minors). Each test is written from the issue's probe and cites
the subdivision it checks: NY 9 NYCRR 5324.41 (h)(8)(ii), (h)(10)(ii), (j), (k)(3), (g)(9),
(l)(2), (n)(8); NJ 13:69F-11.8C; NJ 13:69E-1.28G (table-rules.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from round_support import SUP, Table, config, of_type, reach, refusal, rejection

from fsm.round.machine import RoundMachine
from fsm.rules.paytables import BonusConfig

SIDE = {"offered": True, "odds": "6:1"}
BETS = [
    {"position": 1, "number": 3, "cents": 500},
    {"position": 2, "number": 5, "cents": 500},
]


def _shown(number: int = 3, bets: list[dict[str, int]] | None = None, **game: Any) -> Table:
    """A round with the side wagers ``bets`` recorded, the RNG activated and ``number`` shown."""
    t = Table(side_wager=SIDE, **game)
    t.open()
    t.lock(1, side=BETS if bets is None else bets)
    eff = t.ev("rng_drawn", value=number)
    assert {"type": "display", "glyph": str(number)} in eff
    assert t.state == "Open_SideWagers"
    return t


# --- blocker 1: a displayed number is final for the side wager ---------------------------------


def test_a_displayed_number_is_final_while_side_wagers_ride_on_it_j2iii() -> None:
    """NY 5324.41(j)(2)(iii), NJ 13:69F-11.8C(b)3, NJ 13:69E-1.28G(c): a side wager wins on the
    number *selected and displayed*. Probe: 3 shown, the bet on 3 a winner; ``rng_void`` used to
    redraw 5, so the bet on 3 lost and a bet on 5 was paid. Now the void is refused, journaled
    with the reason, and the bets settle on 3."""
    t = _shown(3)
    rej = refusal(t.ev("rng_void", supervisor=SUP, reason="redraw"))
    assert rej is not None and rej.cause == "refused"
    assert "displayed" in rej.reason and "(j)(2)(iii)" in rej.reason and "1.28G" in rej.reason
    assert t.entries[-1]["data"]["effects"][0]["type"] == "rejected"  # journaled as refused
    t.ev("supervisor_key", on=True)
    assert "(j)(2)(iii)" in (rejection(t.ev("panel_void")) or "")  # nor at the dealer panel
    assert t.state == "Open_SideWagers"
    round_data = t.m.snapshot()["round"]
    assert round_data["rng_value"] == 3 and round_data["rng_voids"] == []
    eff = t.ev("side_wagers_settled")
    [settled] = of_type(eff, "side_wager_settled")
    assert settled["number"] == 3
    assert [(r["number"], r["payout_cents"]) for r in settled["results"]] == [(3, 3000), (5, 0)]


def test_a_draw_that_failed_before_display_is_drawn_again_1_28g() -> None:
    """NJ 13:69E-1.28G / table-rules.md: one draw per round, the value displayed is the value
    drawn. A draw that failed before anything was displayed (the RNG did not answer) is drawn
    again when the fault clears; with no side wager recorded a supervisor may still void a
    shown draw."""
    t = Table(side_wager=SIDE)
    t.open()
    t.lock(1, side=BETS)
    assert t.state == "Open_StartingPosition_Rng"
    t.t = int(t.m.next_deadline_ms() or 0)
    t.ev("deadline")
    assert t.state == "Fault"
    eff = t.ev("fault_cleared", supervisor=SUP)
    assert t.state == "Open_StartingPosition_Rng" and of_type(eff, "draw_rng")
    t.ev("rng_drawn", value=4)
    assert t.m.snapshot()["round"]["side_bets"] == [[1, 3, 500], [2, 5, 500]]  # unchanged
    none = _shown(3, bets=[])
    assert rejection(none.ev("rng_void", supervisor=SUP, reason="display failed")) is None
    assert none.state == "Open_StartingPosition_Rng"


# --- major 5: side wagers closed before the RNG is activated -----------------------------------


def test_the_rng_cannot_fire_while_side_wagers_are_open_j2i_nj_8c_b1() -> None:
    """NY 5324.41(j)(2)(i), NJ 13:69F-11.8C(b)1: side wagers are made *prior to the activation
    of the random number generator*. Until the dealer closes them (an explicit list, possibly
    empty) the RNG is not activated: no draw is requested."""
    t = Table(side_wager=SIDE)
    t.open()
    t.ev("chip_detected", position=1)
    t.ev("lockout_pressed")
    t.ev("chips_confirmed")
    assert t.state == "Open_LockedOut"
    reason = rejection(t.ev("rng_activated")) or ""
    assert "side wagers are open" in reason and "(j)(2)(i)" in reason and "11.8C(b)1" in reason
    assert "side wagers are open" in (rejection(t.ev("panel_next")) or "")
    assert not of_type(t.all_effects, "draw_rng")
    t.ev("side_wagers", bets=[{"position": 1, "number": 2, "cents": 100}])
    t.ev("side_wagers", bets=BETS)  # replaceable until the activation
    eff = t.ev("rng_activated")
    assert of_type(eff, "draw_rng") and t.state == "Open_StartingPosition_Rng"
    assert t.m.snapshot()["round"]["side_bets"] == [[1, 3, 500], [2, 5, 500]]


def test_no_side_wager_is_accepted_after_the_rng_is_activated_j2i() -> None:
    """NY 5324.41(j)(2)(i), (d)(3): once the RNG is activated (and so after the number is shown)
    no side wager is accepted or changed; the refusal is journaled as late with the reason.
    Changed for issue 8 item 5: a side wager entered after the draw used to be settled."""
    t = Table(side_wager=SIDE)
    t.open()
    t.lock(1, side=BETS)
    late = [{"position": 3, "number": 4, "cents": 10_000}]
    for _ in range(2):  # before the value arrives, then with the number shown
        rej = refusal(t.ev("side_wagers", bets=late))
        assert rej is not None and rej.cause == "late" and "(j)(2)(i)" in rej.reason
        if t.state == "Open_StartingPosition_Rng":
            t.ev("rng_drawn", value=4)
    assert t.state == "Open_SideWagers"
    eff = t.ev("side_wagers_settled")
    [settled] = of_type(eff, "side_wager_settled")
    assert [r["position"] for r in settled["results"]] == [1, 2]  # the late bet is not there
    assert rejection(t.ev("side_wagers", bets=late)) is not None  # nor during the deal


def test_side_wagers_are_never_settled_with_none_recorded_j2i() -> None:
    """NY 5324.41(j)(2)(i), (iv)-(v): what is settled is what was recorded before the draw.
    Probe: settlement with no list recorded used to be accepted. A round that reaches the side
    wagers without a list (a snapshot altered outside the machine) refuses to settle; a list
    recorded as none is settled as none (no settlement effect) and the cards are dealt."""
    t = _shown(3)
    snap = t.m.snapshot()
    snap["round"]["side_bets"] = None
    altered = RoundMachine.restore(t.cfg, json.loads(json.dumps(snap)))
    from fsm.round.events import Event

    [rej] = altered.step(Event("side_wagers_settled", {}), t.t + 10)
    assert rej["type"] == "rejected" and "no 1-7 side wagers were recorded" in rej["reason"]
    none = _shown(3, bets=[])
    eff = none.ev("side_wagers_settled")
    assert not of_type(eff, "side_wager_settled") and of_type(eff, "dispense")


# --- major 6: a voided round refunds or settles its side wagers --------------------------------


def test_a_voided_round_refunds_side_wagers_whose_number_was_not_shown_j3() -> None:
    """NY 5324.41(j)(3), NJ 13:69F-11.8C(c): a side wager has no bearing on any other wager, so a
    round voided before its number was displayed returns every recorded side wager (it used to
    drop them silently), besides the progressive wagers."""
    for activate in (False, True):
        t = Table(side_wager=SIDE)
        t.open()
        t.ev("chip_detected", position=1)
        t.ev("lockout_pressed")
        t.ev("side_wagers", bets=BETS)
        t.ev("chips_confirmed")
        if activate:
            t.ev("rng_activated")  # activated, no number yet
        t.ev("fault_raised", code="RNG_LINK", device="rng", detail="lost")
        eff = t.ev("fault_cleared", supervisor=SUP, void=True)
        assert of_type(eff, "round_voided")
        refunds = of_type(eff, "side_wager_refund")
        assert [(r["position"], r["number"], r["cents"]) for r in refunds] == [
            (1, 3, 500),
            (2, 5, 500),
        ]
        assert not of_type(eff, "side_wager_settled")
        assert of_type(eff, "refund")  # the progressive wager too


def test_a_voided_round_settles_side_wagers_whose_number_was_shown_j3() -> None:
    """NY 5324.41(j)(3), (j)(2)(iii): a number already displayed decides the side wagers, so a
    round voided after it settles them on that number (the bet on 3 paid) instead of returning
    them; a side wager settled before the void stands and is not settled or returned again."""
    t = _shown(3)
    t.ev("fault_raised", code="SHOE_LINK_LOST", device="shoe", detail="no heartbeat")
    eff = t.ev("fault_cleared", supervisor=SUP, void=True)
    [settled] = of_type(eff, "side_wager_settled")
    assert settled["number"] == 3
    assert [r["payout_cents"] for r in settled["results"]] == [3000, 0]
    assert not of_type(eff, "side_wager_refund") and of_type(eff, "round_voided")
    t2 = _shown(3)
    t2.ev("side_wagers_settled")
    t2.ev("fault_raised", code="SHOE_JAM", device="shoe", detail="card jam")
    eff = t2.ev("fault_cleared", supervisor=SUP)  # a fault while dealing voids the round
    assert of_type(eff, "round_voided")
    assert not of_type(eff, "side_wager_settled") and not of_type(eff, "side_wager_refund")


# --- major 7: Play and Settlement are not voidable ---------------------------------------------


@pytest.mark.parametrize("state", ["Open_Play", "Open_Settlement", "Open_JackpotPending"])
def test_a_round_is_not_voided_after_the_deal_a_fault_there_resumes_k3_g9(state: str) -> None:
    """NY 5324.41(k)(3), (g)(9): a dealt hand may be a progressive winner whose cards stay on the
    table until it is paid. Probe: a round in Play or Settlement could be voided, even holding a
    dealt jackpot hand. Now the void is refused (console and panel alike) and the fault resumes
    the round where it was."""
    t = reach(state)
    t.ev("fault_raised", code="SHOE_LINK_LOST", device="shoe", detail="no heartbeat")
    reason = rejection(t.ev("fault_cleared", supervisor=SUP, void=True)) or ""
    assert "cannot be voided" in reason and "(k)(3), (g)(9)" in reason
    t.ev("supervisor_key", on=True)
    assert "(k)(3), (g)(9)" in (rejection(t.ev("panel_void")) or "")
    assert t.state == "Fault" and not of_type(t.all_effects, "round_voided")
    eff = t.ev("fault_cleared", supervisor=SUP)
    assert t.state == state and of_type(eff, "fault_cleared")[0]["outcome"] == "resumed"


def test_a_dealt_jackpot_hand_survives_a_fault_in_settlement_and_is_paid_k3_g9() -> None:
    """NY 5324.41(k)(3), (g)(9): a fault in Settlement before the dealer enters area 2's natural
    royal flush cannot void the round: after it the hit goes to the supervisor and is paid."""
    t = reach("Open_Settlement")
    t.ev("fault_raised", code="PANEL", device="panel", detail="")
    assert rejection(t.ev("fault_cleared", supervisor=SUP, void=True)) is not None
    t.ev("fault_cleared", supervisor=SUP)
    t.ev("progressive_outcome", position=2, line="natural-royal-flush")
    assert t.state == "Open_JackpotPending"
    eff = t.ev("hit_validated", position=2, supervisor=SUP)
    assert of_type(eff, "pay")[0]["position"] == 2


# --- minor: the RNG activated by the dealer or the bank -----------------------------------------


def test_the_rng_fires_only_when_the_dealer_or_the_bank_activates_it_h8ii_h10ii() -> None:
    """NY 5324.41(h)(8)(ii), (h)(10)(ii): the RNG is operated by a person (the dealer, or the
    bank by NY 5324.2(c)); it used to fire by itself when the chip count was confirmed. Now the
    count leaves the round in LockedOut, the dealer panel's NEXT (or ``rng_activated``) activates
    it, and ``by: "bank"`` is accepted only when a player banks."""
    t = Table()
    t.open()
    t.ev("chip_detected", position=1)
    t.ev("lockout_pressed")
    assert "count is not confirmed" in (rejection(t.ev("rng_activated")) or "")  # (k)(2) first
    eff = t.ev("chips_confirmed")
    assert t.state == "Open_LockedOut" and not of_type(eff, "draw_rng")
    assert "no player banks" in (rejection(t.ev("rng_activated", by="bank")) or "")
    assert "already confirmed" in (rejection(t.ev("chips_confirmed")) or "")
    eff = t.ev("panel_next")
    assert of_type(eff, "draw_rng") and t.state == "Open_StartingPosition_Rng"
    assert t.m.snapshot()["round"]["rng_activated_by"] == "dealer"

    b = Table(player_banking=True)
    b.open()
    b.lock()  # a first round: no bank at the start of the game (h)(2)
    b.start()
    b.deal()
    b.ev("play_complete")
    b.ev("shuffle_complete", count=53)
    b.ev("bank_accepted", position=4)
    b.ev("lockout_pressed")
    b.ev("chips_confirmed")
    eff = b.ev("rng_activated", by="bank")
    assert of_type(eff, "draw_rng") and b.m.snapshot()["round"]["rng_activated_by"] == "bank"


def test_the_simulated_dealer_activates_the_rng_and_closes_side_wagers_first_h8ii_j2i() -> None:
    """The golden journal (a seeded headless run of the simulated table, which offers the side
    wager): in every round the side wagers are entered before the count and the draw is
    requested only by an activation (NEXT or ``rng_activated``), never by the count itself."""
    path = Path(__file__).parent / "golden" / "headless-seed7-5rounds.jsonl"
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    rounds: dict[int, list[str]] = {}
    for e in entries:
        effects = [x["type"] for x in e["data"].get("effects", [])]
        if "draw_rng" in effects:
            assert e["type"] in ("panel_next", "rng_activated"), e
        rounds.setdefault(e["round"], []).append(e["type"])
    played = [kinds for kinds in rounds.values() if "rng_drawn" in kinds]
    assert len(played) >= 5
    for kinds in played:
        assert kinds.index("side_wagers") < kinds.index("rng_drawn")
        assert kinds.count("side_wagers") == 1


# --- minors: bonus wager minimum, every deck counted, one place for the odds --------------------


def test_a_bonus_wager_is_at_least_one_dollar_l2() -> None:
    """NY 5324.41(l)(2): "A bonus wager shall be no less than $1" (insurance and fortune bonus).
    A table minimum below $1 is refused at load; a wager below the least is refused."""
    data: dict[str, Any] = {
        "offered": ["fortune-bonus", "insurance"],
        "tables": {"fortune-bonus": "fortune-bonus-a", "insurance": "insurance-a"},
        "min_wager_cents": {"fortune-bonus": 50},
    }
    with pytest.raises(ValueError, match=r"min_wager_cents.fortune-bonus: 50 cents.*\(l\)\(2\)"):
        BonusConfig.from_mapping(data, "bonus")
    data["min_wager_cents"] = {"fortune-bonus": 500}
    bonus = BonusConfig.from_mapping(data, "bonus")
    with pytest.raises(ValueError, match=r"insurance: a wager of 99 cents.*least, 100.*\(l\)\(2\)"):
        bonus.check_wager("insurance", 99)
    bonus.check_wager("insurance", 100)
    with pytest.raises(ValueError, match=r"fortune-bonus: a wager of 499 cents"):
        bonus.check_wager("fortune-bonus", 499)
    bonus.check_wager("fortune-bonus", 500)
    with pytest.raises(ValueError, match="not a wager offered"):
        bonus.check_wager("seven-card", 500)


def test_every_round_is_dealt_from_a_deck_shuffled_and_counted_n8() -> None:
    """NY 5324.41(n)(8), (b): every deck is counted (53 cards) before it deals. Probe:
    ``rounds_per_shuffle = 2`` dealt a second round with no shuffle or count; such values are
    refused at load (a round deals 49 of the 53 cards), and each round ends in a shuffle."""
    for n in (2, 5):
        with pytest.raises(ValueError, match=r"game.rounds_per_shuffle: must be 1.*\(n\)\(8\)"):
            config(rounds_per_shuffle=n)
    t = Table()
    t.open()
    for _ in range(3):
        t.round_to_settlement(1)
        t.outcomes({1: None})
        assert t.state == "Open_Shuffling"  # no round without a shuffle and a count
        t.ev("shuffle_complete", count=53)
        assert t.state == "Open_Betting"


def test_the_side_wager_odds_the_round_pays_are_checked_against_the_pay_table_j2vi() -> None:
    """NY 5324.41(j)(2)(vi): the round pays ``game.side_wager.odds``; a [bonus] table for the
    side wager paying other odds is refused at load, so the two never disagree."""
    bonus = {"offered": ["side-1-7"], "tables": {"side-1-7": "side-1-7-5.5"}}
    with pytest.raises(ValueError, match=r"side-1-7: pays 11:2 but game.side_wager.odds is 6:1"):
        config(side_wager=SIDE, bonus=bonus)
    cfg = config(side_wager={"offered": True, "odds": "5.5:1"}, bonus=bonus)
    assert cfg.bonus is not None and cfg.side_wager_odds == "5.5:1"


def test_the_dealer_closes_side_wagers_from_the_console_or_the_page_j2i() -> None:
    """NY 5324.41(j)(2)(i): the panel has only NEXT and VOID, so the list of side wagers (or
    "none") is entered through the console's ``side-wagers`` request (the page's action too);
    it reaches the round as ``side_wagers`` naming who entered it."""
    from controller.supervisor.requests import RequestError, build_event

    event = build_event("side-wagers", ["2:5:500", "4:1:100"], "ana")
    assert event.type == "side_wagers"
    assert event.data == {
        "supervisor": "ana",
        "via": "console",
        "bets": [
            {"position": 2, "number": 5, "cents": 500},
            {"position": 4, "number": 1, "cents": 100},
        ],
    }
    assert build_event("side-wagers", ["none"], "ana").data["bets"] == []
    with pytest.raises(RequestError, match=r"BETS\[0\]: POSITION:NUMBER:CENTS"):
        build_event("side-wagers", ["2-5-500"], "ana")
    t = Table(side_wager=SIDE)
    t.open()
    t.ev("chip_detected", position=1)
    t.ev("lockout_pressed")
    t.ev("chips_confirmed")
    t.ev(event.type, **event.data)
    assert t.m.snapshot()["round"]["side_bets"] == [[2, 5, 500], [4, 1, 100]]
    assert of_type(t.ev("panel_next"), "draw_rng")  # NEXT now activates the RNG


def test_the_round_report_shows_the_side_wagers_a_void_returned_j3(tmp_path: Path) -> None:
    """NY 5324.41(j)(3): the round recall of a round voided before its number was displayed
    lists each side wager returned (a real journal file written by the real machine)."""
    from report_journals import TableDriver

    from controller.journal.reports import JournalReader, rounds_report

    d = TableDriver(tmp_path / "j.db", config(table_id="T9", side_wager=SIDE))
    d.open_table()
    d.send("chip_detected", position=1)
    d.send("lockout_pressed")
    d.close_side_wagers(BETS)
    d.send("chips_confirmed")
    d.send("fault_raised", code="RNG_LINK", device="rng", detail="lost")
    d.send("fault_cleared", supervisor="ana", void=True)
    d.close()
    with JournalReader(tmp_path / "j.db") as reader:
        [r] = rounds_report(reader)
    assert r["void"] and r["side_wagers"] == [
        {"position": 1, "number": 3, "cents": 500, "refund_cents": 500},
        {"position": 2, "number": 5, "cents": 500, "refund_cents": 500},
    ]
