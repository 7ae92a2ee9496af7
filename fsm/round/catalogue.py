"""The round's vocabulary: every event type with its fields (the journal entry types), every
effect the machine answers with, the fault codes it raises itself, and the constants of a round.

Responsible only for naming things the owner, the journal and the documentation share. Must never
hold behaviour (the machine and its planners decide what an event means).
"""

from __future__ import annotations

from fsm.round import states as S

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
    "console_refused": (("supervisor", "request", "reason"), ("unjournaled",)),
    "shaker_lid": (("lifted",), ()),
    "power_up": ((), ("software_hash", "storage", "restored_seq", "clock_synced")),
    "supervisor_key": (("on",), ()),
    "device_recovered": (("device",), ("code",)),
    "config_pending": (("keys", "changes"), ("via",)),
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
    "starting_position": '{"by": "rng"|"dice"|"three_card", "number": 1..7, "seat": 0..6, '
    '"order": [seats], "bank": int|None} '
    "order: 7 seats, or with the three-card bonus the pai gow positions and the dealer",
    "bank_offer": '{"order": [areas]} offer the bank in this order (h)(3)',
    "bank": '{"position": int|None} who banks this round (None: the house)',
    "meter_movement": '{"level", "kind", "round_id", "display_cents", "overflow_cents", '
    '"reserve_cents", "house_cents"} whole-cent deltas; kind: contribution|payout|reset|'
    'reversal|correction; a contribution also has "wagers" and "wagered_cents"',
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
