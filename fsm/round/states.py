"""The round's states: the state tree of DESIGN.md (Closed; Open{Shuffling, Betting, LockedOut,
StartingPosition{Rng, Dice}, SideWagers, Dealing, Play, Settlement, JackpotPending, RoundComplete};
Fault; Maintenance) and the names of its leaf states (separator ``_``, transitions' default).

What each state does and which events lead where is declared by the phases (fsm/round/phases/).
Must never hold behaviour or game data.
"""

from __future__ import annotations

from typing import Any

SEP = "_"  # transitions' NestedState separator (its default)

STATE_TREE: list[Any] = [
    "Closed",
    {
        "name": "Open",
        "children": [
            "Shuffling",
            "Betting",
            "LockedOut",
            {"name": "StartingPosition", "children": ["Rng", "Dice"]},
            "SideWagers",
            "Dealing",
            "Play",
            "Settlement",
            "JackpotPending",
            "RoundComplete",
        ],
    },
    "Fault",
    "Maintenance",
]

CLOSED = "Closed"
MAINTENANCE = "Maintenance"
FAULT = "Fault"
SHUFFLING = "Open_Shuffling"
BETTING = "Open_Betting"
LOCKED_OUT = "Open_LockedOut"
RNG = "Open_StartingPosition_Rng"
DICE = "Open_StartingPosition_Dice"
SIDE_WAGERS = "Open_SideWagers"
DEALING = "Open_Dealing"
PLAY = "Open_Play"
SETTLEMENT = "Open_Settlement"
JACKPOT_PENDING = "Open_JackpotPending"
ROUND_COMPLETE = "Open_RoundComplete"

LEAF_STATES: tuple[str, ...] = (
    CLOSED,
    SHUFFLING,
    BETTING,
    LOCKED_OUT,
    RNG,
    DICE,
    SIDE_WAGERS,
    DEALING,
    PLAY,
    SETTLEMENT,
    JACKPOT_PENDING,
    ROUND_COMPLETE,
    FAULT,
    MAINTENANCE,
)

#: every state, as the sources of a transition legal anywhere (a parent covers its children)
EVERYWHERE: tuple[str, ...] = (CLOSED, MAINTENANCE, "Open", FAULT)
