"""The simulated table's hardware: a seeded deck, an in-process shuffler and shoe, and the GPIO
pins on gpiozero's MockFactory driven like fingers and chips would drive them.

`SimShuffler` and `SimShoe` behave like the serial adapters of ``drivers/serial`` (same methods,
same posted events: ``shuffle_completed``, ``cards_dispensed``, ``fault_raised`` with the codes of
``drivers.serial.faults``), answering from their own worker thread as a device would; faults from
the `FaultPlan` are injected here. `MockPins` drops chips into the acceptors, presses the lock-out
button and shakes the shaker by driving the input pins of the real GPIO drivers built on
MockFactory. Simulation only: this module must never be used by ``tablectl run``, never decide a
game rule, and never touch the journal or the round machine.
"""

from __future__ import annotations

import json
import os
import queue
import random
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from controller.sim_faults import FaultPlan
from drivers.gpio.config import PinConfig
from drivers.serial import faults
from drivers.sim.deck import SimDeck as _DriverDeck
from fsm.cards import DECK_SIZE
from fsm.events import Event

Post = Callable[[Event], None]
RoundOf = Callable[[], int]

#: How long a silent device goes unanswered before its adapter reports RESPONSE_TIMEOUT (s).
SIM_RESPONSE_TIMEOUT_S = 0.3


class SimDeck:
    """The 53 cards (52 + joker), shuffled with a seeded generator; shared by shuffler and shoe."""

    def __init__(self, seed: int | str) -> None:
        self._seed = seed
        self._shuffles = 0
        self._cards: list[int] = list(range(DECK_SIZE))
        self._lock = threading.Lock()
        self.deck_id = 0

    def shuffle(self) -> int:
        with self._lock:
            self._shuffles += 1
            rng = random.Random(f"deck:{self._seed}:{self._shuffles}")
            self._cards = list(range(DECK_SIZE))
            rng.shuffle(self._cards)
            self.deck_id = self._shuffles % 65536
            return len(self._cards)

    def deal(self, stacks: int, cards: int) -> tuple[list[list[int]], int]:
        with self._lock:
            hands = [self._cards[i * cards : (i + 1) * cards] for i in range(stacks)]
            self._cards = self._cards[stacks * cards :]
            return hands, len(self._cards)


class _Worker:
    """A device's own thread: delivers its answers after a delay, in order."""

    def __init__(self, name: str, post: Post) -> None:
        self._post = post
        self._queue: queue.Queue[tuple[float, Event] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def later(self, delay_s: float, event: Event) -> None:
        self._queue.put((time.monotonic() + delay_s, event))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            when, event = item
            wait = when - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._post(event)

    def stop(self) -> None:
        self._queue.put(None)
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2)


class SimShuffler:
    """An in-process shuffler that counts the deck after each shuffle."""

    device = "shuffler"

    def __init__(
        self, post: Post, deck: SimDeck, plan: FaultPlan, round_of: RoundOf, delay_s: float = 0.0
    ) -> None:
        self._deck = deck
        self._plan = plan
        self._round_of = round_of
        self._delay = delay_s
        self._worker = _Worker("sim-shuffler", post)

    def _fault(self, code: str, detail: str, delay: float) -> None:
        data = {"code": code, "device": self.device, "detail": detail}
        self._worker.later(delay, Event("fault_raised", data))

    def shuffle(self) -> None:
        deck_round = self._round_of() + 1  # the shuffle is for the next round
        if self._plan.take("shuffler-silent", deck_round) is not None:
            self._fault(
                faults.RESPONSE_TIMEOUT,
                "shuffler did not answer SHUFFLE_REQ",
                SIM_RESPONSE_TIMEOUT_S,
            )
            return
        count = self._deck.shuffle()
        wrong = self._plan.take("shuffler-count", deck_round)
        if wrong is not None and wrong.value is not None:
            count = wrong.value
        if count != faults.EXPECTED_DECK_COUNT:
            self._fault(
                faults.deck_count_code(count),
                f"shuffler counted {count} cards, expected {faults.EXPECTED_DECK_COUNT} "
                f"(deck id {self._deck.deck_id})",
                self._delay,
            )
            return
        data = {"device": self.device, "count": count, "deck_id": self._deck.deck_id}
        self._worker.later(self._delay, Event("shuffle_completed", data))

    def stop(self) -> None:
        self._worker.stop()


class SimShoe:
    """An in-process dealing shoe; a card-reading shoe reports each stack's cards."""

    device = "shoe"

    def __init__(
        self,
        post: Post,
        deck: SimDeck,
        plan: FaultPlan,
        round_of: RoundOf,
        card_reading: bool,
        delay_s: float = 0.0,
    ) -> None:
        self._deck = deck
        self._plan = plan
        self._round_of = round_of
        self._card_reading = card_reading
        self._delay = delay_s
        self._worker = _Worker("sim-shoe", post)

    def _fault(self, code: str, detail: str, delay: float) -> None:
        data = {"code": code, "device": self.device, "detail": detail}
        self._worker.later(delay, Event("fault_raised", data))

    def dispense(self, stacks: int, cards: int) -> None:
        rnd = self._round_of()
        if self._plan.take("shoe-silent", rnd) is not None:
            self._fault(
                faults.RESPONSE_TIMEOUT, "shoe did not answer DISPENSE_REQ", SIM_RESPONSE_TIMEOUT_S
            )
            return
        if self._plan.take("shoe-jam", rnd) is not None:
            self._fault(faults.SHOE_JAM, "shoe reports a card jam", self._delay)
            return
        if self._plan.take("garbage", rnd) is not None:
            self._fault(
                faults.PROTOCOL_ERROR, "garbage on the shoe's line: answer discarded", self._delay
            )
            return
        hands, remaining = self._deck.deal(stacks, cards)
        data = {
            "device": self.device,
            "stacks": stacks,
            "cards": cards,
            "remaining": remaining,
            "hands": hands if self._card_reading else None,
        }
        self._worker.later(self._delay, Event("cards_dispensed", data))

    def stop(self) -> None:
        self._worker.stop()


class MockPins:
    """Drives the input pins of the GPIO drivers built on ``factory`` (a MockFactory): every
    input is active-low with a pull-up, so an activation is drive_low then drive_high."""

    def __init__(self, factory: Any, pins: PinConfig) -> None:
        self._factory = factory
        self._pins = pins

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

    def light_levels(self) -> tuple[bool, ...]:
        """The output level of each acceptor light pin (for tests and the status line)."""
        return tuple(bool(self._factory.pin(n).state) for n in self._pins.acceptor_lights)

    def segment_levels(self) -> tuple[bool, ...]:
        """The output level of each number-display segment pin a..g."""
        return tuple(bool(self._factory.pin(n).state) for n in self._pins.display_segments)


class PtyFaults:
    """Injects the planned faults into the pty simulators (``drivers.sim.bench``) at the point
    of the round where they bite, and lets the scripted supervisor repair the device before
    clearing the fault, as a technician would. Driven by the director's loop, from the public
    snapshot only: a shuffler fault for round R is armed while round R-1 is played (Play,
    Settlement, JackpotPending; or the closed table for round 1), a shoe or line fault in
    Betting / LockedOut of round R."""

    SHUFFLER_KINDS = ("shuffler-count", "shuffler-silent")
    SHOE_KINDS = ("shoe-jam", "shoe-silent", "garbage")
    LATE_STATES = frozenset({"Open_Play", "Open_Settlement", "Open_JackpotPending"})
    EARLY_STATES = frozenset({"Open_Betting", "Open_LockedOut"})

    def __init__(self, sim: Any, plan: FaultPlan) -> None:
        self._sim = sim
        self._plan = plan
        self.injected: list[str] = []

    def arm(self, state: str, round_id: int) -> None:
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
        else:
            self._sim.inject(fault.kind, fault.value)
        self.injected.append(fault.kind)

    def repair(self) -> list[str]:
        """End every injected device fault (the table is in Fault); returns what was fixed."""
        fixed, self.injected = self.injected, []
        for kind in fixed:
            self._sim.clear(kind)
        return fixed


class PersistentDeck(_DriverDeck):
    """The cards in the simulated shoe, kept in a small JSON file beside the journal, so that a
    restart of the controller (which restarts the in-process simulators) finds the shoe as a real
    table would: still holding the shuffled deck. Written atomically after every load and take.
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

    def _save(self, deck_id: int) -> None:
        tmp = self._path.with_name(self._path.name + ".tmp")
        tmp.write_text(json.dumps({"deck_id": deck_id, "cards": self._mirror}), "utf-8")
        os.replace(tmp, self._path)
