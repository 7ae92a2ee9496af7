"""The table phase: Closed and Maintenance. Opening (to the shuffle) and closing (an idle table),
maintenance, configuration changes, meter corrections, light and display tests
(NY 5321.18(b)(4), NJ 13:69D-1.52(f)).

Must never change the configuration or a meter outside Maintenance, nor close a table with
progressive wagers lit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsm.round.config import config_key_path, with_changes
from fsm.round.constants import AREAS
from fsm.round.effects import (
    CarriedLevel,
    ConfigChange,
    ConfigChangedEffect,
    Display,
    Lights,
    MetersCarriedEffect,
)
from fsm.round.events import ConfigChanged, MeterCorrected, MetersCarried
from fsm.round.meters import LevelMeters
from fsm.round.phase import Phase, StateSpec, Step, Transition, Untimely
from fsm.round.phases.shared import glyph, key_turned, lights_off
from fsm.round.rounddata import RoundData
from fsm.round.states import BETTING, CLOSED, MAINTENANCE, SHUFFLING
from fsm.round.vocabulary import BLANK, GLYPHS, Glyph, LightState

LIGHT_TEST: tuple[LightState, ...] = ("lit", "blink", "attract", "off")
DISPLAY_TEST: tuple[Glyph, ...] = GLYPHS  # every glyph of the vocabulary, ending blank


def open_table(s: Step) -> None:
    s.c.bank.new_game()
    s.c.rounds_since_shuffle = 0


def no_wagers_lit(s: Step) -> bool:
    return not s.c.r.wagers or s.refuse(
        "progressive wagers are lit: lock out and play the round, or void it"
    )


def close_table(s: Step) -> None:
    s.c.bank.current = None
    s.c.r = RoundData()


def _old_value(data: Any, key: str) -> Any:
    for part in config_key_path(key):
        data = data[part]
    return data


def changes_apply(s: Step) -> bool:
    """The changes make a valid configuration; a level may be added, never removed or renamed."""
    e: ConfigChanged = s.e
    changes = e.changes
    if not isinstance(changes, Mapping) or not changes:
        return s.refuse('changes: must be a non-empty mapping {"dotted.key": new value}', "invalid")
    old_map = s.c.config.to_mapping()
    try:
        new = with_changes(s.c.config, changes)
        olds = [_old_value(old_map, str(k)) for k in changes]
    except (ValueError, KeyError, IndexError, TypeError) as err:
        return s.refuse(str(err)[:200])
    old_names = [lvl.name for lvl in s.c.config.levels]
    if [lvl.name for lvl in new.levels][: len(old_names)] != old_names:
        return s.refuse("levels: a level may be added, never removed or renamed (its meters)")
    s.memo["config"] = (new, olds)
    return True


def change_config(s: Step) -> None:
    c, e = s.c, s.e
    new, olds = s.memo["config"]
    c.config = new
    for lvl in new.levels:
        if lvl.name not in c.meters:
            c.meters[lvl.name] = LevelMeters.new(lvl)
    changes = tuple(
        ConfigChange(str(k), o, v) for (k, v), o in zip(e.changes.items(), olds, strict=True)
    )
    c.emit(ConfigChangedEffect(changes=changes, supervisor=e.supervisor))


def correction_allowed(s: Step) -> bool:
    """NJ 13:69D-1.52(f): a non-zero correction of a known level's meter it may take."""
    e: MeterCorrected = s.e
    if e.delta_cents == 0:
        return s.refuse("delta_cents: must be a non-zero integer", "invalid")
    if e.level not in s.c.meters:
        return s.refuse(f"level: no level {e.level!r}; levels: {', '.join(s.c.meters)}"[:200])
    why = LevelMeters.from_json(s.c.meters[e.level].to_json()).correct(e.meter, e.delta_cents)
    return not why or s.refuse(why)


def correct_meter(s: Step) -> None:
    e: MeterCorrected = s.e
    lm = s.c.meters[e.level]
    before = lm.cents()
    lm.correct(e.meter, e.delta_cents)
    s.c.emit_movement(
        e.level,
        "correction",
        before,
        lm.cents(),
        0,
        reason=e.reason,
        supervisor=e.supervisor,
        meter=e.meter,
    )


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def carry_allowed(s: Step) -> bool:
    """A fresh journal's meters carried over: two different supervisors, on a table whose
    meters never moved (so the carry happens once, and never on a table with history), every
    configured level and no other, each level's meters whole and balanced."""
    e: MetersCarried = s.e
    if len(e.supervisors) != 2 or e.supervisors[0] == e.supervisors[1]:
        return s.refuse("supervisors: two different supervisors must give their PINs", "invalid")
    c = s.c
    fresh = {lvl.name: LevelMeters.new(lvl).to_json() for lvl in c.config.levels}
    if any(c.meters[name].to_json() != value for name, value in fresh.items()):
        return s.refuse("the meters moved in this journal: they are carried into a fresh one only")
    if not isinstance(e.meters, Mapping) or set(e.meters) != set(fresh):
        got = sorted(e.meters) if isinstance(e.meters, Mapping) else e.meters
        return s.refuse(f"meters: must name exactly the levels {sorted(fresh)}, got {got}"[:200])
    carried: dict[str, LevelMeters] = {}
    for name, value in e.meters.items():
        try:
            lm = LevelMeters.from_json(dict(value))
        except (TypeError, ValueError) as err:
            return s.refuse(f"meters[{name!r}]: not a level's meters: {err}"[:200], "invalid")
        numbers = [v for k, v in lm.__dict__.items() if k not in ("name", "history")]
        if lm.name != name or not all(_whole(v) for v in numbers):
            return s.refuse(f"meters[{name!r}]: not a level's meters in whole sub-units", "invalid")
        if lm.balance_error():
            return s.refuse(f"meters[{name!r}]: do not balance ({lm.balance_error()} sub-units)")
        carried[name] = lm
    s.memo["carried"] = carried
    return True


def carry_meters(s: Step) -> None:
    e: MetersCarried = s.e
    carried: dict[str, LevelMeters] = s.memo["carried"]
    levels = []
    for name, lm in carried.items():
        s.c.meters[name] = lm
        display, overflow, reserve = lm.cents()
        levels.append(CarriedLevel(name, display, overflow, reserve))
    s.c.emit(
        MetersCarriedEffect(
            previous_seq=e.previous_seq,
            previous_hash=e.previous_hash,
            source=e.source,
            supervisors=tuple(e.supervisors),
            levels=tuple(levels),
        )
    )


def cycle_lights(s: Step) -> None:
    """Every acceptor light through each of its states, ending off."""
    for state in LIGHT_TEST:
        s.c.emit(Lights((state,) * AREAS))


def cycle_display(s: Step) -> None:
    """The number display through every glyph it can show, ending blank."""
    for g in DISPLAY_TEST:
        s.c.emit(Display(g))


IDLE_TABLE = (BETTING, SHUFFLING)
_MAINTENANCE_ONLY = "{trigger} only in Maintenance, with the table closed (state {state})"

PHASE = Phase(
    name="table",
    states={
        CLOSED: StateSpec(lights_off, glyph(BLANK)),
        MAINTENANCE: StateSpec(lights_off, glyph(BLANK)),
    },
    transitions=[
        Transition("table_opened", CLOSED, SHUFFLING, before=[open_table]),
        Transition(
            "panel_next",
            CLOSED,
            SHUFFLING,
            conditions=[key_turned("NEXT", "opens the table")],
            before=[open_table],
        ),
        Transition(
            "table_closed", IDLE_TABLE, CLOSED, conditions=[no_wagers_lit], before=[close_table]
        ),
        Transition(
            "panel_void",
            IDLE_TABLE,
            CLOSED,
            conditions=[key_turned("VOID", "closes the table"), no_wagers_lit],
            before=[close_table],
        ),
        Transition("maintenance_entered", CLOSED, MAINTENANCE),
        Transition("maintenance_exited", MAINTENANCE, CLOSED),
        Transition(
            "config_changed", MAINTENANCE, conditions=[changes_apply], before=[change_config]
        ),
        Transition(
            "meter_corrected", MAINTENANCE, conditions=[correction_allowed], before=[correct_meter]
        ),
        Transition("meters_carried", CLOSED, conditions=[carry_allowed], before=[carry_meters]),
        Transition("light_test", MAINTENANCE, before=[cycle_lights]),
        Transition("display_test", MAINTENANCE, before=[cycle_display]),
    ],
    untimely=[
        *(
            Untimely(t, None, "untimely", _MAINTENANCE_ONLY)
            for t in ("config_changed", "meter_corrected", "light_test", "display_test")
        ),
        Untimely("meters_carried", None, "untimely", "{trigger} only on a closed table ({state})"),
    ],
)
