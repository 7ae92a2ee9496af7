"""The round of one pai gow table as a pure, deterministic state machine (issue 3).

Responsible for: deciding what every input event means in the current state of the round and
answering with effects (plain dicts) for the owner thread to journal and then apply; keeping the
round's private data (wagers, starting position, hidden hands, pending hits), the progressive
meters and the bank rotation; dumping and restoring all of it as JSON.

Must never: do I/O, read a clock, draw a random number, start a thread, raise on bad input (a bad
or untimely event is answered with a ``rejected`` effect the owner journals), or let a card
identity reach an effect or the public view before the round is resolved.

API (stable contract for the controller's owner loop and the simulator)
----------------------------------------------------------------------
    m = RoundMachine(config)                     # GameConfig; fresh table: state "Closed"
    effects = m.step(Event(type, data), now_ms)  # list[Effect]; never raises
    m.snapshot() -> dict                         # JSON-able, complete (private: holds hidden hands)
    m.public_view() -> dict                      # the snapshot without card identities
    RoundMachine.restore(config, snapshot)       # set_state + data; then call m.outputs()
    m.outputs() -> list[Effect]                  # lights/display/acceptors of the committed state
    m.meters() -> dict[str, dict]                # per level, see fsm/round/meters.py
    m.next_deadline_ms() -> int | None           # owner posts Event("deadline", {}) when reached
    m.state -> str                               # e.g. "Open_Betting" (separator "_")
    m.round_id -> int                            # 0 before the first round; +1 per round
    replay(config, entries) -> (snapshot, meters)   # fsm/round/replay.py

State names (transitions HierarchicalMachine, separator "_"):
    Closed, Maintenance, Fault,
    Open_Shuffling, Open_Betting, Open_LockedOut, Open_StartingPosition_Rng,
    Open_StartingPosition_Dice, Open_SideWagers, Open_Dealing, Open_Play, Open_Settlement,
    Open_JackpotPending, Open_RoundComplete

Events (Event.type -> data fields); these are the journal entry types. See EVENT_FIELDS.
Effects (dict with "type"); see EFFECT_TYPES. Positions 1..6 are the betting areas (acceptors);
"seat" 0 is the dealer.

``round_completed``: when a round is done the machine enters Open_RoundComplete and emits
``{"type": "post", "event": {"type": "round_completed", "data": {"round_id": n}}}``. The owner
posts that event like any input (ahead of the queue); it is journaled as an entry of type
``round_completed`` (the journal counts those as rounds) and steps the machine on to
Open_Betting, or Open_Shuffling when the deck is due.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fsm.events import JSON, Effect, Event

# ---------------------------------------------------------------------------------------------
# Event types and their data fields (name -> (required fields, optional fields)).
# Values: "position" int 1..6; "supervisor" non-empty str; cents int >= 0.
EVENT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # table
    "table_opened": (("supervisor",), ()),  # Closed -> Open_Shuffling (emits shuffle)
    "table_closed": (("supervisor",), ()),  # Open_Betting (no wager lit) / Open_Shuffling -> Closed
    # shuffle
    "shuffle_complete": (("count",), ()),  # 53 -> Open_Betting; else Fault DECK_COUNT_<n>
    # betting
    "chip_detected": (("position",), ()),  # Betting: lights the position; later: rejected (k)(2)
    "bank_accepted": (("position",), ()),  # Betting: a player banks this round (h)(2),(h)(3)
    "bank_released": ((), ()),  # Betting: withdraw the bank before lock-out
    "lockout_pressed": ((), ()),  # Betting -> LockedOut: "no more bets" (k)(2)
    "chips_confirmed": ((), ()),  # LockedOut: chips counted == lights lit -> contributions
    "chips_mismatch": (("counted",), ()),  # LockedOut: alert supervisor, wait for resolution
    "chips_resolved": (("supervisor", "positions"), ()),  # LockedOut: the wagers that stand
    # starting position
    "rng_drawn": (("value",), ()),  # Rng: the owner's CSPRNG draw 1..7 (one per round)
    "rng_void": (("supervisor", "reason"), ()),  # SideWagers (unsettled): void draw, redraw
    "shake_detected": ((), ()),  # Dice: one shake of the shaker
    "lid_lifted_by_bank": ((), ()),  # Dice: shake count reset, re-shake required (h)(8)(i)
    "dice_position_entered": (("total",), ()),  # Dice: total 3..18 by the dealer, >= 3 shakes
    # 1-7 side wager (j)
    "side_wagers": (("bets",), ()),  # SideWagers: [{"position","number","cents"}], settled here
    "side_wagers_settled": ((), ()),  # SideWagers: settled outside the machine (or none placed)
    # dealing
    "dealt": (("remaining",), ("hands", "stacks", "cards")),  # Dealing: 4 (or 32 after 3-card)
    "three_card_settled": ((), ()),  # Dealing (3-card bonus): 3-card stacks settled, deal 4s
    # play and settlement
    "play_complete": ((), ()),  # Play -> Settlement (dealer's NEXT)
    "progressive_outcome": (("position", "line"), ()),  # Settlement: line name or None (lost)
    "hit_validated": (("position", "supervisor"), ()),  # JackpotPending: pay at meter now (k)(6)
    "hit_voided": (("position", "supervisor", "reason"), ()),  # JackpotPending: not a winner
    "round_completed": (("round_id",), ()),  # RoundComplete -> Betting / Shuffling
    # faults
    "fault_raised": (("code", "device", "detail"), ()),  # any state -> Fault
    "fault_cleared": (("supervisor",), ("void",)),  # Fault -> resume or void by rule
    # maintenance (table closed)
    "maintenance_entered": (("supervisor",), ()),  # Closed -> Maintenance
    "maintenance_exited": (("supervisor",), ()),  # Maintenance -> Closed
    "config_changed": (("supervisor", "changes"), ()),  # {"dotted.key": new value}
    "meter_corrected": (("level", "meter", "delta_cents", "reason", "supervisor"), ()),
    "light_test": ((), ()),
    "display_test": ((), ()),
    # owner loop
    "deadline": ((), ()),  # posted when next_deadline_ms() is reached -> Fault *_TIMEOUT
}

# Effect types (all dicts with "type"):
EFFECT_TYPES: dict[str, str] = {
    "rejected": '{"type","event": str,"reason": str} the event was refused; state unchanged',
    "lights": '{"type","states": [6 x "off"|"lit"|"attract"|"blink"]} acceptor lights 1..6',
    "display": '{"type","glyph": str} the 1-7 digit: "1".."7", " " blank, "-", "F", "P", "8"',
    "acceptors": '{"type","armed": bool} progressive wager acceptors accept chips or not',
    "shuffle": '{"type"} command the shuffler',
    "draw_rng": '{"type"} owner draws 1..7 with the OS CSPRNG, posts rng_drawn',
    "dispense": '{"type","stacks": 7,"cards": 7|3|4} command the shoe',
    "alert": '{"type","to": "supervisor"|"dealer","code": str,"detail": str}',
    "starting_position": '{"type","number": 1..7,"seat": 0..6,"order": [7 seats]} seat 0 = dealer',
    "bank": '{"type","position": int|None} who banks this round (None: the house)',
    "meter_movement": (
        '{"type","level","kind": "contribution"|"payout"|"reset"|"reversal"|"correction",'
        '"display_cents","overflow_cents","reserve_cents","house_cents": int deltas,'
        '"round_id", ...}'
    ),
    "side_wager_settled": '{"type","number","results": [{"position","number","cents","payout_cents"}]}',
    "hit_pending": '{"type","position","level","line"} deducted payout awaits a supervisor (k)(3)(iii)',
    "pay": '{"type","position","level","line","cents","from": "meter"|"chip_tray"}',
    "refund": '{"type","position","cents","reason"} a voided round returns the progressive wager',
    "round_voided": '{"type","round_id","reason"}',
    "post": '{"type","event": {"type": str,"data": dict}} owner posts this event next',
    "config_changed": '{"type","changes": [{"key","old","new"}],"supervisor"}',
}


class RoundMachine:
    """One table's round. Build with a GameConfig; drive only from the owner thread."""

    def __init__(self, config: Any, snapshot: Mapping[str, JSON] | None = None) -> None:
        raise NotImplementedError

    @classmethod
    def restore(cls, config: Any, snapshot: Mapping[str, JSON]) -> RoundMachine:
        raise NotImplementedError

    @property
    def state(self) -> str:
        raise NotImplementedError

    @property
    def round_id(self) -> int:
        raise NotImplementedError

    def step(self, event: Event, now_ms: int) -> list[Effect]:
        raise NotImplementedError

    def snapshot(self) -> dict[str, JSON]:
        """{"version": 1, "state": str, "round_id": int, "round": {...}, "meters": {...},
        "bank": {...}, "fault": {...} | None, "deadline_ms": int | None, "config": {...}}"""
        raise NotImplementedError

    def public_view(self) -> dict[str, JSON]:
        raise NotImplementedError

    def outputs(self) -> list[Effect]:
        raise NotImplementedError

    def meters(self) -> dict[str, dict[str, JSON]]:
        raise NotImplementedError

    def next_deadline_ms(self) -> int | None:
        raise NotImplementedError


def replay(config: Any, entries: Iterable[Any]) -> tuple[dict[str, JSON], dict[str, dict[str, JSON]]]:
    """Rebuild from journal entries (each with .type/.data/.ts_ms or the same keys)."""
    raise NotImplementedError
