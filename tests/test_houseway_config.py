"""House-way files: loading by name or path, and errors that name the key (NJ 11.9(d)).

Each casino files its own way of setting the dealer's hand (NJ 11.9(d), NY 5324.41(g)(2)); the
controller reads it from TOML and must refuse a file it cannot follow exactly, saying where.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import pytest

from fsm.rules.cards import CardError, format_cards, parse_cards
from fsm.rules.houseway import DATA_DIR, HouseWay, HouseWayError, available

REFERENCE_TEXT = (DATA_DIR / "reference.toml").read_text()


def reference_data() -> dict[str, Any]:
    return tomllib.loads(REFERENCE_TEXT)


def error_of(data: dict[str, Any]) -> str:
    with pytest.raises(HouseWayError) as info:
        HouseWay.from_mapping(data, where="casino")
    return str(info.value)


def test_available_lists_the_shipped_ways_sorted() -> None:
    assert available() == sorted(available())
    assert {"reference", "foxwoods"} <= set(available())
    assert HouseWay.load().name == "reference"


def test_unknown_way_name_lists_the_shipped_ones() -> None:
    with pytest.raises(
        HouseWayError, match=r"'golden-nugget': no such way; shipped ways: .*reference"
    ):
        HouseWay.load("golden-nugget")


def test_a_casino_adds_its_own_way_by_path_nj_11_9d(tmp_path: Path) -> None:
    # A casino's way identical to the reference except two pair 7s-and-below always split.
    text = REFERENCE_TEXT.replace('name = "reference"', 'name = "my-casino"')
    text = text.replace(
        'singleton_at_least = "K"\n[[two_pair.rules]]             # low + high',
        'singleton_at_least = "Z"\n[[two_pair.rules]]             # low + high',
    )
    path = tmp_path / "my-casino.toml"
    path.write_text(text)
    with pytest.raises(
        HouseWayError,
        match=r"^my-casino\.two_pair\.rules\[1\]\.singleton_at_least: 'Z' is not a rank",
    ):
        HouseWay.load(str(path))
    path.write_text(text.replace('singleton_at_least = "Z"', 'singleton_at_least = "A"'))
    way = HouseWay.load(path)
    assert way.name == "my-casino"
    # 9s and 4s with a king: the reference keeps both back; this casino wants an ace for that
    setting = way.set(parse_cards("9s 9d 4c 4h Kd 8c 2s"))
    assert sorted(setting.low) == sorted(parse_cards("4c 4h"))


def test_file_that_is_not_toml_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("name = \n")
    with pytest.raises(HouseWayError, match=r"broken\.toml: not valid TOML"):
        HouseWay.load(path)
    with pytest.raises(HouseWayError, match=r"missing\.toml: no such house-way file"):
        HouseWay.load(tmp_path / "missing.toml")


def test_unknown_key_is_an_error_naming_it() -> None:
    data = reference_data()
    data["two_pair"]["rules"][0]["pley"] = "split"
    assert error_of(data).startswith("casino.two_pair.rules[0].pley: unknown key")
    data = reference_data()
    data["colour"] = "green"
    assert error_of(data).startswith("casino.colour: unknown key")


def test_missing_section_is_an_error_naming_it() -> None:
    data = reference_data()
    del data["five_aces"]
    assert error_of(data) == "casino.five_aces: missing"


def test_unknown_rule_value_lists_the_allowed_ones() -> None:
    data = reference_data()
    data["four_of_a_kind"]["rules"][0]["play"] = "sometimes"
    msg = error_of(data)
    assert msg.startswith("casino.four_of_a_kind.rules[0].play: 'sometimes' is not one of")
    assert "'split_unless_singleton_front'" in msg


def test_two_pair_table_must_cover_every_pair_of_pairs() -> None:
    data = reference_data()
    del data["two_pair"]["rules"][1]  # low + medium
    assert error_of(data) == "casino.two_pair.rules: no rule for pairs of 7s and 2s"


def test_two_pair_entries_must_not_overlap() -> None:
    data = reference_data()
    data["two_pair"]["rules"].append({"higher": "A", "lower": "K", "play": "keep"})
    msg = error_of(data)
    assert msg.startswith("casino.two_pair.rules[6]: pairs of As and Ks are already covered by")
    assert "casino.two_pair.rules[5]" in msg


def test_four_of_a_kind_table_must_cover_every_rank() -> None:
    data = reference_data()
    data["four_of_a_kind"]["rules"][1]["ranks"] = "8-10"
    assert error_of(data) == "casino.four_of_a_kind.rules: no rule for four 7s"


def test_threshold_only_with_its_play() -> None:
    data = reference_data()
    data["four_of_a_kind"]["rules"][0]["singleton_at_least"] = "K"
    assert error_of(data).startswith("casino.four_of_a_kind.rules[0].singleton_at_least: only")
    data = reference_data()
    del data["four_of_a_kind"]["rules"][1]["singleton_at_least"]
    assert error_of(data).startswith("casino.four_of_a_kind.rules[1].singleton_at_least: missing")


def test_rank_ranges_are_checked() -> None:
    data = reference_data()
    data["four_of_a_kind"]["rules"][0]["ranks"] = "6-2"
    assert "runs downwards" in error_of(data)
    data = reference_data()
    data["two_pair"]["rules"][0]["higher"] = 7
    assert error_of(data).startswith("casino.two_pair.rules[0].higher: must be a rank class")


def test_full_house_exception_needs_both_halves() -> None:
    data = reference_data()
    del data["full_house"]["keep_if_front"]
    assert error_of(data).startswith("casino.full_house.keep_if_front: keep_if_pair and")
    data = reference_data()
    data["full_house"]["keep_if_front"] = ["A", "A"]
    assert error_of(data).startswith("casino.full_house.keep_if_front: two different ranks")


def test_straight_modes_are_checked() -> None:
    data = reference_data()
    data["straights_and_flushes"]["no_pair"] = "pair_front_else_own_rule"
    assert error_of(data).startswith("casino.straights_and_flushes.no_pair: a hand with no pair")
    data = reference_data()
    del data["straights_and_flushes"]["trips"]
    assert error_of(data) == "casino.straights_and_flushes.trips: missing"


def test_same_front_prefers_the_stronger_back_without_the_straight_rule() -> None:
    # A way that ignores straights and flushes for trips: three aces (Ah, Ad, joker) split, an ace
    # and the king front. Of the three aces, sending the Ad front leaves Ah-JK-9h-6h-3h behind,
    # a flush, where the Ah or the joker would leave only a pair of aces.
    data = reference_data()
    data["straights_and_flushes"]["trips"] = "own_rule"
    way = HouseWay.from_mapping(data, where="casino")
    decision = way.explain(parse_cards("Ah JK Ad 9h 6h 3h Kc"))
    assert decision.rule == "reference.trips.aces: split"
    assert sorted(decision.setting.low) == sorted(parse_cards("Ad Kc"))


def test_pair_front_else_own_rule_mode_keeps_the_pair_back() -> None:
    # The other reading of "one pair: pair in front only if a straight/flush can still be played":
    # when it cannot, the one-pair rule applies (pair back, next two highest front).
    data = reference_data()
    data["straights_and_flushes"]["one_pair"] = "pair_front_else_own_rule"
    way = HouseWay.from_mapping(data, where="casino")
    setting = way.set(parse_cards("5s 6d 7c 8h 9d 9c Ks"))
    assert sorted(setting.low) == sorted(parse_cards("Ks 8h"))
    setting = way.set(parse_cards("4s 5d 6c 7h 8d Kc Ks"))
    assert sorted(setting.low) == sorted(parse_cards("Kc Ks"))


def test_setting_anything_but_seven_distinct_cards_is_refused() -> None:
    way = HouseWay.load("reference")
    with pytest.raises(CardError, match="sets 7 cards, got 6"):
        way.set(parse_cards("As Kd 9c 7h 5s 3d"))
    with pytest.raises(CardError, match="duplicate card As"):
        way.set((*parse_cards("As Kd 9c 7h 5s 3d"), parse_cards("As")[0]))


def test_loading_the_same_way_twice_gives_equal_ways() -> None:
    assert HouseWay.load("foxwoods") == HouseWay.load("foxwoods")
    assert HouseWay.load("foxwoods") != HouseWay.load("reference")
    data = reference_data()
    assert HouseWay.from_mapping(copy.deepcopy(data)) == HouseWay.from_mapping(data)


def test_the_full_example_in_the_docs_is_the_reference_way() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "houseway.md").read_text()
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    assert HouseWay.from_mapping(tomllib.loads(example), "docs") == HouseWay.load("reference")


def test_hands_are_laid_out_largest_group_first_then_highest() -> None:
    setting = HouseWay.load("foxwoods").set(parse_cards("Ks 2h 7c Ac 7s 2d 7d"))
    assert format_cards(setting.high) == "7s 7d 7c Ac Ks"
    assert format_cards(setting.low) == "2h 2d"


def test_a_shipped_way_must_carry_its_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fsm.rules.houseway as houseway

    (tmp_path / "casino-a.toml").write_text(REFERENCE_TEXT)  # still says name = "reference"
    monkeypatch.setattr(houseway, "DATA_DIR", tmp_path)
    assert available() == ["casino-a"]
    with pytest.raises(HouseWayError, match=r"^casino-a\.name: 'reference' must match"):
        HouseWay.load("casino-a")
