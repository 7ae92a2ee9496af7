"""The round of one pai gow table as a pure, deterministic state machine (issue 3).

Responsible for: deciding what every input event means in the current state of the round and
answering with effects (plain dicts) for the owner thread to journal and then apply; keeping the
round's private data (wagers, starting position, hidden hands, pending hits), the progressive
meters and the bank rotation; dumping and restoring all of it as JSON.

Must never: do I/O (beyond loading the pay table named in the configuration), read a clock, draw a
random number, start a thread, raise on bad input (a bad or untimely event is answered with a
``rejected`` effect the owner journals), or let a card identity reach an effect or the public view.

API (stable contract for the controller's owner loop and the simulator)
----------------------------------------------------------------------
    m = RoundMachine(config)                     # GameConfig; fresh table: state "Closed"
    effects = m.step(Event(type, data), now_ms)  # list[Effect]; never raises
    m.snapshot() -> dict                         # JSON-able, complete (private: holds hidden hands)
    m.public_view() -> dict                      # the snapshot without card identities
    RoundMachine.restore(config, snapshot)       # set_state + data; then apply m.outputs()
    m.outputs() -> list[Effect]                  # lights/display/acceptors (+ re-issued requests)
    m.meters() -> dict[str, dict]                # per level, see fsm/round/meters.py
    m.next_deadline_ms() -> int | None           # owner posts Event("deadline", {}) when reached
    m.state -> str                               # e.g. "Open_Betting" (separator "_")
    m.round_id -> int                            # 0 before the first round; +1 per round
    replay(config, entries) -> (snapshot, meters)   # also in fsm/round/replay.py

Where things are: the event, effect and fault catalogue in ``catalogue.py``; field checks in
``checks.py``; a round's private data in ``rounddata.py``; what each event means, one module per
part of the round: ``plan_table.py`` (open, close, maintenance), ``plan_betting.py`` (shuffle,
chips, bank, lock-out, count), ``plan_start.py`` (RNG, dice, 1-7 side wager), ``plan_deal.py``
(dealing, play, outcomes, hits), ``plan_faults.py``, ``plan_panel.py`` (NEXT, VOID, key); the
states and legal transitions in ``states.py``. This module holds the machine that ties them.

Events (Event.type -> data fields) are the journal entry types: EVENT_FIELDS. Effects: EFFECT_TYPES.
Positions 1..6 are the betting areas (acceptors); seat 0 is the dealer.

``round_completed``: when a round is done the machine enters Open_RoundComplete and emits
``{"type": "post", "event": {"type": "round_completed", "data": {"round_id": n}}}``. The owner
posts that event like any input (ahead of the queue); it is journaled as an entry of type
``round_completed`` (the journal counts those as rounds) and moves the machine on to Open_Betting,
or Open_Shuffling when the deck is due. After a restart in Open_RoundComplete ``outputs()`` asks
for it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fsm.round import states as S
from fsm.round.banking import BankRotation
from fsm.round.catalogue import (
    AREAS,
    EFFECT_TYPES,
    EVENT_FIELDS,
    FAULT_CODES,
    IN_ROUND_AFTER_LOCKOUT,
    SNAPSHOT_VERSION,
    STACKS,
)
from fsm.round.checks import Plan, _Reject, rejected
from fsm.round.config import GameConfig
from fsm.round.events import JSON, Effect, Event
from fsm.round.meters import UNIT, LevelMeters
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
from fsm.round.plan_faults import _p_deadline, _p_fault_cleared, _p_fault_raised
from fsm.round.plan_panel import (
    PANEL_SUPERVISOR,
    _p_informational,
    _p_panel_next,
    _p_panel_void,
    _p_power_up,
    _p_shaker_lid,
    _p_supervisor_key,
)
from fsm.round.plan_start import (
    _p_dice_position_entered,
    _p_lid_lifted_by_bank,
    _p_rng_drawn,
    _p_rng_void,
    _p_shake_detected,
    _p_side_wagers,
    _p_side_wagers_settled,
)
from fsm.round.plan_table import (
    _p_config_changed,
    _p_display_test,
    _p_light_test,
    _p_maintenance_entered,
    _p_maintenance_exited,
    _p_meter_corrected,
    _p_table_closed,
    _p_table_opened,
)
from fsm.round.position import (
    delivery_order,
    seat_for_number,
    three_card_number,
    three_card_order,
)
from fsm.round.rounddata import RoundData

_LEGAL: dict[str, frozenset[str]] = {s: frozenset(S.legal_triggers(s)) for s in S.LEAF_STATES}


class RoundMachine:
    """One table's round. Build with a GameConfig; drive only from the owner thread."""

    def __init__(self, config: GameConfig, snapshot: Mapping[str, JSON] | None = None) -> None:
        self._config = config
        self._model = S.Model(S.CLOSED, self._apply)
        self._round_id = 0
        self._round_done = True  # the next Betting starts a new round id
        self._rounds_since_shuffle = 0
        self._r = RoundData()
        self._meters: dict[str, LevelMeters] = {
            lvl.name: LevelMeters.new(lvl) for lvl in config.levels
        }
        self._bank = BankRotation()
        self._fault: dict[str, Any] | None = None
        self._key_on = False  # the supervisor key switch of the dealer panel
        self._deadline: list[Any] | None = None  # [ms, code, device]
        self._effects: list[Effect] = []
        self._action: Callable[[], None] | None = None
        self._now = 0
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
        return self._round_id

    @property
    def config(self) -> GameConfig:
        return self._config

    def step(self, event: Event, now_ms: int) -> list[Effect]:
        """Apply one event; return its effects. Never raises."""
        etype = getattr(event, "type", None)
        if not isinstance(etype, str):
            return [rejected(str(etype), "type: an event type must be a string")]
        raw = getattr(event, "data", None)
        if not isinstance(raw, Mapping):
            return [rejected(etype, "data: must be a mapping")]
        planner = _PLANNERS.get(etype)
        if planner is None:
            return [rejected(etype, f"unknown event type {etype!r}"[:120])]
        state = self.state
        if etype not in _LEGAL[state]:
            return [rejected(etype, self._untimely(etype, state))]
        if isinstance(now_ms, bool) or not isinstance(now_ms, int):
            return [rejected(etype, "now_ms: the owner's clock must be an integer")]
        self._now = now_ms
        try:
            route, action = planner(self, raw)
        except _Reject as r:
            return [rejected(etype, str(r))]
        except Exception as e:  # a planner bug must not take the table down
            return [rejected(etype, f"internal error while checking: {type(e).__name__}")]
        before_out = self._output_state()
        saved = self._dump()
        self._effects = []
        self._action = action
        self._model.route = route
        S.fire(self._model, etype)
        self._action = None
        if self._model.error is not None:
            err = self._model.error
            self._load(saved)
            return [rejected(etype, f"internal error: {type(err).__name__}: {err}"[:200])]
        effects = self._effects
        self._effects = []
        new_state = self.state
        if new_state != state:
            self._deadline = self._deadline_for(new_state)
            effects.extend(self._entry_effects(new_state))
        after_out = self._output_state()
        for b, a in zip(before_out, after_out, strict=True):
            if a != b or new_state != state:
                effects.append(a)
        return effects

    def snapshot(self) -> dict[str, JSON]:
        return self._dump()

    def public_view(self) -> dict[str, JSON]:
        """The snapshot for readers (web page, SAS): no card identity, meters as reported."""
        d = self._dump(hidden=False)
        d["meters"] = self.meters()
        d["lights"] = self._lights()
        d["display"] = self._glyph()
        return d

    def meters(self) -> dict[str, dict[str, JSON]]:
        return {name: m.report() for name, m in self._meters.items()}

    def next_deadline_ms(self) -> int | None:
        return None if self._deadline is None else int(self._deadline[0])

    def outputs(self) -> list[Effect]:
        """Re-derive the outputs of the committed state (after a restart): acceptors, lights,
        display, and the requests the state is waiting on (shuffle, draw_rng, round_completed).
        A dispense is never re-issued: a shoe interrupted mid-deal times out into a fault and
        the round is voided."""
        out: list[Effect] = list(self._output_state())
        state = self.state
        if state == S.SHUFFLING:
            out.append({"type": "shuffle"})
        elif state == S.RNG and self._r.rng_value is None:
            out.append({"type": "draw_rng"})
        elif state == S.ROUND_COMPLETE:
            out.append(self._post_round_completed())
        return out

    # --- snapshot --------------------------------------------------------------------------

    def _dump(self, hidden: bool = True) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "table_id": self._config.table_id,
            "state": self.state,
            "round_id": self._round_id,
            "round_done": self._round_done,
            "rounds_since_shuffle": self._rounds_since_shuffle,
            "round": self._r.to_json(hidden),
            "bank": self._bank.to_json(),
            "fault": None
            if self._fault is None
            else {
                "faults": [dict(f) for f in self._fault["faults"]],
                "interrupted": self._fault["interrupted"],
            },
            "deadline": None if self._deadline is None else list(self._deadline),
            "supervisor_key": self._key_on,
            "meters": {n: m.to_json() for n, m in self._meters.items()},
            "config": self._config.to_mapping(),
        }

    def _load(self, snap: Mapping[str, Any]) -> None:
        if snap.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"snapshot.version: expected {SNAPSHOT_VERSION}")
        cfg = snap.get("config")
        if isinstance(cfg, Mapping) and cfg != self._config.to_mapping():
            self._config = GameConfig.from_mapping(cfg, "snapshot.config")
        S.set_state(self._model, str(snap["state"]))
        self._round_id = int(snap["round_id"])
        self._round_done = bool(snap["round_done"])
        self._rounds_since_shuffle = int(snap["rounds_since_shuffle"])
        self._r = RoundData.from_json(snap["round"])
        self._bank = BankRotation.from_json(dict(snap["bank"]))
        f = snap["fault"]
        self._fault = (
            None
            if f is None
            else {"faults": [dict(x) for x in f["faults"]], "interrupted": f["interrupted"]}
        )
        self._deadline = None if snap["deadline"] is None else list(snap["deadline"])
        self._key_on = bool(snap.get("supervisor_key", False))
        self._meters = {n: LevelMeters.from_json(dict(m)) for n, m in snap["meters"].items()}

    # --- outputs ---------------------------------------------------------------------------

    def _lights(self) -> list[str]:
        state = self.state
        if state in (S.CLOSED, S.MAINTENANCE, S.FAULT, S.SHUFFLING):
            return ["off"] * AREAS
        if state == S.BETTING:  # NY (d)(4): the player checks the light of the wager
            return ["lit" if a in self._r.wagers else "attract" for a in range(1, AREAS + 1)]
        lights = ["locked" if a in self._r.wagers else "off" for a in range(1, AREAS + 1)]
        if state == S.JACKPOT_PENDING:
            for p in self._r.pending:
                lights[p["position"] - 1] = "blink"
        return lights

    def _glyph(self) -> str:
        state = self.state
        if state == S.FAULT:
            return "F"
        if state in (S.CLOSED, S.MAINTENANCE):
            return " "
        if state == S.JACKPOT_PENDING:
            return "P"
        if state in (S.SHUFFLING, S.BETTING):
            return "-"
        n = self._r.start_number
        return "L" if n is None else str(n)

    def _output_state(self) -> tuple[Effect, Effect, Effect]:
        return (
            {"type": "acceptors", "armed": self.state == S.BETTING},
            {"type": "lights", "states": self._lights()},
            {"type": "display", "glyph": self._glyph()},
        )

    def _entry_effects(self, state: str) -> list[Effect]:
        if state == S.SHUFFLING:
            return [{"type": "shuffle"}]
        if state == S.RNG and self._r.rng_value is None:
            return [{"type": "draw_rng"}]
        if state == S.DEALING:
            if self._config.three_card_bonus:  # NY 5324.41(n)(2), (n)(4)-(5): stacks of three
                self._r.stage = "three"
                return [{"type": "dispense", "stacks": len(self._delivery_seats()), "cards": 3}]
            self._r.stage = "seven"
            return [{"type": "dispense", "stacks": STACKS, "cards": 7}]
        if state == S.ROUND_COMPLETE:
            return [self._post_round_completed()]
        if state == S.BETTING:
            order = self._bank.offer_order() if self._config.player_banking else []
            return [{"type": "bank_offer", "order": order}] if order else []
        return []

    def _post_round_completed(self) -> Effect:
        return {
            "type": "post",
            "event": {"type": "round_completed", "data": {"round_id": self._round_id}},
        }

    def _deadline_for(self, state: str) -> list[Any] | None:
        c = self._config
        if state == S.SHUFFLING:
            return [self._now + c.shuffle_timeout_ms, "SHUFFLER_TIMEOUT", "shuffler"]
        if state == S.RNG and self._r.rng_value is None:
            return [self._now + c.rng_timeout_ms, "RNG_TIMEOUT", "rng"]
        if state == S.DEALING:
            return [self._now + c.dispense_timeout_ms, "SHOE_TIMEOUT", "shoe"]
        return None

    def _untimely(self, etype: str, state: str) -> str:
        if etype == "chip_detected":
            if state in IN_ROUND_AFTER_LOCKOUT:
                return (
                    "late chip: no progressive wager is accepted after the lock-out "
                    "(NY 5324.41(k)(2))"
                )
            if state == S.FAULT:
                return "progressive wagers are refused while the table is in fault"
            if state == S.SHUFFLING:
                return "acceptors are not armed while the deck is shuffled"
            return "the table is closed: no progressive wager is accepted"
        if etype in ("config_changed", "meter_corrected", "light_test", "display_test"):
            return f"{etype} only in Maintenance, with the table closed (state {state})"
        return f"{etype} is not accepted in state {state}"

    # --- transitions callback ----------------------------------------------------------------

    def _apply(self, _event_data: Any) -> None:
        if self._action is not None:
            self._action()

    def _emit(self, effect: Effect) -> None:
        self._effects.append(effect)

    def _enter_fault(self, code: str, device: str, detail: str, interrupted: str) -> None:
        f = {"code": code, "device": device, "detail": detail}
        if self._fault is None:
            self._fault = {"faults": [f], "interrupted": interrupted}
        else:
            self._fault["faults"].append(f)
        self._emit({"type": "alert", "to": "supervisor", "code": code, "detail": detail})

    def _begin_round(self) -> None:
        if self._round_done:
            self._round_id += 1
            self._round_done = False
        self._r = RoundData()

    def _contribute(self) -> None:
        r = self._r
        n = len(r.wagers)
        if n == 0:
            return
        wager = self._config.progressive_wager_cents
        for lvl in self._config.levels:
            m = self._meters[lvl.name]
            before = m.cents()
            c = m.contribute(lvl, n, wager)
            r.contributions.append(c)
            # the wagers and what they cost, as they stood now: reports add these up and
            # never re-derive which chips counted or what a wager cost at the time
            self._emit_movement(
                lvl.name, "contribution", before, m.cents(), 0, wagers=n, wagered_cents=n * wager
            )

    def _emit_movement(
        self,
        level: str,
        kind: str,
        before: tuple[int, int, int],
        after: tuple[int, int, int],
        house_units: int,
        **extra: Any,
    ) -> None:
        e: Effect = {
            "type": "meter_movement",
            "level": level,
            "kind": kind,
            "round_id": self._round_id,
            "display_cents": after[0] - before[0],
            "overflow_cents": after[1] - before[1],
            "reserve_cents": after[2] - before[2],
            "house_cents": house_units // UNIT,
        }
        e.update(extra)
        self._emit(e)

    def _void_round(self, reason: str) -> None:
        r = self._r
        for c in r.contributions:
            m = self._meters[c.level]
            before = m.cents()
            m.reverse(c)
            self._emit_movement(c.level, "reversal", before, m.cents(), 0)
        for area, cents in sorted(r.wagers.items()):
            self._emit({"type": "refund", "position": area, "cents": cents, "reason": reason})
        self._emit({"type": "round_voided", "round_id": self._round_id, "reason": reason})
        self._bank.new_game()  # the void replaces the deck: the game starts again (h)(2)
        self._round_done = True
        self._r = RoundData()

    def _set_start(self, number: int) -> None:
        r = self._r
        r.start_number = number
        r.start_seat = seat_for_number(number, self._bank.current)
        self._emit(
            {
                "type": "starting_position",
                "by": self._config.start_mode,
                "number": number,
                "seat": r.start_seat,
                "order": delivery_order(r.start_seat),
                "bank": self._bank.current,
            }
        )

    def _set_start_three_card(self) -> None:
        """NY 5324.41(n)(4): the starting position is the player position farthest to the
        dealer's left at which a pai gow wager was placed; no number is drawn or counted."""
        r = self._r
        order = self._delivery_seats()
        r.start_seat = order[0]
        r.start_number = three_card_number(order[0])
        self._emit(
            {
                "type": "starting_position",
                "by": "three_card",
                "number": r.start_number,
                "seat": r.start_seat,
                "order": order,
                "bank": self._bank.current,
            }
        )

    def _delivery_seats(self) -> list[int]:
        """The seats in the order the stacks reach them: with the three-card bonus only the pai
        gow positions, farthest left first, then the dealer ((n)(4)-(5), (n)(7)(ii)); otherwise
        every seat from the starting position, clockwise ((f)(3)(iii))."""
        r = self._r
        if self._config.three_card_bonus and r.pai_gow:
            return three_card_order(r.pai_gow)
        return delivery_order(r.start_seat if r.start_seat is not None else 0)

    def _start_route(self) -> str:
        if self._config.three_card_bonus:
            return S.DEALING
        return S.RNG if self._config.start_mode == "rng" else S.DICE

    def _after_rng_route(self) -> str:
        return S.SIDE_WAGERS if self._config.side_wager_offered else S.DEALING

    def _hit_order(self, areas: Iterable[int]) -> list[int]:
        """Simultaneous hits in a deterministic order: the seats in the order the stacks reached
        them, from the starting position (NY 5321.18(b)(3)(iii))."""
        wanted = set(areas)
        order = self._delivery_seats()
        return [s for s in order if s in wanted] + sorted(wanted - set(order))

    def _resolution(self) -> tuple[str, Callable[[], None]]:
        """Settle every wagered area's outcome: fixed amounts not deducted are paid from the chip
        tray now; payouts deducted from the meter go to JackpotPending (k)(3)(iii),(k)(5)."""
        cfg = self._config
        r = self._r
        wager = cfg.progressive_wager_cents
        tray: list[dict[str, Any]] = []
        pending: list[dict[str, Any]] = []
        for area in self._hit_order(r.outcomes):
            line = r.outcomes[area]
            if not line:
                continue
            level = cfg.level_for_line(line).name
            meter = self._meters[level].display_cents
            payout = cfg.table.payout_cents(line, wager, meter)
            hit = {"position": area, "level": level, "line": line}
            if cfg.table.deducted_from_meter(line, wager, payout):
                pending.append(hit)
            else:
                tray.append({**hit, "cents": payout})
        route = S.JACKPOT_PENDING if pending else S.ROUND_COMPLETE

        def act() -> None:
            for t in tray:
                self._meters[t["level"]].pay_from_tray(t["cents"])
                self._emit({"type": "pay", **t, "from": "chip_tray"})
                r.paid.append({**t, "from": "chip_tray"})
            for p in pending:
                self._emit({"type": "hit_pending", **p})
            r.pending = pending
            r.stage = "done"

        return route, act


_PLANNERS: dict[str, Callable[[RoundMachine, Mapping[str, JSON]], Plan]] = {
    "panel_next": _p_panel_next,
    "shaker_lid": _p_shaker_lid,
    "power_up": _p_power_up,
    "supervisor_key": _p_supervisor_key,
    "panel_void": _p_panel_void,
    "console_refused": _p_informational,
    "device_recovered": _p_informational,
    "config_pending": _p_informational,
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
    "RoundMachine",
    "rejected",
    "replay",
]
