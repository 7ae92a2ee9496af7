"""Planners for the table itself: opening and closing, maintenance, configuration changes, meter
corrections, light and display tests (NY 5321.18(b)(4), NJ 13:69D-1.52(f)).

A planner is ``(machine, data) -> (route, action)``: it checks the event (raising ``_Reject`` with
the reason) and returns where the round goes and what to do there. Must never do I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsm.round import states as S
from fsm.round.checks import Plan, _invalid, _Reject
from fsm.round.config import with_changes
from fsm.round.constants import AREAS
from fsm.round.context import Round
from fsm.round.effects import ConfigChange, ConfigChangedEffect, Display, Lights
from fsm.round.events import (
    ConfigChanged,
    DisplayTest,
    FloorCommand,
    FloorLink,
    LightTest,
    MaintenanceEntered,
    MaintenanceExited,
    MeterCorrected,
    TableClosed,
    TableOpened,
)
from fsm.round.meters import LevelMeters
from fsm.round.rounddata import RoundData
from fsm.round.vocabulary import GLYPHS, Glyph, LightState


def _p_table_opened(m: Round, e: TableOpened) -> Plan:

    def act() -> None:
        m.bank.new_game()
        m.rounds_since_shuffle = 0

    return S.SHUFFLING, act


def _p_table_closed(m: Round, e: TableClosed) -> Plan:
    if m.r.wagers:
        raise _Reject("progressive wagers are lit: lock out and play the round, or void it")

    def act() -> None:
        m.bank.current = None
        m.r = RoundData()

    return S.CLOSED, act


def _p_maintenance_entered(m: Round, e: MaintenanceEntered) -> Plan:
    return S.MAINTENANCE, lambda: None


def _p_maintenance_exited(m: Round, e: MaintenanceExited) -> Plan:
    return S.CLOSED, lambda: None


def _get_path(data: Any, key: str) -> Any:
    from fsm.round.config import _split_key

    for part in _split_key(key):
        data = data[part]
    return data


def _p_config_changed(m: Round, e: ConfigChanged) -> Plan:
    sup = e.supervisor
    changes = e.changes
    if not isinstance(changes, Mapping) or not changes:
        raise _invalid('changes: must be a non-empty mapping {"dotted.key": new value}')
    old_map = m.config.to_mapping()
    try:
        new = with_changes(m.config, changes)
        olds = [_get_path(old_map, str(k)) for k in changes]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise _Reject(str(e)[:200]) from None
    old_names = [lvl.name for lvl in m.config.levels]
    new_names = [lvl.name for lvl in new.levels]
    if new_names[: len(old_names)] != old_names:
        raise _Reject("levels: a level may be added, never removed or renamed (its meters)")

    def act() -> None:
        m.config = new
        for lvl in new.levels:
            if lvl.name not in m.meters:
                m.meters[lvl.name] = LevelMeters.new(lvl)
        m.emit(
            ConfigChangedEffect(
                changes=tuple(
                    ConfigChange(str(k), o, v)
                    for (k, v), o in zip(changes.items(), olds, strict=True)
                ),
                supervisor=sup,
            )
        )

    return S.INTERNAL, act


def _p_meter_corrected(m: Round, e: MeterCorrected) -> Plan:
    level, meter, delta, reason, sup = e.level, e.meter, e.delta_cents, e.reason, e.supervisor
    if delta == 0:
        raise _invalid("delta_cents: must be a non-zero integer")
    if level not in m.meters:
        raise _Reject(f"level: no level {level!r}; levels: {', '.join(m.meters)}"[:200])
    probe = LevelMeters.from_json(m.meters[level].to_json())
    why = probe.correct(meter, delta)
    if why:
        raise _Reject(why)

    def act() -> None:
        lm = m.meters[level]
        before = lm.cents()
        lm.correct(meter, delta)
        m.emit_movement(
            level, "correction", before, lm.cents(), 0, reason=reason, supervisor=sup, meter=meter
        )

    return S.INTERNAL, act


LIGHT_TEST: tuple[LightState, ...] = ("lit", "blink", "attract", "off")
DISPLAY_TEST: tuple[Glyph, ...] = GLYPHS  # every glyph of the vocabulary, ending blank


def _p_light_test(m: Round, e: LightTest) -> Plan:
    """Every acceptor light through each of its states, ending off (Maintenance)."""

    def act() -> None:
        for state in LIGHT_TEST:
            m.emit(Lights((state,) * AREAS))

    return S.INTERNAL, act


def _p_display_test(m: Round, e: DisplayTest) -> Plan:
    """The number display through every glyph it can show, ending blank (Maintenance)."""

    def act() -> None:
        for glyph in DISPLAY_TEST:
            m.emit(Display(glyph))

    return S.INTERNAL, act


def _p_floor_link(m: Round, e: FloorLink) -> Plan:
    """The floor link went down or came back. Down with ``blocks_progressive`` (the
    progressive depends on the floor system): progressive wagers are refused, the acceptors not
    armed, until the link returns (NJ 13:69E-1.39B(d))."""

    def act() -> None:
        m.floor["link_blocks"] = (not e.up) and e.blocks_progressive

    return S.INTERNAL, act


def _p_floor_command(m: Round, e: FloorCommand) -> Plan:
    """A command of the floor system, journaled: SAS 01 / 02 refuse / accept progressive
    wagers; the others (clock, game enable, an acknowledged exception) change no round state."""

    def act() -> None:
        if e.command == "refuse_progressive":
            m.floor["refused"] = True
        elif e.command == "accept_progressive":
            m.floor["refused"] = False

    return S.INTERNAL, act
