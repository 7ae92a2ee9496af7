"""The constants of a round: betting areas, cards per hand, stacks, the snapshot's version.

Names only; must never hold behaviour.
"""

from __future__ import annotations

SNAPSHOT_VERSION = 1
AREAS = 6  # betting areas (acceptors) 1..6; seat 0 is the dealer
CARDS_PER_HAND = 7
STACKS = 7
