"""The round sets the dealer's hand by the configured house way and applies EZ pai gow.

With a card-reading shoe the dealer's seven cards are known when play completes: the dealer sets
them by the house way (NY 5324.41(g)(1), NJ 13:69F-11.9(c)); with EZ pai gow a dealer's queen
dragon pushes every pai gow wager (NJ 13:69F-11.9(h)3). Both come from the table's configuration
file (``game.house_way``, ``game.ez_pai_gow``), loaded through ``controller.config``.
"""

from __future__ import annotations

import json
from typing import Any

from round_support import Table, rejection
from test_config import minimal

from controller.config import parse_config
from fsm.rules.cards import format_card, parse_card
from fsm.rules.houseway import HouseWay

QUEEN_DRAGON = ["Qs", "Jh", "9d", "7c", "5s", "3h", "2d"]  # queen high, no pair/straight/flush
TWO_PAIR = ["Ac", "Ad", "Ks", "Kh", "5s", "3h", "2d"]
OTHER_QUEEN_DRAGON = ["Qc", "Jd", "9s", "7h", "6c", "4d", "3s"]  # shares no card with TWO_PAIR


def hands_with(dealer: list[str], **areas: list[str]) -> dict[str, list[str]]:
    """The seven hands of a card-reading shoe: the dealer's and any area's given (``a4=...``),
    the other areas filled from the rest of the deck."""
    given = {"dealer": dealer, **{name.removeprefix("a"): cards for name, cards in areas.items()}}
    taken = {parse_card(c) for cards in given.values() for c in cards}
    rest = iter(format_card(c) for c in range(52) if c not in taken)
    out: dict[str, list[str]] = {"dealer": dealer}
    for area in map(str, range(1, 7)):
        out[area] = given.get(area) or [next(rest) for _ in range(7)]
    return out


def play(dealer: list[str], **game: Any) -> list[dict[str, Any]]:
    data = minimal()
    data["game"] = {"card_reading_shoe": True, **game}
    t = Table(cfg=parse_config(data, "test.toml").game)
    t.open()
    t.lock(2)
    t.start(1)
    t.ev("dealt", remaining=4, hands=hands_with(dealer))
    effects = t.ev("play_complete")
    return [e for e in effects if e["type"] == "dealer_hand"]


def test_ez_pai_gow_queen_dragon_pushes_every_pai_gow_wager_nj_11_9_h3() -> None:
    (hand,) = play(QUEEN_DRAGON, ez_pai_gow=True)
    assert hand["queen_dragon"] is True
    assert hand["pai_gow_wagers"] == "push"
    assert hand["ez_pai_gow"] is True


def test_without_ez_pai_gow_a_queen_dragon_is_settled_as_usual() -> None:
    (hand,) = play(QUEEN_DRAGON)
    assert hand["queen_dragon"] is False
    assert hand["pai_gow_wagers"] == "settle"


def test_the_dealer_hand_is_set_by_the_configured_house_way_g1() -> None:
    """The rule named is the configured way's own (``foxwoods.*`` vs ``reference.*``)."""
    for way in ("reference", "foxwoods"):
        (hand,) = play(TWO_PAIR, house_way=way)
        expected = HouseWay.load(way).explain([parse_card(c) for c in TWO_PAIR]).rule
        assert hand["house_way"] == way
        assert hand["rule"] == expected.split(":")[0]
        assert hand["rule"].startswith(f"{way}.")


def test_the_dealer_hand_effect_never_names_a_card() -> None:
    effects = play(TWO_PAIR, ez_pai_gow=True)
    dumped = json.dumps([e.to_json() for e in effects])
    for card in TWO_PAIR:
        assert f'"{card}"' not in dumped and f" {card}" not in dumped


def test_house_way_and_ez_pai_gow_are_part_of_the_journaled_game_configuration() -> None:
    """What the round uses is what the journal records (snapshot config, config_changed)."""
    data = minimal()
    data["game"] = {"house_way": "foxwoods", "ez_pai_gow": True}
    game = parse_config(data, "test.toml").game
    assert game.to_mapping()["house_way"] == "foxwoods"
    assert game.to_mapping()["ez_pai_gow"] is True
    assert game.way.name == "foxwoods"


def test_ez_pai_gow_judges_the_player_banks_seven_cards_when_a_player_banks_h3() -> None:
    """NJ 13:69F-11.9(h)3: the dealer's *or playerbank's* queen dragon pushes; with a player bank
    it is the bank's cards that decide, the dealer's hand is still set by the house way."""
    data = minimal()
    data["game"] = {"card_reading_shoe": True, "ez_pai_gow": True, "player_banking": True}
    t = Table(cfg=parse_config(data, "test.toml").game)
    t.open()
    t.lock()  # round 1 is the start of the game: nobody banks (NY 5324.41(h)(2))
    t.start()
    t.deal()
    t.ev("play_complete")
    t.ev("shuffle_complete", count=53)
    t.ev("bank_accepted", position=4)
    t.lock(2)
    t.start(1)
    dealt = t.ev("dealt", remaining=4, hands=hands_with(TWO_PAIR, a4=OTHER_QUEEN_DRAGON))
    assert rejection(dealt) is None
    (hand,) = [e for e in t.ev("play_complete") if e["type"] == "dealer_hand"]
    assert hand["bank"] == 4
    assert hand["queen_dragon"] is True and hand["pai_gow_wagers"] == "push"


def test_with_a_player_bank_the_dealers_queen_dragon_does_not_push() -> None:
    data = minimal()
    data["game"] = {"card_reading_shoe": True, "ez_pai_gow": True, "player_banking": True}
    t = Table(cfg=parse_config(data, "test.toml").game)
    t.open()
    t.lock()
    t.start()
    t.deal()
    t.ev("play_complete")
    t.ev("shuffle_complete", count=53)
    t.ev("bank_accepted", position=4)
    t.lock(2)
    t.start(1)
    assert rejection(t.ev("dealt", remaining=4, hands=hands_with(QUEEN_DRAGON))) is None
    (hand,) = [e for e in t.ev("play_complete") if e["type"] == "dealer_hand"]
    assert hand["bank"] == 4 and hand["queen_dragon"] is False


def test_the_dealer_hand_is_set_only_after_the_players_set_theirs_g2_nj_11_9_c() -> None:
    """NY 5324.41(g)(2), NJ 13:69F-11.9(c): the dealer's (or the bank's) hand is set after every
    player has set theirs. The controller sets and shows the dealer's hand by the house way only
    when the dealer ends play (``play_complete``), never at the deal while players still set;
    with a player bank the same, naming the bank."""
    data = minimal()
    data["game"] = {"card_reading_shoe": True, "player_banking": True}
    t = Table(cfg=parse_config(data, "test.toml").game)
    t.open()
    t.lock(2)  # round 1 is the start of the game: nobody banks (NY 5324.41(h)(2))
    t.start(1)
    t.ev("dealt", remaining=4, hands=hands_with(TWO_PAIR))
    assert t.state == "Open_Play"
    assert not [e for e in t.all_effects if e["type"] == "dealer_hand"]
    (hand,) = [e for e in t.ev("play_complete") if e["type"] == "dealer_hand"]
    assert hand["bank"] is None
    t.ev("shuffle_complete", count=53)
    t.ev("bank_accepted", position=4)
    t.lock(2)
    t.start(1)
    shown = len(t.all_effects)
    t.ev("dealt", remaining=4, hands=hands_with(TWO_PAIR))
    assert not [e for e in t.all_effects[shown:] if e["type"] == "dealer_hand"]
    (hand,) = [e for e in t.ev("play_complete") if e["type"] == "dealer_hand"]
    assert hand["bank"] == 4
