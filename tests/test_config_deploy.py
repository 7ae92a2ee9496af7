"""Deployment files: the install script, the systemd unit and the example configuration.

The unit must start exactly the documented command, restart on failure but not on a bad
configuration (the exit code ``tablectl run`` gives for one), stop with SIGTERM within a bounded
time, and keep GPIO and serial access under its hardening. The install script must be valid bash
and carry out every installation step the operator guide describes.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli.run import EXIT_CONFIG
from controller.config import load_config

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "deploy" / "install.sh"
UNIT = ROOT / "systemd" / "paigow-table.service"
EXAMPLE = ROOT / "deploy" / "config.example.toml"


def unit_lines(section: str) -> list[tuple[str, str]]:
    """(key, value) pairs of one section, in order (keys may repeat, e.g. DeviceAllow)."""
    out: list[tuple[str, str]] = []
    current = None
    for raw in UNIT.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            continue
        if current == section:
            key, _, value = line.partition("=")
            out.append((key, value))
    return out


def service() -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for key, value in unit_lines("Service"):
        values.setdefault(key, []).append(value)
    return values


def test_install_script_is_valid_bash() -> None:
    done = subprocess.run(["bash", "-n", str(INSTALL)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_install_dry_run_lists_every_step_and_changes_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(INSTALL), "--dry-run"], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(
        r"useradd --system .*--shell /usr/sbin/nologin --groups gpio,spi,dialout paigow", out
    )
    assert "python3 -m venv /opt/paigow/venv" in out
    lock = ROOT / "deploy" / "requirements.lock"
    assert f"pip install --require-hashes --only-binary=:all: -r {lock}" in out
    assert f"pip install --no-index --no-deps --no-build-isolation --force-reinstall {ROOT}" in out
    # the release's manifest compared before the approved one is written, after the unit
    assert "selfcheck --release-manifest TREE.manifest --write /etc/paigow/software.manifest" in out
    assert out.index("/etc/systemd/system/paigow-table.service") < out.index("--release-manifest")
    assert "install -d -m 0750 -o paigow -g paigow /var/lib/paigow" in out
    assert "/etc/udev/rules.d/" in out and "udevadm control --reload-rules" in out
    assert 'append "enable_uart=1"' in out
    assert "disable-bt" in out or "uart0=on" in out
    assert "console=serial0" in out
    assert "systemctl enable paigow-table.service" in out
    assert "systemd/paigow-table.service /etc/systemd/system/paigow-table.service" in out
    assert list(tmp_path.iterdir()) == []


def test_install_provisions_forward_secure_seals_by_default_not_a_static_key(
    tmp_path: Path,
) -> None:
    """Issue 23: a new table's journal is sealed (the example's [journal] seal_key); the sealing
    key is made by `tablectl journal setup-keys` as the service user (who overwrites it after
    every entry), which prints the verification key; no static key file is made."""
    done = subprocess.run(
        ["bash", str(INSTALL), "--dry-run"], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert (
        "runuser -u paigow -- /opt/paigow/venv/bin/tablectl journal setup-keys "
        "--seal-key /var/lib/paigow/journal.seal" in out
    )
    assert "PRINT THE VERIFICATION KEY" in out
    assert "journal.key" not in out and "/dev/urandom" not in out
    config = load_config(EXAMPLE)
    assert config.journal_seal_key == Path("/var/lib/paigow/journal.seal")
    assert config.journal_key_file is None


def test_install_refuses_unknown_options() -> None:
    done = subprocess.run(["bash", str(INSTALL), "--yes"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "unknown option --yes" in done.stderr


def test_unit_runs_the_documented_command_and_restarts_only_on_failure() -> None:
    s = service()
    assert s["ExecStart"] == [
        "/opt/paigow/venv/bin/tablectl run --config /etc/paigow/table.toml "
        "--approved-manifest /etc/paigow/software.manifest"
    ]
    assert s["Restart"] == ["on-failure"]
    assert s["KillSignal"] == ["SIGTERM"]
    assert int(s["TimeoutStopSec"][0]) > 0
    # a bad configuration is not fixed by restarting: the exit code run gives for it
    assert s["RestartPreventExitStatus"] == [str(EXIT_CONFIG)]
    assert s["User"] == ["paigow"]


def test_unit_hardening_keeps_gpio_and_serial_access() -> None:
    s = service()
    assert "PrivateDevices" not in s  # would hide /dev/gpiochip*
    allowed = " ".join(s["DeviceAllow"])
    for device in ("char-gpiochip", "char-ttyAMA", "char-ttyUSB", "char-ttyACM"):
        assert device in allowed
    assert set(s["SupplementaryGroups"][0].split()) == {"gpio", "spi", "dialout"}
    assert s["ProtectSystem"] == ["strict"]
    assert "/var/lib/paigow" in s["ReadWritePaths"][0]
    # lgpio creates its notification pipes in the working directory: it must be writable
    assert s["WorkingDirectory"] == ["/run/paigow"] and s["RuntimeDirectory"] == ["paigow"]


def test_unit_parses_as_ini() -> None:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    assert {"Unit", "Service", "Install"} <= set(parser.sections())
    assert parser["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None and os.environ.get("CI") != "true",
    reason="systemd-analyze missing (never skipped under CI=true)",
)
def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    tablectl = shutil.which("tablectl") or str(Path(sys.executable).parent / "tablectl")
    unit = tmp_path / "paigow-table.service"
    unit.write_text(UNIT.read_text().replace("/opt/paigow/venv/bin/tablectl", tablectl))
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "Unknown key" not in done.stderr and "Unknown lvalue" not in done.stderr


def test_example_config_documents_the_defaults_it_sets() -> None:
    config = load_config(EXAMPLE)
    assert config.journal_path == Path("/var/lib/paigow/journal.db")
    assert config.serial["shoe"].port == "/dev/paigow-shoe"
    assert config.serial["shuffler"].port == "/dev/paigow-shuffler"
    assert config.sas.port == "/dev/ttyAMA0"  # the PL011 UART install.sh enables
    text = EXAMPLE.read_text()
    assert "pin_hash" in text and "\npin =" not in text
