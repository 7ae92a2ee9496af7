"""No file is read inside a step: the pay tables and house ways are loaded with the configuration
(issue 7 point 11; DESIGN.md: fsm is pure, no I/O). A configuration change in maintenance switches
the house way without opening a file; a pay table that was not loaded is refused by name.

The check is from outside: a CPython audit hook sees every ``open`` of the process.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from round_support import SUP, of_type, reach, rejection

_opened: list[str] | None = None


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _opened is not None and event == "open":
        _opened.append(str(args[0]))


sys.addaudithook(_hook)  # audit hooks cannot be removed; it records only inside `watching`


@contextmanager
def watching() -> Iterator[list[str]]:
    global _opened
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


def test_a_house_way_change_in_maintenance_reads_no_file() -> None:
    t = reach("Maintenance")
    with watching() as opened:
        eff = t.ev("config_changed", supervisor=SUP, changes={"house_way": "foxwoods"})
    assert opened == []
    assert of_type(eff, "config_changed")[0]["changes"] == [
        {"key": "house_way", "old": "reference", "new": "foxwoods"}
    ]
    assert t.m.config.way.name == "foxwoods"


def test_a_step_that_completes_play_reads_no_file() -> None:
    t = reach("Open_Play", card_reading_shoe=False)
    with watching() as opened:
        t.ev("play_complete")
    assert opened == []


def test_a_pay_table_not_loaded_with_the_configuration_is_refused_in_a_step() -> None:
    t = reach("Maintenance")
    with watching() as opened:
        reason = rejection(
            t.ev("config_changed", supervisor=SUP, changes={"paytable": "/tmp/other.toml"})
        )
    assert opened == []
    assert reason is not None
    assert reason.startswith("game.paytable: must be one of ny-5324-41-k4")
    assert "loaded with the configuration" in reason


FORTUNE = {
    "offered": ["fortune-bonus", "envy"],
    "tables": {"fortune-bonus": "fortune-bonus-a", "envy": "envy-a"},
}


def test_the_bonus_offering_is_journaled_with_the_game_configuration() -> None:
    """The [bonus] section travels in the snapshot's game configuration (the journal's record of
    what the table offered) and reads back to an equal configuration."""
    from fsm.round.config import GameConfig

    t = reach("Maintenance", bonus=FORTUNE)
    snap_config = t.m.snapshot()["config"]
    assert snap_config["bonus"] == FORTUNE
    again = GameConfig.from_mapping(snap_config, "snapshot.config")
    assert again == t.m.config
    assert again.bonus is not None and again.bonus.offered == ("fortune-bonus", "envy")
    assert again.bonus.tables["envy"].schedule == "A"


def test_a_change_beside_the_bonus_offering_reads_no_pay_table_file() -> None:
    t = reach("Maintenance", bonus=FORTUNE)
    with watching() as opened:
        eff = t.ev("config_changed", supervisor=SUP, changes={"levels[0].rate_bp": 2400})
    assert opened == []
    assert of_type(eff, "config_changed")
    assert t.m.config.bonus is not None and t.m.config.bonus.offered == ("fortune-bonus", "envy")


def test_the_bonus_offering_is_not_changed_inside_a_step() -> None:
    t = reach("Maintenance", bonus=FORTUNE)
    with watching() as opened:
        reason = rejection(
            t.ev("config_changed", supervisor=SUP, changes={"bonus.offered": ["fortune-bonus"]})
        )
    assert opened == []
    assert reason == (
        "bonus.offered: the bonus offering is changed in the configuration file, with the table "
        "closed (its pay tables are loaded with the configuration)"
    )
