"""Lock-out latency: from the lock-out button's pin edge to the acceptor lights reading "locked".

The path measured is the real one of DESIGN.md "How an event flows", on gpiozero's MockFactory:
the lock-out pin is driven low; gpiozero's callback (our ``GpioLockoutButton``) posts
``lockout_pressed`` on a queue; an owner thread takes it, commits one journal entry with its
snapshot and meters (``controller.journal.store.Journal``: a real SQLite file in WAL mode with
``synchronous=FULL``, so one fsync per entry), then applies the lights effect; the clock stops
when the owner reads the six light pins at the locked pattern. The attract chase of the betting
lights runs in the background all along, as at the table.

Figures (``python -m bench bench_lockout``):
- ``lockout_to_output_p99_ms``: p99 of that path over ``PRESSES`` presses (target <= 20 ms);
- ``bare_commit_p99_ms``: p99 of the same ``Journal.append`` alone, interleaved in the same run;
- ``lockout_overhead_ratio``: the first over the second (what the GPIO and queue hops add).
Must never be imported by the service.
"""

from __future__ import annotations

import math
import queue
import tempfile
import threading
import time
from pathlib import Path

from gpiozero.pins.mock import MockFactory

from controller.journal.store import Journal
from drivers.gpio.gpio_table import build_gpio_table
from drivers.gpio.pins import PinConfig
from fsm.round.effects import Lights
from fsm.round.events import Event

PRESSES = 300
BETTING = ["lit", "attract", "lit", "attract", "off", "lit"]
LOCKED = ["locked", "off", "locked", "off", "off", "locked"]
LOCKED_LEVELS = (True, False, True, False, False, True)
SNAPSHOT = {
    "state": "Open_LockedOut",
    "round_id": 0,
    "positions": [{"seat": n, "wager_cents": 500, "progressive": n % 2 == 1} for n in range(1, 7)],
    "lights": LOCKED,
    "display": "locked",
}
METERS = {"progressive": {"value_cents": 1_234_567, "contributed_cents": 98_765, "hits": 3}}


class _StepClock:
    """Debounce clock for the bench: one second passes between presses without sleeping."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def run() -> dict[str, float | int | str]:
    pins = PinConfig()
    factory = MockFactory()
    clock = _StepClock()
    events: queue.Queue[Event | None] = queue.Queue()
    table = build_gpio_table(pins, factory, events.put, clock=clock)
    light_pins = [factory.pin(n) for n in pins.acceptor_lights]
    lockout_pin = factory.pin(pins.lockout_button)
    done = threading.Event()
    lockout_done_at: list[float] = []
    bare_ms: list[float] = []
    problems: list[str] = []

    with tempfile.TemporaryDirectory(prefix="bench-lockout-") as tmp:
        db = Path(tmp) / "journal.db"

        def owner() -> None:
            # the journal's sqlite connection belongs to the thread that opens it
            journal = Journal.open(db, table_id="BENCH", created_ms=0)
            seq_ts = 0
            try:
                while (event := events.get()) is not None:
                    seq_ts += 1
                    if event.type == "lockout_pressed":
                        effect = {"type": "lights", "states": LOCKED}
                        data = {**event.data, "effects": [effect]}
                        journal.append(seq_ts, 1, event.type, data, SNAPSHOT, METERS)
                        table.apply(effect)
                        levels = tuple(bool(pin.state) for pin in light_pins)
                        lockout_done_at.append(time.perf_counter())
                        if levels != LOCKED_LEVELS:
                            problems.append(f"lights read {levels} after the locked effect")
                    elif event.type == "bench_betting":
                        table.apply(Lights(tuple(BETTING)))
                    elif event.type == "bench_bare_commit":
                        data = {"effects": [{"type": "lights", "states": LOCKED}]}
                        start = time.perf_counter()
                        journal.append(seq_ts, 1, "lockout_pressed", data, SNAPSHOT, METERS)
                        bare_ms.append((time.perf_counter() - start) * 1000)
                    done.set()
            finally:
                journal.close()

        thread = threading.Thread(target=owner, name="bench-owner")
        thread.start()

        def round_trip(event: Event | None) -> None:
            done.clear()
            events.put(event)
            done.wait()

        lockout_ms: list[float] = []
        try:
            for _ in range(PRESSES):
                round_trip(Event("bench_betting"))
                clock.now += 1.0
                done.clear()
                start = time.perf_counter()
                lockout_pin.drive_low()  # the callback posts lockout_pressed
                done.wait()
                lockout_ms.append((lockout_done_at[-1] - start) * 1000)
                clock.now += 0.2
                lockout_pin.drive_high()
                round_trip(Event("bench_bare_commit"))
        finally:
            events.put(None)
            thread.join()
            table.safe_state()
            table.close()
            factory.reset()

    if problems or len(lockout_ms) != PRESSES:
        raise RuntimeError(f"bench_lockout: {problems[:1]} ({len(lockout_ms)} presses timed)")
    lockout_p99 = _p99(lockout_ms)
    bare_p99 = _p99(bare_ms)
    return {
        "lockout_to_output_p99_ms": round(lockout_p99, 3),
        "lockout_to_output_p50_ms": round(sorted(lockout_ms)[len(lockout_ms) // 2], 3),
        "bare_commit_p99_ms": round(bare_p99, 3),
        "lockout_overhead_ratio": round(lockout_p99 / bare_p99, 3),
        "lockout_presses": PRESSES,
        "lockout_journal": "controller.journal.store.Journal (WAL, synchronous=FULL)",
    }


if __name__ == "__main__":
    print(run())
