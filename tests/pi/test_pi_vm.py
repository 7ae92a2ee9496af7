"""The table on a real Linux kernel (issue 27): an arm64 Debian Bookworm VM under QEMU standing
in for a Raspberry Pi 5, with systemd as PID 1, the project installed by deploy/install.sh,
a gpio-sim chip labelled like the Pi's header chip and the shoe and shuffler behind QEMU's FTDI
USB serial adapters (``make pi-vm``; ``make test`` deselects the pi_vm marker).

The tests run in file order on one VM and build on each other as a table's day does: the service
starts, rounds are played from the inputs, the service is killed, an adapter is pulled, the
hardware self-test runs, the VM reboots, and a broken unit is shown to fail the READY check.
Regulations: the journal's integrity across a kill and a power cycle (NJ 13:69E-1.39B(h),
GLI-11 critical memory), the lock-out lights the dealer checks (NY 5324.41(k)(2)).
"""

from __future__ import annotations

import json
import os
import re
import time

from pivm_support import ACCEPTOR_LIGHTS, ACCEPTOR_SENSORS, PINS, SEGMENTS, UNIT, PiVM
from pivm_table import (
    drop_chips,
    journal_entries,
    journal_verify,
    key_step,
    lights,
    play_round,
    status,
    steady_lights,
    unit_state,
    wait_failed_start,
    wait_ready,
    wait_state,
)

TABLECTL = "/opt/paigow/venv/bin/tablectl"


def test_pid_1_is_systemd_and_the_header_chip_is_found_by_its_label(vm: PiVM) -> None:
    assert vm.sh("readlink /proc/1/exe").strip() == "/usr/lib/systemd/systemd"
    model = vm.sh("tr -d '\\0' </proc/device-tree/model")
    assert model.startswith("Raspberry Pi 5") if vm.board == "pi5" else "Raspberry Pi 4" in model
    chips = vm.sh("gpiodetect")
    # QEMU's own PL061 is gpiochip0: the header chip is found by label, not by number
    assert re.search(r"gpiochip1 \[pinctrl-(rp1|bcm2711)\]", chips), chips
    assert "root gpio" in vm.sh("ls -l /dev/gpiochip1")


def test_service_reaches_ready_under_systemd_with_its_sandbox_enforced(vm: PiVM) -> None:
    unit = wait_ready(vm, timeout=600)
    pid = unit["MainPID"]
    assert vm.sh(f"ps -o user= -p {pid}").strip() == "paigow"
    proc = vm.sh(f"cat /proc/{pid}/status")
    assert re.search(r"^NoNewPrivs:\s+1$", proc, re.M), proc
    assert re.search(r"^Seccomp:\s+2$", proc, re.M), proc  # SystemCallFilter is live
    assert re.search(r"^CapEff:\s+0+$", proc, re.M), proc
    # ProtectSystem=strict for real: the service's view of /opt is read-only, its state is not
    rc, _, err = vm.run(f"nsenter -t {pid} -m -- touch /opt/paigow/pivm-probe")
    assert rc != 0 and "Read-only file system" in err, err
    assert vm.run(f"nsenter -t {pid} -m -- test -w /var/lib/paigow")[0] == 0
    # DevicePolicy=closed: the device cgroup (BPF) lets the GPIO chip through, not /dev/sda's kind
    # the time-sync wait ran, outside the sandbox ('+'), and was not killed by its seccomp filter
    pre = vm.prop("ExecStartPre")
    assert "systemd-time-wait-sync" in pre and re.search(r"code=exited ; status=0\b", pre), pre
    shown = vm.sh(f"systemctl status --no-pager {UNIT}", check=False)
    assert 'Status: "' in shown and "journal seq" in shown, shown
    # the watchdog is pinged from the owner loop (WatchdogSec=30s, every 10 s)
    first = int(unit_state(vm)["WatchdogTimestampMonotonic"])
    time.sleep(12)
    assert int(unit_state(vm)["WatchdogTimestampMonotonic"]) > first


def test_udev_rules_name_the_usb_serial_adapters(vm: PiVM) -> None:
    for name, serial in (("shoe", "PGSHOE0001"), ("shuffler", "PGSHUF0001")):
        target = vm.sh(f"readlink -f /dev/paigow-{name}").strip()
        assert re.fullmatch(r"/dev/ttyUSB\d", target), target
        info = vm.sh(f"udevadm info --query=property --name={target}")
        assert "ID_VENDOR_ID=0403" in info and f"ID_SERIAL_SHORT={serial}" in info, info
        assert "ID_USB_DRIVER=ftdi_sio" in info, info
        assert "root dialout" in vm.sh(f"ls -lL /dev/paigow-{name}")


def test_rounds_are_played_from_inputs_pressed_on_gpio_sim(vm: PiVM) -> None:
    """Chips light their acceptor (NY 5324.41(d)(4)); after the lock-out the lit acceptors stay
    lit and the others go dark (k)(2); the RNG's position shows on the digit's pins."""
    restarts = wait_ready(vm)["NRestarts"]
    for positions in ([1, 3], [2, 5, 6]):
        seen = play_round(vm, positions)
        expect = [1 if p in positions else 0 for p in range(1, 7)]
        assert seen["lights_locked"] == expect, seen
        for p in positions:
            assert seen["lights_betting"][p - 1] == 1, seen
        assert seen.get("digit") in list("1234567"), seen
    assert status(vm)["rounds"] >= 2
    assert unit_state(vm)["NRestarts"] == restarts  # no watchdog kill, no crash on the way
    journal_verify(vm)


def test_kill_9_is_restarted_by_systemd_and_the_round_resumes(vm: PiVM) -> None:
    wait_ready(vm)
    st = play_until(vm, "Open_Betting")
    drop_chips(vm, [4])
    time.sleep(0.5)
    assert steady_lights(vm)[3] == 1
    before = unit_state(vm)
    vm.sh(f"kill -9 {before['MainPID']}")
    after = wait_ready(vm, restarts_at_least=int(before["NRestarts"]) + 1)
    assert after["MainPID"] != before["MainPID"]
    resumed = status(vm)
    # the committed round is restored: same round, still betting, the chip's light lit again
    assert resumed["round"] == st["round"] and resumed["state"] == "Open_Betting", resumed
    assert steady_lights(vm)[3] == 1
    types = [e["type"] for e in journal_entries(vm)]
    assert types.count("power_up") >= 2
    seen = play_round(vm, [4])
    assert seen["lights_locked"] == [0, 0, 0, 1, 0, 0], seen
    journal_verify(vm)


def test_usb_serial_unplug_and_replug_are_journaled_and_recovered(vm: PiVM) -> None:
    wait_ready(vm)
    play_until(vm, "Open_Betting")
    shoe = next(d for d in vm.usb if d.name == "shoe")
    n0 = len(journal_entries(vm))
    vm.unplug(shoe)
    vm.sh("for i in $(seq 100); do [ -e /dev/paigow-shoe ] || exit 0; sleep 0.2; done; exit 1")
    lost = wait_entry(vm, n0, lambda e: e["type"] == "fault_raised" and "PORT_LOST" in str(e))
    assert "shoe" in json.dumps(lost)
    vm.replug(shoe)
    vm.sh("for i in $(seq 150); do [ -e /dev/paigow-shoe ] && exit 0; sleep 0.2; done; exit 1")
    back = wait_entry(vm, n0, lambda e: e["type"] == "device_recovered" and "shoe" in str(e))
    assert "PORT_LOST" in json.dumps(back)
    # the supervisor clears the fault at the panel and the table plays on through the new port
    seen = play_round(vm, [2])
    assert seen["lights_locked"] == [0, 1, 0, 0, 0, 0], seen
    journal_verify(vm)


def test_hardware_selftest_passes_inside_with_every_input_pressed(vm: PiVM) -> None:
    wait_ready(vm)
    out = "/var/tmp/pivm-selftest.json"  # the service user's to write (not /run)
    vm.sh(f"systemctl stop {UNIT}")
    try:
        vm.sh(
            f"rm -f {out}; systemd-run --unit pivm-selftest --uid paigow --gid paigow "
            "-p SupplementaryGroups=gpio -p SupplementaryGroups=dialout --collect "
            f"{TABLECTL} selftest --hardware --config /etc/paigow/table.toml --step-s 0.1 "
            f"--inputs-s 40 --out {out}"
        )
        vm.sh(
            "for i in $(seq 300); do journalctl -u pivm-selftest --no-pager | grep -q "
            "'inputs for' && exit 0; sleep 0.5; done; exit 1",
            timeout=200,
        )
        for _ in range(5):
            vm.press(PINS["lockout_button"])
            time.sleep(0.3)
        for pin in ("panel_next", "panel_void", "shaker"):
            vm.press(PINS[pin])
            time.sleep(0.3)
        vm.pull(PINS["supervisor_key"], "down")
        time.sleep(0.4)
        vm.pull(PINS["supervisor_key"], "up")
        drop_chips(vm, [1, 2, 3, 4, 5, 6])
        rc, _, _ = vm.run(
            f"for i in $(seq 200); do [ -s {out} ] && exit 0; sleep 0.5; done; exit 1", timeout=150
        )
        assert rc == 0, vm.sh("journalctl -u pivm-selftest --no-pager | tail -40", check=False)
        figures = json.loads(vm.sh(f"cat {out}"))
    finally:
        # the self-test holds the pins until its input window ends
        vm.run(
            "for i in $(seq 120); do systemctl -q is-active pivm-selftest || exit 0; sleep 1; done",
            timeout=150,
        )
        vm.sh(f"systemctl start --no-block {UNIT}")
    assert figures["gpio_chip"].startswith("/dev/gpiochip1") or "gpiochip1" in figures["gpio_chip"]
    seen = figures["inputs_seen"]
    for event in ("lockout_pressed", "panel_next", "panel_void", "shake_detected"):
        assert seen.get(event, 0) >= 1, figures
    assert seen.get("lockout_pressed") == 5, figures
    assert seen.get("supervisor_key", 0) >= 2 and seen.get("chip_detected") == 6, figures
    assert figures["lockout_to_lights_ms"]["n"] == 5, figures
    assert figures["outputs_driven"] >= 6 + 12, figures


def test_a_clean_reboot_brings_the_service_back_with_the_journal_intact(vm: PiVM) -> None:
    wait_ready(vm)
    before = status(vm)
    first = journal_entries(vm)
    vm.reboot()
    wait_ready(vm, timeout=600)
    after = status(vm)
    assert after["rounds"] == before["rounds"] and after["seq"] > before["seq"], (before, after)
    now = journal_entries(vm)
    assert now[: len(first)] == first  # nothing before the reboot changed
    assert any(e["type"] == "power_up" for e in now[len(first) :])
    journal_verify(vm)


def test_a_unit_that_cannot_write_its_state_directory_fails_the_ready_check(vm: PiVM) -> None:
    """The proof the READY check can fail: the same unit with /var/lib/paigow read-only."""
    dropin = "/etc/systemd/system/paigow-table.service.d/pivm-broken.conf"
    old_pid = wait_ready(vm)["MainPID"]
    vm.sh(
        f"mkdir -p {dropin.rsplit('/', 1)[0]} && "
        f"printf '[Service]\\nReadOnlyPaths=/var/lib/paigow\\n' >{dropin} && "
        f"systemctl daemon-reload && systemctl restart --no-block {UNIT}"
    )
    try:
        failed = wait_failed_start(vm, old_pid, timeout=120)
        # exit 3: the journal cannot be opened yet (systemd/paigow-table.service), restarted
        assert failed["ExecMainStatus"] == "3" and failed["Result"] == "exit-code", failed
    finally:
        vm.sh(
            f"rm -f {dropin} && systemctl daemon-reload && systemctl reset-failed {UNIT}; "
            f"systemctl restart --no-block {UNIT}"
        )
    wait_ready(vm)
    journal_verify(vm)


def test_the_pi_4_variant_boots_and_the_service_claims_its_pins_on_the_bcm2711_chip() -> None:
    """The Pi 4 device tree (deploy/pi-vm/image.sh): a second VM from the same image, its own
    shoe and shuffler simulators behind its USB adapters. Its header chip is labelled
    ``pinctrl-bcm2711`` with 58 lines, the service finds it by that label (as on a Pi 4) and
    holds every pin of the table's plan on it once READY."""
    from pivm_support import UsbSerial, image_dir

    from drivers.sim.bench import SimulatedDevices

    sim = SimulatedDevices(card_reading=True)
    sim.start(seed=4)
    assert sim.shoe is not None and sim.shuffler is not None
    usb = [
        UsbSerial("shoe", "PGSHOE0001", os.path.realpath(sim.shoe.path)),
        UsbSerial("shuffler", "PGSHUF0001", os.path.realpath(sim.shuffler.path)),
    ]
    pi4 = PiVM(image_dir(), board="pi4", usb=usb)
    pi4.start()
    try:
        pi4.wait_agent(timeout=900)
        assert "Raspberry Pi 4" in pi4.sh("tr -d '\\0' </proc/device-tree/model")
        chips = pi4.sh("gpiodetect")
        assert re.search(r"gpiochip1 \[pinctrl-bcm2711\] \(58 lines\)", chips), chips
        wait_ready(pi4, timeout=600)
        info = pi4.sh("gpioinfo gpiochip1")
        plan = [*PINS.values(), *ACCEPTOR_SENSORS, *ACCEPTOR_LIGHTS, *SEGMENTS]
        free = [n for n in plan if not re.search(rf"^\s*line\s+{n}:.*\[used\b", info, re.M)]
        assert not free, f"pins not held by the service: {free}\n{info}"
    finally:
        pi4.stop()
        sim.stop()


def play_until(vm: PiVM, state: str, timeout: float = 300.0) -> dict[str, object]:
    """Advance the table (supervisor's key step in Closed or Fault) until ``state``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = status(vm)
        if st["state"] == state:
            return st
        if st["state"] in ("Closed", "Fault", "Open_JackpotPending"):
            key_step(vm)
        time.sleep(0.5)
    raise AssertionError(f"the table did not reach {state}: {status(vm)}")


def wait_entry(vm: PiVM, after: int, match, timeout: float = 120.0) -> dict[str, object]:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for entry in journal_entries(vm)[after:]:
            if match(entry):
                return entry
        time.sleep(2)
    raise AssertionError("no matching journal entry")


_ = (lights, wait_state)
