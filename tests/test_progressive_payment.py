"""Paying the progressive payout wager: the order several winners are paid in, the line each is
paid on, the $5 wager, the corrected void, who validated (NY 5324.41(g)(7), (g)(8), (k)(3)-(6),
NJ 13:69F-11.9(i)). Each test is the probe of issue 8 driven through the real round machine.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from round_support import SUP, Table, config, of_type, rejection

from fsm.round.effects import Effect
from fsm.rules.cards import JOKER, parse_card
from fsm.rules.progressive import IMPLIED_LINES, ProgressiveTable


def pays(effects: list[Effect]) -> list[dict[str, Any]]:
    return [e.to_json() for e in of_type(effects, "pay")]


def pending(t: Table) -> list[int]:
    return [int(p["position"]) for p in t.m.snapshot()["round"]["pending"]]


# --- Blocker 2: the order -----------------------------------------------------------------


def test_winners_are_paid_from_the_dealers_right_counter_clockwise_g7_nj_11_9_i() -> None:
    """The probe: area 5 holds a 100%-of-meter hand, area 1 a 10% one, the starting position
    gives area 5 its stack first. NY (g)(7) / NJ 11.9(i): pay from the player farthest to the
    dealer's right (area 1 on the usual layout), counter-clockwise: area 1 takes 10% of the full
    meter, then area 5 the whole meter that is left (k)(6) — not area 5 100% and area 1 10% of
    the reset meter."""
    t = Table(levels=[{"name": "p", "initial_cents": 500_000, "reset_cents": 0, "rate_bp": 2100}])
    t.open()
    t.round_to_settlement(1, 5, number=1)  # stacks go 0, 6, 5, ..., 1: area 5 before area 1
    t.outcomes({1: "natural-royal-flush", 5: "natural-royal-flush-and-pair"})
    assert pending(t) == [1, 5]
    meter = t.m.meters()["p"]["display_cents"]
    assert "validate position 1 first" in (
        rejection(t.ev("hit_validated", position=5, supervisor=SUP)) or ""
    )
    first = pays(t.ev("hit_validated", position=1, supervisor=SUP))[0]
    assert (first["position"], first["cents"]) == (1, meter // 10)
    second = pays(t.ev("hit_validated", position=5, supervisor=SUP))[0]
    assert (second["position"], second["cents"]) == (5, meter - meter // 10)


def test_the_layout_names_the_area_at_the_dealers_right_g7() -> None:
    """A layout numbered from the dealer's left (area 6 at the dealer's right) pays 6 .. 1."""
    t = Table(layout={"dealer_right_area": 6})
    t.open()
    t.round_to_settlement(1, 3, 5, number=4)
    t.outcomes({1: "straight-flush", 3: "straight-flush", 5: "straight-flush"})
    assert pending(t) == [5, 3, 1]
    assert config().payment_order() == (1, 2, 3, 4, 5, 6)  # the usual layout by default


@pytest.mark.parametrize("value", [0, 2, 3, 7, "1", True])
def test_dealer_right_area_must_be_an_end_of_the_row_a2i(value: object) -> None:
    """NY (a)(2)(i): areas numbered one through six; the dealer's right is area 1 or area 6."""
    with pytest.raises(ValueError, match=r"^game\.layout\.dealer_right_area: "):
        config(layout={"dealer_right_area": value})
    with pytest.raises(ValueError, match=r"^game\.layout\.seat: unknown key"):
        config(layout={"seat": 1})


# --- Major 3: the line decided when paid, never below the line's minimum -----------------------


def test_line_decided_at_payment_never_below_the_fixed_line_g8_k4_k6() -> None:
    """The probe: a 100%-of-meter hit paid first leaves the meter at its reset amount; the
    natural royal flush paid next must not get 10% of a small meter: the hand is a royal flush
    too, and (g)(8) pays the line yielding the most at the time of payment ($100 here)."""
    t = Table(
        levels=[{"name": "p", "initial_cents": 500_000, "reset_cents": 50_000, "rate_bp": 2100}]
    )
    t.open()
    t.round_to_settlement(1, 2)
    t.outcomes({1: "five-aces-and-pair", 2: "natural-royal-flush"})
    t.ev("hit_validated", position=1, supervisor=SUP)
    assert t.m.meters()["p"]["display_cents"] == 50_000  # reset; 10% of it is $50
    pay = pays(t.ev("hit_validated", position=2, supervisor=SUP))[0]
    assert (pay["line"], pay["cents"], pay["from"]) == ("royal-flush", 10_000, "meter")
    assert pay["house_cents"] == 0
    summary = of_type(t.all_effects, "round_summary")[-1]
    assert [(p["position"], p["line"]) for p in summary["positions"]] == [
        (1, "five-aces-and-pair"),
        (2, "royal-flush"),
    ]


def test_five_dollar_meter_emptied_first_the_house_funds_the_line_k4_k5() -> None:
    """The probe on a $5 wager with reset 0: after the 100% hit the meter holds $0; the natural
    royal flush is paid the royal flush's $500 (never $0, $50 or $100), deducted from the
    meter (k)(5), which holds nothing: the house funds all of it, journaled as such."""
    t = Table(
        progressive_wager_cents=500,
        levels=[{"name": "p", "initial_cents": 100_000, "reset_cents": 0, "rate_bp": 2700}],
    )
    t.open()
    t.round_to_settlement(1, 2)
    t.outcomes({1: "natural-royal-flush-and-pair", 2: "natural-royal-flush"})
    t.ev("hit_validated", position=1, supervisor=SUP)
    assert t.m.meters()["p"]["display_cents"] == 0
    eff = t.ev("hit_validated", position=2, supervisor=SUP)
    pay = pays(eff)[0]
    assert (pay["line"], pay["cents"], pay["house_cents"]) == ("royal-flush", 50_000, 50_000)
    move = next(e for e in of_type(eff, "meter_movement") if e["kind"] == "payout")
    assert (move["display_cents"], move["house_cents"]) == (0, 50_000)


def test_five_aces_on_a_low_meter_pays_four_of_a_kind_from_the_chip_tray_g8() -> None:
    """Five aces hold four of a kind ($20): with the meter at $150 its 10% ($15) is less, so
    the hand is paid $20, an amount not deducted from the meter (k)(5): from the chip tray."""
    t = Table(levels=[{"name": "p", "initial_cents": 15_000, "rate_bp": 2100}])
    t.open()
    t.round_to_settlement(3)
    eff = t.outcomes({3: "five-aces"})
    pay = pays(eff)[0]
    assert (pay["line"], pay["cents"], pay["from"]) == ("four-of-a-kind", 2_000, "chip_tray")
    assert t.m.meters()["p"]["display_cents"] == 15_021


def test_implied_lines_are_claimed_by_every_hand_that_claims_the_line_g8() -> None:
    """IMPLIED_LINES (what a line entered by the dealer is also worth) against the hands: over
    many seven-card hands rich in high cards, pairs and the joker, every hand claiming a line
    claims the lines it implies."""
    table = ProgressiveTable.load()
    rng = random.Random(5324)
    deck = [*range(52), JOKER]
    high = [*(c for c in range(52) if c // 4 >= 8), JOKER]  # tens to aces and the joker
    seen: set[str] = set()
    for i in range(30_000):
        pool = high if i % 3 else deck
        cards = rng.sample(pool, 7)
        claims = set(table.claims(cards))
        for line in claims:
            seen.add(line)
            missing = set(IMPLIED_LINES.get(line, ())) - claims
            assert not missing, (line, missing)
    five_aces = [parse_card(c) for c in ("Ac", "Ad", "Ah", "As", "JK", "7c", "7d")]
    claims = set(table.claims(five_aces))
    assert {"five-aces-and-pair", *IMPLIED_LINES["five-aces-and-pair"]} <= claims
    assert {"natural-royal-flush", "royal-flush", "four-of-a-kind", "full-house"} <= seen


# --- Major 4: the $5 progressive ---------------------------------------------------------------


def test_five_dollar_wager_pays_five_times_every_amount_k4i() -> None:
    """NY (k)(4)(i): "for a $5 progressive wager, multiply payout amount by five": 100% of the
    meter is five meters; the meter pays what it holds and the house the rest, journaled."""
    t = Table(
        progressive_wager_cents=500,
        levels=[{"name": "p", "initial_cents": 100_000, "reset_cents": 100_000, "rate_bp": 2700}],
    )
    t.open()
    t.round_to_settlement(4)
    t.outcomes({4: "natural-royal-flush-and-pair"})
    meter = t.m.meters()["p"]["display_cents"]
    assert meter == 100_135
    eff = t.ev("hit_validated", position=4, supervisor=SUP)
    pay = pays(eff)[0]
    assert pay["cents"] == 5 * meter and pay["house_cents"] == 4 * meter
    move = next(e for e in of_type(eff, "meter_movement") if e["kind"] == "payout")
    assert move["display_cents"] == -meter and move["house_cents"] == 4 * meter
    m = t.m.meters()["p"]
    assert m["display_cents"] == 100_000 and m["meter_paid_cents"] == 5 * meter
    assert m["last_hits"][-1]["house_cents"] == 4 * meter
    # a 10% line pays half the meter
    assert t.cfg.progressive_payout("natural-royal-flush", 100_000) == 50_000


def test_five_dollar_share_not_multiplied_only_on_a_named_ruling_k4i() -> None:
    """Today's other reading (only fixed amounts times five) is a configuration option that
    must name the regulator's written ruling it relies on."""
    with pytest.raises(ValueError, match=r"^game\.five_dollar_ruling: .*written ruling"):
        config(
            progressive_wager_cents=500,
            five_dollar_meter_share="share-not-multiplied",
            levels=[{"name": "p", "initial_cents": 100_000, "rate_bp": 2700}],
        )
    with pytest.raises(ValueError, match=r"^game\.five_dollar_ruling: only with"):
        config(five_dollar_ruling="NYSGC letter 1")
    with pytest.raises(ValueError, match=r"^game\.five_dollar_meter_share: "):
        config(five_dollar_meter_share="half")
    ruled = config(
        progressive_wager_cents=500,
        five_dollar_meter_share="share-not-multiplied",
        five_dollar_ruling="NYSGC written ruling 2026-17",
        levels=[{"name": "p", "initial_cents": 100_000, "rate_bp": 2700}],
    )
    assert ruled.progressive_payout("natural-royal-flush-and-pair", 100_000) == 100_000
    assert ruled.progressive_payout("royal-flush", 100_000) == 50_000
    assert ruled.to_mapping()["five_dollar_ruling"] == "NYSGC written ruling 2026-17"


# --- Major 8: the corrected void -------------------------------------------------------------


def test_void_names_the_corrected_lower_line_which_is_paid_k3ii() -> None:
    """NY (k)(3)(ii): the hand is not the royal flush entered but a straight flush: the
    supervisor voids the hit naming the right line (here lower; higher too, see
    tests/test_round_corrections.py), which is paid (from the meter: any
    straight flush is deducted, (k)(5)), journaled with both lines."""
    t = Table()
    t.open()
    t.round_to_settlement(2)
    t.outcomes({2: "royal-flush"})
    assert t.state == "Open_JackpotPending"
    same = t.ev("hit_voided", position=2, supervisor=SUP, reason="misread", line="royal-flush")
    assert "is the line voided" in (rejection(same) or "")
    eff = t.ev(
        "hit_voided", position=2, supervisor=SUP, reason="a straight flush", line="straight-flush"
    )
    voided = of_type(eff, "hit_voided")[0]
    assert (voided["line"], voided["corrected_line"]) == ("royal-flush", "straight-flush")
    pay = pays(eff)[0]
    assert (pay["line"], pay["cents"], pay["from"]) == ("straight-flush", 2_500, "meter")
    assert (pay["voided_line"], pay["supervisor"]) == ("royal-flush", SUP)
    assert t.state in ("Open_Shuffling", "Open_Betting")
    summary = of_type(t.all_effects, "round_summary")[-1]
    assert summary["positions"][0]["line"] == "straight-flush"


def test_void_corrected_to_a_fixed_line_pays_from_the_chip_tray_k3ii() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(2, 4)
    t.outcomes({2: "straight-flush", 4: "straight-flush"})
    refused = t.ev("hit_voided", position=4, supervisor=SUP, reason="flush", line="flush")
    assert "position 2 first" in (rejection(refused) or "")  # a corrected void pays: in order
    eff = t.ev("hit_voided", position=2, supervisor=SUP, reason="only a flush", line="flush")
    pay = pays(eff)[0]
    assert (pay["line"], pay["cents"], pay["from"]) == ("flush", 300, "chip_tray")
    plain = t.ev("hit_voided", position=4, supervisor=SUP, reason="not a winner")
    assert not pays(plain) and "corrected_line" not in of_type(plain, "hit_voided")[0]


# --- Minors ------------------------------------------------------------------------------------


def test_panel_validation_names_the_supervisor_holding_the_key_k3iii() -> None:
    """A hit validated at the panel is journaled in the name of the supervisor who named
    themself as the key's holder (``key_holder``, posted by the console after their PIN); the
    key switch alone names no one and records `panel-key` (via `panel`); turning the key off
    forgets the holder, and no one is named while the key is off."""
    t = Table()
    t.open()
    t.round_to_settlement(2, 4, 5)
    t.outcomes({2: "straight-flush", 4: "straight-flush", 5: "straight-flush"})
    assert "key switch is off" in (rejection(t.ev("key_holder", supervisor="ana")) or "")
    t.ev("supervisor_key", on=True)
    t.ev("key_holder", supervisor="ana", via="console")
    pay = pays(t.ev("panel_next"))[0]
    assert (pay["supervisor"], pay["via"]) == ("ana", "panel")
    t.ev("supervisor_key", on=False)
    t.ev("supervisor_key", on=True)  # the key alone
    pay = pays(t.ev("panel_next"))[0]
    assert (pay["supervisor"], pay["via"]) == ("panel-key", "panel")
    void = of_type(t.ev("panel_void"), "hit_voided")[0]
    assert void["supervisor"] == "panel-key"


def test_each_level_paying_meter_lines_grows_at_the_least_rate_k5() -> None:
    """NY (k)(5): the meter that determines the payouts grows at 21% ($1) / 27% ($5) itself;
    another level's rate does not fund it."""
    with pytest.raises(ValueError, match=r"^game\.levels\[1\]\.rate_bp: level 'minor' pays "):
        config(
            levels=[
                {"name": "major", "initial_cents": 100_000, "rate_bp": 2100,
                 "lines": ["natural-royal-flush-and-pair", "five-aces-and-pair"]},
                {"name": "minor", "initial_cents": 1_000, "rate_bp": 600},
            ]
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"^game\.levels\[0\]\.rate_bp: level 'major' pays "):
        config(
            progressive_wager_cents=500,
            levels=[
                {"name": "major", "initial_cents": 100_000, "rate_bp": 2600,
                 "lines": ["natural-royal-flush-and-pair"]},
                {"name": "minor", "initial_cents": 1_000, "rate_bp": 2700},
            ]
        )  # fmt: skip
    ok = config(
        levels=[
            {"name": "major", "initial_cents": 100_000, "rate_bp": 2100,
             "lines": ["natural-royal-flush-and-pair", "five-aces-and-pair",
                       "natural-royal-flush", "five-aces"]},
            {"name": "minor", "initial_cents": 1_000, "rate_bp": 100},  # fixed lines only
        ]
    )  # fmt: skip
    assert [lvl.rate_bp for lvl in ok.levels] == [2100, 100]


def test_card_reading_shoe_best_line_at_each_levels_meter_g8_k6() -> None:
    """A natural royal flush with the meter lines on a small "major" level: its 10% ($50) is
    less than the royal flush's $100, wherever the first level's (large) meter stands."""
    t = Table(
        card_reading_shoe=True,
        levels=[
            {"name": "minor", "initial_cents": 1_000_000, "rate_bp": 100},
            {"name": "major", "initial_cents": 50_000, "rate_bp": 2100,
             "lines": ["natural-royal-flush-and-pair", "five-aces-and-pair",
                       "natural-royal-flush", "five-aces"]},
        ],
    )  # fmt: skip
    t.open()
    t.lock(1)
    t.start(1)
    hands = {
        "dealer": ["2c", "3d", "4h", "5s", "7c", "8d", "9h"],
        "1": ["Ah", "Kh", "Qh", "Jh", "Th", "2d", "3c"],  # natural royal flush
        "2": ["2h", "2s", "5c", "8c", "Tc", "Jd", "Qs"],
        "3": ["3h", "4c", "6c", "9c", "Td", "Qd", "Ks"],
        "4": ["4d", "5d", "6d", "9d", "Jc", "Kd", "As"],
        "5": ["6h", "7h", "8h", "Ts", "Js", "Qc", "Kc"],
        "6": ["3s", "4s", "6s", "7s", "9s", "Ad", "Ac"],
    }
    t.ev("dealt", remaining=4, hands=hands)
    eff = t.ev("play_complete")
    assert of_type(eff, "outcome")[0]["line"] == "royal-flush"
    pay = pays(t.ev("hit_validated", position=1, supervisor=SUP))[0]
    assert (pay["line"], pay["level"], pay["cents"]) == ("royal-flush", "minor", 10_000)
