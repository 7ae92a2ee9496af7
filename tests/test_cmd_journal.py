"""``tablectl journal verify`` and ``tablectl journal export`` run as commands on real files.

NY 5324.41 / NJ 11.9 require game recall and records that cannot be altered unnoticed: verify
must pass a journal the machine wrote, fail (exit 1, naming the entry) on any tampering, and a
missing or foreign file must give a clear message, a non-zero exit, no traceback and no new file.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from report_journals import standard_journal

from controller.journal.store import Journal

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TABLECTL, *args], capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cmdjournal") / "journal.db"
    standard_journal(path)
    return path


@pytest.fixture()
def db(made: Path, tmp_path: Path) -> Path:
    """A private copy, so a test may tamper with it."""
    copy = tmp_path / "journal.db"
    shutil.copyfile(made, copy)
    shutil.copyfile(made.with_name(made.name + ".anchor"), copy.with_name(copy.name + ".anchor"))
    return copy


def entry_count(path: Path) -> int:
    with Journal.open(path) as j:
        return j.count()


def test_verify_passes_a_journal_written_by_the_machine(db: Path) -> None:
    done = tablectl("journal", "verify", "--db", str(db), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert set(report) == {
        "ok", "entries", "rounds", "problems", "power_ups", "notes", "training", "first_bad_seq",
        "head",
    }  # fmt: skip
    assert report["ok"] is True
    assert report["training"] is False  # not a simulated training table's journal
    assert report["entries"] == entry_count(db)
    assert report["rounds"] == 5  # five round_completed entries
    assert report["problems"] == []


def _tamper_entry(path: Path, seq: int, old: str, new: str) -> None:
    """Rewrite one committed entry's data the way an attacker with the file would (dropping the
    append-only trigger first and putting it back after)."""
    conn = sqlite3.connect(path)
    trigger = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'journal_no_update'"
    ).fetchone()[0]
    data = conn.execute("SELECT data FROM journal WHERE seq = ?", (seq,)).fetchone()[0]
    assert old in data
    conn.execute("DROP TRIGGER journal_no_update")
    conn.execute("UPDATE journal SET data = ? WHERE seq = ?", (data.replace(old, new), seq))
    conn.execute(trigger)
    conn.commit()
    conn.close()


def _seq_of(path: Path, type_: str, needle: str) -> int:
    with Journal.open(path) as j:
        for e in j.entries():
            if e.type == type_ and needle in json.dumps(e.data, sort_keys=True):
                return e.seq
    raise AssertionError(f"no {type_} entry with {needle}")


def test_verify_fails_on_a_tampered_payout_and_names_the_entry(db: Path) -> None:
    """Raising a recorded meter payout by $100 breaks that entry's hash: exit 1, seq named."""
    seq = _seq_of(db, "hit_validated", '"from": "meter"')
    with Journal.open(db) as j:
        (entry,) = list(j.entries(seq, seq))
    (pay,) = [e for e in entry.data["effects"] if e["type"] == "pay"]
    cents = pay["cents"]
    _tamper_entry(db, seq, f'"cents":{cents},', f'"cents":{cents + 10000},')
    done = tablectl("journal", "verify", "--db", str(db), "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert any(p.startswith(f"seq {seq}: hash mismatch") for p in report["problems"])


def test_verify_fails_when_stored_meters_differ_from_the_replay(db: Path) -> None:
    """The stored meters must be those the chain records (the last entry's state hash), which
    the replay of every entry through the round machine reaches (NJ 13:69D-1.52(f))."""
    conn = sqlite3.connect(db)
    row = conn.execute("SELECT \"values\" FROM meters WHERE level = 'progressive'").fetchone()
    values = json.loads(row[0])
    values["display_cents"] += 1000
    conn.execute(
        "UPDATE meters SET \"values\" = ? WHERE level = 'progressive'",
        (json.dumps(values, sort_keys=True, separators=(",", ":")),),
    )
    conn.commit()
    conn.close()
    done = tablectl("journal", "verify", "--db", str(db))
    assert done.returncode == 1
    assert "stored snapshot, meters or round count are not the state seq" in done.stdout


def test_verify_text_output_says_ok_with_counts(db: Path) -> None:
    done = tablectl("journal", "verify", "--db", str(db))
    assert done.returncode == 0
    assert done.stdout.startswith(f"journal verify: ok: {entry_count(db)} entries, 5 rounds")


def test_missing_journal_is_a_clean_error_and_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.db"
    for args in (
        ("journal", "verify", "--db", str(missing), "--json"),
        ("journal", "export", "--db", str(missing)),
        ("journal", "export", "--db", str(missing), "--format", "csv"),
    ):
        done = tablectl(*args)
        assert done.returncode == 1, args
        assert "no such journal file" in done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        assert not missing.exists()


def test_garbage_file_is_a_clean_error_and_left_untouched(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    content = bytes(range(256)) * 64
    garbage.write_bytes(content)
    verify = tablectl("journal", "verify", "--db", str(garbage), "--json")
    assert verify.returncode == 1
    assert json.loads(verify.stdout)["ok"] is False
    export = tablectl("journal", "export", "--db", str(garbage))
    assert export.returncode == 1
    assert "garbage.db" in export.stderr
    for done in (verify, export):
        assert "Traceback" not in done.stderr
    assert garbage.read_bytes() == content
    directory = tablectl("journal", "verify", "--db", str(tmp_path))
    assert directory.returncode == 1
    assert "not a regular file" in directory.stdout


def test_export_jsonl_carries_every_entry_with_its_chain(db: Path) -> None:
    done = tablectl("journal", "export", "--db", str(db), "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == entry_count(db)
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    for r in rows:
        assert {"seq", "ts", "round", "type", "data", "hash"} <= set(r)
        assert isinstance(r["data"], dict) and "effects" in r["data"]
    for prev, row in itertools.pairwise(rows):
        assert row["prev_hash"] == prev["hash"]
        assert row["ts"] >= prev["ts"]


def test_export_csv_has_a_header_and_one_row_per_entry(db: Path) -> None:
    done = tablectl("journal", "export", "--db", str(db), "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == entry_count(db)
    assert rows[0]["type"] == "table_opened"
    assert json.loads(rows[0]["data"])["supervisor"] == "ana"


def test_export_refuses_an_unknown_format(db: Path) -> None:
    done = tablectl("journal", "export", "--db", str(db), "--format", "xml")
    assert done.returncode == 2
    assert "invalid choice" in done.stderr


def test_verify_replays_from_the_configuration_the_journal_began_with(tmp_path: Path) -> None:
    """A table changed in maintenance from $1 to $5 wagers: the replay must start from the $1
    configuration (recovered by undoing the journaled config_changed), or the contributions of
    the first round would not match the stored meters."""
    from report_journals import TableDriver

    path = tmp_path / "j.db"
    d = TableDriver(path)
    d.open_table()
    d.play_round([1, 2], {})
    d.close_table()
    d.send("maintenance_entered", supervisor="ana")
    d.send(
        "config_changed",
        supervisor="ana",
        changes={"progressive_wager_cents": 500, "levels[0].rate_bp": 2700},
    )
    d.send("maintenance_exited", supervisor="ana")
    d.open_table()
    d.play_round([3], {})
    d.close()
    done = tablectl("journal", "verify", "--db", str(path), "--json")
    assert json.loads(done.stdout)["problems"] == []
    assert done.returncode == 0
