"""The one vocabulary of the table's outputs: the acceptor light states and the number display's
glyphs, as the round's ``lights`` and ``display`` effects name them and as the drivers draw them
(drivers/gpio/font.py, drivers/gpio/devices.py) and the docs describe them.

Names only; must never drive a device or decide when a state is shown (the round machine's state
table does, fsm/round/machine.py).
"""

from __future__ import annotations

from typing import Literal, get_args

#: An acceptor light: off, attract (betting is open, no wager), lit (a wager, NY 5324.41(d)(4)),
#: locked (a wager after the lock-out), blink (a hit awaits a supervisor).
LightState = Literal["off", "attract", "lit", "locked", "blink"]
LIGHT_STATES: tuple[LightState, ...] = get_args(LightState)
LIGHT_MEANINGS: dict[LightState, str] = {
    "off": "off (no wager, or the table is not taking wagers)",
    "attract": "betting is open and this acceptor holds no wager",
    "lit": "a progressive wager is placed here (NY 5324.41(d)(4): the player checks its light)",
    "locked": "a wager here after the lock-out",
    "blink": "a hit at this position awaits a supervisor (NY 5324.41(k)(3)(iii))",
}

#: What the single 7-segment display shows: the starting position 1-7 or a status glyph.
Glyph = Literal["1", "2", "3", "4", "5", "6", "7", "-", "L", "F", "P", " "]
GLYPHS: tuple[Glyph, ...] = get_args(Glyph)
IDLE: Glyph = "-"
LOCKED: Glyph = "L"
FAULT: Glyph = "F"
PENDING: Glyph = "P"
BLANK: Glyph = " "
GLYPH_MEANINGS: dict[Glyph, str] = {
    **{g: f"starting position {g}" for g in GLYPHS if g.isdigit()},
    IDLE: "idle: the table is open and waiting (Shuffling, Betting)",
    LOCKED: "locked out: no more bets, the starting position is not known yet",
    FAULT: "fault: a supervisor must clear it",
    PENDING: "pending hit: a progressive hit waits for a supervisor (NY 5324.41(k)(3)(iii))",
    BLANK: "blank: closed, maintenance, the safe state",
}
