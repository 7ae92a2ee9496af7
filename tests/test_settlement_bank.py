"""Player bank and co-bank money: NY 5324.41(h)(5)-(7),(11)-(14).

The worked examples are computed by hand in the comments; the property test checks that no cent is
created or lost for random hands, wagers and outcomes.
"""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.rules.banking_settlement import (
    BANK,
    CENTRE,
    CHIP_TRAY,
    PlayerWager,
    settle_bank_round,
)
from fsm.rules.cards import CardError, parse_cards
from fsm.rules.ranking import value2, value5
from fsm.rules.settlement import Setting, vigorish


def S(high: str, low: str) -> Setting:
    return Setting(parse_cards(high, 5), parse_cards(low, 2))


BANK_HAND = S("Jc Jd 9h 6s 3c", "Kh 8d")  # bank at area 3: pair of jacks, K-8
LOSES = S("Tc Td 8h 5s 2c", "Qh 7d")  # tens and Q-7: both lower
WINS = S("Ac Ad 7h 4s 2d", "Ks Qd")  # aces and K-Q: both higher
PUSHES = S("Qc Qs 5h 4d 3h", "7c 6c")  # queens but 7-6: push
DEALER_LOSES = S("9c 9d 8c 4c 2h", "Th 5d")
DEALER_WINS = S("Kc Kd 6h 4c 2h", "As Th")


def test_player_bank_surplus_is_charged_vigorish_h12() -> None:
    # centre: area 1 loses $100 + the dealer's losing $25 = $125; pay area 2 $50 -> $75 surplus;
    # vigorish 5% of $75 = $3.75 to the chip tray; $71.25 to the bank. Area 2 pays 5% of $50.
    r = settle_bank_round(
        BANK_HAND,
        [
            PlayerWager(1, 10000, LOSES),
            PlayerWager(2, 5000, WINS),
            PlayerWager(5, 2000, PUSHES),
        ],
        bank_area=3,
        dealer=DEALER_LOSES,
        dealer_wager_cents=2500,
    )
    assert r.dealer is not None and r.dealer.outcome == "lose"
    assert [r.players[a].outcome for a in (1, 2, 5)] == ["lose", "win", "push"]
    assert r.net == {
        "area:1": -10000,
        "area:2": 5000 - 250,
        CHIP_TRAY: -2500 + 250 + 375,
        CENTRE: 0,
        BANK: 7125,
    }
    assert [(m.source, m.dest, m.amount_cents) for m in r.ledger] == [
        (CHIP_TRAY, CENTRE, 2500),  # the dealer's losing wager moved to the centre (h)(11)
        ("area:1", CENTRE, 10000),  # losing wagers collected into the centre (h)(12)
        (CENTRE, "area:2", 5000),  # winning wager paid from the centre
        ("area:2", CHIP_TRAY, 250),  # vigorish (h)(14)
        (CENTRE, CHIP_TRAY, 375),  # vigorish on the surplus (h)(12)
        (CENTRE, BANK, 7125),  # the rest to the bank
    ]


def test_player_bank_pays_the_shortfall_h12() -> None:
    # centre $20; area 2 is owed $100: the bank puts in $80; area 2 pays $5 vigorish
    r = settle_bank_round(
        BANK_HAND,
        [PlayerWager(1, 2000, LOSES), PlayerWager(2, 10000, WINS), PlayerWager(5, 1000, PUSHES)],
        bank_area=3,
    )
    assert r.net == {"area:1": -2000, "area:2": 9500, BANK: -8000, CHIP_TRAY: 500, CENTRE: 0}
    assert (BANK, CENTRE, 8000) in [(m.source, m.dest, m.amount_cents) for m in r.ledger]


def test_dealer_winning_wager_is_paid_from_the_centre_and_returned_to_the_tray_h12_h13() -> None:
    # centre $100; dealer's $25 paid first, then area 2's $50; surplus $25, vigorish $1.25
    r = settle_bank_round(
        BANK_HAND,
        [PlayerWager(1, 10000, LOSES), PlayerWager(2, 5000, WINS)],
        bank_area=3,
        dealer=DEALER_WINS,
        dealer_wager_cents=2500,
    )
    assert r.dealer is not None
    assert (r.dealer.outcome, r.dealer.vig_cents) == ("win", 0)
    assert r.net == {
        "area:1": -10000,
        "area:2": 4750,
        CHIP_TRAY: 2500 + 250 + 125,
        BANK: 2375,
        CENTRE: 0,
    }
    paid = [(m.source, m.dest, m.amount_cents) for m in r.ledger if m.source == CENTRE]
    assert paid[0] == (CENTRE, CHIP_TRAY, 2500)  # the dealer's win before the players'


def test_dealer_push_leaves_the_wager_in_the_tray_h11() -> None:
    r = settle_bank_round(
        BANK_HAND,
        [PlayerWager(1, 1000, LOSES)],
        bank_area=3,
        dealer=S("Ah As 5c 4h 2s", "6d 3d"),  # aces behind beat jacks, 6-3 loses to K-8: push
        dealer_wager_cents=2500,
    )
    assert r.dealer is not None and r.dealer.outcome == "push"
    assert all(m.source != CHIP_TRAY for m in r.ledger)


def test_co_bank_shortfall_is_split_half_and_half_h13() -> None:
    # centre $20; area 2 owed $100: co-bank $40, chip tray $40; area 2 pays $5 vigorish
    r = settle_bank_round(
        BANK_HAND,
        [PlayerWager(1, 2000, LOSES), PlayerWager(2, 10000, WINS)],
        bank_area=3,
        co_bank=True,
    )
    assert r.net == {"area:1": -2000, "area:2": 9500, BANK: -4000, CHIP_TRAY: -3500, CENTRE: 0}


def test_co_bank_surplus_half_to_tray_vigorish_on_the_other_half_h13() -> None:
    # centre $100, pay area 2 $50: surplus $50; $25 to the tray, 5% of $25 = $1.25 to the tray,
    # $23.75 to the co-bank
    r = settle_bank_round(
        BANK_HAND,
        [PlayerWager(1, 10000, LOSES), PlayerWager(2, 5000, WINS), PlayerWager(5, 500, PUSHES)],
        bank_area=3,
        co_bank=True,
    )
    assert r.net == {
        "area:1": -10000,
        "area:2": 4750,
        CHIP_TRAY: 2500 + 125 + 250,
        BANK: 2375,
        CENTRE: 0,
    }


def test_co_bank_odd_cent_of_a_shortfall_is_the_houses_h13() -> None:
    # centre 200, owed 301: shortfall 101 = 50 from the co-bank + 51 from the chip tray
    r = settle_bank_round(
        BANK_HAND,
        [PlayerWager(1, 200, LOSES), PlayerWager(2, 301, WINS)],
        bank_area=3,
        co_bank=True,
    )
    moves = {(m.source, m.dest): m.amount_cents for m in r.ledger}
    assert moves[(BANK, CENTRE)] == 50
    assert moves[(CHIP_TRAY, CENTRE)] == 51


def test_dealer_may_not_wager_against_a_co_bank_h5() -> None:
    with pytest.raises(ValueError, match=r"co-bank \(NY \(h\)\(5\)\)"):
        settle_bank_round(
            BANK_HAND,
            [PlayerWager(1, 1000, LOSES)],
            bank_area=3,
            co_bank=True,
            dealer=DEALER_WINS,
            dealer_wager_cents=2500,
        )


def test_bank_area_holds_no_other_wager_h6() -> None:
    with pytest.raises(ValueError, match=r"players\[0\]\.area: area 3 is the bank's"):
        settle_bank_round(BANK_HAND, [PlayerWager(3, 1000, LOSES)], bank_area=3)


def test_a_card_held_twice_in_the_round_is_refused_naming_it() -> None:
    with pytest.raises(CardError, match=r"area:1: card Jc is also held by bank"):
        settle_bank_round(
            BANK_HAND, [PlayerWager(1, 1000, S("Jc Ts 8s 5c 2s", "Qc 7s"))], bank_area=3
        )


def test_surrendered_wager_goes_to_the_centre_as_a_losing_wager() -> None:
    r = settle_bank_round(BANK_HAND, [PlayerWager(4, 1000, None, surrendered=True)], bank_area=3)
    assert r.players[4].outcome == "lose"
    assert r.net == {"area:4": -1000, CHIP_TRAY: 50, BANK: 950, CENTRE: 0}


def test_ez_bank_queen_dragon_pushes_every_wager_nj_11_9_h3() -> None:
    dragon = S("Qh Td 8c 7s 3d", "5h 2c")
    r = settle_bank_round(
        dragon,
        [PlayerWager(1, 1000, S("Kc Kd 7h 6s 4c", "Ah 9d"))],
        bank_area=3,
        ez=True,
    )
    assert r.players[1].outcome == "push"
    assert r.ledger == ()


# --- property: no cent created or lost ----------


def _legal(cards: list[int]) -> Setting:
    for low in combinations(cards, 2):
        high = tuple(c for c in cards if c not in low)
        if value5(high)[: len(value2(low))] >= value2(low):
            return Setting(high, low)
    raise AssertionError("no legal setting")  # pragma: no cover


@settings(max_examples=200, deadline=None)
@given(
    deck=st.permutations(list(range(53))),
    bank_area=st.integers(1, 6),
    wagers=st.lists(st.integers(1, 500_000), min_size=1, max_size=5),
    dealer_wager=st.integers(0, 500_000),
    co_bank=st.booleans(),
    naive_split=st.lists(st.booleans(), min_size=5, max_size=5),
    vig=st.sampled_from(["round-up-25", "exact"]),
)
def test_bank_ledger_balances_to_the_cent_h11_h14(
    deck: list[int],
    bank_area: int,
    wagers: list[int],
    dealer_wager: int,
    co_bank: bool,
    naive_split: list[bool],
    vig: str,
) -> None:
    areas = [a for a in range(1, 7) if a != bank_area][: len(wagers)]
    players = []
    for i, (area, wager) in enumerate(zip(areas, wagers, strict=False)):
        cards = deck[7 * i : 7 * i + 7]
        # some players split naively (first five behind) and may foul: that loses, (g)(5)(iii)
        setting = Setting(tuple(cards[:5]), tuple(cards[5:])) if naive_split[i] else _legal(cards)
        players.append(PlayerWager(area, wager, setting))
    bank = _legal(deck[35:42])
    dealer = None if co_bank or dealer_wager == 0 else _legal(deck[42:49])
    r = settle_bank_round(
        bank,
        players,
        bank_area=bank_area,
        dealer=dealer,
        dealer_wager_cents=0 if dealer is None else dealer_wager,
        co_bank=co_bank,
        vig=vig,  # type: ignore[arg-type]
    )
    # every movement is a positive amount between two different accounts
    assert all(m.amount_cents > 0 and m.source != m.dest for m in r.ledger)
    # no cent created or lost; the centre ends empty
    assert sum(r.net.values()) == 0
    assert r.net.get(CENTRE, 0) == 0
    # each player gets exactly what the wager's own settlement says
    for pw in players:
        assert r.net.get(f"area:{pw.area}", 0) == r.players[pw.area].net_cents
    # the bank's share, restated from (h)(12),(13)
    lost = sum(s.wager_cents for s in r.players.values() if s.outcome == "lose")
    owed = sum(s.won_cents for s in r.players.values() if s.outcome == "win")
    if r.dealer is not None:
        lost += r.dealer.wager_cents if r.dealer.outcome == "lose" else 0
        owed += r.dealer.won_cents if r.dealer.outcome == "win" else 0
    if lost >= owed:
        surplus = lost - owed
        share = surplus - surplus // 2 if co_bank else surplus
        expected_bank = share - vigorish(share, vig)  # type: ignore[arg-type]
    else:
        short = owed - lost
        expected_bank = -(short // 2) if co_bank else -short
    assert r.net.get(BANK, 0) == expected_bank
