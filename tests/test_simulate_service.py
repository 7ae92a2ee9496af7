"""``tablectl simulate`` as a service (``make run``) and ``--headless --linger``: SIGTERM finishes
the current event, leaves the table in the safe state (lights off, display blank) and exits 0
with a journal that verifies (DESIGN.md command-line contract; issue 3 SIGTERM)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

from test_simulate import _rows, check_journal

from controller.sim.simulate import build_service, load_sim_config, play

ROOT = Path(__file__).resolve().parent.parent


def _spawn(*args: str) -> subprocess.Popen[str]:
    page = () if "--headless" in args else ("--port", "0")  # the page on any free port
    cmd = [sys.executable, "-m", "controller.cli", "simulate", *args, *page]
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_service_prints_a_status_line_per_round_and_stops_cleanly_on_sigterm(
    tmp_path: Path,
) -> None:
    db = tmp_path / "run.db"
    proc = _spawn("--db", str(db), "--seed", "2", "--pace", "0")
    assert proc.stdout is not None
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if sum(" | journal seq " in x for x in lines) >= 3:
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert lines[0].startswith("TRAINING simulated table SIM-1: journal")
    assert "1 round | journal seq" in "".join(lines)
    assert "2 rounds | journal seq" in "".join(lines)
    rounds = sum(1 for r in _rows(db) if r[2] == "round_completed")
    assert rounds >= 3
    check_journal(db, rounds)


def test_make_run_paces_the_table_for_a_person_with_a_dealer_readable_line_per_event(
    tmp_path: Path,
) -> None:
    """`make run` (simulate without --headless) is for demonstration and dealer training: at the
    default pace the table moves slowly enough to follow, and each event gets a line a dealer
    reads (chips with the acceptor lights, "no more bets"), every line marked TRAINING, no card
    shown before the round resolves (issue 11)."""
    db = tmp_path / "paced.db"
    proc = _spawn("--db", str(db), "--seed", "3")
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if "no more bets" in line:
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert lines[1].startswith("page: http://127.0.0.1:")
    events = lines[2:]
    assert all(x.startswith("TRAINING ") for x in events), events
    assert any("round 1: lights: attract" in x for x in events)  # betting open
    assert any("progressive wagers at" in x for x in events) or any(" lit " in x for x in events)
    assert events[-1].strip() == "TRAINING round 1: no more bets"
    assert not any("round complete" in x for x in events)  # not a blur of finished rounds


def test_headless_linger_keeps_serving_until_sigterm_with_exactly_n_rounds(
    tmp_path: Path,
) -> None:
    db = tmp_path / "linger.db"
    proc = _spawn("--headless", "--rounds", "3", "--seed", "5", "--db", str(db), "--linger")
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline()
        assert first.startswith(f"journal {db}: 3 rounds"), first
        assert proc.poll() is None  # still serving
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    check_journal(db, 3)


def test_stop_leaves_lights_off_and_display_blank_on_the_pins(tmp_path: Path) -> None:
    """The safe state is read back from the MockFactory output pins themselves."""
    db = tmp_path / "safe.db"
    service = build_service(load_sim_config(None), db, 4)
    service.start()
    try:
        assert play(service, 1, threading.Event(), None) == 0
        snap = service.owner.public
        # mid-play something is lit: the display shows "-" (idle) or a digit
        assert any(service.pins.segment_levels()), snap.state
    finally:
        service.owner.stop()
        service.close()
    assert service.pins.light_levels() == (False,) * 6
    assert service.pins.segment_levels() == (False,) * 7
