"""Closing a period into a verified archive (issue 28 item 6; docs/journal.md "Retention and
archives"): `tablectl journal archive` with two supervisors' PINs writes an archive of the
journal, checked against the live head, and its head record; `journal verify --archives` checks
the journal together with its archives and names a tampered one. Real parts: the owner writes a
real SQLite journal; the commands run as processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sas_support import make_owner, post

from controller.config import SIMULATED_TABLE, load_config
from controller.journal.lock import JournalLock

ROOT = Path(__file__).resolve().parents[1]
PINS = "1234\n2468\n"  # trainer, floor: controller/data/simulated-table.toml (training only)


def _journal(tmp_path: Path, *, close: bool = True) -> Path:
    """A table's journal: powered up, opened, shuffled and (``close``) closed again."""
    db = tmp_path / "table.db"
    owner = make_owner(load_config(SIMULATED_TABLE), db)
    owner.start()
    try:
        post(owner, "table_opened", supervisor="trainer")
        post(owner, "shuffle_complete", count=53)
        if close:
            post(owner, "table_closed", supervisor="trainer")
    finally:
        owner.stop()
    return db


def _tablectl(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *args],
        cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _archive(db: Path, out: Path, *who: str, stdin: str = PINS) -> subprocess.CompletedProcess[str]:
    sups = [a for name in (who or ("trainer", "floor")) for a in ("--supervisor", name)]
    return _tablectl(
        "journal", "archive", "--db", str(db), "--out", str(out),
        "--config", str(SIMULATED_TABLE), *sups, "--pin-stdin", stdin=stdin,
    )  # fmt: skip


def test_a_closed_period_is_archived_verified_and_checked_with_the_journal(tmp_path: Path) -> None:
    db = _journal(tmp_path)
    out = tmp_path / "archives"
    done = _archive(db, out)
    assert done.returncode == 0, done.stderr
    assert "verified" in done.stdout and "closed by trainer and floor" in done.stdout
    (record,) = out.glob("*.head.json")
    head = json.loads(record.read_text())
    assert head["supervisors"] == ["trainer", "floor"] and head["first_seq"] == 1
    assert head["meters"] and head["head_hash"] and head["entries"] == head["head_seq"]
    archive = out / head["file"]
    assert archive.stat().st_mode & 0o222 == 0  # read-only
    verify = _tablectl("journal", "verify", "--db", str(db), "--archives", str(out), "--json")
    report = json.loads(verify.stdout)
    assert verify.returncode == 0 and report["ok"], report
    assert report["archives"][0]["head_hash"] == head["head_hash"]
    # the same period again: never overwritten
    again = _archive(db, out)
    assert again.returncode == 1 and "this period is archived already" in again.stderr
    assert len(list(out.glob("*.head.json"))) == 1


def test_a_tampered_archive_is_named_by_verify(tmp_path: Path) -> None:
    db = _journal(tmp_path)
    out = tmp_path / "archives"
    assert _archive(db, out).returncode == 0
    (archive,) = out.glob("*.journal.db")
    archive.chmod(0o644)
    raw = archive.read_bytes()
    assert raw.count(b'"supervisor":"trainer"') >= 1
    archive.write_bytes(raw.replace(b'"supervisor":"trainer"', b'"supervisor":"trainex"', 1))
    verify = _tablectl("journal", "verify", "--db", str(db), "--archives", str(out))
    assert verify.returncode == 1
    said = verify.stdout + verify.stderr
    assert f"archive {archive.name}: its SHA-256 is not the head record's: changed" in said
    # and its own verify: the entry's hash no longer matches what it holds
    assert said.count(f"archive {archive.name}: ") >= 2, said


@pytest.mark.parametrize(
    ("who", "stdin", "code", "said"),
    [
        (("trainer", "floor"), "1234\n9999\n", 1, "supervisor floor: id or PIN not accepted"),
        (("trainer", "trainer"), PINS, 2, "two different supervisors"),
        (("trainer", "nobody"), PINS, 1, "supervisor nobody: id or PIN not accepted"),
    ],
)
def test_archiving_needs_two_supervisors_pins(
    tmp_path: Path, who: tuple[str, str], stdin: str, code: int, said: str
) -> None:
    db = _journal(tmp_path)
    out = tmp_path / "archives"
    done = _archive(db, out, *who, stdin=stdin)
    assert done.returncode == code and said in done.stderr, done.stderr
    assert not out.exists() or not any(out.iterdir())  # nothing written


def test_archiving_is_refused_while_the_table_is_open_or_the_controller_runs(
    tmp_path: Path,
) -> None:
    db = _journal(tmp_path, close=False)
    out = tmp_path / "archives"
    done = _archive(db, out)
    assert done.returncode == 1 and "a period is closed with the table closed" in done.stderr
    lock = JournalLock.acquire(db)  # as a running controller holds it
    try:
        done = _archive(db, out)
        assert done.returncode == 1 and "stop the controller first" in done.stderr
    finally:
        lock.release()
    assert not out.exists() or not any(out.iterdir())


def test_a_journal_started_anew_from_the_newest_archive_links_to_its_head_nj_1_39b_h(
    tmp_path: Path,
) -> None:
    """Closing a period then carrying on: the live journal moved aside, `journal carry` from the
    newest archive (two PINs) starts a journal whose seq 1 carries the archive's meters, and
    `verify --archives` follows the chain from that archive's head; a journal carried from
    another period's journal is named."""
    live = tmp_path / "live.db"
    config = tmp_path / "table.toml"
    config.write_text(
        SIMULATED_TABLE.read_text().replace('"/tmp/paigow-simulated.db"', f'"{live}"')
    )
    played = _journal(tmp_path)
    played.rename(live)
    for suffix in ("-wal", "-shm", ".anchor"):
        side = played.with_name(played.name + suffix)
        if side.exists():
            side.rename(live.with_name(live.name + suffix))
    out = tmp_path / "archives"
    assert _archive(live, out).returncode == 0
    (head_file,) = out.glob("*.head.json")
    head = json.loads(head_file.read_text())
    aside = tmp_path / "period1.db"
    live.rename(aside)
    for suffix in ("-wal", "-shm"):
        side = live.with_name(live.name + suffix)
        if side.exists():
            side.rename(aside.with_name(aside.name + suffix))
    carry = _tablectl(
        "journal", "carry", "--config", str(config), "--from-journal", str(out / head["file"]),
        "--supervisor", "trainer", "--supervisor", "floor", stdin=PINS,
    )  # fmt: skip
    assert carry.returncode == 0, carry.stdout + carry.stderr
    verify = _tablectl(
        "journal", "verify", "--db", str(live), "--archives", str(out), "--json",
        "--no-installed-config",
    )  # fmt: skip
    report = json.loads(verify.stdout)
    assert verify.returncode == 0 and report["ok"], report
    assert any("carried over from the newest archive" in n for n in report["notes"]), report
    # a newer archive of another journal: the live journal does not link to its head
    (tmp_path / "b").mkdir()
    stranger = _journal(tmp_path / "b")
    assert _archive(stranger, out).returncode == 0
    bad = _tablectl(
        "journal", "verify", "--db", str(live), "--archives", str(out), "--no-installed-config"
    )
    assert bad.returncode == 1
    assert "names the previous head" in bad.stdout + bad.stderr, bad.stdout + bad.stderr
