"""Cards of the 53-card deck: notation of DESIGN.md and precise errors (NY 5324.41(b))."""

from __future__ import annotations

import pytest

from fsm.rules.cards import DECK, JOKER, CardError, format_card, parse_card, parse_cards


def test_deck_is_52_cards_plus_one_joker_b() -> None:
    assert len(DECK) == 53
    assert len({format_card(c) for c in DECK}) == 53
    assert format_card(JOKER) == "JK"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("As", "As"),
        ("td", "Td"),
        ("10d", "Td"),
        ("10D", "Td"),
        ("JK", "JK"),
        ("jk", "JK"),
        ("2c", "2c"),
        ("Qh", "Qh"),
    ],
)
def test_notation_rank_then_suit_any_case(text: str, shown: str) -> None:
    assert format_card(parse_card(text)) == shown


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("1s", "rank '1'"),
        ("Ax", "suit 'X'"),
        ("", "empty"),
        ("Asd", "expected rank then suit"),
        ("11h", "expected rank then suit"),
    ],
)
def test_unknown_card_names_the_card(text: str, fragment: str) -> None:
    with pytest.raises(CardError, match=fragment):
        parse_card(text)


def test_duplicate_card_is_refused_with_its_name() -> None:
    with pytest.raises(CardError, match="duplicate card As"):
        parse_cards("As Kd as")


def test_second_joker_is_a_duplicate() -> None:
    with pytest.raises(CardError, match="duplicate card JK"):
        parse_cards("JK 2c jk")


def test_wrong_count_is_refused() -> None:
    with pytest.raises(CardError, match="expected 5 cards, got 4"):
        parse_cards("As Ks Qs Js", count=5)
    with pytest.raises(CardError, match="expected 2 or 5 or 7 cards, got 3"):
        parse_cards("As Ks Qs", count=(2, 5, 7))


def test_commas_and_spaces_separate_cards() -> None:
    assert parse_cards("As,Kd  10c") == (parse_card("As"), parse_card("Kd"), parse_card("Tc"))
