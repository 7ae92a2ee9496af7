"""The simulated table's hardware around the pty simulators of ``drivers/sim``.

`MockPins` drops chips into the acceptors, presses the lock-out button and the panel's buttons,
turns the key and shakes the shaker by driving the input pins of the real GPIO drivers built on
gpiozero's MockFactory; `PtyFaults` injects the planned faults into the simulators at the point
of the round where they bite; `PersistentDeck` keeps the cards in the shoe across a restart.
Simulation only: this module must never be used by ``tablectl run``, never decide a game rule,
and never touch the journal or the round machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from controller.sim.faults import FaultPlan
from drivers.gpio.pins import PinConfig
from drivers.sim.deck import SimDeck as _DriverDeck
from fsm.round.events import Event

Post = Callable[[Event], None]


class MockPins:
    """Drives the input pins of the GPIO drivers built on ``factory`` (a MockFactory): every
    input is active-low with a pull-up, so an activation is drive_low then drive_high."""

    def __init__(self, factory: Any, pins: PinConfig, chain: Any = None) -> None:
        self._factory = factory
        self._pins = pins
        self._chain = chain  # drivers.gpio.max7219.SimulatedChain when the digit is on SPI

    def _pulse(self, number: int) -> None:
        pin = self._factory.pin(number)
        pin.drive_low()
        pin.drive_high()

    def drop_chip(self, position: int) -> None:
        """A chip passes the sensor of acceptor ``position`` (1..6)."""
        self._pulse(self._pins.acceptor_sensors[position - 1])

    def press_lockout(self) -> None:
        self._pulse(self._pins.lockout_button)

    def press_next(self) -> None:
        """The dealer panel's NEXT button."""
        self._pulse(self._pins.panel_next)

    def press_void(self) -> None:
        """The dealer panel's VOID button."""
        self._pulse(self._pins.panel_void)

    def turn_key(self, on: bool) -> None:
        """The supervisor key switch, a held input: low while turned on."""
        pin = self._factory.pin(self._pins.supervisor_key)
        if on:
            pin.drive_low()
        else:
            pin.drive_high()

    def shake(self) -> None:
        self._pulse(self._pins.shaker)

    def forget_history(self) -> None:
        """Drop the state history every MockPin keeps (gpiozero's ``MockPin.states`` gets one
        entry per change, for tests' ``assert_states``, and is never trimmed): without this a
        long simulation grows by about 1.3 KiB a round."""
        for pin in list(getattr(self._factory, "pins", {}).values()):
            clear = getattr(pin, "clear_states", None)
            if clear is not None:
                clear()

    def light_levels(self) -> tuple[bool, ...]:
        """The output level of each acceptor light pin (for tests and the status line)."""
        return tuple(bool(self._factory.pin(n).state) for n in self._pins.acceptor_lights)

    def segment_levels(self) -> tuple[bool, ...]:
        """The level of each number-display segment a..g: the pins of ``number_display =
        "segments"``, or DIG0 of chip 0 of the simulated MAX7219 chain."""
        if self._pins.display_segments is None:
            return tuple(bool(s) for s in self._chain.digits(0)[-1].segments)
        return tuple(bool(self._factory.pin(n).state) for n in self._pins.display_segments)


class PtyFaults:
    """Injects the planned faults into the pty simulators (``drivers.sim.bench``) at the point
    of the round where they bite, and lets the scripted supervisor repair the device before
    clearing the fault, as a technician would. Driven by the director's loop, from the public
    snapshot only: a shuffler fault for round R is armed while round R-1 is played (Play,
    Settlement, JackpotPending; or the closed table for round 1), a shoe or line fault in
    Betting / LockedOut of round R."""

    SHUFFLER_KINDS = ("shuffler-count", "shuffler-silent", "shuffler-unplug")
    SHOE_KINDS = ("shoe-jam", "shoe-silent", "garbage", "shoe-misdeal", "shoe-empty", "shoe-unplug")
    LATE_STATES = frozenset({"Open_Play", "Open_Settlement", "Open_JackpotPending"})
    EARLY_STATES = frozenset({"Open_Betting", "Open_LockedOut"})

    def __init__(self, sim: Any, plan: FaultPlan) -> None:
        self._sim = sim
        self._plan = plan
        self._lock = threading.Lock()  # the trainer injects from the page's or console's thread
        self.injected: list[str] = []

    def arm(self, state: str, round_id: int) -> None:
        with self._lock:
            self._arm(state, round_id)

    def _arm(self, state: str, round_id: int) -> None:
        for kind in self.SHUFFLER_KINDS:
            if state in self.LATE_STATES:
                self._inject(self._plan.take(kind, round_id + 1))
            elif state == "Closed":
                self._inject(self._plan.take(kind, 1))
        if state in self.EARLY_STATES:
            for kind in self.SHOE_KINDS:
                self._inject(self._plan.take(kind, round_id))

    def _inject(self, fault: Any) -> None:
        if fault is None:
            return
        if fault.kind == "garbage":
            self._sim.inject("garbage", "shoe")
        elif fault.kind == "shoe-empty":  # the cards run out: nothing to clear at the repair
            self._sim.deck.take(self._sim.deck.remaining)
            return
        else:
            self._sim.inject(fault.kind, fault.value)
        self.injected.append(fault.kind)

    def inject_now(self, fault: Any) -> None:
        """A trainer's fault (`controller.sim.faults.parse_fault_now`), into the simulator now:
        it bites at the device's next use; the repair before the clear ends it like a planned
        one."""
        with self._lock:
            self._inject(fault)

    def repair(self) -> list[str]:
        """End every injected device fault (the table is in Fault); returns what was fixed."""
        with self._lock:
            fixed, self.injected = self.injected, []
        for kind in fixed:
            self._sim.clear(kind)
        return fixed


#: Where the simulated shoe's cards are kept (default: ``$XDG_STATE_HOME/paigow-sim`` or
#: ``~/.local/state/paigow-sim``): a directory of mode 0700, never the journal's.
SIM_STATE_ENV = "PAIGOW_SIM_STATE"


def sim_state_dir() -> Path:
    """The simulator's private directory (made 0700; an existing one is narrowed to 0700)."""
    root = os.environ.get(SIM_STATE_ENV) or ""
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        path = Path(base) / "paigow-sim"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.is_symlink() or not path.is_dir():
        raise OSError(f"simulator state: {path} is not a directory")
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path


def deck_path_for(db: Path) -> Path:
    """The private file of the simulated shoe's undealt cards for the journal ``db``: in
    `sim_state_dir`, named by a hash of the journal's absolute path, never beside the journal
    (a journal may sit in a directory others read: the undealt deck would tell them every card
    still to come)."""
    key = hashlib.sha256(os.fsencode(db.resolve())).hexdigest()[:24]
    return sim_state_dir() / f"{key}.sim-shoe.json"


class PersistentDeck(_DriverDeck):
    """The cards in the simulated shoe, kept in a small private JSON file (mode 0600, see
    `deck_path_for`), so that a restart of the controller (which restarts the in-process
    simulators) finds the shoe as a real table would: still holding the shuffled deck. Written
    atomically after every load and take.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._path = path
        self._mirror: list[int] = []
        self._mirror_lock = threading.Lock()
        try:
            saved = json.loads(path.read_text("utf-8"))
            cards = [int(c) for c in saved["cards"]]
            super().load(cards, int(saved["deck_id"]))
            self._mirror = cards
        except (OSError, ValueError, KeyError, TypeError):
            pass  # no saved shoe (first run) or unreadable: an empty shoe

    def load(self, cards: Sequence[int], deck_id: int) -> None:
        with self._mirror_lock:
            super().load(cards, deck_id)
            self._mirror = list(cards)
            self._save(deck_id)

    def take(self, n: int) -> list[int] | None:
        with self._mirror_lock:
            taken = super().take(n)
            if taken is not None:
                self._mirror = self._mirror[n:]
                self._save(self.deck_id)
            return taken

    def rearrange(self, change: Callable[[list[int]], list[int]]) -> None:
        """Replace the cards in the shoe by ``change(cards)`` (the same cards in another order:
        the practice deck), same deck id, saved like a load."""
        with self._mirror_lock:
            cards = change(list(self._mirror))
            if sorted(cards) != sorted(self._mirror):
                raise ValueError("a practice arrangement must keep the same cards in the shoe")
            super().load(cards, self.deck_id)
            self._mirror = list(cards)
            self._save(self.deck_id)

    def _save(self, deck_id: int) -> None:
        tmp = self._path.with_name(self._path.name + ".tmp")
        body = json.dumps({"deck_id": deck_id, "cards": self._mirror}).encode("utf-8")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.fchmod(fd, 0o600)  # a tmp file left by an older run may be wider
            os.write(fd, body)
        finally:
            os.close(fd)
        os.replace(tmp, self._path)
