"""``tablectl selftest --hardware`` (issue 9): its logic on MockFactory, since nothing here has a
Raspberry Pi. Lights and digit in turn, every input echoed with its pin, the lock-out -> lights
latency and the meter sign's update time measured and written."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from pathlib import Path

from gpiozero.pins.mock import MockFactory

from controller.cli.selftest import HardwareSelfTest
from drivers.gpio.devices import DebounceTimes
from drivers.gpio.gpio_table import build_gpio_table
from drivers.gpio.max7219 import SimulatedChain
from drivers.gpio.pins import PinConfig
from drivers.gpio.sign import cells, draw

ROOT = Path(__file__).resolve().parents[1]
SIMULATED = ROOT / "controller" / "data" / "simulated-table.toml"


def _bench(
    seen: list[tuple[int, ...]] | None = None,
) -> tuple[HardwareSelfTest, MockFactory, SimulatedChain, io.StringIO]:
    """The self-test over the default plan on MockFactory; each of its pauses records which
    light pins are high at that moment into ``seen``."""
    pins = PinConfig()
    factory = MockFactory()
    chain = SimulatedChain(pins.spi_chips)
    out = io.StringIO()

    def pause(seconds: float) -> None:
        if seen is not None:
            seen.append(tuple(p for p in pins.acceptor_lights if factory.pin(p).state))

    test = HardwareSelfTest(pins, out, sleep=pause)
    no_bounce = DebounceTimes(button_s=0.0, chip_s=0.0, shaker_s=0.0)
    test.table = build_gpio_table(pins, factory, test.post, spi=chain, debounce=no_bounce)
    return test, factory, chain, out


def test_each_light_goes_on_alone_in_order() -> None:
    seen: list[tuple[int, ...]] = []
    test, factory, _, out = _bench(seen)
    try:
        test.lights()
        assert seen == [(pin,) for pin in test.pins.acceptor_lights]
        assert not any(factory.pin(p).state for p in test.pins.acceptor_lights)
        assert "light 1 (BCM 18) on" in out.getvalue()
    finally:
        test.table.close()


def test_the_digit_and_each_sign_module_are_driven_and_the_update_time_measured() -> None:
    test, _, chain, out = _bench()
    try:
        test.digit()
        test.sign(updates=5)
        assert "number display (MAX7219 chip 0, DIG0)" in out.getvalue()
        assert "module 1: 8.8.8.8.8.8.8.8." in out.getvalue()
        assert len(test.figures.sign_update_ms) == 5
        assert draw(chain.digits(1)) == draw(cells("        "))  # blank again afterwards
    finally:
        test.table.close()


def test_every_input_is_echoed_with_its_pin_and_each_lockout_is_timed() -> None:
    test, factory, _, out = _bench()
    pins = test.pins
    done = threading.Event()

    def technician() -> None:
        for pin in (pins.lockout_button, pins.panel_next, pins.acceptor_sensors[2]):
            factory.pin(pin).drive_low()
            factory.pin(pin).drive_high()
        factory.pin(pins.lockout_button).drive_low()
        done.set()

    try:
        thread = threading.Thread(target=technician)
        thread.start()
        thread.join()
        test.echo_inputs(30.0, stop=_after(done, test))
        text = out.getvalue()
        assert "lockout_pressed (BCM 5)" in text
        assert "panel_next (BCM 6)" in text
        assert "chip in acceptor 3 (BCM 22)" in text
        assert test.figures.inputs_seen == {
            "lockout_pressed": 2,
            "panel_next": 1,
            "chip_detected": 1,
        }
        assert len(test.figures.lockout_latency_ms) == 2
        assert all(ms >= 0 for ms in test.figures.lockout_latency_ms)
    finally:
        test.table.close()


def _after(done: threading.Event, test: HardwareSelfTest) -> threading.Event:
    """A stop flag set once the queued inputs are all echoed."""
    stop = threading.Event()

    def watch() -> None:
        done.wait()
        while not test._events.empty():
            threading.Event().wait(0.01)
        threading.Event().wait(0.2)
        stop.set()

    threading.Thread(target=watch, daemon=True).start()
    return stop


def test_the_command_runs_every_step_and_writes_its_figures(tmp_path: Path) -> None:
    figures = tmp_path / "selftest.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "selftest",
            "--hardware",
            "--config",
            str(SIMULATED),
            "--pin-factory",
            "mock",
            "--inputs-s",
            "0.2",
            "--step-s",
            "0",
            "--out",
            str(figures),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "acceptor lights, one at a time" in done.stdout
    data = json.loads(figures.read_text())
    assert data["outputs_driven"] == 6 + 12 + 1  # six lights, twelve glyphs, one sign module
    assert data["sign_update_ms"]["n"] == 20
    assert data["lockout_to_lights_ms"] is None  # nobody pressed it
