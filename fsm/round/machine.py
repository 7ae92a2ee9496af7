"""The round of one pai gow table as a pure, deterministic state machine (issue 3).

Responsible for: deciding what every input event means in the current state of the round and
answering with typed effects (fsm/round/effects.py) for the owner thread to journal and then
apply, by firing the event on the table's state machine built from the phases
(fsm/round/phases/); the outputs each state shows; dumping and restoring the round
(fsm/round/context.py) as JSON.

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
``invalid`` when it is not one); an event no transition takes in the state is refused as its
phase declares (``untimely``; a chip ``late`` or ``not_armed``); a ``round_id`` must name the
round in play (``wrong_round``). Then the trigger is fired: the library tries the event's
transitions from the state (declared by the phases, fsm/round/phases/) and takes the first whose
guards pass, runs its ``before`` actions, exits and enters states (each state's `StateSpec` does
the rest); when none passes, the first guard that refused says why (``refused``, ``invalid``...).
A bug anywhere (``internal``) leaves the round exactly as before the step: the context is dumped
before firing and loaded back (``tests/test_round_properties.py`` proves it over random rounds).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fsm.round.catalogue import EFFECT_TYPES, EVENT_FIELDS, FAULT_CODES
from fsm.round.config import GameConfig
from fsm.round.context import Round
from fsm.round.effects import Acceptors, Display, Effect, Lights, RejectCause, Rejected
from fsm.round.events import JSON, Event, EventRecord, parse_event
from fsm.round.phase import Step
from fsm.round.phases import LEGAL, STATE_TABLE, build_machine, untimely
from fsm.round.phases.shared import PANEL_SUPERVISOR
from fsm.round.records import RecordError
from fsm.round.states import CLOSED, LEAF_STATES

#: The people's inputs that start or advance play: refused while the compartment door is open
#: without a supervisor's maintenance allowance (issue 28 item 4). Device replies to a request
#: already made, faults, voids, hits owed, closing and maintenance are never refused for it.
DOOR_REFUSED: frozenset[str] = frozenset(
    {
        "table_opened",
        "chip_detected",
        "bank_accepted",
        "lockout_pressed",
        "pai_gow_wagers",
        "chips_confirmed",
        "rng_activated",
        "shake_detected",
        "dice_position_entered",
        "side_wagers",
        "side_wagers_settled",
        "three_card_settled",
        "play_complete",
        "progressive_outcome",
        "round_completed",
        "panel_next",
    }
)


def rejected(
    event_type: str, reason: str, cause: RejectCause = "refused", position: int | None = None
) -> Rejected:
    return Rejected(event_type, reason, cause, position)


class RoundMachine:
    """One table's round. Build with a GameConfig; drive only from the owner thread."""

    def __init__(self, config: GameConfig, snapshot: Mapping[str, JSON] | None = None) -> None:
        self._c = Round.new(config)
        self._hsm = build_machine()
        self._step = Step(CLOSED, self._c)
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
        return str(self._step.state)

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
        name = str(getattr(event, "type", None))[:64]
        self._entry_round = self._c.round_id
        try:
            rec = parse_event(event)
        except RecordError as e:
            return [rejected(name, str(e), "invalid")]
        door = self._c.door_refusal() if name in DOOR_REFUSED else None
        if door is not None:  # before the state's own refusal: the door is the reason
            return [rejected(name, door, "refused", getattr(rec, "position", None))]
        state = self.state
        if state not in LEGAL[name]:
            cause, reason, names_position = untimely(name, state)
            position = getattr(rec, "position", None) if names_position else None
            return [rejected(name, reason, cause, position)]
        if isinstance(now_ms, bool) or not isinstance(now_ms, int):
            return [rejected(name, "now_ms: the owner's clock must be an integer", "internal")]
        rid = getattr(rec, "round_id", None)
        if rid is not None and rid != self._c.round_id:
            reason = f"round_id: the round in play is {self._c.round_id}, not {rid}"
            return [rejected(name, reason, "wrong_round")]
        c = self._c
        c.now = now_ms
        before_out = self._output_state(state)
        saved = c.dump()
        effects = self._fire(name, rec)
        if isinstance(effects, Rejected):
            if effects.cause == "internal":
                self._load(saved)
            return [effects]
        now_in = self.state
        after_out = self._output_state(now_in)
        moved = now_in != state
        for b, a in zip(before_out, after_out, strict=True):
            if moved or a != b:
                effects.append(a)
        self._entry_round = rid if rid is not None else c.round_id
        return effects

    def snapshot(self) -> dict[str, JSON]:
        return self._c.dump()

    def public_view(self) -> dict[str, JSON]:
        """The snapshot for readers (web page, SAS): no card identity, meters as reported."""
        d = self._c.dump(hidden=False)
        rnd = d["round"]
        if isinstance(rnd, dict) and rnd.get("pending"):  # what each hit pays now (the sign)
            shown = self._c.amounts_shown()
            rnd["pending"] = [{**p, **a} for p, a in zip(rnd["pending"], shown, strict=True)]
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
        display, and the requests the state is waiting on (its ``waiting``)."""
        state = self.state
        return [*self._output_state(state), *STATE_TABLE[state].waiting(self._c)]

    # --- internals -------------------------------------------------------------------------

    def _fire(self, name: str, rec: EventRecord) -> list[Effect] | Rejected:
        """Fire ``name`` with its record: the effects, or why it was refused or failed."""
        s, c = self._step, self._c
        s.e, s.refusal, s.error, s.taken = rec, None, None, False
        s.memo.clear()
        c.effects = []
        self._hsm.trigger_event(s, name)
        s.e = None
        c.state = self.state
        effects, c.effects = c.effects, []
        if s.error is not None:
            err = s.error
            return rejected(name, f"internal error: {type(err).__name__}: {err}"[:200], "internal")
        if not s.taken:
            if s.refusal is None or effects:
                return rejected(name, f"internal error: no transition took {name}", "internal")
            reason, cause, position = s.refusal
            return rejected(name, reason, cause, position)
        return effects

    def _load(self, snap: Mapping[str, Any]) -> None:
        c = Round.new(self._c.config)
        c.load(snap)
        self._hsm.set_state(c.state, self._step)
        self._step.c = c
        self._c = c

    def _output_state(self, state: str) -> tuple[Acceptors, Lights, Display]:
        spec = STATE_TABLE[state]
        return (
            Acceptors(
                spec.armed and self._c.floor_refusal() is None and self._c.door_refusal() is None
            ),
            Lights(tuple(spec.lights(self._c))),
            Display(spec.glyph(self._c)),
        )


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
    "LEAF_STATES",
    "PANEL_SUPERVISOR",
    "STATE_TABLE",
    "EventRecord",
    "RoundMachine",
    "rejected",
    "replay",
]
