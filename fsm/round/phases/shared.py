"""What more than one phase uses: the lights and glyphs the states show, the deadline a state
sets, where the draw leads, and the dealer panel's supervisor key (who a panel step names).

Must never declare a state or a transition (each phase declares its own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fsm.round.constants import AREAS
from fsm.round.context import Round
from fsm.round.phase import Guard, StateSpec, Step
from fsm.round.states import DEALING, SIDE_WAGERS
from fsm.round.vocabulary import LOCKED, Glyph, LightState

# Who the journal names for a supervisor's step taken at the dealer panel: the person holding the
# turned key when an identifying input named them (``key_holder``: the console's ``key-holder``
# request after their PIN, or a badge reader); the key switch alone names no one, and then the
# journal says ``panel-key`` (the casino's key-control log says who held the key). ``via`` says
# it was the panel either way.
PANEL_SUPERVISOR = "panel-key"
PANEL = "panel"

DIGITS: dict[int, Glyph] = {1: "1", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7"}


def lights_off(c: Round) -> list[LightState]:
    return ["off"] * AREAS


def lights_locked(c: Round) -> list[LightState]:
    return ["locked" if a in c.r.wagers else "off" for a in range(1, AREAS + 1)]


def glyph(g: Glyph) -> Callable[[Round], Glyph]:
    return lambda c: g


def glyph_start(c: Round) -> Glyph:
    """The starting position's number once drawn or counted; until then the locked glyph."""
    n = c.r.start_number
    return LOCKED if n is None else DIGITS[n]


def deadline(state: str) -> Callable[[Round], list[Any] | None]:
    return lambda c: c.deadline_for(state)


#: a state of the round after the lock-out that only waits: wagers locked, the number shown
LOCKED_IN: StateSpec = StateSpec(lights_locked, glyph_start)


def after_draw(c: Round) -> str:
    """Where the drawn number leads: to the 1-7 side wagers' settlement when offered, else the
    deal (NY 5324.41(j)(2)(iii))."""
    return SIDE_WAGERS if c.config.side_wager_offered else DEALING


def panel_supervisor(c: Round) -> str:
    return c.key_holder or PANEL_SUPERVISOR


def key_turned(button: str, what: str) -> Guard:
    """NEXT or VOID may take a supervisor's step only with the supervisor key switch on."""

    def key_on(s: Step) -> bool:
        return s.c.key_on or s.refuse(
            f"{button} here {what}: it needs the supervisor key switch on"
        )

    key_on.__name__ = f"key_on_for_{button.lower()}"
    return key_on


def a_hit_pending(s: Step) -> bool:
    return bool(s.c.r.pending) or s.refuse("no hit awaits validation")


def first_pending(c: Round) -> int:
    """The position of the hit next in the payment order (0 when none: its guard refuses)."""
    return int(c.r.pending[0]["position"]) if c.r.pending else 0


def player_banks(s: Step) -> bool:
    return s.c.bank.current is not None or s.refuse("no player banks this round")


__all__ = [
    "LOCKED_IN",
    "PANEL",
    "PANEL_SUPERVISOR",
    "a_hit_pending",
    "after_draw",
    "deadline",
    "first_pending",
    "glyph",
    "glyph_start",
    "key_turned",
    "lights_locked",
    "lights_off",
    "panel_supervisor",
    "player_banks",
]
