"""The small interfaces of the table's GPIO devices, and the vocabulary of their outputs.

Each device (acceptors, lock-out button, dealer panel, dice shaker, number display, progressive
meter sign) is a ``typing.Protocol`` implemented on gpiozero (``drivers.gpio.devices``; tests and
the simulated table run it on gpiozero's MockFactory). Inputs never return game decisions: they
post the round's typed events (``fsm.round.events``, names below) through the ``post`` callable
they were built with; outputs only show what the owner
thread tells them. This module must never touch a pin or hold state.

Events posted (``fsm.round.events.Event``; the full table is in docs/wiring.md):

- ``chip_detected``   ``{"position": 1..6}`` a chip dropped into acceptor n
- ``lockout_pressed`` ``{}``               the dealer pressed the lock-out button ("no more bets")
- ``panel_next``      ``{}``               dealer panel NEXT (its meaning is the round's, by state:
                                           the chip count, the RNG's activation, ...)
- ``panel_void``      ``{}``               dealer panel VOID
- ``supervisor_key``  ``{"on": bool}``     the supervisor key switch turned on / off
- ``shake_detected``  ``{}``               one more shake of the dice shaker (the round counts them)
- ``shaker_lid``      ``{"lifted": bool}`` the shaker lid was lifted / put back (only if fitted)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from fsm.round.events import Event
from fsm.round.vocabulary import GLYPHS, LIGHT_STATES, Glyph, LightState

Post = Callable[[Event], None]
Clock = Callable[[], float]

# The round's own vocabulary (fsm/round/vocabulary.py): what the lights and the display show is
# named once, there, for the round, the drivers and the docs.
OFF: LightState = "off"
__all__ = ["GLYPHS", "LIGHT_STATES", "OFF", "Glyph", "LightState"]

EVENT_NAMES = (
    "chip_detected",
    "lockout_pressed",
    "panel_next",
    "panel_void",
    "supervisor_key",
    "shake_detected",
    "shaker_lid",
)


@runtime_checkable
class Acceptors(Protocol):
    """The six progressive-wager acceptors: a chip sensor (posts ``chip_detected``) and a light
    each. Position n (1..6) is index n-1 of the light states."""

    @property
    def lights(self) -> tuple[LightState, ...]:
        """The state each light was last told to show."""
        ...

    def set_lights(self, states: Sequence[LightState]) -> None:
        """Show six light states at once (validated by the caller, ``Table.apply``)."""
        ...

    def arm(self) -> None:
        """Attach the input handlers to the pins (edges before this are not seen)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class LockoutButton(Protocol):
    """The dealer's lock-out button; posts ``lockout_pressed`` once per press."""

    @property
    def is_pressed(self) -> bool: ...

    def arm(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class DealerPanel(Protocol):
    """NEXT and VOID push buttons and the supervisor key switch (a held on/off switch)."""

    @property
    def supervisor_key_on(self) -> bool: ...

    def arm(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class DiceShaker(Protocol):
    """Posts each shake of the dice shaker (the round machine counts them: NY 5324.41(h)(8)(i),
    at least three) and, if fitted, reports the lid."""

    @property
    def lid_lifted(self) -> bool | None:
        """True while the lid is off, False while on, None when no lid sensor is fitted."""
        ...

    def arm(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class NumberDisplay(Protocol):
    """The single 7-segment digit: 1-7 (starting position) or a status glyph."""

    @property
    def glyph(self) -> Glyph: ...

    def show(self, glyph: Glyph) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class MeterSign(Protocol):
    """The progressive meter sign (NY 5324.41(a)(4), 5324.2(l); PA 605a.7(1)): ``modules``
    8-digit modules, each showing one text of ``drivers.gpio.sign`` (a level's amount, or "WIN"
    and the areas). Driven from the owner's published snapshot by the controller's sign reader,
    never from the round machine."""

    @property
    def modules(self) -> int: ...

    @property
    def texts(self) -> tuple[str, ...]:
        """What each module was last told to show."""
        ...

    def show(self, texts: Sequence[str]) -> None:
        """One text per module; ValueError (nothing shown) for a text the sign cannot draw."""
        ...

    def close(self) -> None: ...
