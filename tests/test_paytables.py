"""Pay tables as data, checked against the regulation at load: NY 5324.41(j)(2)(vi), (l)(1),
(m)(1)-(4), (n)(1), (o)(1)-(3), (p)(1),(4)-(6); NJ 13:69F-11.8C(b)6.

Expected figures are read off the regulation's tables by hand, not from fsm.rules.paytables.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.rules.paytables import (
    BUILTIN,
    BonusConfig,
    IncompatibleWagers,
    Odds,
    apply_payout_limit,
    check_offered,
    envy_payment,
    load_builtin,
    parse_paytable,
    side_wager_payout,
)

DATA = Path(__file__).resolve().parent.parent / "fsm" / "data" / "paytables"


def fortune_a_with(line: str, odds: str) -> str:
    text = (DATA / "fortune-bonus-a.toml").read_text()
    lines = [f'{line} = "{odds}"' if ln.startswith(f"{line} =") else ln for ln in text.splitlines()]
    return "\n".join(lines)


# --- the shipped tables ----------


def test_every_shipped_table_loads_and_every_file_is_listed() -> None:
    assert sorted(p.stem for p in DATA.glob("*.toml")) == sorted(BUILTIN)
    for name in BUILTIN:
        assert load_builtin(name).pays


@pytest.mark.parametrize(
    ("table", "line", "wager", "won"),
    [
        ("fortune-bonus-a", "seven-card-straight-flush-no-joker", 100, 800_000),  # (m)(1) 8000:1
        ("fortune-bonus-b", "seven-card-straight-flush-no-joker", 100, 500_000),  # 5000:1
        ("fortune-bonus-c", "four-of-a-kind", 100, 2_000),  # 20:1
        ("envy-a", "royal-flush-plus-royal-match", 500, 100_000),  # (m)(2) $1000, fixed
        ("envy-c", "five-aces", 500, 5_000),  # $50
        ("insurance-b", "ten-high", 100, 7_500),  # (m)(3) 75:1
        ("insurance-c", "ace-high", 100, 100),  # 1:1
        ("three-card", "straight-flush-no-joker", 100, 4_000),  # (o)(1) 40:1
        ("seven-card-b", "straight-flush-with-joker", 100, 3_000),  # (o)(2) 30:1
        ("imperial-player", "five-aces", 100, 100_000),  # (p)(4) 1000:1
        ("imperial-banker", "nine-high", 100, 10_000),  # (p)(5) 100:1
    ],
)
def test_shipped_tables_pay_the_regulation(table: str, line: str, wager: int, won: int) -> None:
    assert load_builtin(table).payout(line, wager) == won


# --- minimum checks at load ----------


def test_table_paying_less_than_the_minimum_is_a_load_error_m1() -> None:
    with pytest.raises(
        ValueError, match=r"^casino\.toml\.pays\.four-of-a-kind: pays 24:1, less than 25:1"
    ):
        parse_paytable(fortune_a_with("four-of-a-kind", "24:1"), "casino.toml")


def test_table_paying_more_than_the_minimum_loads_m1() -> None:
    table = parse_paytable(fortune_a_with("four-of-a-kind", "30:1"), "casino.toml")
    assert table.payout("four-of-a-kind", 100) == 3000


def test_fractional_odds_below_the_minimum_are_refused_o1() -> None:
    text = (DATA / "three-card.toml").read_text().replace('flush = "3:1"', 'flush = "5:2"')
    with pytest.raises(ValueError, match=r"pays\.flush: pays 5:2, less than 3:1"):
        parse_paytable(text, "t.toml")


def test_fractional_odds_never_pay_less_than_the_minimum_o1() -> None:
    text = (DATA / "three-card.toml").read_text().replace('flush = "3:1"', 'flush = "7:2"')
    table = parse_paytable(text, "t.toml")
    assert table.payout("flush", 1) == 3  # 3.5 cents: the half cent dropped, still >= 3:1
    assert table.payout("flush", 100) == 350


def test_envy_amount_is_fixed_m2() -> None:
    text = (
        (DATA / "envy-a.toml").read_text().replace("four-of-a-kind = 500", "four-of-a-kind = 600")
    )
    with pytest.raises(ValueError, match=r"pays\.four-of-a-kind: pays 600 cents.*fixes it at 500"):
        parse_paytable(text, "envy.toml")


def test_imperial_odds_are_fixed_p4() -> None:
    text = (DATA / "imperial-player.toml").read_text().replace('flush = "4:1"', 'flush = "5:1"')
    with pytest.raises(ValueError, match=r"pays\.flush: pays 5:1; NY 5324\.41\(p\)\(4\) sets it"):
        parse_paytable(text, "imp.toml")


def test_insurance_paying_less_is_refused_m3() -> None:
    text = (
        (DATA / "insurance-d.toml").read_text().replace('queen-high = "6:1"', 'queen-high = "5:1"')
    )
    with pytest.raises(ValueError, match=r"queen-high: pays 5:1, less than 6:1.*table D"):
        parse_paytable(text, "ins.toml")


def test_seven_card_table_a_royal_flush_minimum_o2() -> None:
    text = (
        (DATA / "seven-card-a.toml")
        .read_text()
        .replace('royal-flush = "250:1"', 'royal-flush = "200:1"')
    )
    with pytest.raises(ValueError, match=r"royal-flush: pays 200:1, less than 250:1"):
        parse_paytable(text, "seven.toml")


@pytest.mark.parametrize(
    ("odds", "ok"), [("11:2", True), ("6:1", True), ("23:4", True), ("5:1", False), ("13:2", False)]
)
def test_side_wager_odds_between_5_5_and_6_to_1_j2_vi(odds: str, ok: bool) -> None:
    text = f'wager = "side-1-7"\nschedule = "standard"\n[pays]\nhit = "{odds}"\n'
    if ok:
        assert parse_paytable(text, "side.toml").pays["hit"]
    else:
        with pytest.raises(ValueError, match=r"side\.toml\.pays\.hit: pays"):
            parse_paytable(text, "side.toml")


@pytest.mark.parametrize(
    ("table", "wager", "paid"),
    [
        ("side-1-7-5.5", 500, 2700),  # $5 at 5.5:1 = $27.50 -> $27
        ("side-1-7-5.5", 1000, 5500),  # $10 -> $55
        ("side-1-7-5.5", 100, 500),  # $1 -> $5.50 -> $5
        ("side-1-7-6", 300, 1800),  # $3 at 6:1 -> $18
        ("side-1-7-6", 250, 1500),  # $2.50 at 6:1 -> $15
    ],
)
def test_side_wager_payout_rounds_down_to_the_dollar_j2_vi(
    table: str, wager: int, paid: int
) -> None:
    assert side_wager_payout(load_builtin(table), wager) == paid


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('wager = "bingo"\nschedule = "A"\n[pays]\n', r"^x\.wager: 'bingo' is not one of"),
        ('wager = "fortune-bonus"\nschedule = "D"\n[pays]\n', r"^x\.schedule: 'D' is not a NY"),
        ('wager = "three-card"\nschedule = "standard"\ncolour = 1\n', r"^x\.colour: unknown key"),
        ('wager = "imperial-banker"\nschedule = "standard"\n[pays]\nqueen-high = "5:1"\n',
         r"^x\.pays\.queen-high: not a line"),
        ('wager = "imperial-banker"\nschedule = "standard"\n[pays]\njack-high = "5:1"\n',
         r"^x\.pays\.ten-high: missing"),
        ('wager = "side-1-7"\nschedule = "standard"\n[pays]\nhit = "6-1"\n',
         r"^x\.pays\.hit: odds '6-1' are not of the form"),
        ('wager = "side-1-7"\nschedule = "standard"\n[pays]\nhit = 6\n',
         r"^x\.pays\.hit: odds are a string"),
        ("wager = ", r"^x: not valid TOML"),
    ],
)  # fmt: skip
def test_malformed_table_errors_name_the_key(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_paytable(text, "x")


# --- families that may not be offered together: (l)(1), (n)(1), (p)(1) ----------


@pytest.mark.parametrize(
    ("offered", "cite"),
    [
        (["fortune-bonus", "three-card"], r"\(l\)\(1\)"),
        (["fortune-bonus", "seven-card"], r"\(l\)\(1\)"),
        (["fortune-bonus", "imperial"], r"\(l\)\(1\)"),
        (["imperial", "insurance"], r"\(p\)\(1\)"),
        (["seven-card", "imperial"], r"\(n\)\(1\), \(p\)\(1\)"),
        (["three-card", "side-1-7", "imperial"], r"\(n\)\(1\)"),
    ],
)
def test_incompatible_wagers_are_refused_naming_the_pair(offered: list[str], cite: str) -> None:
    with pytest.raises(IncompatibleWagers, match=rf"'{offered[0]}' and '{offered[-1]}'.*{cite}"):
        check_offered(offered)


@pytest.mark.parametrize(
    "offered",
    [
        ["fortune-bonus", "envy", "insurance", "progressive", "side-1-7"],
        ["three-card", "seven-card", "progressive"],
        ["imperial", "side-1-7", "progressive"],
        ["insurance", "three-card", "seven-card"],  # no paragraph forbids this pair
    ],
)
def test_compatible_wagers_are_accepted(offered: list[str]) -> None:
    check_offered(offered)


def test_envy_needs_the_fortune_bonus_l3() -> None:
    with pytest.raises(IncompatibleWagers, match=r"'envy' needs 'fortune-bonus'.*\(l\)\(3\)"):
        check_offered(["envy", "insurance"])


def test_unknown_wager_name_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"offered\[1\]: unknown wager 'keno'"):
        check_offered(["insurance", "keno"])


# --- the bonus section of the configuration, payout limits: (m)(4), (o)(3), (p)(6) ----------


def fortune_config(**extra: object) -> dict[str, object]:
    data: dict[str, object] = {
        "offered": ["fortune-bonus", "envy", "insurance"],
        "tables": {
            "fortune-bonus": "fortune-bonus-b",
            "envy": "envy-b",
            "insurance": "insurance-e",
        },
    }
    data.update(extra)
    return data


def test_bonus_config_loads_the_chosen_tables() -> None:
    cfg = BonusConfig.from_mapping(fortune_config(limits_cents={"fortune": 4_000_000}), "bonus")
    assert cfg.tables["fortune-bonus"].schedule == "B"
    assert cfg.limits_cents == {"fortune": 4_000_000}


def test_payout_limit_below_40000_is_a_load_error_m4() -> None:
    with pytest.raises(ValueError, match=r"^bonus\.limits_cents\.fortune: 3999999 cents is below"):
        BonusConfig.from_mapping(fortune_config(limits_cents={"fortune": 3_999_999}), "bonus")


def test_seven_card_limit_below_50000_is_a_load_error_o3() -> None:
    data = {
        "offered": ["three-card", "seven-card"],
        "tables": {"three-card": "three-card", "seven-card": "seven-card-a"},
        "limits_cents": {"seven-card": 4_999_999},
    }
    with pytest.raises(ValueError, match=r"seven-card: 4999999 cents is below.*\(o\)\(3\)"):
        BonusConfig.from_mapping(data, "bonus")


def test_limit_must_cover_the_most_won_at_the_minimum_wagers_o3() -> None:
    # minimum seven-card wager $200 at five aces 500:1 = $100,000 > $50,000
    data = {
        "offered": ["seven-card"],
        "tables": {"seven-card": "seven-card-a"},
        "min_wager_cents": {"seven-card": 20_000},
        "limits_cents": {"seven-card": 5_000_000},
    }
    with pytest.raises(ValueError, match=r"below the least limit of 10000000 cents"):
        BonusConfig.from_mapping(data, "bonus")
    data["limits_cents"] = {"seven-card": 10_000_000}
    assert BonusConfig.from_mapping(data, "bonus").limits_cents["seven-card"] == 10_000_000


def test_imperial_limit_below_40000_is_a_load_error_p6() -> None:
    data = {
        "offered": ["imperial"],
        "tables": {"imperial-player": "imperial-player", "imperial-banker": "imperial-banker"},
        "limits_cents": {"imperial": 100_000},
    }
    with pytest.raises(ValueError, match=r"imperial: 100000 cents is below.*\(p\)\(6\)"):
        BonusConfig.from_mapping(data, "bonus")


def test_envy_table_must_match_the_fortune_table_letter_m2() -> None:
    data = fortune_config()
    data["tables"] = {
        "fortune-bonus": "fortune-bonus-a",
        "envy": "envy-c",
        "insurance": "insurance-a",
    }
    with pytest.raises(ValueError, match=r"bonus\.tables\.envy: envy table C must correspond"):
        BonusConfig.from_mapping(data, "bonus")


def test_bonus_config_refuses_incompatible_offering_and_unknown_keys() -> None:
    with pytest.raises(
        IncompatibleWagers, match=r"^bonus\.offered: 'fortune-bonus' and 'imperial'"
    ):
        BonusConfig.from_mapping({"offered": ["fortune-bonus", "imperial"]}, "bonus")
    with pytest.raises(ValueError, match=r"^bonus\.colour: unknown key"):
        BonusConfig.from_mapping({"colour": "red"}, "bonus")
    with pytest.raises(ValueError, match=r"^bonus\.tables\.insurance: missing"):
        BonusConfig.from_mapping({"offered": ["insurance"]}, "bonus")
    with pytest.raises(ValueError, match=r"^bonus\.royal_match: 'queen-jack'"):
        BonusConfig.from_mapping({"royal_match": "queen-jack"}, "bonus")


def test_inline_table_in_the_config_is_checked() -> None:
    data = {
        "offered": ["three-card"],
        "tables": {
            "three-card": {
                "wager": "three-card",
                "schedule": "standard",
                "pays": {
                    "pair": "1:1",
                    "flush": "3:1",
                    "straight": "4:1",
                    "straight-flush": "5:1",
                    "three-of-a-kind": "20:1",
                    "straight-flush-no-joker": "40:1",
                },
            }
        },
    }
    with pytest.raises(
        ValueError, match=r"^bonus\.tables\.three-card\.pays\.three-of-a-kind: pays 20:1, less"
    ):
        BonusConfig.from_mapping(data, "bonus")


def test_payout_limit_caps_a_rounds_payout_m4() -> None:
    assert apply_payout_limit(8_000_000, 4_000_000) == 4_000_000
    assert apply_payout_limit(300_000, 4_000_000) == 300_000
    assert apply_payout_limit(300_000, None) == 300_000


def test_envy_pays_the_fixed_amount_per_other_premium_hand_m2() -> None:
    # table A: another player's four of a kind $5, a third player's straight flush $20, a flush $0
    others = [
        {"four-of-a-kind", "full-house", "three-of-a-kind"},
        {"straight-flush", "flush", "straight"},
        {"flush"},
    ]
    assert envy_payment(load_builtin("envy-a"), others) == 2500
    with pytest.raises(ValueError, match="not an envy bonus table"):
        envy_payment(load_builtin("fortune-bonus-a"), others)


@settings(max_examples=200, deadline=None)
@given(
    table=st.sampled_from(
        ["fortune-bonus-a", "fortune-bonus-c", "insurance-d", "three-card", "seven-card-a"]
    ),
    pick=st.integers(0, 20),
    num=st.integers(1, 20_000),
    den=st.integers(1, 4),
)
def test_a_table_may_pay_more_never_less_than_the_minimum_m1_m3_o1_o2(
    table: str, pick: int, num: int, den: int
) -> None:
    """Whatever one line is changed to, the file loads exactly when it pays at least the minimum
    printed in the shipped (regulation) table, and then never pays a cent less on any wager."""
    shipped = load_builtin(table)
    line = list(shipped.pays)[pick % len(shipped.pays)]
    text = (DATA / f"{table}.toml").read_text()
    changed = "\n".join(
        f'{line} = "{num}:{den}"' if ln.startswith(f"{line} =") else ln for ln in text.splitlines()
    )
    minimum = shipped.pays[line]
    assert isinstance(minimum, Odds)
    if num * minimum.den >= minimum.num * den:
        loaded = parse_paytable(changed, "casino.toml")
        for wager in (1, 99, 100, 2500, 123_457):
            assert loaded.payout(line, wager) >= shipped.payout(line, wager)
    else:
        with pytest.raises(ValueError, match=rf"casino\.toml\.pays\.{line}: pays .* less than"):
            parse_paytable(changed, "casino.toml")
