"""Deployment on a real Raspberry Pi 4/5 (issue 9 points 3, 4, 7, 9): the install script's new
steps, shellcheck, the unit's ordering, device access and restart limits, and the modules it
preloads. Nothing here needs a Pi: the script runs with --dry-run, the unit is read as text and
verified by systemd-analyze."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_config_deploy import INSTALL, ROOT, UNIT, service, unit_lines

MODULES = ROOT / "deploy" / "modules-load.d" / "paigow-table.conf"
IN_CI = os.environ.get("CI") == "true"


def dry_run(*args: str, model: str | None = None) -> str:
    env = dict(os.environ)
    if model is not None:
        env["PAIGOW_BOARD_MODEL"] = model
    done = subprocess.run(
        ["bash", str(INSTALL), "--dry-run", *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(
    shutil.which("shellcheck") is None and not IN_CI,
    reason="shellcheck missing (.ci/run installs it; never skipped under CI=true)",
)
def test_install_script_is_shellcheck_clean() -> None:
    done = subprocess.run(["shellcheck", str(INSTALL)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_install_needs_no_package_outside_debian_main_and_no_compiler() -> None:
    """liblgpio-dev is not in Debian main: on plain Debian the old script aborted there. lgpio
    comes as its aarch64 wheel (pi-release.md), binary only."""
    out = dry_run()
    apt = next(line for line in out.splitlines() if "apt-get install" in line)
    for package in ("liblgpio-dev", "swig", "python3-dev", "build-essential"):
        assert package not in apt
    assert "--only-binary=:all:" in out


def test_install_dry_run_shows_the_spi_strict_gpiod_modules_and_time_steps() -> None:
    out = dry_run(model="Raspberry Pi 5 Model B Rev 1.0")
    for line in ("dtparam=spi=on", "dtoverlay=spi0-1cs", "dtparam=strict_gpiod"):
        assert f'append "{line}"' in out
    assert "/etc/modules-load.d/paigow-table.conf" in out
    assert "modprobe -a usbserial cdc_acm" in out
    assert "groupadd --system spi" in out or "usermod --append --groups gpio,spi,dialout" in out
    assert "systemd-timesyncd" in out
    assert "# --- 6. journal sealing key" in INSTALL.read_text()  # the step kept for it


@pytest.mark.parametrize(
    ("model", "line"),
    [
        ("Raspberry Pi 5 Model B Rev 1.0", "dtparam=uart0=on"),
        ("Raspberry Pi Compute Module 5 Rev 1.0", "dtparam=uart0=on"),
        ("Raspberry Pi 500 Rev 1.0", "dtparam=uart0=on"),
        ("Raspberry Pi 4 Model B Rev 1.5", "dtoverlay=disable-bt"),
    ],
)
def test_the_sas_uart_is_set_up_for_the_board_cm5_included(model: str, line: str) -> None:
    assert f'append "{line}"' in dry_run(model=model)


def test_no_boot_leaves_config_txt_alone_and_a_wheelhouse_installs_offline(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    shutil.copy(ROOT / "deploy" / "requirements.lock", wheels / "requirements.lock")
    out = dry_run("--no-boot", "--wheelhouse", str(wheels))
    assert "config.txt (if missing)" not in out
    assert f"pip install --no-index --find-links {wheels} --require-hashes" in out


def test_the_usb_serial_drivers_are_preloaded() -> None:
    modules = [
        line.strip()
        for line in MODULES.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert modules == ["usbserial", "cdc_acm"]


def test_the_unit_waits_for_modules_not_for_udev_settle() -> None:
    unit = dict(unit_lines("Unit"))
    assert "systemd-udev-settle" not in UNIT.read_text()  # deprecated, and nothing needed it
    assert "systemd-modules-load.service" in unit["After"]
    assert "time-sync.target" in unit["After"]
    assert "char-spi rw" in service()["DeviceAllow"]


def test_restart_limits_survive_minutes_of_a_missing_adapter() -> None:
    unit = dict(unit_lines("Unit"))
    s = service()
    restart_s = float(s["RestartSec"][0])
    burst, interval = int(unit["StartLimitBurst"]), float(unit["StartLimitIntervalSec"])
    # failing at once on every start, systemd gives up only after burst starts within interval
    assert burst * restart_s >= 3 * 60
    assert interval >= burst * restart_s  # the limit is reached, not reset, while failing


def test_the_unit_waits_a_bounded_time_for_time_sync() -> None:
    s = service()
    (pre,) = s["ExecStartPre"]
    # '-': never fatal; '+': outside the seccomp filter and ProtectClock=, which kill
    # systemd-time-wait-sync's adjtimex(2) with SIGSYS (tests/pi shows it on a real kernel)
    assert pre.startswith("-+/usr/bin/timeout ") and pre.endswith("systemd-time-wait-sync")
    wait_s = int(pre.split()[1])
    assert wait_s < int(s["TimeoutStartSec"][0])
