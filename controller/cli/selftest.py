"""``tablectl selftest --hardware --config PATH``: the table's GPIO, display chain and sign
checked on a real board by a technician, with the service stopped.

Responsible for driving every output in turn (the acceptor lights one by one, the 1-7 digit
through every glyph, each meter-sign module with all segments lit), echoing every input as it
arrives (each press, chip, key turn, shake, door, with its BCM pin), measuring the lock-out ->
locked-lights latency (from the press being posted on lgpio's callback thread, or on the glitch
filter's timer thread after its window, to the light pins reading back the locked pattern) and
the meter sign's full update time, and printing the figures (and
writing them as JSON with ``--out``). Must never open or touch the journal, never decide a game
rule, and never run while the service holds the pins (lgpio answers "GPIO busy": the message
says to stop paigow-table first).
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from controller.cli import args as types
from fsm.round.effects import Display, Lights
from fsm.round.events import Event
from fsm.round.vocabulary import LightState

LOCKED: list[LightState] = ["locked"] * 6
BETTING: list[LightState] = ["attract"] * 6
INPUT_PINS = {
    "lockout_pressed": "lockout_button",
    "panel_next": "panel_next",
    "panel_void": "panel_void",
    "supervisor_key": "supervisor_key",
    "shake_detected": "shaker",
    "shaker_lid": "shaker_lid",
    "door": "door",  # the controller compartment's door switch, when wired (issue 28 item 4)
}


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "selftest", help="check the table's lights, digit, sign and inputs on a real board"
    )
    parser.add_argument("--hardware", action="store_true", required=True, help="the GPIO test")
    parser.add_argument("--config", required=True, help="the table configuration (TOML)")
    parser.add_argument(
        "--inputs-s",
        type=types.seconds(0, 3600),
        default=30.0,
        help="seconds to echo inputs (default 30)",
    )
    parser.add_argument(
        "--step-s",
        type=types.seconds(0, 60),
        default=0.5,
        help="seconds each output stays on (default 0.5)",
    )
    parser.add_argument("--out", help="write the figures as JSON to this file")
    # tests only: gpiozero's MockFactory instead of lgpio
    parser.add_argument(
        "--pin-factory", choices=("pi", "mock"), default="pi", help=argparse.SUPPRESS
    )
    parser.set_defaults(func=run)


@dataclass
class Figures:
    """What the self-test measured (``--out`` writes these)."""

    board: str | None = None
    gpio_chip: str | None = None
    glitch_filter_ms: int | None = None
    outputs_driven: int = 0
    inputs_seen: dict[str, int] = field(default_factory=dict)
    lockout_latency_ms: list[float] = field(default_factory=list)
    sign_update_ms: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        def stats(values: list[float]) -> dict[str, float] | None:
            if not values:
                return None
            return {
                "n": len(values),
                "median": round(statistics.median(values), 3),
                "max": round(max(values), 3),
            }

        return {
            "board": self.board,
            "gpio_chip": self.gpio_chip,
            "outputs_driven": self.outputs_driven,
            "inputs_seen": dict(self.inputs_seen),
            "lockout_to_lights_ms": stats(self.lockout_latency_ms),
            "glitch_filter_ms": self.glitch_filter_ms,
            "sign_update_ms": stats(self.sign_update_ms),
        }


class HardwareSelfTest:
    """The steps of the self-test over one GPIO table (``drivers.gpio.gpio_table.Table``) built with
    :meth:`post` as its input callback."""

    def __init__(
        self,
        pins: Any,
        out: TextIO,
        *,
        sleep: Callable[[float], None] = time.sleep,
        step_s: float = 0.5,
    ) -> None:
        self.pins = pins
        self.out = out
        self.table: Any = None
        self.figures = Figures()
        self._sleep = sleep
        self._step_s = step_s
        self._events: queue.Queue[tuple[float, Event]] = queue.Queue()

    def post(self, event: Event) -> None:
        """The table's input callback (lgpio's thread): timestamp and queue, nothing more."""
        self._events.put((time.perf_counter(), event))

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def lights(self) -> None:
        self.say("acceptor lights, one at a time:")
        for i, pin in enumerate(self.pins.acceptor_lights):
            states: list[LightState] = ["off"] * 6
            states[i] = "lit"
            self.table.apply(Lights(tuple(states)))
            self.say(f"  light {i + 1} (BCM {pin}) on")
            self.figures.outputs_driven += 1
            self._sleep(self._step_s)
        self.table.apply(Lights(tuple(["off"] * 6)))

    def digit(self) -> None:
        from drivers.gpio.interfaces import GLYPHS

        where = (
            "MAX7219 chip 0, DIG0"
            if self.pins.number_display == "max7219"
            else f"BCM {', '.join(map(str, self.pins.display_segments or ()))}"
        )
        self.say(f"number display ({where}), every glyph in turn:")
        for glyph in GLYPHS:
            self.table.apply(Display(glyph))
            self.say(f"  {glyph}")
            self.figures.outputs_driven += 1
            self._sleep(self._step_s)
        self.table.apply(Display(" "))

    def sign(self, updates: int = 20) -> None:
        sign = self.table.sign
        if sign is None:
            self.say("meter sign: not fitted (pins.sign_modules = 0)")
            return
        modules = sign.modules
        blank = ["        "] * modules
        self.say(f"meter sign: {modules} module(s), each with every segment lit in turn:")
        for m in range(modules):
            texts = list(blank)
            texts[m] = "8." * 8
            sign.show(texts)
            self.say(f"  module {m + 1}: 8.8.8.8.8.8.8.8.")
            self.figures.outputs_driven += 1
            self._sleep(self._step_s)
        for n in range(updates):  # a full update: configuration registers and 8 digits each
            texts = [f"{n * 111 + m:8d}"[-8:] for m in range(modules)]
            start = time.perf_counter()
            sign.show(texts)
            self.figures.sign_update_ms.append((time.perf_counter() - start) * 1000)
        sign.show(blank)
        s = self.figures.summary()["sign_update_ms"]
        self.say(f"  full update: median {s['median']} ms, max {s['max']} ms over {updates}")

    def echo_inputs(self, duration_s: float, stop: threading.Event | None = None) -> None:
        """Echo every input for ``duration_s``; each lock-out press is answered with the locked
        lights (as the owner would, without the journal) and its latency measured."""
        self.say(
            f"inputs for {duration_s:g} s: press the lock-out, NEXT, VOID, turn the key, drop a "
            "chip in each acceptor, shake the shaker"
            + (", open and close the compartment door" if self.pins.door is not None else "")
        )
        self.table.apply(Lights(tuple(BETTING)))
        light_pins = list(self.pins.acceptor_lights)
        deadline = time.monotonic() + duration_s
        while time.monotonic() < deadline and not (stop is not None and stop.is_set()):
            try:
                posted, event = self._events.get(timeout=0.05)
            except queue.Empty:
                continue
            if event.type == "lockout_pressed":
                self.table.apply(Lights(tuple(LOCKED)))
                if self._lights_read_locked(light_pins):
                    self.figures.lockout_latency_ms.append((time.perf_counter() - posted) * 1000)
                self.table.apply(Lights(tuple(BETTING)))
            self.say(f"  {self._describe(event)}")
            self.figures.inputs_seen[event.type] = self.figures.inputs_seen.get(event.type, 0) + 1
        self.table.apply(Lights(tuple(["off"] * 6)))
        latency = self.figures.summary()["lockout_to_lights_ms"]
        if latency:
            self.say(
                f"  lock-out -> lights: median {latency['median']} ms, max {latency['max']} ms "
                f"over {latency['n']} presses"
            )

    def _lights_read_locked(self, light_pins: list[int]) -> bool:
        acceptors = self.table.acceptors
        board = getattr(acceptors, "_board", None)
        if board is None:
            return True  # a fake: nothing to read back
        return all(bool(led.value) for led in board.leds)

    def _describe(self, event: Event) -> str:
        data = dict(event.data)
        if event.type == "chip_detected":
            position = int(data["position"])
            return f"chip in acceptor {position} (BCM {self.pins.acceptor_sensors[position - 1]})"
        key = INPUT_PINS.get(event.type)
        pin = getattr(self.pins, key, None) if key else None
        extra = f" {data}" if data else ""
        return f"{event.type}{extra} (BCM {pin})"


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from controller.config import ConfigError, load_config
    from drivers.gpio.devices import DebounceTimes
    from drivers.gpio.factory import (
        PinFactoryError,
        board_model,
        find_header_chip,
        list_gpio_chips,
        make_pin_factory,
    )
    from drivers.gpio.gpio_table import build_gpio_table
    from drivers.gpio.max7219 import SimulatedChain

    out = out or sys.stdout
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"selftest: {exc}", file=sys.stderr)
        return 2
    pins = config.pins
    test = HardwareSelfTest(pins, out, step_s=args.step_s)
    test.figures.board = board_model()
    test.figures.glitch_filter_ms = pins.glitch_filter_ms
    try:
        if args.pin_factory == "pi":
            chip = find_header_chip(list_gpio_chips()) if pins.gpio_chip is None else None
            test.figures.gpio_chip = chip.describe() if chip else f"gpiochip{pins.gpio_chip}"
        factory = make_pin_factory(args.pin_factory, chip=pins.gpio_chip)
        spi = SimulatedChain(pins.spi_chips) if args.pin_factory == "mock" else None
        test.table = build_gpio_table(
            pins,
            factory,
            test.post,
            debounce=DebounceTimes(glitch_s=pins.glitch_filter_ms / 1000),
            spi=spi if pins.uses_spi else None,
        )
    except (PinFactoryError, OSError) as exc:
        print(f"selftest: cannot open the hardware: {exc}", file=sys.stderr)
        print("selftest: is paigow-table running? (systemctl stop paigow-table)", file=sys.stderr)
        return 3
    except Exception as exc:  # lgpio's "GPIO busy" and the like
        print(f"selftest: cannot claim the pins: {type(exc).__name__}: {exc}", file=sys.stderr)
        print("selftest: is paigow-table running? (systemctl stop paigow-table)", file=sys.stderr)
        return 3
    try:
        test.say(f"board: {test.figures.board or 'unknown'}; gpio: {test.figures.gpio_chip}")
        test.lights()
        test.digit()
        test.sign()
        test.echo_inputs(args.inputs_s)
    finally:
        test.table.safe_state()
        test.table.close()
    summary = test.figures.summary()
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
        test.say(f"figures written to {args.out}")
    return 0
