"""The round's catalogue: every event type with its fields (the journal entry types) and every
effect the machine answers with, both derived from their records; the fault codes the machine
raises itself; the groups of states the rules name; the constants of a round (re-exported).

Responsible only for naming things the owner, the journal and the documentation share. Must never
hold behaviour (the phases decide what an event means).
"""

from __future__ import annotations

from fsm.round import states as S
from fsm.round.constants import AREAS, CARDS_PER_HAND, SNAPSHOT_VERSION, STACKS
from fsm.round.effects import EFFECTS
from fsm.round.events import EVENTS

# ---------------------------------------------------------------------------------------------
# Derived from the records (fsm/round/events.py, fsm/round/effects.py), never written by hand:
# event type -> (required fields, optional fields), effect type -> what it is for.
EVENT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    name: (
        tuple(f.key for f in cls.FIELDS if f.required),
        tuple(f.key for f in cls.FIELDS if not f.required),
    )
    for name, cls in EVENTS.items()
}
EFFECT_TYPES: dict[str, str] = {
    name: " ".join((cls.__doc__ or "").split()) for name, cls in EFFECTS.items()
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
# those interrupted before the deal resume, or are voided when the supervisor asks
# (fault_cleared "void": true). Once the cards are dealt (Play, Settlement and after) the round
# is never voided: a fault there resumes, since a dealt hand may be a progressive winner whose
# cards stay until it is paid (NY 5324.41(k)(3), (g)(9)).
VOIDABLE = frozenset({S.BETTING, S.LOCKED_OUT, S.RNG, S.DICE, S.SIDE_WAGERS, S.DEALING})
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


__all__ = [
    "ALWAYS_VOID",
    "AREAS",
    "CARDS_PER_HAND",
    "EFFECT_TYPES",
    "EVENT_FIELDS",
    "FAULT_CODES",
    "IN_ROUND_AFTER_LOCKOUT",
    "SNAPSHOT_VERSION",
    "STACKS",
    "VOIDABLE",
]
