"""Player banking: NY 5324.41(h)(2) not at the start of the game; (h)(3) the offer rotates
counterclockwise from the dealer's right and nobody banks two consecutive rounds."""

from __future__ import annotations

from round_support import Table, of_type, rejection

from fsm.round.banking import BankRotation


def _finish_round(t: Table) -> None:
    t.lock()
    t.start()
    t.deal()
    t.ev("play_complete")  # no wager: round complete, next shuffle
    t.ev("shuffle_complete", count=53)


def test_no_player_bank_at_start_of_game_h2() -> None:
    t = Table(player_banking=True)
    t.open()
    reason = rejection(t.ev("bank_accepted", position=1))
    assert reason is not None and "(h)(2)" in reason
    _finish_round(t)
    assert rejection(t.ev("bank_accepted", position=1)) is None


def test_same_player_never_banks_two_consecutive_rounds_h3() -> None:
    t = Table(player_banking=True)
    t.open()
    _finish_round(t)
    t.ev("bank_accepted", position=4)
    _finish_round(t)
    reason = rejection(t.ev("bank_accepted", position=4))
    assert reason is not None and "two in a row" in reason
    assert rejection(t.ev("bank_accepted", position=5)) is None
    _finish_round(t)
    assert rejection(t.ev("bank_released")) is not None  # area 5's bank ended with its round


def test_offer_rotates_counterclockwise_from_dealers_right_h3() -> None:
    t = Table(player_banking=True)
    t.open()  # start of the game: no offer
    orders = []
    for _ in range(8):
        _finish_round(t)
        offers = [e for e in of_type(t.all_effects[-4:], "bank_offer")]
        orders.append(offers[0]["order"] if offers else [])
    assert orders[0] == [1, 2, 3, 4, 5, 6]
    assert orders[1] == [2, 3, 4, 5, 6, 1]
    assert orders[5] == [6, 1, 2, 3, 4, 5]
    assert orders[6] == []  # the offer has returned to the dealer: the house banks
    assert orders[7] == [1, 2, 3, 4, 5, 6]


def test_offer_skips_previous_bank() -> None:
    b = BankRotation(offer_start=2, last_bank=3, current=None, start_of_game=False)
    assert b.offer_order() == [2, 4, 5, 6, 1]


def test_banking_not_offered_is_rejected() -> None:
    t = Table()
    t.open()
    _finish_round(t)
    assert "not offered" in (rejection(t.ev("bank_accepted", position=2)) or "")


def test_bank_counts_as_number_one_for_rng_position() -> None:
    t = Table(player_banking=True)
    t.open()
    _finish_round(t)
    t.ev("bank_accepted", position=5)
    t.lock(1)
    eff = t.ev("rng_drawn", value=3)
    sp = of_type(eff, "starting_position")[0]
    assert sp["bank"] == 5 and sp["seat"] == 0  # 5 = number 1, 6 = 2, dealer = 3


def test_every_shuffle_reading_is_refused_with_banking_since_every_round_is_shuffled_h2() -> None:
    """NY 5324.41(h)(2) read literally ("the first round after the dealer is required to
    shuffle") with a shuffle before every round (NY 5324.41(n)(8): each deck counted) makes
    every round a start of the game. Changed for issue 8: this test dealt two rounds from one
    shuffle (rounds_per_shuffle = 2), which is now refused."""
    import pytest

    with pytest.raises(ValueError, match=r"rounds_per_shuffle: must be 1"):
        Table(player_banking=True, bank_start_of_game="every_shuffle", rounds_per_shuffle=2)
    with pytest.raises(ValueError, match=r"'every_shuffle'.*\(h\)\(2\)"):
        Table(player_banking=True, bank_start_of_game="every_shuffle")


def test_a_table_where_no_player_could_ever_bank_is_refused_h2() -> None:
    import pytest

    from fsm.round.config import GameConfig

    with pytest.raises(ValueError, match=r"game.bank_start_of_game: 'every_shuffle'.*\(h\)\(2\)"):
        GameConfig.from_mapping(
            {"player_banking": True, "bank_start_of_game": "every_shuffle"}, "game"
        )


def test_a_voided_round_starts_the_game_again_h2() -> None:
    """The void replaces the deck: the next round is the first after a shuffle the dealer was
    required to make, so no player banks it, and the offer starts again at area 1."""
    t = Table(player_banking=True)
    t.open()
    _finish_round(t)
    _finish_round(t)
    t.ev("bank_accepted", position=2)
    t.lock(3)
    t.ev("fault_raised", code="SHOE_JAM", device="shoe", detail="jam")
    effects = t.ev("fault_cleared", supervisor="sup-1", void=True)
    assert of_type(effects, "round_voided")
    t.ev("shuffle_complete", count=53)
    assert "(h)(2)" in (rejection(t.ev("bank_accepted", position=4)) or "")
    _finish_round(t)
    offers = of_type(t.all_effects[-4:], "bank_offer")
    assert offers and offers[0]["order"] == [1, 2, 3, 4, 5, 6]


def test_with_the_three_card_bonus_the_bank_is_among_the_pai_gow_positions_h6_n4() -> None:
    t = Table(player_banking=True, three_card_bonus=True)
    t.open()
    t.ev("pai_gow_wagers", positions=[1])
    t.lock()
    t.ev("dealt", remaining=53 - 3 * 2)  # area 1 and the dealer: stacks of three (n)(4)-(5)
    t.ev("three_card_settled")
    t.ev("dealt", remaining=53 - 7 * 2)  # then stacks of four (n)(7)(ii)
    t.ev("play_complete")
    t.ev("shuffle_complete", count=53)
    assert rejection(t.ev("bank_accepted", position=5)) is None
    reason = rejection(t.ev("pai_gow_wagers", positions=[1, 2]))
    assert reason is not None and "area 5 banks this round" in reason
    assert rejection(t.ev("pai_gow_wagers", positions=[1, 5])) is None


def test_the_banks_progressive_wager_is_paid_as_any_other_h15() -> None:
    """NY 5324.41(h)(15): with a player bank, the progressive wager is settled by its own rules:
    the bank's progressive hit is paid what the pay table pays any hand (four of a kind: $20 on a
    $1 wager, (k)(4)(ii)), from the chip tray, exactly as another area's same hit."""
    t = Table(player_banking=True)
    t.open()
    _finish_round(t)  # the start of the game: nobody banks (h)(2)
    assert rejection(t.ev("bank_accepted", position=4)) is None
    t.round_to_settlement(2, 4)
    eff = t.outcomes({2: "four-of-a-kind", 4: "four-of-a-kind"})
    pays = {p["position"]: (p["cents"], p["from"]) for p in of_type(eff, "pay")}
    assert pays == {2: (2000, "chip_tray"), 4: (2000, "chip_tray")}
