"""Planners for the table itself: opening and closing, maintenance, configuration changes, meter
corrections, light and display tests (NY 5321.18(b)(4), NJ 13:69D-1.52(f)).

A planner is ``(machine, data) -> (route, action)``: it checks the event (raising ``_Reject`` with
the reason) and returns where the round goes and what to do there. Must never do I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fsm.round import states as S
from fsm.round.catalogue import AREAS
from fsm.round.checks import Plan, _field, _Reject, _text
from fsm.round.config import with_changes
from fsm.round.events import JSON
from fsm.round.meters import LevelMeters
from fsm.round.rounddata import RoundData

if TYPE_CHECKING:
    from fsm.round.machine import RoundMachine


def _p_table_opened(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    _text(d, "supervisor")

    def act() -> None:
        m._bank.new_game()
        m._rounds_since_shuffle = 0

    return S.SHUFFLING, act


def _p_table_closed(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    _text(d, "supervisor")
    if m._r.wagers:
        raise _Reject("progressive wagers are lit: lock out and play the round, or void it")

    def act() -> None:
        m._bank.current = None
        m._r = RoundData()

    return S.CLOSED, act


def _p_maintenance_entered(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    _text(d, "supervisor")
    return S.MAINTENANCE, lambda: None


def _p_maintenance_exited(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    _text(d, "supervisor")
    return S.CLOSED, lambda: None


def _get_path(data: Any, key: str) -> Any:
    from fsm.round.config import _split_key

    for part in _split_key(key):
        data = data[part]
    return data


def _p_config_changed(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    sup = _text(d, "supervisor")
    changes = _field(d, "changes")
    if not isinstance(changes, Mapping) or not changes:
        raise _Reject('changes: must be a non-empty mapping {"dotted.key": new value}')
    old_map = m._config.to_mapping()
    try:
        new = with_changes(m._config, changes)
        olds = [_get_path(old_map, str(k)) for k in changes]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise _Reject(str(e)[:200]) from None
    old_names = [lvl.name for lvl in m._config.levels]
    new_names = [lvl.name for lvl in new.levels]
    if new_names[: len(old_names)] != old_names:
        raise _Reject("levels: a level may be added, never removed or renamed (its meters)")

    def act() -> None:
        m._config = new
        for lvl in new.levels:
            if lvl.name not in m._meters:
                m._meters[lvl.name] = LevelMeters.new(lvl)
        m._emit(
            {
                "type": "config_changed",
                "supervisor": sup,
                "changes": [
                    {"key": str(k), "old": o, "new": v}
                    for (k, v), o in zip(changes.items(), olds, strict=True)
                ],
            }
        )

    return S.INTERNAL, act


def _p_meter_corrected(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    level = _text(d, "level")
    meter = _text(d, "meter")
    delta = _field(d, "delta_cents")
    if isinstance(delta, bool) or not isinstance(delta, int) or delta == 0:
        raise _Reject("delta_cents: must be a non-zero integer")
    reason = _text(d, "reason")
    sup = _text(d, "supervisor")
    if level not in m._meters:
        raise _Reject(f"level: no level {level!r}; levels: {', '.join(m._meters)}"[:200])
    probe = LevelMeters.from_json(m._meters[level].to_json())
    why = probe.correct(meter, delta)
    if why:
        raise _Reject(why)

    def act() -> None:
        lm = m._meters[level]
        before = lm.cents()
        lm.correct(meter, delta)
        m._emit_movement(
            level, "correction", before, lm.cents(), 0, reason=reason, supervisor=sup, meter=meter
        )

    return S.INTERNAL, act


LIGHT_TEST = ("lit", "blink", "attract", "off")
DISPLAY_TEST = ("1", "2", "3", "4", "5", "6", "7", "-", "L", "F", "P", " ")


def _p_light_test(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """Every acceptor light through each of its states, ending off (Maintenance)."""

    def act() -> None:
        for state in LIGHT_TEST:
            m._emit({"type": "lights", "states": [state] * AREAS})

    return S.INTERNAL, act


def _p_display_test(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The number display through every glyph it can show, ending blank (Maintenance)."""

    def act() -> None:
        for glyph in DISPLAY_TEST:
            m._emit({"type": "display", "glyph": glyph})

    return S.INTERNAL, act
