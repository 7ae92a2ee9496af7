"""The round of one pai gow table as a pure, deterministic state machine (issue 3).

Responsible for: deciding what every input event means in the current state of the round and
answering with typed effects (fsm/round/effects.py) for the owner thread to journal and then
apply; what each state does on entry and exit and shows while it lasts (the state table
`STATE_TABLE`, run by the state machine library's on_enter / on_exit callbacks); dumping and
restoring the round (fsm/round/context.py) as JSON.

Must never: do I/O (beyond loading the pay table named in the configuration), read a clock, draw a
random number, start a thread, raise on bad input (a bad or untimely event is answered with a
``rejected`` effect the owner journals), or let a card identity reach an effect or the public view.

API (stable contract for the controller's owner loop and the simulator)
----------------------------------------------------------------------
    m = RoundMachine(config)                     # GameConfig; fresh table: state "Closed"
    effects = m.step(Event(type, data), now_ms)  # list[Effect]; never raises
    m.entry_round_id -> int                      # the round the last stepped event belongs to
    m.snapshot() -> dict                         # JSON-able, complete (private: holds hidden hands)
    m.public_view() -> dict                      # the snapshot without card identities
    RoundMachine.restore(config, snapshot)       # set_state + data; then apply m.outputs()
    m.outputs() -> list[Effect]                  # lights/display/acceptors (+ re-issued requests)
    m.meters() -> dict[str, dict]                # per level, see fsm/round/meters.py
    m.next_deadline_ms() -> int | None           # owner posts Event("deadline", {}) when reached
    m.state -> str                               # e.g. "Open_Betting" (separator "_")
    m.round_id -> int                            # 0 before the first round; +1 per round
    replay(config, entries) -> (snapshot, meters)

How a step runs: the envelope becomes its typed record (fsm/round/events.py; refused as
``invalid`` when it is not one), the type must be legal in the state (``untimely``; a chip gets
``late`` or ``not_armed``), a ``round_id`` must name the round in play (``wrong_round``); the
event's planner (``plan_*.py``) reads the `Round` context and returns the destination and an
action, or refuses (``refused``). The transition whose condition is that destination runs the
action (``before``), then the library exits and enters states, and the state table does the rest.
A bug anywhere (``internal``) leaves the round exactly as before the step: the context is dumped
before firing and loaded back (``tests/test_round_properties.py`` proves it over random rounds).

``round_completed``: when a round is done the machine enters Open_RoundComplete and emits
``post {"event": {"type": "round_completed", "data": {"round_id": n}}}``. The owner posts that
event like any input (ahead of the queue); it is journaled as an entry of type ``round_completed``
(the journal counts those as rounds) with the ``round_summary`` effect and moves the machine on to
Open_Betting, or Open_Shuffling when the deck is due. After a restart in Open_RoundComplete
``outputs()`` asks for it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fsm.round import states as S
from fsm.round.catalogue import EFFECT_TYPES, EVENT_FIELDS, FAULT_CODES, IN_ROUND_AFTER_LOCKOUT
from fsm.round.checks import _Reject, rejected
from fsm.round.config import GameConfig
from fsm.round.constants import AREAS, STACKS
from fsm.round.context import Plan, Round
from fsm.round.effects import (
    Acceptors,
    BankOffer,
    Dispense,
    Display,
    DrawRng,
    Effect,
    Lights,
    Post,
    PostedEvent,
    RejectCause,
    Shuffle,
)
from fsm.round.events import JSON, Event, EventRecord, parse_event
from fsm.round.plan_betting import (
    _p_bank_accepted,
    _p_bank_released,
    _p_chip_detected,
    _p_chips_confirmed,
    _p_chips_mismatch,
    _p_chips_resolved,
    _p_lockout_pressed,
    _p_pai_gow_wagers,
    _p_shuffle_complete,
)
from fsm.round.plan_deal import (
    _p_dealt,
    _p_hit_validated,
    _p_hit_voided,
    _p_play_complete,
    _p_progressive_outcome,
    _p_round_completed,
    _p_three_card_settled,
)
from fsm.round.plan_faults import (
    _p_deadline,
    _p_device_recovered,
    _p_fault_cleared,
    _p_fault_raised,
)
from fsm.round.plan_link import _p_link_hit_locked, _p_link_state
from fsm.round.plan_panel import (
    PANEL_SUPERVISOR,
    _p_informational,
    _p_key_holder,
    _p_panel_next,
    _p_panel_void,
    _p_power_up,
    _p_shaker_lid,
    _p_supervisor_key,
)
from fsm.round.plan_start import (
    _p_dice_position_entered,
    _p_lid_lifted_by_bank,
    _p_rng_activated,
    _p_rng_drawn,
    _p_rng_void,
    _p_shake_detected,
    _p_side_wagers,
    _p_side_wagers_settled,
)
from fsm.round.plan_table import (
    _p_config_changed,
    _p_display_test,
    _p_floor_command,
    _p_floor_link,
    _p_light_test,
    _p_maintenance_entered,
    _p_maintenance_exited,
    _p_meter_corrected,
    _p_table_closed,
    _p_table_opened,
)
from fsm.round.records import RecordError
from fsm.round.vocabulary import BLANK, FAULT, IDLE, LOCKED, PENDING, Glyph, LightState

_LEGAL: dict[str, frozenset[str]] = {s: frozenset(S.legal_triggers(s)) for s in S.LEAF_STATES}

# ---------------------------------------------------------------------------------------------
# What each leaf state does, declared once: the acceptors, lights and glyph it shows, what it
# requests on entry (and again after a restart), and the deadline it sets. Run by the library's
# on_enter / on_exit callbacks (fsm/round/states.py); leaving any state clears its deadline.


def _none(c: Round) -> list[Effect]:
    return []


def _no_deadline(c: Round) -> list[Any] | None:
    return None


def _lights_off(c: Round) -> list[LightState]:
    return ["off"] * AREAS


def _lights_betting(c: Round) -> list[LightState]:
    # NY 5324.41(d)(4): the player checks the light of the wager
    return ["lit" if a in c.r.wagers else "attract" for a in range(1, AREAS + 1)]


def _lights_locked(c: Round) -> list[LightState]:
    return ["locked" if a in c.r.wagers else "off" for a in range(1, AREAS + 1)]


def _lights_pending(c: Round) -> list[LightState]:
    lights = _lights_locked(c)
    for p in c.r.pending:
        lights[p["position"] - 1] = "blink"
    return lights


def _glyph(g: Glyph) -> Callable[[Round], Glyph]:
    return lambda c: g


def _glyph_start(c: Round) -> Glyph:
    n = c.r.start_number
    return LOCKED if n is None else _DIGITS[n]


_DIGITS: dict[int, Glyph] = {1: "1", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7"}


def _request_shuffle(c: Round) -> list[Effect]:
    return [Shuffle()]


def _request_draw(c: Round) -> list[Effect]:
    return [DrawRng()] if c.r.rng_value is None else []


def _request_round_completed(c: Round) -> list[Effect]:
    return [Post(PostedEvent("round_completed", {"round_id": c.round_id}))]


def _offer_bank(c: Round) -> list[Effect]:
    order = c.bank.offer_order() if c.config.player_banking else []
    return [BankOffer(tuple(order))] if order else []


def _dispense(c: Round) -> list[Effect]:
    if c.config.three_card_bonus:  # NY 5324.41(n)(2), (n)(4)-(5): stacks of three
        c.r.stage = "three"
        return [Dispense(len(c.delivery_seats()), 3)]
    c.r.stage = "seven"
    return [Dispense(STACKS, 7)]


def _deadline(which: str) -> Callable[[Round], list[Any] | None]:
    return lambda c: c.deadline_for(which)


@dataclass(frozen=True)
class StateSpec:
    """What one leaf state does. ``on_enter``: requests issued on entry; ``waiting``: the
    requests it waits on, issued again after a restart (``outputs``); ``deadline``: the deadline
    set on entry (code and device of the fault when it passes)."""

    lights: Callable[[Round], list[LightState]]
    glyph: Callable[[Round], Glyph]
    armed: bool = False
    on_enter: Callable[[Round], list[Effect]] = _none
    waiting: Callable[[Round], list[Effect]] = _none
    deadline: Callable[[Round], list[Any] | None] = _no_deadline


_LOCKED_OUT_SPEC = StateSpec(_lights_locked, _glyph_start)
STATE_TABLE: dict[str, StateSpec] = {
    S.CLOSED: StateSpec(_lights_off, _glyph(BLANK)),
    S.MAINTENANCE: StateSpec(_lights_off, _glyph(BLANK)),
    S.FAULT: StateSpec(_lights_off, _glyph(FAULT)),
    S.SHUFFLING: StateSpec(
        _lights_off,
        _glyph(IDLE),
        on_enter=_request_shuffle,
        waiting=_request_shuffle,
        deadline=_deadline(S.SHUFFLING),
    ),
    S.BETTING: StateSpec(_lights_betting, _glyph(IDLE), armed=True, on_enter=_offer_bank),
    S.LOCKED_OUT: _LOCKED_OUT_SPEC,
    S.RNG: StateSpec(
        _lights_locked,
        _glyph_start,
        on_enter=_request_draw,
        waiting=_request_draw,
        deadline=_deadline(S.RNG),
    ),
    S.DICE: _LOCKED_OUT_SPEC,
    S.SIDE_WAGERS: _LOCKED_OUT_SPEC,
    # a dispense is never re-issued after a restart: a shoe interrupted mid-deal cannot be
    # trusted (power_up makes its deadline fall due: DEAL_INTERRUPTED)
    S.DEALING: StateSpec(
        _lights_locked, _glyph_start, on_enter=_dispense, deadline=_deadline(S.DEALING)
    ),
    S.PLAY: _LOCKED_OUT_SPEC,
    S.SETTLEMENT: _LOCKED_OUT_SPEC,
    S.JACKPOT_PENDING: StateSpec(_lights_pending, _glyph(PENDING)),
    S.ROUND_COMPLETE: StateSpec(
        _lights_locked,
        _glyph_start,
        on_enter=_request_round_completed,
        waiting=_request_round_completed,
    ),
}
assert set(STATE_TABLE) == set(S.LEAF_STATES)

Planner = Callable[[Round, Any], Plan]


class RoundMachine:
    """One table's round. Build with a GameConfig; drive only from the owner thread."""

    def __init__(self, config: GameConfig, snapshot: Mapping[str, JSON] | None = None) -> None:
        self._c = Round.new(config)
        self._hsm = S.build_machine()
        self._model = S.Model(S.CLOSED, self)
        self._action: Callable[[], None] | None = None
        self._entry_round = 0
        if snapshot is not None:
            try:
                self._load(snapshot)
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                raise ValueError(f"snapshot: not a valid round snapshot ({e!r})"[:300]) from None

    # --- public API ------------------------------------------------------------------------

    @classmethod
    def restore(cls, config: GameConfig, snapshot: Mapping[str, JSON]) -> RoundMachine:
        """Rebuild from a committed snapshot. The snapshot's own configuration (changed only by
        journaled ``config_changed`` events) wins over ``config`` when they differ."""
        return cls(config, snapshot)

    @property
    def state(self) -> str:
        return str(self._model.state)

    @property
    def round_id(self) -> int:
        return self._c.round_id

    @property
    def entry_round_id(self) -> int:
        """The round the last stepped event belongs to (its journal entry's round): the round
        an accepted ``round_completed`` completed, otherwise the round in play after the step.
        Never a round id taken from the event's data unchecked."""
        return self._entry_round

    @property
    def config(self) -> GameConfig:
        return self._c.config

    def step(self, event: Event, now_ms: int) -> list[Effect]:
        """Apply one event; return its effects. Never raises."""
        etype = getattr(event, "type", None)
        name = str(etype)[:64]
        self._entry_round = self._c.round_id
        try:
            rec = parse_event(event)
        except RecordError as e:
            return [rejected(name, str(e), "invalid")]
        state = self.state
        if name not in _LEGAL[state]:
            cause, reason = self._untimely(name, state)
            pos = getattr(rec, "position", None) if name == "chip_detected" else None
            return [rejected(name, reason, cause, pos)]
        if isinstance(now_ms, bool) or not isinstance(now_ms, int):
            return [rejected(name, "now_ms: the owner's clock must be an integer", "internal")]
        rid = getattr(rec, "round_id", None)
        if rid is not None and rid != self._c.round_id:
            return [
                rejected(
                    name, f"round_id: the round in play is {self._c.round_id}, not {rid}",
                    "wrong_round",
                )
            ]  # fmt: skip
        c = self._c
        c.now = now_ms
        try:
            route, action = _PLANNERS[name](c, rec)
        except _Reject as r:
            return [rejected(name, str(r), r.cause, r.position)]
        except Exception as e:  # a planner bug must not take the table down
            return [
                rejected(name, f"internal error while checking: {type(e).__name__}", "internal")
            ]
        before_out = self._output_state()
        saved = c.dump()
        c.effects = []
        self._action = action
        self._model.route = route
        S.fire(self._hsm, self._model, name)
        self._action = None
        c.state = self.state
        effects = c.effects
        c.effects = []
        if self._model.error is not None:
            err = self._model.error
            self._load(saved)
            return [
                rejected(name, f"internal error: {type(err).__name__}: {err}"[:200], "internal")
            ]
        new_state = self.state
        after_out = self._output_state()
        for b, a in zip(before_out, after_out, strict=True):
            if a != b or new_state != state:
                effects.append(a)
        self._entry_round = rid if rid is not None else c.round_id
        return effects

    def snapshot(self) -> dict[str, JSON]:
        return self._c.dump()

    def public_view(self) -> dict[str, JSON]:
        """The snapshot for readers (web page, SAS): no card identity, meters as reported."""
        d = self._c.dump(hidden=False)
        d["meters"] = self.meters()
        spec = STATE_TABLE[self.state]
        d["lights"] = list(spec.lights(self._c))
        d["display"] = spec.glyph(self._c)
        return d

    def meters(self) -> dict[str, dict[str, JSON]]:
        return {name: m.report() for name, m in self._c.meters.items()}

    def next_deadline_ms(self) -> int | None:
        dl = self._c.deadline
        return None if dl is None else int(dl[0])

    def outputs(self) -> list[Effect]:
        """Re-derive the outputs of the committed state (after a restart): acceptors, lights,
        display, and the requests the state is waiting on (its ``waiting`` in the state
        table)."""
        return [*self._output_state(), *STATE_TABLE[self.state].waiting(self._c)]

    # --- state table, run by the library's callbacks (fsm/round/states.py) ---------------------

    def act(self) -> None:
        """The planned action (the transition's ``before`` callback)."""
        if self._action is not None:
            self._action()

    def entered(self, state: str) -> None:
        c = self._c
        c.state = state
        spec = STATE_TABLE[state]
        c.deadline = spec.deadline(c)
        for effect in spec.on_enter(c):
            c.emit(effect)

    def exited(self, state: str) -> None:
        self._c.deadline = None

    # --- internals -------------------------------------------------------------------------

    def _load(self, snap: Mapping[str, Any]) -> None:
        c = Round.new(self._c.config)
        c.load(snap)
        S.set_state(self._hsm, self._model, c.state)
        self._c = c

    def _output_state(self) -> tuple[Acceptors, Lights, Display]:
        spec = STATE_TABLE[self.state]
        return (
            Acceptors(spec.armed and self._c.floor_refusal() is None),
            Lights(tuple(spec.lights(self._c))),
            Display(spec.glyph(self._c)),
        )

    def _untimely(self, etype: str, state: str) -> tuple[RejectCause, str]:
        if etype == "chip_detected":
            if state in IN_ROUND_AFTER_LOCKOUT:
                return "late", (
                    "late chip: no progressive wager is accepted after the lock-out "
                    "(NY 5324.41(k)(2))"
                )
            if state == S.FAULT:
                return "not_armed", "progressive wagers are refused while the table is in fault"
            if state == S.SHUFFLING:
                return "not_armed", "acceptors are not armed while the deck is shuffled"
            return "not_armed", "the table is closed: no progressive wager is accepted"
        if etype == "side_wagers" and state in IN_ROUND_AFTER_LOCKOUT:
            return "late", (
                "late side wager: the 1-7 side wagers are closed when the RNG is activated; none "
                "is accepted or changed after (NY 5324.41(j)(2)(i), NJ 13:69F-11.8C(b)1)"
            )
        if etype in ("config_changed", "meter_corrected", "light_test", "display_test"):
            return "untimely", f"{etype} only in Maintenance, with the table closed (state {state})"
        return "untimely", f"{etype} is not accepted in state {state}"


_PLANNERS: dict[str, Planner] = {
    "panel_next": _p_panel_next,
    "shaker_lid": _p_shaker_lid,
    "power_up": _p_power_up,
    "supervisor_key": _p_supervisor_key,
    "key_holder": _p_key_holder,
    "panel_void": _p_panel_void,
    "console_refused": _p_informational,
    "software_verified": _p_informational,
    "device_recovered": _p_device_recovered,
    "config_pending": _p_informational,
    "training": _p_informational,
    "floor_link": _p_floor_link,
    "floor_command": _p_floor_command,
    "link_state": _p_link_state,
    "link_hit_locked": _p_link_hit_locked,
    "table_opened": _p_table_opened,
    "table_closed": _p_table_closed,
    "maintenance_entered": _p_maintenance_entered,
    "maintenance_exited": _p_maintenance_exited,
    "config_changed": _p_config_changed,
    "meter_corrected": _p_meter_corrected,
    "light_test": _p_light_test,
    "display_test": _p_display_test,
    "shuffle_complete": _p_shuffle_complete,
    "chip_detected": _p_chip_detected,
    "bank_accepted": _p_bank_accepted,
    "bank_released": _p_bank_released,
    "lockout_pressed": _p_lockout_pressed,
    "pai_gow_wagers": _p_pai_gow_wagers,
    "chips_confirmed": _p_chips_confirmed,
    "chips_mismatch": _p_chips_mismatch,
    "chips_resolved": _p_chips_resolved,
    "rng_activated": _p_rng_activated,
    "rng_drawn": _p_rng_drawn,
    "rng_void": _p_rng_void,
    "shake_detected": _p_shake_detected,
    "lid_lifted_by_bank": _p_lid_lifted_by_bank,
    "dice_position_entered": _p_dice_position_entered,
    "side_wagers": _p_side_wagers,
    "side_wagers_settled": _p_side_wagers_settled,
    "dealt": _p_dealt,
    "three_card_settled": _p_three_card_settled,
    "play_complete": _p_play_complete,
    "progressive_outcome": _p_progressive_outcome,
    "hit_validated": _p_hit_validated,
    "hit_voided": _p_hit_voided,
    "round_completed": _p_round_completed,
    "fault_raised": _p_fault_raised,
    "fault_cleared": _p_fault_cleared,
    "deadline": _p_deadline,
}
assert set(_PLANNERS) == set(EVENT_FIELDS) == set(S.TRANSITIONS)


def _entry_parts(entry: Any) -> tuple[str, dict[str, Any], int]:
    if isinstance(entry, Mapping):
        etype, data, ts = entry.get("type"), entry.get("data"), entry.get("ts_ms", 0)
    else:
        etype = getattr(entry, "type", None)
        data = getattr(entry, "data", None)
        ts = getattr(entry, "ts_ms", 0)
    clean = {k: v for k, v in dict(data or {}).items() if k != "effects"}
    return str(etype), clean, int(ts or 0)


def replay(
    config: GameConfig, entries: Iterable[Any]
) -> tuple[dict[str, JSON], dict[str, dict[str, JSON]]]:
    """Rebuild the state from journaled entries (``type``, ``data`` minus "effects", ``ts_ms``;
    attributes or keys). Returns (snapshot, meters) to compare with the journal's last ones."""
    m = RoundMachine(config)
    for entry in entries:
        etype, data, ts = _entry_parts(entry)
        m.step(Event(etype, data), ts)
    return m.snapshot(), m.meters()


# The round's contract, re-exported for the owner, the journal tools and the docs.
__all__ = [
    "EFFECT_TYPES",
    "EVENT_FIELDS",
    "FAULT_CODES",
    "PANEL_SUPERVISOR",
    "STATE_TABLE",
    "EventRecord",
    "RoundMachine",
    "rejected",
    "replay",
]
