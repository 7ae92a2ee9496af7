"""The glue between the round's effects and the table's devices, both ways.

Outputs: `TableDevices.apply` takes one committed effect (a typed record of ``fsm.round.effects``)
from the owner thread and drives the device that shows or does it: ``lights`` / ``display`` to the
GPIO table (``drivers.gpio.gpio_table``, which speaks the round's own vocabulary,
``fsm.round.vocabulary``: nothing is translated), ``shuffle`` to the shuffler, ``dispense`` to the
shoe, ``acceptors`` remembered (the machine refuses chips when disarmed), ``alert`` and the money
effects to a notice callback (status line, floor system). It depends only on the small interfaces
below, so the real drivers, the pty simulators and the test fakes fit.

Inputs: every driver builds the round's own typed events (fsm/round/events.py: the shuffler's
``shuffle_complete``, the shoe's ``dealt``, the GPIO inputs' ``chip_detected`` ...); `InputPort`
wraps the owner's ``post`` and is the ``post`` every driver is built with.

Must never: decide a game rule, hold game state, block the owner thread on a device answer (every
answer comes back as a posted event), or apply an effect the owner did not hand it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from fsm.round.effects import EFFECTS, Acceptors, Dispense, Display, Effect, Lights, Shuffle
from fsm.round.events import Event
from fsm.round.vocabulary import BLANK, FAULT, GLYPHS

log = logging.getLogger(__name__)

#: Effects that drive a device here or are carried out by the owner (``post``, ``draw_rng``).
DEVICE_EFFECTS = frozenset({"lights", "display", "acceptors", "shuffle", "dispense"})
#: Effects that drive no device: they are passed to the notice callback only (every other effect
#: type of the round, so a new effect record needs no change here).
NOTICE_EFFECTS = frozenset(EFFECTS) - DEVICE_EFFECTS - {"post", "draw_rng"}


class GpioTable(Protocol):
    """``drivers.gpio.gpio_table.Table``: applies lights/display effects in its own vocabulary."""

    def apply(self, effect: Effect) -> bool: ...

    def safe_state(self) -> None: ...

    def close(self) -> None: ...


class Shuffler(Protocol):
    """``drivers.serial.shuffler.Shuffler`` (or a fake): answers with a posted event."""

    def shuffle(self) -> None: ...

    def stop(self) -> None: ...


class Shoe(Protocol):
    """``drivers.serial.shoe.Shoe`` (or a fake): answers with a posted event."""

    def dispense(self, stacks: int, cards: int) -> None: ...

    def stop(self) -> None: ...


Notice = Callable[[Effect], None]


class TableDevices:
    """The device adapter the owner thread applies effects through."""

    def __init__(
        self,
        gpio: GpioTable | None,
        shuffler: Shuffler | None,
        shoe: Shoe | None,
        *,
        notice: Notice | None = None,
    ) -> None:
        self.gpio = gpio
        self.shuffler = shuffler
        self.shoe = shoe
        self.armed = False
        self._notice = notice
        self._closed = False

    def apply(self, effect: Effect) -> None:
        """Drive the device for one committed effect. A device that refuses raises
        (ValueError / RuntimeError naming it): the owner turns that into a ``fault_raised``."""
        if isinstance(effect, Lights | Display):
            self._gpio_apply(effect)
        elif isinstance(effect, Acceptors):
            self.armed = effect.armed
        elif isinstance(effect, Shuffle):
            if self.shuffler is None:
                raise RuntimeError("shuffle: no shuffler is connected")
            self.shuffler.shuffle()
        elif isinstance(effect, Dispense):
            if self.shoe is None:
                raise RuntimeError("dispense: no shoe is connected")
            self.shoe.dispense(effect.stacks, effect.cards)
        elif effect.TYPE not in NOTICE_EFFECTS:
            log.warning("effect %r drives no device", effect.TYPE)
        if self._notice is not None:
            self._notice(effect)

    def _gpio_apply(self, effect: Effect) -> None:
        if self.gpio is not None:
            self.gpio.apply(effect)

    def safe_state(self, glyph: str = BLANK) -> None:
        """Lights off, acceptors disarmed, display blank (or the fault glyph)."""
        self.armed = False
        if self.gpio is None:
            return
        self.gpio.safe_state()
        if glyph != BLANK:
            self.gpio.apply(Display(glyph if glyph in GLYPHS else FAULT))

    def close(self) -> None:
        """Stop the serial devices and close the GPIO table (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for device in (self.shoe, self.shuffler):
            if device is not None:
                try:
                    device.stop()
                except Exception:
                    log.exception("stopping %s failed", type(device).__name__)
        if self.gpio is not None:
            self.gpio.close()


class InputPort:
    """The ``post`` callable drivers are built with: posts their round events to the owner. A
    post that fails (bad data) is logged with the driver's event, never raised into the
    driver's thread."""

    def __init__(self, post: Callable[[Event], None]) -> None:
        self._post = post

    def __call__(self, event: Event) -> None:
        try:
            self._post(event)
        except ValueError:
            log.exception("input %s refused", event.type)
