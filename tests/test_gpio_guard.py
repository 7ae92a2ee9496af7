"""One exception must not kill every input (issue 9 point 2): lgpio runs every pin's callback on
one thread with no guard, so the handlers catch everything and post a device fault, the service
exits when that thread is dead anyway, and the inputs are armed only once the owner runs."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory
from test_cmd_run import write_config
from test_gpio_rig import DEFAULT_SENSOR_PINS, LOCKOUT_PIN, NEXT_PIN, SEGMENT_WIRING

from controller.cli import run as run_cli
from drivers.gpio.devices import INPUT_FAULT, guarded
from drivers.gpio.factory import ChipInfo, callback_thread_alive
from drivers.gpio.gpio_table import build_gpio_table
from fsm.round.events import Event

ROOT = Path(__file__).resolve().parents[1]

LGPIO_EDGES = """
import os, struct, time, lgpio
from drivers.gpio.devices import guarded
from drivers.gpio.factory import callback_thread_alive
seen, posted = [], []
def boom():
    raise RuntimeError("injected")
def on_edge(gpio, handler):
    def func(chip, line, level, tick):
        handler()
    return lgpio._callback_ADT(0, gpio, lgpio.BOTH_EDGES, func)
GUARD = os.environ["GUARD"] == "1"
handler = guarded("lockout", posted.append, boom) if GUARD else boom
thread = lgpio._notify_thread
thread.append(on_edge(5, handler))
thread.append(on_edge(6, lambda: seen.append(6)))
fd = os.open(os.path.join(os.environ["LG_WD"], ".lgd-nfy%d" % thread._notify), os.O_WRONLY)
def edge(gpio, tick):  # what lgpio's C side writes on an edge: tick, chip, gpio, level, flags
    os.write(fd, struct.pack("QBBBBI", tick, 0, gpio, 0, 0, 0))
edge(5, 1)
edge(6, 2)
deadline = time.monotonic() + 5
while time.monotonic() < deadline and thread.is_alive() and not seen:
    time.sleep(0.01)
print("SEEN", seen, "ALIVE", callback_thread_alive(), "FAULTS", [e.data["code"] for e in posted])
"""


def _edges(tmp_path: Path, guard: bool) -> str:
    pytest.importorskip("lgpio")  # the x86-64 wheel is in the test extra
    env = {**os.environ, "LG_WD": str(tmp_path), "PYTHONPATH": str(ROOT), "GUARD": str(int(guard))}
    done = subprocess.run(
        [sys.executable, "-c", LGPIO_EDGES], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_one_raise_in_an_unguarded_lgpio_callback_stops_every_later_edge(tmp_path: Path) -> None:
    """The failure itself, with the real lgpio: the edge on line 6 after the raise on line 5
    is never delivered, and callback_thread_alive() is how the service notices."""
    assert "SEEN [] ALIVE False" in _edges(tmp_path, guard=False)


def test_a_guarded_handler_keeps_lgpios_callback_thread_and_posts_a_fault(tmp_path: Path) -> None:
    assert "SEEN [6] ALIVE True FAULTS ['GPIO_INPUT']" in _edges(tmp_path, guard=True)


def test_a_handler_that_raises_posts_a_device_fault_and_every_other_input_goes_on() -> None:
    """On MockFactory the handlers run in the thread that drives the pin: a raise would reach
    drive_low(). Here the owner's post refuses the lock-out once."""
    factory = MockFactory()
    events: list[Event] = []

    def post(event: Event) -> None:
        if event.type == "lockout_pressed" and not any(e.type == "fault_raised" for e in events):
            raise RuntimeError("injected: queue refused")
        events.append(event)

    table = build_gpio_table(SEGMENT_WIRING, factory, post)
    try:
        factory.pin(LOCKOUT_PIN).drive_low()  # must not raise into the "callback thread"
        factory.pin(LOCKOUT_PIN).drive_high()
        (fault,) = events
        assert fault.type == "fault_raised"
        assert fault.data["code"] == INPUT_FAULT and fault.data["device"] == "lockout"
        assert "RuntimeError: injected: queue refused" in str(fault.data["detail"])
        factory.pin(NEXT_PIN).drive_low()
        factory.pin(DEFAULT_SENSOR_PINS[0]).drive_low()
        assert [e.type for e in events[1:]] == ["panel_next", "chip_detected"]
    finally:
        table.close()


def test_a_fault_that_cannot_be_posted_either_is_only_logged() -> None:
    def post(event: Event) -> None:
        raise RuntimeError("owner gone")

    def boom() -> None:
        raise ValueError("bad")

    guarded("panel_void", post, boom)()  # returns, raises nothing


def test_inputs_see_no_edge_before_they_are_armed() -> None:
    factory = MockFactory()
    events: list[Event] = []
    table = build_gpio_table(SEGMENT_WIRING, factory, events.append, arm=False)
    try:
        factory.pin(LOCKOUT_PIN).drive_low()
        factory.pin(LOCKOUT_PIN).drive_high()
        factory.pin(DEFAULT_SENSOR_PINS[2]).drive_low()
        assert events == []
        factory.pin(DEFAULT_SENSOR_PINS[2]).drive_high()
        table.arm()
        factory.pin(LOCKOUT_PIN).drive_low()
        assert events == [Event("lockout_pressed")]
    finally:
        table.close()


def test_the_service_builds_its_inputs_unarmed_so_an_edge_before_the_owner_is_harmless(
    tmp_path: Path, ptys: tuple[str, str]
) -> None:
    """controller/cli/run.py used to arm the callbacks before the owner existed: a lock-out
    held during a restart then raised IndexError on lgpio's thread and killed every input."""
    config = run_cli.load_config(write_config(tmp_path, *ptys))
    table = run_cli.build_service(config, "mock")
    owner, gpio = table.owner, table.gpio
    try:
        pin = gpio.lockout._button.pin
        pin.drive_low()  # no owner thread yet: nothing may be posted, nothing may raise
        pin.drive_high()
        assert owner.wait_idle(0), "an edge was posted to an owner that does not run"
        assert gpio.lockout._button.when_activated is None
    finally:
        for device in table.serial:
            device.stop()
        gpio.close()


def test_the_service_exits_for_a_restart_when_lgpios_callback_thread_is_dead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dead = threading.Thread(target=lambda: None)
    dead.start()
    dead.join()
    stand_in = types.ModuleType("lgpio")
    stand_in._notify_thread = dead  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lgpio", stand_in)
    assert callback_thread_alive() is False

    class Owner:
        def post(self, event: Event) -> None: ...

    watch = run_cli._Watch(Owner())
    assert watch.check() is False
    assert watch.failure == "lgpio's callback thread died: no input would be seen"
    monkeypatch.setitem(sys.modules, "lgpio", None)
    assert callback_thread_alive() is None  # MockFactory: no callback thread to watch


def test_run_check_reports_the_chip_its_label_and_the_lines_in_use(tmp_path: Path) -> None:
    """issue 9 point 1: `tablectl run --check` prints the chip, its label and the lines."""
    from test_gpio_factory import PI5_LISTING

    config = run_cli.load_config(write_config(tmp_path, "/dev/null", "/dev/zero"))
    ready = run_cli.check_environment(config, "pi", chips=lambda: PI5_LISTING)
    assert "gpio chip: /dev/gpiochip0, label pinctrl-rp1, 54 lines" in ready.info
    (lines,) = [line for line in ready.info if line.startswith("gpio lines in use: ")]
    assert "lockout_button=5" in lines and "acceptor_lights[5]=27" in lines
    assert any(line.startswith("spi: /dev/spidev0.0") for line in ready.info)


def test_run_check_names_the_real_cause_when_no_header_chip_is_found(tmp_path: Path) -> None:
    config = run_cli.load_config(write_config(tmp_path, "/dev/null", "/dev/zero"))
    listing = [ChipInfo(0, error="permission denied: the service user needs the group gpio")]
    ready = run_cli.check_environment(config, "pi", chips=lambda: listing)
    assert any("the service user needs the group gpio" in p for p in ready.fatal)
    assert not any("permissions" in p and "/dev/gpiochip*" in p for p in ready.fatal)


def test_run_check_recognises_a_cm5_and_its_chip(tmp_path: Path) -> None:
    from test_gpio_factory import PI4_LISTING, PI5_LISTING

    config = run_cli.load_config(write_config(tmp_path, "/dev/null", "/dev/zero"))
    cm5 = "Raspberry Pi Compute Module 5 Rev 1.0"
    ready = run_cli.check_environment(config, "pi", lambda: PI5_LISTING, lambda: cm5)
    assert f"board: {cm5} (header on the RP1)" in ready.info
    assert not any("RP1" in p for p in ready.fatal)
    # a Pi 5 kernel that shows only a BCM2711-style chip is a wrong image, said as such
    ready = run_cli.check_environment(config, "pi", lambda: PI4_LISTING, lambda: cm5)
    assert any("has its header on the RP1, but the chip found is" in p for p in ready.fatal)
