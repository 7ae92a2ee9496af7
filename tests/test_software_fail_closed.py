"""The software check fails closed (issue 28 item 2, the parts that do not wait for the release
build; NY 5321.18(b)(3)(iv), NJ 13:69E-1.39B): `tablectl run` without an approved manifest
refuses play (a journaled SOFTWARE_UNAPPROVED fault at power-up) unless started as a lab bench
with `--unapproved-bench`, which is journaled in the power-up and shown on every report, verify,
the console, the page and the service's status.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from sas_support import Devices
from test_cmd_run import ROOT, TABLECTL, entry_rows, tablectl, write_config

from controller.config import load_config
from controller.console.server import ConsoleServer
from controller.journal.reports import BENCH_BANNER
from controller.service.notify import service_status
from controller.service.owner import Owner
from controller.web import view
from fsm.round.machine import RoundMachine


def _run(config: Path, db: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    """Start `tablectl run` (mock pins), wait for its power-up and what follows, SIGTERM it."""
    proc = subprocess.Popen(
        [*TABLECTL, "run", "--config", str(config), "--pin-factory", "mock", *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        give_up = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < give_up, "the service never journaled its power-up"
            rows = entry_rows(db)
            if any(t == "power_up" for t, _ in rows) and len(rows) >= 2:
                break
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), entry_rows(db)


def test_run_without_an_approved_manifest_refuses_play_fail_closed_ny_5321_18_b3iv(
    tmp_path: Path, ptys: tuple[str, str]
) -> None:
    config = write_config(tmp_path, *ptys)
    db = tmp_path / "journal.db"
    done, rows = _run(config, db)
    faults = [d for t, d in rows if t == "fault_raised"]
    assert faults and faults[0]["code"] == "SOFTWARE_UNAPPROVED", rows
    assert "no approved software manifest" in faults[0]["detail"]
    assert "software not approved, play refused" in done.stderr
    (power_up,) = [d for t, d in rows if t == "power_up"]
    assert "unapproved_bench" not in power_up


def test_an_unapproved_bench_plays_and_says_so_in_the_journal_reports_and_verify_ny_5321_18_b3iv(
    tmp_path: Path, ptys: tuple[str, str]
) -> None:
    config = write_config(tmp_path, *ptys)
    db = tmp_path / "journal.db"
    done, rows = _run(config, db, "--unapproved-bench")
    assert done.returncode == 0, done.stderr
    assert not [d for t, d in rows if t == "fault_raised"], rows
    (power_up,) = [d for t, d in rows if t == "power_up"]
    assert power_up["unapproved_bench"] is True
    assert "UNAPPROVED SOFTWARE" in done.stdout
    for kind in ("rounds", "shift", "meters", "hits"):
        report = tablectl("report", kind, "--db", str(db))
        assert report.stdout.splitlines()[0] == BENCH_BANNER, (kind, report.stdout)
        as_json = json.loads(tablectl("report", kind, "--db", str(db), "--json").stdout)
        assert as_json["unapproved_bench"] is True
    verify = tablectl("journal", "verify", "--db", str(db))
    assert "UNAPPROVED SOFTWARE" in verify.stdout, verify.stdout
    verified = json.loads(tablectl("journal", "verify", "--db", str(db), "--json").stdout)
    assert verified["unapproved_bench"] is True


def test_a_bench_is_shown_on_the_page_the_console_and_the_service_status_ny_5321_18_b3iv(
    tmp_path: Path, ptys: tuple[str, str]
) -> None:
    config = load_config(write_config(tmp_path, *ptys))
    game = config.game
    owner = Owner(
        tmp_path / "j.db",
        lambda s: RoundMachine(game) if s is None else RoundMachine.restore(game, s),
        Devices(),
        table_id=config.table.id,
        software_hash=lambda: "f" * 64,
        storage_check=lambda p: [],
    )
    owner.unapproved_bench = True
    owner.start()
    try:
        public = owner.public
        assert public.unapproved_bench is True
        assert view.frame(public, [], None, mode="pit")["unapproved_bench"] is True
        assert "UNAPPROVED SOFTWARE (lab bench)" in service_status(public)
        console = ConsoleServer(owner, config.supervisors, tmp_path / "c.sock")
        status = console.answer(b'{"request": "status"}')
        assert status["ok"] is True and status["status"]["unapproved_bench"] is True
    finally:
        owner.stop()
    page = (ROOT / "controller" / "web" / "static" / "index.html").read_text()
    assert 'id="bench-badge"' in page and "UNAPPROVED SOFTWARE" in page


def test_the_manifest_covers_the_interpreter_and_a_changed_one_is_named_ny_5321_18_b3iv(
    tmp_path: Path,
) -> None:
    """The approved manifest names the interpreter's binary (symlinks resolved) beside the code,
    the configuration's schema (controller/config.py) and the dependencies; another interpreter
    is a named difference, and on-demand verification reads the same binary."""
    import hashlib
    import sys

    from controller.lab import software
    from controller.service import selfcheck

    manifest = selfcheck.software_manifest()
    binary = Path(sys.executable).resolve()
    assert manifest["python/interpreter"] == hashlib.sha256(binary.read_bytes()).hexdigest()
    assert "controller/config.py" in manifest
    assert software.resolve("python/interpreter") == binary
    path = tmp_path / "software.manifest"
    selfcheck.write_manifest(path, {**manifest, "python/interpreter": "0" * 64})
    problem = selfcheck.approval_problem(path, selfcheck.software_hash(manifest), manifest)
    assert problem is not None and "changed python/interpreter" in problem
