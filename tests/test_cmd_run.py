"""``tablectl run``: the service as systemd starts and stops it.

An invalid configuration exits 2 (the unit file's RestartPreventExitStatus) listing the problems;
a machine without the Pi's GPIO exits 3 naming what is missing (never a fallback pin factory). With
gpiozero's MockFactory (a hidden bench option) and real pseudo-terminals as the shoe's and
shuffler's ports, the whole service starts, journals its power-up, stops cleanly on SIGTERM
(exit 0, journal verified) and resumes from the same journal when started again.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.config import SIMULATED_TABLE
from controller.journal.audit import connect_read_only

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TABLECTL, *args], capture_output=True, text=True, cwd=ROOT, timeout=60)


def write_config(tmp_path: Path, shoe: str, shuffler: str) -> Path:
    text = SIMULATED_TABLE.read_text()
    text = text.replace('"/dev/paigow-shoe"', json.dumps(shoe))
    text = text.replace('"/dev/paigow-shuffler"', json.dumps(shuffler))
    text = text.replace('"/tmp/paigow-simulated.db"', json.dumps(str(tmp_path / "journal.db")))
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def entry_types(db: Path) -> list[str]:
    if not db.exists():
        return []
    try:
        conn = connect_read_only(db)
        try:
            return [t for (t,) in conn.execute("SELECT type FROM journal ORDER BY seq")]
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def entry_rows(db: Path) -> list[tuple[str, dict[str, str]]]:
    if not db.exists():
        return []
    try:
        conn = connect_read_only(db)
        try:
            rows = conn.execute("SELECT type, data FROM journal ORDER BY seq")
            return [(t, json.loads(d)) for (t, d) in rows]
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def run_until_power_up(config: Path, db: Path, count: int) -> subprocess.CompletedProcess[str]:
    """Start the service, wait for its ``count``-th power_up entry, SIGTERM it."""
    proc = subprocess.Popen(
        [*TABLECTL, "run", "--config", str(config), "--pin-factory", "mock", "--unapproved-bench"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        give_up = time.monotonic() + 60
        while entry_types(db).count("power_up") < count:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < give_up, "the service never journaled its power-up"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_invalid_config_exits_2_listing_the_problems(tmp_path: Path) -> None:
    bad = tmp_path / "t.toml"
    bad.write_text('[table]\nid = "T1"\nasset_number = 1\n[sas]\naddress = 0\n')
    done = tablectl("run", "--config", str(bad))
    assert done.returncode == 2
    assert "sas.address: must be an integer 1..127" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_lgpio_or_gpiochip_the_service_names_what_is_missing(tmp_path: Path) -> None:
    if any(Path("/dev").glob("gpiochip*")):
        pytest.skip("this machine has a GPIO chip")
    config = write_config(tmp_path, "/dev/paigow-shoe", "/dev/paigow-shuffler")
    done = tablectl("run", "--config", str(config))
    assert done.returncode == 3
    assert "no /dev/gpiochip* on this machine" in done.stderr
    assert not (tmp_path / "journal.db").exists()  # nothing opened, nothing created


def test_check_reports_readiness_without_starting(tmp_path: Path, ptys: tuple[str, str]) -> None:
    config = write_config(tmp_path, *ptys)
    done = tablectl("run", "--config", str(config), "--check", "--pin-factory", "mock")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok\n")
    missing_dir = write_config(tmp_path, *ptys)
    missing_dir.write_text(
        missing_dir.read_text().replace(str(tmp_path / "journal.db"), "/nonexistent/dir/j.db")
    )
    done = tablectl("run", "--config", str(missing_dir), "--check", "--pin-factory", "mock")
    assert done.returncode == 3
    assert "journal.path: directory /nonexistent/dir does not exist" in done.stderr


def test_service_starts_stops_on_sigterm_and_resumes(tmp_path: Path, ptys: tuple[str, str]) -> None:
    config = write_config(tmp_path, *ptys)
    db = tmp_path / "journal.db"
    first = run_until_power_up(config, db, 1)
    assert first.returncode == 0, first.stderr
    assert "running" in first.stdout and "stopped" in first.stdout
    assert entry_types(db)[0] == "power_up"
    second = run_until_power_up(config, db, 2)
    assert second.returncode == 0, second.stderr
    verify = tablectl("journal", "verify", "--db", str(db), "--json")
    assert json.loads(verify.stdout)["problems"] == []
    assert verify.returncode == 0


def test_the_real_table_draws_from_the_os_csprng_never_the_simulation_seed(
    tmp_path: Path, ptys: tuple[str, str]
) -> None:
    """table-rules.md (NJ 13:69E-1.28G): the starting-position RNG on a real table is the OS
    CSPRNG, seeded from an uncontrolled source; the seeded draw exists for simulation only."""
    from controller.cli.run import build_service
    from controller.config import load_config
    from controller.service import rng

    config = load_config(write_config(tmp_path, *ptys))
    table = build_service(config, pin_mode="mock")
    try:
        assert table.owner._draw is rng.draw_position
        assert not isinstance(table.owner._draw, rng.SeededDraw)
    finally:
        for adapter in table.serial:
            adapter.stop()
        table.gpio.close()


def test_a_noisy_serial_line_on_the_real_table_is_journaled_as_line_noise(tmp_path: Path) -> None:
    """Issue 4: garbage on a device line is a fault the supervisor sees. The link recovers by
    itself, so it is the table's wiring (``tablectl run``, not only the simulator) that must watch
    the line and journal ``LINE_NOISE`` after the device's answer."""
    from controller.cli.run import build_service
    from controller.config import load_config
    from drivers.sim.bench import SimulatedDevices
    from fsm.round.events import Event

    sim = SimulatedDevices(card_reading=True)
    shoe, shuffler = (os.path.realpath(p) for p in sim.start(seed=5, directory=str(tmp_path)))
    config = load_config(write_config(tmp_path, shoe, shuffler))  # /dev/pts/N: a device path
    table = build_service(config, pin_mode="mock")
    owner = table.owner
    db = tmp_path / "journal.db"
    try:
        table.start()
        sim.inject("garbage")
        owner.post(Event("table_opened", {"supervisor": "ana"}))  # the shuffler is commanded
        deadline = time.monotonic() + 30
        codes: list[str] = []
        while "LINE_NOISE" not in codes and time.monotonic() < deadline:
            time.sleep(0.1)
            codes = [d.get("code", "") for t, d in entry_rows(db) if t == "fault_raised"]
        assert "LINE_NOISE" in codes
    finally:
        table.stop()
        table.gpio.close()
        sim.stop()
