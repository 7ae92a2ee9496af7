"""The controller compartment's door switch (issue 28 item 4): one held input on a spare pin.

The switch is a reed switch (or a cabinet door's microswitch) that closes to ground while the
door is shut, read with the Pi's pull-up: the line is low (active) while shut, high while open,
and a broken wire or a switch pulled off reads "open": the safe side. Each change posts a
``door`` event (``{"open": bool}``); the kernel's stability filter (`HELD_SWITCH_FILTER_S`)
keeps a rattle from posting twice. `open` is read again at start-up (`Table.held_switch_events`)
so a door opened while the controller was off is journaled.

Wiring (docs/wiring.md): ``pins.door``, absent by default; BCM 4, the one pin the default plan
leaves spare, when the shaker has no lid sensor (the two cannot share it; `PinConfig.validate`
refuses a pin used twice). Must never decide what an open door means for play: the round
machine does (fsm/round/machine.py ``DOOR_REFUSED``).
"""

from __future__ import annotations

from typing import Any

from gpiozero import DigitalInputDevice

from drivers.gpio.devices import HELD_SWITCH_FILTER_S, guarded
from drivers.gpio.interfaces import Post
from fsm.round.events import Door


class GpioDoor:
    """The compartment door switch posting ``door`` events on each change."""

    def __init__(self, pin: int, *, pin_factory: Any, post: Post, arm: bool = True) -> None:
        self._switch = DigitalInputDevice(
            pin, pull_up=True, bounce_time=HELD_SWITCH_FILTER_S, pin_factory=pin_factory
        )
        self._opened = guarded("door", post, lambda: post(Door(open=True).envelope()))
        self._closed = guarded("door", post, lambda: post(Door(open=False).envelope()))
        if arm:
            self.arm()

    def arm(self) -> None:
        self._switch.when_deactivated = self._opened  # the line went high: open (or cut)
        self._switch.when_activated = self._closed

    @property
    def open(self) -> bool:
        return not self._switch.is_active

    def close(self) -> None:
        self._switch.close()
