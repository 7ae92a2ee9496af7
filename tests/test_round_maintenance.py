"""Maintenance: table closed, supervisor only; configuration changes journaled with old and new
values and never in the middle of a round (NY 5321.18(b)(4) as restated in table-rules.md)."""

from __future__ import annotations

from round_support import SUP, Table, of_type, reach, rejection


def test_config_change_records_old_new_and_who() -> None:
    t = reach("Maintenance")
    eff = t.ev("config_changed", supervisor=SUP, changes={"levels[0].rate_bp": 2400})
    ch = of_type(eff, "config_changed")[0]
    assert ch["supervisor"] == SUP
    assert ch["changes"] == [{"key": "levels[0].rate_bp", "old": 2100, "new": 2400}]
    assert t.m.config.levels[0].rate_bp == 2400
    assert t.m.snapshot()["config"]["levels"][0]["rate_bp"] == 2400


def test_config_change_refused_mid_round_and_when_invalid() -> None:
    t = reach("Open_Play")
    reason = rejection(t.ev("config_changed", supervisor=SUP, changes={"table_id": "X"}))
    assert reason is not None and "Maintenance" in reason
    m = reach("Maintenance")
    reason = rejection(m.ev("config_changed", supervisor=SUP, changes={"levels[0].rate_bp": 5}))
    assert reason is not None and reason.startswith("game.levels[0].rate_bp")


def test_level_added_gets_meters_and_levels_cannot_be_removed() -> None:
    t = reach("Maintenance")
    new_levels = [
        {"name": "progressive", "initial_cents": 100_000, "rate_bp": 2100},
        # a 1% level pays a fixed line: a share-of-the-meter line needs 21% itself (k)(5)
        {"name": "bonus", "initial_cents": 500, "rate_bp": 100, "lines": ["four-of-a-kind"]},
    ]
    t.ev("config_changed", supervisor=SUP, changes={"levels": new_levels})
    assert t.m.meters()["bonus"]["display_cents"] == 500
    reason = rejection(
        t.ev(
            "config_changed",
            supervisor=SUP,
            changes={"levels": [new_levels[1] | {"lines": [], "rate_bp": 2200}]},
        )
    )
    assert reason is not None and "removed" in reason


def test_light_and_display_tests_only_in_maintenance() -> None:
    t = reach("Maintenance")
    lights = [e["states"][0] for e in t.ev("light_test")]
    assert lights == ["lit", "blink", "attract", "off"]
    glyphs = [e["glyph"] for e in t.ev("display_test")]
    assert glyphs[:7] == ["1", "2", "3", "4", "5", "6", "7"] and glyphs[-1] == " "
    eff = t.ev("maintenance_exited", supervisor=SUP)
    assert t.state == "Closed" and {"type": "lights", "states": ["off"] * 6} in eff
    assert rejection(Table().ev("light_test")) is not None


def test_table_closes_only_without_live_wagers() -> None:
    t = reach("Open_Betting")  # area 2 lit
    assert rejection(t.ev("table_closed", supervisor=SUP)) is not None
    t2 = Table()
    t2.open()
    t2.ev("table_closed", supervisor=SUP)
    assert t2.state == "Closed"
    t2.open()
    assert t2.m.round_id == 1  # the unplayed round keeps its id
