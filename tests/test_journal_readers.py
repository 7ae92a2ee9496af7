"""Readers never print unverified money; plain verify names what it can without a key.

Issue 23 on main c291293: a rewritten ``pay`` that verify catches was still printed as a $50,000
hit by ``report hits`` and ``report shift``, which checked nothing; a keyed journal re-forged
unkeyed made plain ``journal verify`` say "ok" with no note; the configuration in ``meta`` edited
and every entry regenerated passed plain verify. Now the reports verify what they read (chain,
stored state, replay, and seals with ``--verify-key``) and mark every money line UNVERIFIED with
the first bad seq; plain verify compares the journal with the installed, approved configuration
(the downgrade, the configuration); ``--expect-head`` checks a head signed on paper.
NJ 13:69D-1.52(f): no payout or meter figure without its record.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from report_journals import TableDriver, standard_journal
from test_journal_seals import _reforge
from test_journal_storage import _pay_entry, _rewrite_with_recomputed_hashes

from controller.config import SIMULATED_TABLE, load_config
from controller.journal.audit import verify

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TABLECTL, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def _installed(tmp_path: Path, journal_lines: str = "") -> Path:
    """A table configuration as installed: the journal's game configuration (T9's, as
    report_journals writes it) and the given [journal] lines."""
    text = SIMULATED_TABLE.read_text()
    text = text.replace('path = "/tmp/paigow-simulated.db"', f'path = "/tmp/x.db"\n{journal_lines}')
    path = tmp_path / "installed.toml"
    path.write_text(text)
    return path


def _journal_of(installed: Path, db: Path) -> Path:
    """A journal of the installed table's own game configuration (a few rounds)."""
    driver = TableDriver(db, load_config(installed).game)
    driver.open_table()
    driver.play_round([1, 2], {})
    driver.close()
    return db


def test_reports_of_a_rewritten_payout_mark_every_figure_unverified_with_the_first_bad_seq(
    tmp_path: Path,
) -> None:
    db = tmp_path / "j.db"
    standard_journal(db)
    clean = tablectl("report", "hits", "--db", str(db))
    assert clean.returncode == 0, clean.stderr
    assert "UNVERIFIED" not in clean.stdout
    seq, cents = _pay_entry(db)
    _rewrite_with_recomputed_hashes(db, seq, f'"cents":{cents},', '"cents":5000000,')
    for kind in ("hits", "shift"):
        done = tablectl("report", kind, "--db", str(db))
        assert done.returncode == 1, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith(f"UNVERIFIED: this journal fails verification from seq {seq}")
        money = [line for line in lines if "$" in line and not line.startswith("UNVERIFIED")]
        assert money and all(f"[UNVERIFIED (from seq {seq})]" in line for line in money)
    doc = json.loads(tablectl("report", "hits", "--db", str(db), "--json").stdout)
    assert doc["verification"]["verified"] is False
    assert doc["verification"]["first_bad_seq"] == seq


def test_the_shift_report_prints_the_head_to_sign_and_verify_checks_it(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    driver = standard_journal(db)
    done = tablectl("report", "shift", "--db", str(db))
    assert done.returncode == 0, done.stderr
    head = next(x for x in done.stdout.splitlines() if x.startswith("journal head: seq "))
    seq, digest = head.split()[3], head.split()[5]
    assert digest == driver.journal.last_hash
    signed = f"{seq}:{digest}"
    assert tablectl("journal", "verify", "--db", str(db), "--expect-head", signed).returncode == 0
    assert verify(db, expect_head=(int(seq), digest)).ok
    # rewritten since it was signed (every hash recomputed: the public chain agrees again)
    pay, cents = _pay_entry(db)
    _rewrite_with_recomputed_hashes(db, pay, f'"cents":{cents},', '"cents":5000000,')
    report = verify(db, expect_head=(int(seq), digest))
    assert any("is not the signed head's" in p for p in report.problems)
    # rolled back to before the signed head
    report = verify(db, expect_head=(int(seq) + 5, digest))
    assert any("is not in the journal" in p for p in report.problems)
    bad = tablectl("journal", "verify", "--db", str(db), "--expect-head", "12:zz")
    assert bad.returncode == 2 and "SEQ:HASH" in bad.stderr


def test_plain_verify_names_a_journal_downgraded_from_the_installed_protection(
    tmp_path: Path,
) -> None:
    """Keyed -> unkeyed (the static key of the installation) and sealed -> unsealed: named by
    plain verify from the installed configuration, no key needed."""
    db = _journal_of(_installed(tmp_path), tmp_path / "j.db")  # unkeyed, as a re-forge leaves it
    key_file = tmp_path / "journal.key"
    key_file.write_text(os.urandom(32).hex())
    for lines in (f'key_file = "{key_file}"', f'seal_key = "{tmp_path / "j.seal"}"'):
        installed = _installed(tmp_path, lines)
        done = tablectl("journal", "verify", "--db", str(db), "--installed-config", str(installed))
        assert done.returncode == 1, done.stdout
        assert "downgraded:" in done.stdout
    plain = _installed(tmp_path)
    done = tablectl("journal", "verify", "--db", str(db), "--installed-config", str(plain))
    assert done.returncode == 0, done.stdout


def test_plain_verify_names_a_meta_configuration_edit_against_the_installed_one(
    tmp_path: Path,
) -> None:
    db = _journal_of(_installed(tmp_path), tmp_path / "j.db")
    installed = _installed(tmp_path)
    ok = tablectl("journal", "verify", "--db", str(db), "--installed-config", str(installed))
    assert ok.returncode == 0, ok.stdout
    conn = sqlite3.connect(db)
    config = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0]
    snapshot = conn.execute("SELECT snapshot FROM state").fetchone()[0]
    conn.close()
    edited = config.replace('"rate_bp":', '"rate_bp":1', 1)
    _reforge(db, 1, None, meta={"config": edited})
    # the stored snapshot carries the configuration too: the forger edits it as well
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE state SET snapshot = ?", (snapshot.replace('"rate_bp":', '"rate_bp":1', 1),)
    )
    conn.commit()
    conn.close()
    done = tablectl("journal", "verify", "--db", str(db), "--installed-config", str(installed))
    assert done.returncode == 1
    assert "is not the installed one" in done.stdout and "rate_bp" in done.stdout
