"""The glue between the round's effects and the table's devices, both ways.

Outputs: `TableDevices.apply` takes one committed effect (a typed record of
``fsm.round.effects``) from the owner thread and drives the device that shows or does it:
``lights`` / ``display`` to the GPIO table (``drivers.gpio.table``, which speaks the round's own
vocabulary, ``fsm.round.vocabulary``: nothing is translated), ``shuffle`` to the shuffler,
``dispense`` to the shoe, ``acceptors`` remembered (the machine refuses chips when disarmed),
``alert`` and the money effects to a notice callback (status line, floor system). It depends only
on the small interfaces below, so the real drivers, the pty simulators and the test fakes fit.

Inputs: `translate_input` maps what the drivers post to the round's event vocabulary
(``shuffle_completed`` -> ``shuffle_complete``, ``cards_dispensed`` -> ``dealt``); `InputPort`
wraps the owner's ``post`` with it, and is the ``post`` every driver is built with.

Must never: decide a game rule, hold game state, block the owner thread on a device answer (every
answer comes back as a posted event), or apply an effect the owner did not hand it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from drivers.serial.noise import NOISE_COUNTERS as _NOISE_COUNTERS
from drivers.serial.noise import NoiseConfig, NoiseRate, noise_total
from fsm.round.effects import EFFECTS, Acceptors, Dispense, Display, Effect, Lights, Shuffle
from fsm.round.events import JSON, Event
from fsm.round.vocabulary import BLANK, FAULT, GLYPHS

log = logging.getLogger(__name__)

#: Effects that drive a device here or are carried out by the owner (``post``, ``draw_rng``).
DEVICE_EFFECTS = frozenset({"lights", "display", "acceptors", "shuffle", "dispense"})
#: Effects that drive no device: they are passed to the notice callback only (every other effect
#: type of the round, so a new effect record needs no change here).
NOTICE_EFFECTS = frozenset(EFFECTS) - DEVICE_EFFECTS - {"post", "draw_rng"}


class GpioTable(Protocol):
    """``drivers.gpio.table.Table``: applies lights/display effects in its own vocabulary."""

    def apply(self, effect: Mapping[str, Any]) -> bool: ...

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

    def _gpio_apply(self, effect: Mapping[str, Any]) -> None:
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


def translate_input(event: Event) -> Event | None:
    """The round's event for what a driver posted (None: nothing for the round).

    ``shuffle_completed {count, deck_id}`` -> ``shuffle_complete``; ``cards_dispensed
    {stacks, cards, remaining, hands}`` -> ``dealt {remaining, stacks: hands}`` (the stacks of a
    card-reading shoe: 7-card stacks, or the 3- and 4-card stacks of the three-card bonus, NY
    5324.41(n); the machine maps them to seats in delivery order and checks them);
    every other event passes unchanged (``fault_raised`` from the adapters already speaks the
    round's vocabulary)."""
    kind = event.type
    data = dict(event.data)
    if kind == "shuffle_completed":
        out: dict[str, JSON] = {"count": data.get("count")}
        if "deck_id" in data:
            out["deck_id"] = data["deck_id"]
        return Event("shuffle_complete", out)
    if kind == "cards_dispensed":
        dealt: dict[str, JSON] = {"remaining": data.get("remaining")}
        hands = data.get("hands")
        if hands is not None and data.get("cards") in (3, 4, 7):
            dealt["stacks"] = hands
        return Event("dealt", dealt)
    return event


#: Line-noise counters of ``drivers.serial.port.LinkPort.status()`` (bytes / frames).
NOISE_COUNTERS = _NOISE_COUNTERS


class NoiseMonitor:
    """Raises ``LINE_NOISE`` when a serial line's damaged units (garbage bytes, CRC and header
    errors) exceed the device's ``noise_limit`` within ``noise_window`` seconds
    (`drivers.serial.noise.NoiseRate`), checked after each of the device's answers. The link
    layer recovers from noise by itself (resynchronising, NAK and retransmission), so no command
    is lost and one stray byte is no fault; a line that stays noisy is a cable or adapter
    problem a supervisor must see, so it becomes a journaled fault after the answer it came with.
    """

    def __init__(
        self,
        status: Mapping[str, Callable[[], Mapping[str, object]]],
        limits: Mapping[str, NoiseConfig] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._status = dict(status)
        self._clock = clock
        limits = limits or {}
        self._rates = {
            device: NoiseRate(limits.get(device, NoiseConfig()), self._total(device))
            for device in self._status
        }

    def _total(self, device: str) -> int:
        return noise_total(self._status[device]())

    def check(self, device: str) -> Event | None:
        """The fault event for ``device``'s line, or None while its noise stays under the rate."""
        rate = self._rates.get(device)
        if rate is None:
            return None
        seen = rate.update(self._total(device), self._clock())
        if seen is None:
            return None
        cfg = rate.config
        detail = (
            f"{seen} bytes of garbage or damaged frames on the {device}'s serial line within "
            f"{cfg.window_s:g} s (limit {cfg.limit})"
        )
        return Event("fault_raised", {"code": "LINE_NOISE", "device": device, "detail": detail})


class InputPort:
    """The ``post`` callable drivers are built with: translates, then posts to the owner (and,
    after a device's answer, the `NoiseMonitor`'s fault if its line was noisy). A post that
    fails (bad data) is logged with the driver's event, never raised into the driver's thread."""

    def __init__(self, post: Callable[[Event], None], noise: NoiseMonitor | None = None) -> None:
        self._post = post
        self._noise = noise

    def watch_lines(
        self,
        status: Mapping[str, Callable[[], Mapping[str, object]]],
        limits: Mapping[str, NoiseConfig] | None = None,
    ) -> None:
        """After each device's answer, check its serial line for noise (``LINE_NOISE`` past the
        device's noise rate, ``limits``): call with the serial adapters' ``link_status`` once
        they exist (they are built with this port as their ``post``). Both ``tablectl run`` and
        the simulated table do."""
        self._noise = NoiseMonitor(status, limits)

    def __call__(self, event: Event) -> None:
        translated = translate_input(event)
        if translated is None:
            return
        try:
            self._post(translated)
            device = event.data.get("device")
            if self._noise is not None and event.type in ANSWERS and isinstance(device, str):
                fault = self._noise.check(device)
                if fault is not None:
                    self._post(fault)
        except ValueError:
            log.exception("input %s refused", event.type)


#: Device answers after which the line's noise counters are checked.
ANSWERS = frozenset({"shuffle_completed", "cards_dispensed", "fault_raised"})
