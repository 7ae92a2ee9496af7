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
from dataclasses import dataclass, field
from typing import Any

from fsm.cards import DECK_SIZE, JOKER, CardError, parse_card
from fsm.events import JSON, Effect, Event
from fsm.round import states as S
from fsm.round.banking import BankRotation
from fsm.round.config import GameConfig, with_changes
from fsm.round.meters import UNIT, Contribution, LevelMeters
from fsm.round.position import (
    delivery_order,
    dice_number,
    seat_for_number,
    side_wager_payout_cents,
    three_card_number,
    three_card_order,
)

SNAPSHOT_VERSION = 1
AREAS = 6
CARDS_PER_HAND = 7
STACKS = 7

# ---------------------------------------------------------------------------------------------
# Event types and their data fields (name -> (required fields, optional fields)).
EVENT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "table_opened": (("supervisor",), ()),
    "table_closed": (("supervisor",), ()),
    "shuffle_complete": (("count",), ()),
    "chip_detected": (("position",), ()),
    "bank_accepted": (("position",), ()),
    "bank_released": ((), ()),
    "lockout_pressed": ((), ()),
    "pai_gow_wagers": (("positions",), ()),
    "chips_confirmed": ((), ()),
    "chips_mismatch": (("counted",), ()),
    "chips_resolved": (("supervisor", "positions"), ()),
    "rng_drawn": (("value",), ()),
    "rng_void": (("supervisor", "reason"), ()),
    "shake_detected": ((), ()),
    "lid_lifted_by_bank": ((), ()),
    "dice_position_entered": (("total",), ()),
    "side_wagers": (("bets",), ()),
    "side_wagers_settled": ((), ()),
    "dealt": (("remaining",), ("hands", "stacks")),
    "three_card_settled": ((), ()),
    "play_complete": ((), ()),
    "progressive_outcome": (("position", "line"), ()),
    "hit_validated": (("position", "supervisor"), ()),
    "hit_voided": (("position", "supervisor", "reason"), ()),
    "round_completed": (("round_id",), ()),
    "fault_raised": (("code", "device", "detail"), ()),
    "fault_cleared": (("supervisor",), ("void",)),
    "maintenance_entered": (("supervisor",), ()),
    "maintenance_exited": (("supervisor",), ()),
    "config_changed": (("supervisor", "changes"), ()),
    "meter_corrected": (("level", "meter", "delta_cents", "reason", "supervisor"), ()),
    "light_test": ((), ()),
    "display_test": ((), ()),
    "deadline": ((), ()),
    "panel_next": ((), ()),
    "panel_void": ((), ()),
    "shaker_lid": (("lifted",), ()),
    "power_up": ((), ("software_hash", "storage", "restored_seq")),
    "supervisor_key": (("on",), ()),
    "device_recovered": (("device",), ("code",)),
}

EFFECT_TYPES: dict[str, str] = {
    "rejected": '{"event": str, "reason": str} the event was refused; nothing changed',
    "lights": '{"states": [6 x "off"|"attract"|"lit"|"locked"|"blink"]} acceptor lights 1..6',
    "display": '{"glyph": str} "1".."7", " " blank, "-" idle, "L" locked out, "F" fault, '
    '"P" jackpot pending',
    "acceptors": '{"armed": bool} the acceptors take progressive wagers or not',
    "shuffle": "{} command the shuffler",
    "draw_rng": "{} the owner draws 1..7 with the OS CSPRNG and posts rng_drawn",
    "dispense": '{"stacks": 7, "cards": 7} command the shoe; with the three-card bonus '
    '{"stacks": n + 1, "cards": 3} then {"stacks": n + 1, "cards": 4}, n pai gow positions',
    "alert": '{"to": "supervisor"|"dealer", "code": str, "detail": str}',
    "starting_position": '{"number": 1..7, "seat": 0..6, "order": [seats], "bank": int|None} '
    "order: 7 seats, or with the three-card bonus the pai gow positions and the dealer",
    "bank_offer": '{"order": [areas]} offer the bank in this order (h)(3)',
    "bank": '{"position": int|None} who banks this round (None: the house)',
    "meter_movement": '{"level", "kind", "round_id", "display_cents", "overflow_cents", '
    '"reserve_cents", "house_cents"} whole-cent deltas; kind: contribution|payout|reset|'
    "reversal|correction",
    "side_wager_settled": '{"number", "results": [{"position","number","cents","payout_cents"}]}',
    "hit_pending": '{"position", "level", "line"} a payout deducted from the meter awaits a '
    "supervisor (k)(3)(iii)",
    "pay": '{"position", "level", "line", "cents", "from": "meter"|"chip_tray"}',
    "refund": '{"position", "cents", "reason"} a voided round returns the progressive wager',
    "round_voided": '{"round_id", "reason"}',
    "post": '{"event": {"type", "data"}} the owner posts this event next',
    "config_changed": '{"changes": [{"key", "old", "new"}], "supervisor"}',
}

FAULT_CODES: dict[str, str] = {
    "DECK_COUNT_<n>": "the shuffler counted n != 53 cards; the deck never deals (to Shuffling)",
    "MISDEAL_REMAINING_<n>": "the shoe left n cards (4 expected; with the three-card bonus "
    "53 - 3(p + 1) after the threes, 53 - 7(p + 1) after the fours, p pai gow positions)",
    "SHUFFLER_TIMEOUT": "no shuffle_complete within shuffle_timeout_ms",
    "RNG_TIMEOUT": "no rng_drawn within rng_timeout_ms",
    "SHOE_TIMEOUT": "no dealt within dispense_timeout_ms",
    "DEAL_INTERRUPTED": "the controller restarted while the shoe was dealing (due at power_up)",
    "(device codes)": "fault_raised from drivers/controller: any code, journaled as given",
}

# Where a cleared fault goes back to. Rounds interrupted while dealing are always voided;
# the others resume, or are voided when the supervisor asks (fault_cleared "void": true)
# and no progressive wager has been settled yet.
VOIDABLE = frozenset(
    {S.BETTING, S.LOCKED_OUT, S.RNG, S.DICE, S.SIDE_WAGERS, S.DEALING, S.PLAY, S.SETTLEMENT}
)
ALWAYS_VOID = frozenset({S.DEALING})
IN_ROUND_AFTER_LOCKOUT = frozenset(
    {
        S.LOCKED_OUT,
        S.RNG,
        S.DICE,
        S.SIDE_WAGERS,
        S.DEALING,
        S.PLAY,
        S.SETTLEMENT,
        S.JACKPOT_PENDING,
        S.ROUND_COMPLETE,
    }
)
_LEGAL: dict[str, frozenset[str]] = {s: frozenset(S.legal_triggers(s)) for s in S.LEAF_STATES}


class _Reject(Exception):
    """Raised by a planner: the event is refused with this reason (never escapes step)."""


Plan = tuple[str, Callable[[], None]]


def rejected(event_type: str, reason: str) -> Effect:
    return {"type": "rejected", "event": event_type, "reason": reason}


# --- field checks (raise _Reject naming the field) ------------------------------------------


def _field(data: Mapping[str, JSON], key: str) -> JSON:
    if key not in data:
        raise _Reject(f"{key}: required")
    return data[key]


def _int(data: Mapping[str, JSON], key: str, lo: int, hi: int | None = None) -> int:
    v = _field(data, key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Reject(f"{key}: must be an integer, not {v!r}"[:120])
    if v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise _Reject(f"{key}: must be {rng}, not {v}")
    return v


def _text(data: Mapping[str, JSON], key: str) -> str:
    v = _field(data, key)
    if not isinstance(v, str) or not v.strip():
        raise _Reject(f"{key}: must be a non-empty string")
    return v


def _position(data: Mapping[str, JSON], key: str = "position") -> int:
    return _int(data, key, 1, AREAS)


@dataclass
class RoundData:
    """Private data of the current round (JSON via to_json/from_json)."""

    wagers: dict[int, int] = field(default_factory=dict)  # area -> cents (lit acceptors)
    mismatch: int | None = None  # chips counted when they did not match the lights
    contributions: list[Contribution] = field(default_factory=list)
    rng_value: int | None = None
    rng_draws: int = 0  # values drawn this round (1 unless a supervisor voided a draw)
    rng_voids: list[dict[str, Any]] = field(default_factory=list)
    shakes: int = 0
    start_number: int | None = None
    start_seat: int | None = None
    side_bets: list[list[int]] | None = None  # [area, number, cents] recorded before the draw
    side_results: list[dict[str, Any]] | None = None
    stage: str = ""  # dealing: "" not started, "three", "three_dealt", "four", "seven", "done"
    # the betting areas holding a pai gow wager, entered by the dealer (three-card bonus, (n)(4))
    pai_gow: list[int] | None = None
    hands: dict[int, list[int]] = field(default_factory=dict)  # seat -> cards: HIDDEN
    threes: dict[int, list[int]] = field(default_factory=dict)  # seat -> 3 cards read: HIDDEN
    outcomes: dict[int, str | None] = field(default_factory=dict)  # area -> line / None (lost)
    pending: list[dict[str, Any]] = field(default_factory=list)  # hits awaiting a supervisor
    paid: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, hidden: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "wagers": {str(k): v for k, v in sorted(self.wagers.items())},
            "mismatch": self.mismatch,
            "contributions": [c.to_json() for c in self.contributions],
            "rng_value": self.rng_value,
            "rng_draws": self.rng_draws,
            "rng_voids": [dict(v) for v in self.rng_voids],
            "shakes": self.shakes,
            "start_number": self.start_number,
            "start_seat": self.start_seat,
            "side_bets": None if self.side_bets is None else [list(b) for b in self.side_bets],
            "side_results": None
            if self.side_results is None
            else [dict(x) for x in self.side_results],
            "stage": self.stage,
            "pai_gow": None if self.pai_gow is None else list(self.pai_gow),
            "outcomes": {str(k): v for k, v in sorted(self.outcomes.items())},
            "pending": [dict(p) for p in self.pending],
            "paid": [dict(p) for p in self.paid],
            "hands_known": bool(self.hands),
        }
        if hidden:
            d["hands"] = {str(k): list(v) for k, v in sorted(self.hands.items())}
            d["threes"] = {str(k): list(v) for k, v in sorted(self.threes.items())}
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RoundData:
        return cls(
            wagers={int(k): int(v) for k, v in d["wagers"].items()},
            mismatch=d["mismatch"],
            contributions=[Contribution.from_json(c) for c in d["contributions"]],
            rng_value=d["rng_value"],
            rng_draws=d["rng_draws"],
            rng_voids=[dict(v) for v in d["rng_voids"]],
            shakes=d["shakes"],
            start_number=d["start_number"],
            start_seat=d["start_seat"],
            side_bets=None if d.get("side_bets") is None else [list(b) for b in d["side_bets"]],
            side_results=None
            if d["side_results"] is None
            else [dict(x) for x in d["side_results"]],
            stage=d["stage"],
            pai_gow=None if d.get("pai_gow") is None else [int(a) for a in d["pai_gow"]],
            hands={int(k): list(v) for k, v in d.get("hands", {}).items()},
            threes={int(k): list(v) for k, v in d.get("threes", {}).items()},
            outcomes={int(k): v for k, v in d["outcomes"].items()},
            pending=[dict(p) for p in d["pending"]],
            paid=[dict(p) for p in d["paid"]],
        )


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
            self._emit_movement(lvl.name, "contribution", before, m.cents(), 0)

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
        self._bank.round_voided()
        self._round_done = True
        self._r = RoundData()

    def _set_start(self, number: int) -> None:
        r = self._r
        r.start_number = number
        r.start_seat = seat_for_number(number, self._bank.current)
        self._emit(
            {
                "type": "starting_position",
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


# --- planners: (machine, data) -> (route, action); raise _Reject to refuse ------------------


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


def _p_shuffle_complete(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    count = _int(d, "count", 0, 9999)
    if count != DECK_SIZE:

        def fault() -> None:
            m._enter_fault(
                f"DECK_COUNT_{count}",
                "shuffler",
                f"the shuffler counted {count} cards, 53 required; the deck must not deal",
                S.SHUFFLING,
            )

        return S.FAULT, fault

    def act() -> None:
        m._rounds_since_shuffle = 0
        if m._config.bank_start_of_game == "every_shuffle":
            m._bank.new_game()
        m._begin_round()

    return S.BETTING, act


def _p_chip_detected(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    area = _position(d)
    if area in m._r.wagers:
        raise _Reject(f"position {area} is already lit: one progressive wager per acceptor")
    cents = m._config.progressive_wager_cents

    def act() -> None:
        m._r.wagers[area] = cents

    return S.INTERNAL, act


def _p_bank_accepted(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    if not m._config.player_banking:
        raise _Reject("player banking is not offered at this table (game.player_banking)")
    area = _position(d)
    why = m._bank.refusal(area)
    if why:
        raise _Reject(why)

    def act() -> None:
        m._bank.current = area
        m._emit({"type": "bank", "position": area})

    return S.INTERNAL, act


def _p_bank_released(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    if m._bank.current is None:
        raise _Reject("no player banks this round")

    def act() -> None:
        m._bank.current = None
        m._emit({"type": "bank", "position": None})

    return S.INTERNAL, act


def _p_lockout_pressed(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    return S.LOCKED_OUT, lambda: None


def _three_card_ready(m: RoundMachine, wagered: Iterable[int]) -> None:
    """With the three-card bonus the deal needs the dealer's pai gow positions, and every
    progressive wager must be at one of them (NY 5324.41(k)(1), (n)(4)-(5))."""
    if not m._config.three_card_bonus:
        return
    pai_gow = m._r.pai_gow
    if not pai_gow:
        raise _Reject(
            "pai_gow_wagers: enter the positions holding a pai gow wager before the deal; the "
            "stacks go only to them (NY 5324.41(n)(4), (n)(5))"
        )
    outside = sorted(set(wagered) - set(pai_gow))
    if outside:
        raise _Reject(
            f"position {outside[0]}: a progressive wager without a pai gow wager; only a player "
            "with a pai gow wager may make one (NY 5324.41(k)(1)): enter it in pai_gow_wagers "
            "or resolve the wagers"
        )


def _after_count(m: RoundMachine) -> None:
    """The chip count is confirmed: contribute; with the three-card bonus the starting position
    is known at once (no RNG, no dice, (n)(4))."""
    m._contribute()
    if m._config.three_card_bonus:
        m._set_start_three_card()


def _p_pai_gow_wagers(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The dealer enters the betting areas holding a pai gow wager (the controller does not see
    the main game's chips). Only with the three-card bonus, where the stacks go to them alone
    (NY 5324.41(n)(4)-(5), (n)(7)(ii)); replaceable until the chip count is confirmed. Every
    lit progressive wager must be among them (NY 5324.41(k)(1))."""
    if not m._config.three_card_bonus:
        raise _Reject(
            "pai gow positions are entered only with the three-card bonus (game.three_card_bonus)"
        )
    raw = _field(d, "positions")
    if not isinstance(raw, list) or not raw:
        raise _Reject("positions: must be a non-empty list of betting areas 1..6")
    positions: list[int] = []
    for i, p in enumerate(raw):
        if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= AREAS:
            raise _Reject(f"positions[{i}]: must be a betting area 1..6, not {p!r}"[:120])
        if p in positions:
            raise _Reject(f"positions[{i}]: {p} appears twice")
        positions.append(p)
    outside = sorted(set(m._r.wagers) - set(positions))
    if outside:
        raise _Reject(
            f"positions: position {outside[0]} has a progressive wager, so it holds a pai gow "
            "wager too (NY 5324.41(k)(1)): include it"
        )

    def act() -> None:
        m._r.pai_gow = sorted(positions)

    return S.INTERNAL, act


def _p_chips_confirmed(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    if m._r.mismatch is not None:
        raise _Reject("the chip count did not match the lights: a supervisor resolves it")
    _three_card_ready(m, m._r.wagers)
    return m._start_route(), lambda: _after_count(m)


def _p_chips_mismatch(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    counted = _int(d, "counted", 0, 64)
    lit = len(m._r.wagers)
    if counted == lit:
        raise _Reject(f"counted: {counted} chips match {lit} lights; send chips_confirmed")

    def act() -> None:
        m._r.mismatch = counted
        m._emit(
            {
                "type": "alert",
                "to": "supervisor",
                "code": "CHIP_COUNT_MISMATCH",
                "detail": f"{counted} chips counted, {lit} acceptor lights lit (NY 5324.41(k)(2))",
            }
        )

    return S.INTERNAL, act


def _p_chips_resolved(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    _text(d, "supervisor")
    if m._r.mismatch is None:
        raise _Reject("no chip count mismatch to resolve")
    raw = _field(d, "positions")
    if not isinstance(raw, list):
        raise _Reject("positions: must be a list of lit positions holding a wager")
    positions: list[int] = []
    for i, p in enumerate(raw):
        if isinstance(p, bool) or not isinstance(p, int) or p not in m._r.wagers:
            raise _Reject(f"positions[{i}]: {p!r} is not a lit position")
        if p in positions:
            raise _Reject(f"positions[{i}]: {p} appears twice")
        positions.append(p)
    _three_card_ready(m, positions)

    def act() -> None:
        r = m._r
        r.wagers = {p: r.wagers[p] for p in sorted(positions)}
        r.mismatch = None
        _after_count(m)

    return m._start_route(), act


def _p_rng_drawn(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    value = _int(d, "value", 1, 7)
    r = m._r
    if m.state == S.FAULT:
        if m._fault is None or m._fault["interrupted"] != S.RNG or r.rng_value is not None:
            raise _Reject("no random number draw is outstanding")

        def keep() -> None:
            r.rng_value = value
            r.rng_draws += 1

        return S.INTERNAL, keep
    if r.rng_value is not None:
        raise _Reject("one draw per round: a redraw only after a supervisor's rng_void")

    def act() -> None:
        r.rng_value = value
        r.rng_draws += 1
        m._set_start(value)

    return m._after_rng_route(), act


def _p_rng_void(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    sup = _text(d, "supervisor")
    reason = _text(d, "reason")
    r = m._r

    def act() -> None:
        r.rng_voids.append({"value": r.rng_value, "supervisor": sup, "reason": reason})
        r.rng_value = None
        r.start_number = None
        r.start_seat = None

    return S.RNG, act


def _p_shake_detected(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    def act() -> None:
        m._r.shakes += 1

    return S.INTERNAL, act


def _p_lid_lifted_by_bank(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    if m._bank.current is None:
        raise _Reject("no player banks this round")

    def act() -> None:
        m._r.shakes = 0
        m._emit(
            {
                "type": "alert",
                "to": "dealer",
                "code": "RESHAKE_REQUIRED",
                "detail": "the bank lifted the lid: cover and re-shake (NY 5324.41(h)(8)(i))",
            }
        )

    return S.INTERNAL, act


def _p_dice_position_entered(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    total = _int(d, "total", 3, 18)
    if m._r.shakes < 3:
        raise _Reject(
            f"the shaker was shaken {m._r.shakes} time(s); at least three before the lid is "
            "removed (NY 5324.41(h)(8)(i), (h)(10)(i))"
        )
    return S.DEALING, lambda: m._set_start(dice_number(total))


def _parse_bets(d: Mapping[str, JSON]) -> list[tuple[int, int, int]]:
    raw = _field(d, "bets")
    if not isinstance(raw, list):
        raise _Reject("bets: must be a list of {position, number, cents}")
    bets: list[tuple[int, int, int]] = []
    for i, b in enumerate(raw):
        if not isinstance(b, Mapping):
            raise _Reject(f"bets[{i}]: must be a mapping with position, number, cents")
        extra = set(b) - {"position", "number", "cents"}
        if extra:
            raise _Reject(f"bets[{i}].{sorted(extra)[0]}: unknown key")
        try:
            bets.append((_position(b), _int(b, "number", 1, 7), _int(b, "cents", 1)))
        except _Reject as e:
            raise _Reject(f"bets[{i}].{e}") from None
    return bets


def _settle_side_wagers(m: RoundMachine, bets: list[tuple[int, int, int]]) -> None:
    """NY 5324.41(j)(2)(iii)-(vi): a bet on the drawn number wins at the configured odds,
    rounded down to the dollar; every other bet loses."""
    number = m._r.rng_value
    odds = m._config.side_wager_odds_fraction
    results = [
        {
            "position": p,
            "number": n,
            "cents": c,
            "payout_cents": side_wager_payout_cents(c, odds) if n == number else 0,
        }
        for p, n, c in bets
    ]
    m._r.side_results = results
    m._emit({"type": "side_wager_settled", "number": number, "results": results})


def _p_side_wagers(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """In LockedOut (before the RNG is activated, (j)(2)(i)): the bets are recorded and settled
    when the dealer confirms after the draw. In SideWagers: recorded and settled at once, unless
    bets were recorded before the draw (they cannot be changed once the number is known)."""
    if not m._config.side_wager_offered:
        raise _Reject("the 1-7 side wager is not offered at this table (game.side_wager)")
    bets = _parse_bets(d)
    r = m._r
    if m.state == S.LOCKED_OUT:

        def record() -> None:
            r.side_bets = [list(b) for b in bets]

        return S.INTERNAL, record
    if r.side_bets is not None:
        raise _Reject(
            "the side wagers were recorded before the draw; confirm with side_wagers_settled"
        )
    return S.DEALING, lambda: _settle_side_wagers(m, bets)


def _p_side_wagers_settled(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    r = m._r

    def act() -> None:
        if r.side_bets is not None:
            _settle_side_wagers(m, [(b[0], b[1], b[2]) for b in r.side_bets])
        else:
            r.side_results = []

    return S.DEALING, act


_SEAT_KEYS = {"dealer": 0, "0": 0, **{str(a): a for a in range(1, AREAS + 1)}}


def _read_card(seat: int, c: Any) -> int:
    if isinstance(c, bool):
        raise _Reject(f"hands: seat {seat} holds something that is not a card")
    if isinstance(c, int) and 0 <= c <= JOKER:
        return c
    if isinstance(c, str):
        try:
            return parse_card(c)
        except CardError:
            raise _Reject(f"hands: seat {seat} holds something that is not a card") from None
    raise _Reject(f"hands: seat {seat} holds something that is not a card")


def _parse_hands(
    m: RoundMachine, d: Mapping[str, JSON], size: int, seen: Iterable[int] = ()
) -> dict[int, list[int]] | None:
    """The cards of one dispense from a card-reading shoe, keyed by seat: ``hands`` maps each
    seat dealt to ``size`` cards, or ``stacks`` lists the stacks in the order dispensed, mapped
    by the delivery order (every seat from the starting position; with the three-card bonus the
    pai gow positions farthest left first, then the dealer). Cards already ``seen`` (the
    three-card stacks) may not appear again. Reasons never name a card."""
    hands_raw = d.get("hands")
    stacks_raw = d.get("stacks")
    if hands_raw is None and stacks_raw is None:
        return None
    order = m._delivery_seats()
    seats: dict[int, Any] = {}
    if hands_raw is not None:
        if not isinstance(hands_raw, Mapping):
            raise _Reject(f"hands: must map positions 1..6 and 'dealer' to {size} cards")
        for k, v in hands_raw.items():
            key = str(k)
            seat = _SEAT_KEYS.get(key)
            if seat is None:
                raise _Reject(f"hands: key {key[:10]!r} is not a position 1..6 or 'dealer'")
            seats[seat] = v
        if set(seats) != set(order):
            if len(order) == STACKS:
                raise _Reject("hands: need all 7 seats (dealer and areas 1..6)")
            raise _Reject(
                f"hands: need exactly the seats dealt: {', '.join(map(str, order[:-1]))} and "
                "'dealer' (NY 5324.41(n)(5))"
            )
    else:
        if not isinstance(stacks_raw, list) or len(stacks_raw) != len(order):
            raise _Reject(f"stacks: must be the {len(order)} stacks in the order dispensed")
        seats = dict(zip(order, stacks_raw, strict=True))
    out: dict[int, list[int]] = {}
    known: set[int] = set(seen)
    for seat, cards in sorted(seats.items()):
        if not isinstance(cards, list) or len(cards) != size:
            raise _Reject(f"hands: seat {seat} must have {size} cards")
        hand: list[int] = []
        for c in cards:
            card = _read_card(seat, c)
            if card in known:
                raise _Reject("hands: a card appears twice")
            known.add(card)
            hand.append(card)
        out[seat] = hand
    return out


def _p_dealt(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The shoe's report of a dispense. Without the three-card bonus 7 stacks of 7 leave 4 cards.
    With it the stacks go to the p pai gow positions and the dealer: 53 - 3(p + 1) cards remain
    after the threes ((n)(4)-(5)), 53 - 7(p + 1) after the fours ((n)(7)(ii)): 4 only with six
    players. Any other count is a misdeal fault."""
    remaining = _int(d, "remaining", 0, DECK_SIZE)
    r = m._r
    if r.stage == "three_dealt":
        raise _Reject("the three-card stacks await three_card_settled")
    if r.stage in ("three", "four"):
        per = 3 if r.stage == "three" else CARDS_PER_HAND
        expected = DECK_SIZE - per * len(m._delivery_seats())
    else:
        expected = DECK_SIZE - STACKS * CARDS_PER_HAND
    if remaining != expected:

        def fault() -> None:
            m._enter_fault(
                f"MISDEAL_REMAINING_{remaining}",
                "shoe",
                f"{remaining} cards remain in the shoe, {expected} expected",
                S.DEALING,
            )

        return S.FAULT, fault
    if r.stage == "three":
        threes = _parse_hands(m, d, 3)

        def three() -> None:
            r.stage = "three_dealt"
            r.threes = threes or {}
            m._deadline = None  # the dealer settles the three-card bonus: no device to wait on

        return S.INTERNAL, three
    if r.stage == "four":
        seen = [c for cards in r.threes.values() for c in cards]
        fours = _parse_hands(m, d, CARDS_PER_HAND - 3, seen)
        hands = (
            {seat: r.threes[seat] + cards for seat, cards in fours.items()}
            if fours is not None and r.threes
            else None
        )
    else:
        hands = _parse_hands(m, d, CARDS_PER_HAND)

    def act() -> None:
        r.stage = "dealt"
        r.threes = {}
        if hands is not None:
            r.hands = hands

    return S.PLAY, act


def _p_three_card_settled(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    if m._r.stage != "three_dealt":
        raise _Reject("no three-card stacks have been dealt")

    def act() -> None:
        m._r.stage = "four"
        m._deadline = [m._now + m._config.dispense_timeout_ms, "SHOE_TIMEOUT", "shoe"]
        # NY 5324.41(n)(7)(ii): stacks of four to the same seats, farthest left first, dealer last
        stacks = len(m._delivery_seats())
        m._emit({"type": "dispense", "stacks": stacks, "cards": CARDS_PER_HAND - 3})

    return S.INTERNAL, act


def _p_play_complete(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    r = m._r
    if not r.wagers:
        return S.ROUND_COMPLETE, lambda: None
    if not r.hands:
        return S.SETTLEMENT, lambda: None
    cfg = m._config
    outcomes: dict[int, str | None] = {}
    default_level = cfg.levels[0].name
    for area in r.wagers:
        meter = m._meters[default_level].display_cents
        outcomes[area] = cfg.table.best_line(
            r.hands[area], meter, cfg.ranking, cfg.progressive_wager_cents
        )
    r.outcomes = outcomes  # planned outcome; reverted by step's rollback only on error
    try:
        route, act = m._resolution()
    finally:
        r.outcomes = {}

    def apply() -> None:
        r.outcomes = dict(outcomes)
        act()

    return route, apply


def _p_progressive_outcome(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    area = _position(d)
    r = m._r
    if area not in r.wagers:
        raise _Reject(f"position {area}: no progressive wager (acceptor light not lit, (k)(3)(i))")
    if area in r.outcomes:
        raise _Reject(f"position {area}: outcome already entered")
    line = _field(d, "line")
    if line in (None, ""):
        line = None
    elif not isinstance(line, str) or line not in m._config.table.line_names:
        raise _Reject(
            f"line: not a line of the pay table; lines: {', '.join(m._config.table.line_names)}"
        )
    assert line is None or isinstance(line, str)
    if len(r.outcomes) + 1 < len(r.wagers):

        def one() -> None:
            r.outcomes[area] = line

        return S.INTERNAL, one
    r.outcomes[area] = line
    try:
        route, act = m._resolution()
    finally:
        del r.outcomes[area]

    def apply() -> None:
        r.outcomes[area] = line
        act()

    return route, apply


def _p_hit_validated(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    area = _position(d)
    sup = _text(d, "supervisor")
    r = m._r
    if not r.pending or r.pending[0]["position"] != area:
        if any(p["position"] == area for p in r.pending):
            first = r.pending[0]["position"]
            raise _Reject(
                f"validate position {first} first: simultaneous hits are paid in order from "
                "the starting position"
            )
        raise _Reject(f"position {area}: no hit awaits validation")
    hit = r.pending[0]
    cfg = m._config
    level = cfg.level(hit["level"])
    wager = cfg.progressive_wager_cents

    def act() -> None:
        lm = m._meters[level.name]
        meter_now = lm.display_cents  # NY 5324.41(k)(6): the meter at the time of payment
        payout = cfg.table.payout_cents(hit["line"], wager, meter_now)
        before = lm.cents()
        house0 = lm.house_funded
        lm.pay_from_meter(payout)
        m._emit_movement(level.name, "payout", before, lm.cents(), lm.house_funded - house0)
        before = lm.cents()
        house0 = lm.house_funded
        fo, fr, fh = lm.reset(level)
        if fo or fr or fh:
            m._emit_movement(level.name, "reset", before, lm.cents(), lm.house_funded - house0)
        record = {
            "table": cfg.table_id,
            "position": area,
            "level": level.name,
            "line": hit["line"],
            "amount_cents": payout,
            "time_ms": m._now,
            "round_id": m._round_id,
            "supervisor": sup,
        }
        lm.record_hit(record)
        m._emit({"type": "pay", **hit, "cents": payout, "from": "meter", "supervisor": sup})
        r.paid.append({**hit, "cents": payout, "from": "meter"})
        r.pending.pop(0)

    return (S.INTERNAL if len(r.pending) > 1 else S.ROUND_COMPLETE), act


def _p_hit_voided(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    area = _position(d)
    sup = _text(d, "supervisor")
    reason = _text(d, "reason")
    r = m._r
    idx = next((i for i, p in enumerate(r.pending) if p["position"] == area), None)
    if idx is None:
        raise _Reject(f"position {area}: no hit awaits validation")

    def act() -> None:
        hit = r.pending.pop(idx)
        r.outcomes[area] = None
        m._emit(
            {
                "type": "alert",
                "to": "supervisor",
                "code": "HIT_VOIDED",
                "detail": f"position {area} {hit['line']} voided by {sup}: {reason}"[:200],
            }
        )

    return (S.INTERNAL if len(r.pending) > 1 else S.ROUND_COMPLETE), act


def _p_round_completed(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    rid = _int(d, "round_id", 0)
    if rid != m._round_id:
        raise _Reject(f"round_id: the round in play is {m._round_id}, not {rid}")
    due = m._rounds_since_shuffle + 1 >= m._config.rounds_per_shuffle

    def act() -> None:
        m._bank.round_finished()
        m._rounds_since_shuffle += 1
        m._round_done = True
        if not due:
            m._begin_round()

    return (S.SHUFFLING if due else S.BETTING), act


def _p_fault_raised(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    code = _text(d, "code")[:64]
    device = _text(d, "device")[:64]
    detail = d.get("detail", "")
    if not isinstance(detail, str):
        raise _Reject("detail: must be a string")
    route = S.INTERNAL if m.state == S.FAULT else S.FAULT
    here = m.state
    return route, lambda: m._enter_fault(code, device, detail[:200], here)


def _p_fault_cleared(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    sup = _text(d, "supervisor")
    void = d.get("void", False)
    if not isinstance(void, bool):
        raise _Reject("void: must be true or false")
    assert m._fault is not None
    where = str(m._fault["interrupted"])
    r = m._r
    if void and where not in VOIDABLE:
        raise _Reject(
            f"void: the round cannot be voided from {where}; progressive wagers were settled"
        )
    if void or where in ALWAYS_VOID:
        reason = f"fault cleared by {sup}: round voided (interrupted in {where})"

        def voided() -> None:
            m._fault = None
            m._void_round(reason[:200])

        return S.SHUFFLING, voided
    target = where
    if where == S.RNG and r.rng_value is not None:
        target = m._after_rng_route()

    def resume() -> None:
        m._fault = None
        if where == S.DICE:
            r.shakes = 0  # the dice are shaken again after a fault
        if target != where:
            m._set_start(int(r.rng_value or 0))

    return target, resume


def _p_deadline(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    dl = m._deadline
    if dl is None:
        raise _Reject("no deadline in this state")
    if m._now < int(dl[0]):
        raise _Reject(f"deadline not reached: due at {dl[0]}")
    code, device = str(dl[1]), str(dl[2])
    detail = str(dl[3]) if len(dl) > 3 else f"{device} did not answer in time"
    here = m.state
    return S.FAULT, lambda: m._enter_fault(code, device, detail, here)


# Who the journal names for a supervisor's step taken at the dealer panel: the holder of the
# supervisor key (the casino's key-control log says who that was).
PANEL_SUPERVISOR = "panel-key"


def _panel_supervisor(m: RoundMachine, button: str, what: str) -> dict[str, JSON]:
    if not m._key_on:
        raise _Reject(f"{button} here {what}: it needs the supervisor key switch on")
    return {"supervisor": PANEL_SUPERVISOR}


def _first_pending(m: RoundMachine) -> int:
    if not m._r.pending:
        raise _Reject("no hit awaits validation")
    return int(m._r.pending[0]["position"])


def _p_supervisor_key(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    on = _field(d, "on")
    if not isinstance(on, bool):
        raise _Reject("on: must be true or false")

    def act() -> None:
        m._key_on = on

    return S.INTERNAL, act


def _p_panel_void(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The dealer panel's VOID button, a supervisor's step (key switch on): void the pending hit
    (NY (k)(3)), void the faulted round by rule, void the RNG draw so it is drawn again (the only
    way to a second draw), or close a table with no round in progress."""
    state = m.state
    if state == S.JACKPOT_PENDING:
        sup = _panel_supervisor(m, "VOID", "voids the pending hit")
        reason = "voided at the dealer panel"
        return _p_hit_voided(m, {**sup, "position": _first_pending(m), "reason": reason})
    if state == S.FAULT:
        sup = _panel_supervisor(m, "VOID", "clears the fault and voids the round")
        return _p_fault_cleared(m, {**sup, "void": True})
    if state == S.SIDE_WAGERS:
        sup = _panel_supervisor(m, "VOID", "voids the RNG draw")
        return _p_rng_void(m, {**sup, "reason": "draw voided at the dealer panel"})
    sup = _panel_supervisor(m, "VOID", "closes the table")
    return _p_table_closed(m, sup)


def _p_panel_next(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The dealer panel's NEXT button: the step the state waits on from the dealer; with the
    supervisor key switch on, the supervisor's step where the state waits on a supervisor."""
    state = m.state
    if state == S.CLOSED:
        return _p_table_opened(m, _panel_supervisor(m, "NEXT", "opens the table"))
    if state == S.JACKPOT_PENDING:
        sup = _panel_supervisor(m, "NEXT", "validates the pending hit")
        return _p_hit_validated(m, {**sup, "position": _first_pending(m)})
    if state == S.FAULT:
        return _p_fault_cleared(m, _panel_supervisor(m, "NEXT", "clears the fault"))
    if state == S.LOCKED_OUT:
        return _p_chips_confirmed(m, d)
    if state == S.SIDE_WAGERS:
        return _p_side_wagers_settled(m, d)
    if state == S.DEALING:
        return _p_three_card_settled(m, d)
    return _p_play_complete(m, d)


def _p_shaker_lid(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    lifted = _field(d, "lifted")
    if not isinstance(lifted, bool):
        raise _Reject("lifted: must be true or false")
    if m.state != S.DICE or not lifted or m._r.shakes >= 3:
        return S.INTERNAL, lambda: None

    def reshake() -> None:
        shakes = m._r.shakes
        m._r.shakes = 0
        m._emit(
            {
                "type": "alert",
                "to": "dealer",
                "code": "RESHAKE_REQUIRED",
                "detail": f"lid lifted after {shakes} shake(s): cover and shake at least three "
                "times (NY 5324.41(h)(8)(i))",
            }
        )

    return S.INTERNAL, reshake


def _p_informational(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    return S.INTERNAL, lambda: None


def _p_power_up(m: RoundMachine, d: Mapping[str, JSON]) -> Plan:
    """The reconcile event after a restart (the owner applies ``outputs()`` next). The requests
    ``outputs()`` issues again (shuffle, draw_rng) get a fresh deadline from now. A dispense is
    never issued again: a deal cut by a restart cannot be trusted, so its deadline falls due at
    once with the fault DEAL_INTERRUPTED, and clearing it voids the round (NJ 13:69E-1.39B(h))."""
    state = m.state

    def act() -> None:
        if state in (S.SHUFFLING, S.RNG):
            m._deadline = m._deadline_for(state)
        elif state == S.DEALING and m._r.stage != "three_dealt":
            # (in "three_dealt" no dispense is outstanding: the dealer settles the three-card
            # bonus and the fours are dispensed only after three_card_settled, (n)(6)-(7))
            m._deadline = [
                m._now,
                "DEAL_INTERRUPTED",
                "shoe",
                "the controller restarted while the shoe was dealing",
            ]

    return S.INTERNAL, act


_PLANNERS: dict[str, Callable[[RoundMachine, Mapping[str, JSON]], Plan]] = {
    "panel_next": _p_panel_next,
    "shaker_lid": _p_shaker_lid,
    "power_up": _p_power_up,
    "supervisor_key": _p_supervisor_key,
    "panel_void": _p_panel_void,
    "device_recovered": _p_informational,
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
