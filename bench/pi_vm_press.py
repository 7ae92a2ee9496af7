"""Press -> light through the table's GPIO devices, one script for both sides of bench_pi_vm:

    python bench/pi_vm_press.py mock        on the host: gpiozero's MockFactory
    python bench/pi_vm_press.py pi          in the Pi stand-in VM: lgpio on the gpio-sim chip
    (a second argument: the number of presses, default 100)

The path is the lock-out's (DESIGN.md "How an event flows", without the journal, which
bench_lockout measures): the lock-out line goes low (MockFactory: ``drive_low``; the VM: the
gpio-sim line's pull written through sysfs, so the kernel's gpio-sim, its interrupt and the
GPIO uAPI v2 edge event carry it to lgpio's callback thread); the button's glitch filter (2 ms)
confirms it; the handler posts ``lockout_pressed``; an owner thread applies the locked lights;
the clock stops when the six light lines read the locked pattern (the VM: their values read
back from gpio-sim's sysfs, i.e. what the kernel was told to drive). Also a bare Python loop,
timed the same way on both sides, for the emulation's slowdown. Prints one JSON object.
Must never be imported by the service.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from typing import Any

PRESSES = 100
BETTING = ["lit", "attract", "lit", "attract", "off", "lit"]
LOCKED = ["locked", "off", "locked", "off", "off", "locked"]
LOCKED_LEVELS = [1, 0, 1, 0, 0, 1]
LOOP_N = 300_000


def python_loop_s() -> float:
    """The best of three runs of a bare loop (the emulation's slowdown is the VM's over the
    host's)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for i in range(LOOP_N):
            total += i * i
        best = min(best, time.perf_counter() - start)
    return best


class SimLines:
    """The gpio-sim chip's lines through sysfs (the VM's pivm-gpio-sim made it)."""

    def __init__(self) -> None:
        cfg = "/sys/kernel/config/gpio-sim/pi"
        with open(f"{cfg}/dev_name") as f:
            dev = f.read().strip()
        with open(f"{cfg}/bank0/chip_name") as f:
            chip = f.read().strip()
        self.base = f"/sys/devices/platform/{dev}/{chip}"
        self.chip = chip

    def pull(self, pin: int, how: str) -> None:
        with open(f"{self.base}/sim_gpio{pin}/pull", "w") as f:
            f.write(f"pull-{how}")

    def values(self, pins: list[int]) -> list[int]:
        out = []
        for pin in pins:
            with open(f"{self.base}/sim_gpio{pin}/value") as f:
                out.append(int(f.read(1)))
        return out


def measure(mode: str, presses: int = PRESSES) -> dict[str, Any]:
    from drivers.gpio.devices import DebounceTimes
    from drivers.gpio.gpio_table import build_gpio_table
    from drivers.gpio.pins import PinConfig
    from fsm.round.effects import Lights
    from fsm.round.events import Event

    # the shipped pin plan with the digit on seven pins and no sign (no SPI in the VM)
    pins = PinConfig(
        number_display="segments", display_segments=(2, 3, 4, 8, 9, 10, 11), sign_modules=0
    )
    events: queue.Queue[Event | None] = queue.Queue()
    if mode == "mock":
        from gpiozero.pins.mock import MockFactory

        factory: Any = MockFactory()
        lights = [factory.pin(n) for n in pins.acceptor_lights]
        lockout = factory.pin(pins.lockout_button)

        def press() -> None:
            lockout.drive_low()

        def release() -> None:
            lockout.drive_high()

        def read() -> list[int]:
            return [int(bool(p.state)) for p in lights]

        chip = "MockFactory"
    else:
        from drivers.gpio.factory import make_pin_factory

        sim = SimLines()
        factory = make_pin_factory("pi")
        light_pins = list(pins.acceptor_lights)

        def press() -> None:
            sim.pull(pins.lockout_button, "down")

        def release() -> None:
            sim.pull(pins.lockout_button, "up")

        def read() -> list[int]:
            return sim.values(light_pins)

        chip = sim.chip
    table = build_gpio_table(pins, factory, events.put, debounce=DebounceTimes(glitch_s=0.002))

    def owner() -> None:
        while (event := events.get()) is not None:
            if event.type == "lockout_pressed":
                table.apply(Lights(tuple(LOCKED)))
            elif event.type == "bench_betting":
                table.apply(Lights(tuple(BETTING)))

    thread = threading.Thread(target=owner, name="bench-owner", daemon=True)
    thread.start()
    samples: list[float] = []
    try:
        for _ in range(presses):
            events.put(Event("bench_betting"))
            time.sleep(0.1)  # past the button's 30 ms quiet gap
            start = time.perf_counter()
            press()
            deadline = start + 5.0
            while read() != LOCKED_LEVELS:
                if time.perf_counter() > deadline:
                    raise RuntimeError("the lights never read the locked pattern")
                time.sleep(0.0002)  # let the callback and owner threads have the GIL
            samples.append((time.perf_counter() - start) * 1000)
            time.sleep(0.05)
            release()
    finally:
        events.put(None)
        thread.join(timeout=5)
        table.safe_state()
        table.close()
    samples.sort()
    return {
        "press_to_light_ms": samples,
        "python_loop_s": python_loop_s(),
        "chip": chip,
        "pid": os.getpid(),
    }


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "mock"
    print(json.dumps(measure(mode, int(sys.argv[2]) if len(sys.argv) > 2 else PRESSES)))
