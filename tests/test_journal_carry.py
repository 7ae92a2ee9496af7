"""Issue 23, item 3: a fresh journal on a table that had one is a procedure, not an accident.

A table whose journal is closed or gone starts a new one only with a journaled ``meters_carried``
(two supervisors' PINs) that takes over every level's meters, to the sub-unit, from the previous
journal's verified head; verify follows the chain across (NJ 13:69E-1.39B(h): the table recovers
to the prior, committed state or does not play; NJ 13:69D-1.52(f): no meter changed without a
record of who and why).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from report_journals import TableDriver

from controller.cli.journal import make_replay
from controller.config import Supervisor, hash_pin
from controller.journal.anchor import default_anchor_path, read_anchor
from controller.journal.audit import verify
from controller.journal.format import StorageFault
from controller.journal.seal import new_verification_key, write_new_seal_file
from controller.journal.store import Journal
from controller.service.carry import (
    CarryError,
    carried_problems,
    check_supervisors,
    from_journal,
    from_report,
    start_carried_journal,
)
from fsm.round import GameConfig

ROOT = Path(__file__).resolve().parent.parent
GAME = GameConfig(table_id="T9")


def _played(db: Path, seal_file: Path | None = None) -> dict[str, object]:
    """A live journal with money on its meters; returns its stored (complete) meters."""
    driver = TableDriver(db, GAME, seal_file=seal_file)
    driver.open_table()
    for _ in range(3):
        driver.play_round([1, 2, 4], {})
    driver.play_round([3], {3: "royal_flush"})
    meters = dict(driver.machine.snapshot()["meters"])
    driver.close()
    return meters


def _replay(db: Path):  # type: ignore[no-untyped-def]
    replay, _ = make_replay(db, None)
    return replay


def _carry(  # type: ignore[no-untyped-def]
    new: Path,
    old: Path,
    *,
    seal_file: Path | None = None,
    anchor: Path | None = None,
    previous_anchor: Path | None = None,
):
    source = from_journal(old, _replay(old), anchor=previous_anchor or anchor)
    return start_carried_journal(
        new,
        source,
        ["ana", "bo"],
        game=GAME,
        table_id="T9",
        anchor=anchor,
        seal_file=seal_file,
        now_ms=lambda: 1_800_000_000_000,
    )


def test_a_fresh_journal_carries_every_meter_to_the_sub_unit_and_verify_follows_the_chain(
    tmp_path: Path,
) -> None:
    old = tmp_path / "period1.db"
    meters = _played(old)
    assert meters["progressive"]["contributed"] > 0  # type: ignore[index]
    new = tmp_path / "journal.db"
    entry = _carry(new, old)
    assert entry.seq == 1 and entry.type == "meters_carried"
    report = verify(new, _replay(new))
    assert report.ok, report.problems
    assert carried_problems(new, old) == []
    # the table carries on from the carried meters: nothing lost, nothing invented
    driver_journal = Journal.open(new, table_id="T9")
    stored = driver_journal.last_state()
    driver_journal.close()
    assert stored is not None and stored.snapshot["meters"] == meters
    effect = entry.data["effects"][0]
    assert effect["type"] == "meters_carried" and effect["supervisors"] == ["ana", "bo"]
    # the new journal anchors itself
    record = read_anchor(default_anchor_path(new))
    assert record is not None and record.seq == 1


def test_verify_across_a_carry_names_a_journal_that_is_not_the_previous_head(
    tmp_path: Path,
) -> None:
    old = tmp_path / "period1.db"
    _played(old)
    kept = tmp_path / "copy.db"
    shutil.copyfile(old, kept)
    new = tmp_path / "journal.db"
    _carry(new, old)
    # the previous journal carried on after the carry (or another one is shown): named
    driver = TableDriver(old, GAME)
    driver.play_round([5], {})
    driver.close()
    problems = carried_problems(new, old)
    assert problems and "previous head" in problems[0]
    assert carried_problems(new, kept) == []


def test_a_carry_into_a_journal_whose_meters_moved_is_refused_by_the_round_machine(
    tmp_path: Path,
) -> None:
    old = tmp_path / "period1.db"
    _played(old)
    busy = tmp_path / "busy.db"
    _played(busy)
    with pytest.raises(CarryError, match=r"holds .* entries"):
        _carry(busy, old)
    # in the machine itself: once per fresh journal, never after money moved
    driver = TableDriver(tmp_path / "t.db", GAME)
    driver.open_table()
    driver.play_round([1], {})
    source = from_journal(old, _replay(old), anchor=default_anchor_path(old))
    effects = driver.send(
        "meters_carried",
        meters=source.meters,
        previous_seq=source.seq,
        previous_hash=source.hash,
        source="journal",
        supervisors=["ana", "bo"],
    )
    driver.close()
    assert effects[0]["type"] == "rejected"


def test_a_carry_needs_two_different_supervisors_with_their_pins(tmp_path: Path) -> None:
    known = {
        "ana": Supervisor("ana", "Ana", hash_pin("1357")),
        "bo": Supervisor("bo", "Bo", hash_pin("2468")),
    }
    assert check_supervisors([("ana", "1357"), ("bo", "2468")], known) == ["ana", "bo"]
    with pytest.raises(CarryError, match="two different supervisors"):
        check_supervisors([("ana", "1357"), ("ana", "1357")], known)
    with pytest.raises(CarryError, match="two different supervisors"):
        check_supervisors([("ana", "1357")], known)
    with pytest.raises(CarryError, match="'bo': unknown id or wrong PIN"):
        check_supervisors([("ana", "1357"), ("bo", "1357")], known)
    with pytest.raises(CarryError, match="'cy': unknown id or wrong PIN"):
        check_supervisors([("ana", "1357"), ("cy", "2468")], known)


def test_a_previous_journal_that_does_not_verify_carries_nothing(tmp_path: Path) -> None:
    old = tmp_path / "period1.db"
    _played(old)
    conn = sqlite3.connect(old)
    conn.execute("DROP TRIGGER journal_no_update")
    conn.execute(
        "UPDATE journal SET data = replace(data, '\"cents\":', '\"cents\": ') WHERE seq = 5"
    )
    conn.commit()
    conn.close()
    new = tmp_path / "journal.db"
    with pytest.raises(CarryError, match="does not verify"):
        _carry(new, old)
    assert not new.exists()


def test_a_sealed_table_carries_into_a_journal_sealed_with_a_new_key(tmp_path: Path) -> None:
    """The lost-journal case of issue 23: power-up refuses a fresh journal while the sealing key
    and the anchor say the table had one; the carry is the way on, with a new sealing key."""
    old_key = tmp_path / "old.seal"
    write_new_seal_file(old_key, new_verification_key())
    live = tmp_path / "journal.db"
    meters = _played(live, seal_file=old_key)
    archived = tmp_path / "period1.db"
    shutil.move(live, archived)
    for suffix in ("-wal", "-shm"):
        Path(f"{live}{suffix}").unlink(missing_ok=True)
    anchor = default_anchor_path(live)  # the configured anchor stays where it was
    with pytest.raises(StorageFault, match=r"was lost or replaced.*tablectl journal carry"):
        Journal.open(live, table_id="T9", seal_file=old_key)
    with pytest.raises(CarryError, match=r"has sealed .* move it aside"):
        _carry(live, archived, seal_file=old_key, anchor=anchor)
    vk = new_verification_key()
    new_key = tmp_path / "new.seal"
    write_new_seal_file(new_key, vk)
    _carry(live, archived, seal_file=new_key, anchor=anchor)
    # the anchor of the previous journal is kept beside it, never deleted
    assert len(list(tmp_path.glob("journal.db.anchor.before-carry-*"))) == 1
    with Journal.open(live, table_id="T9", seal_file=new_key) as journal:  # powers up
        stored = journal.last_state()
    assert stored is not None and stored.snapshot["meters"] == meters
    assert verify(live, _replay(live), verify_key=vk).ok
    assert carried_problems(live, archived) == []


def test_tablectl_journal_carry_with_two_pins_and_verify_previous(tmp_path: Path) -> None:
    old = tmp_path / "period1.db"
    _played(old)
    config = tmp_path / "table.toml"
    text = (ROOT / "deploy" / "config.example.toml").read_text()
    text = text.replace('"/var/lib/paigow/journal.db"', f'"{tmp_path / "journal.db"}"')
    text = text.replace('seal_key = "/var/lib/paigow/journal.seal"', "")
    text = text.replace('id = "T1"', 'id = "T9"')
    text += f'\n[supervisors.bo]\nname = "Bo"\npin_hash = "{hash_pin("2468")}"\n'
    config.write_text(text)
    tablectl = [sys.executable, "-m", "controller.cli"]
    carry = [*tablectl, "journal", "carry", "--config", str(config), "--from-journal", str(old)]
    carry += ["--supervisor", "supervisor1", "--supervisor", "bo"]
    wrong = subprocess.run(carry, input="0000\n1111\n", capture_output=True, text=True, cwd=ROOT)
    assert wrong.returncode == 1 and "'bo': unknown id or wrong PIN" in wrong.stderr
    assert not (tmp_path / "journal.db").exists()
    done = subprocess.run(carry, input="0000\n2468\n", capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "carries the meters" in done.stdout
    check = [*tablectl, "journal", "verify", "--db", str(tmp_path / "journal.db")]
    check += ["--previous", str(old), "--no-installed-config"]
    verified = subprocess.run(check, capture_output=True, text=True, cwd=ROOT)
    assert verified.returncode == 0, verified.stdout + verified.stderr


# ------------------------------------------------------------ from the last signed report
def _signed_report(db: Path, out: Path) -> dict[str, object]:
    """``tablectl report meters --json`` of ``db``, written to ``out`` (what the supervisors
    signed); returns the document."""
    made = subprocess.run(
        [sys.executable, "-m", "controller.cli", "report", "meters", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr
    out.write_text(made.stdout)
    document: dict[str, object] = json.loads(made.stdout)
    return document


def test_nj_13_69e_1_39b_h_a_lost_journal_is_carried_from_the_last_signed_report_to_the_sub_unit(
    tmp_path: Path,
) -> None:
    """NJ 13:69E-1.39B(h): the table resumes from the prior committed state (the meters the
    supervisors signed), never from zero; the entry says the source, verify says it cannot
    follow the chain back."""
    old = tmp_path / "period1.db"
    meters = _played(old)
    report = tmp_path / "meters.json"
    document = _signed_report(old, report)
    carry = document["carry"]
    assert isinstance(carry, dict) and carry["meters"] == meters  # complete, sub-units
    head = document["verification"]["head"]  # type: ignore[index]
    assert (carry["seq"], carry["hash"]) == (head["seq"], head["hash"])
    old.unlink()  # the journal is lost; the report is what is left
    default_anchor_path(old).unlink(missing_ok=True)
    new = tmp_path / "journal.db"
    source = from_report(report, "T9")
    assert source.source == "report" and source.seq == carry["seq"]
    entry = start_carried_journal(
        new, source, ["ana", "bo"], game=GAME, table_id="T9", now_ms=lambda: 1_800_000_000_000
    )
    assert entry.data["source"] == "report" and entry.data["previous_hash"] == carry["hash"]
    assert entry.data["effects"][0]["source"] == "report"
    assert verify(new, _replay(new)).ok
    with Journal.open(new, table_id="T9") as journal:
        stored = journal.last_state()
    assert stored is not None and stored.snapshot["meters"] == meters
    check = [sys.executable, "-m", "controller.cli", "journal", "verify", "--db", str(new)]
    checked = subprocess.run(
        [*check, "--no-installed-config", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "from a report at head" in checked.stdout and "cannot be followed" in checked.stdout


def test_nj_13_69d_1_52_f_a_report_whose_meters_do_not_balance_is_refused_by_the_round_machine(
    tmp_path: Path,
) -> None:
    """NJ 13:69D-1.52(f): no meter changes without a record: a report edited by one cent on
    the display (nothing added to its sources) carries nothing."""
    old = tmp_path / "period1.db"
    _played(old)
    report = tmp_path / "meters.json"
    document = _signed_report(old, report)
    carry = document["carry"]
    assert isinstance(carry, dict)
    carry["meters"]["progressive"]["display"] += 10_000  # type: ignore[index]  # one cent
    report.write_text(json.dumps(document))
    new = tmp_path / "journal.db"
    with pytest.raises(CarryError, match="do not balance"):
        start_carried_journal(
            new,
            from_report(report, "T9"),
            ["ana", "bo"],
            game=GAME,
            table_id="T9",
            now_ms=lambda: 1_800_000_000_000,
        )
    conn = sqlite3.connect(new)
    try:
        assert conn.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
    finally:
        conn.close()


def test_nj_13_69e_1_39b_h_a_report_of_an_unverified_journal_or_another_table_carries_nothing(
    tmp_path: Path,
) -> None:
    old = tmp_path / "period1.db"
    _played(old)
    report = tmp_path / "meters.json"
    document = _signed_report(old, report)
    with pytest.raises(CarryError, match="not 'T1'"):
        from_report(report, "T1")
    document["verification"]["verified"] = False  # type: ignore[index]
    report.write_text(json.dumps(document))
    with pytest.raises(CarryError, match="did not verify"):
        from_report(report, "T9")
    report.write_text("{}")
    with pytest.raises(CarryError, match="holds no verification or carry block"):
        from_report(report, "T9")


# ------------------------------------------------------------ the table marked as having run
def test_nj_13_69e_1_39b_h_power_up_refuses_a_missing_journal_of_a_table_that_has_run_here(
    tmp_path: Path,
) -> None:
    """The anchor and the sealing key gone with the journal: the ``<journal>.has-run`` marker
    the owner wrote at the first power-up still refuses a fresh journal (a storage fault naming
    ``tablectl journal carry``); a carried journal powers up."""
    from test_journal_storage import owner_for

    from controller.service.carry import has_run_marker

    db = tmp_path / "journal.db"
    first = owner_for(db, GAME)
    first.start()
    first.stop()
    assert has_run_marker(db).is_file()
    old = tmp_path / "period1.db"
    _played(old)
    db.unlink()
    default_anchor_path(db).unlink()
    again = owner_for(db, GAME)
    with pytest.raises(StorageFault, match=r"has run here .*tablectl journal carry"):
        again.start()
    again.stop()
    assert not db.exists() or db.stat().st_size == 0  # nothing was created or appended
    db.unlink(missing_ok=True)
    _carry(db, old)
    carried = owner_for(db, GAME)
    carried.start()
    carried.stop()
    assert verify(db, _replay(db)).ok


def test_nj_13_69d_1_52_f_tablectl_journal_carry_from_a_signed_report_says_verify_cannot_follow(
    tmp_path: Path,
) -> None:
    old = tmp_path / "period1.db"
    meters = _played(old)
    report = tmp_path / "meters.json"
    _signed_report(old, report)
    config = tmp_path / "table.toml"
    text = (ROOT / "deploy" / "config.example.toml").read_text()
    text = text.replace('"/var/lib/paigow/journal.db"', f'"{tmp_path / "journal.db"}"')
    text = text.replace('seal_key = "/var/lib/paigow/journal.seal"', "")
    text = text.replace('id = "T1"', 'id = "T9"')
    text += f'\n[supervisors.bo]\nname = "Bo"\npin_hash = "{hash_pin("2468")}"\n'
    config.write_text(text)
    carry = [sys.executable, "-m", "controller.cli", "journal", "carry", "--config", str(config)]
    carry += ["--supervisor", "supervisor1", "--supervisor", "bo"]
    both = [*carry, "--from-report", str(report), "--from-journal", str(old)]
    refused = subprocess.run(both, input="0000\n2468\n", capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode == 2 and "not allowed with" in refused.stderr
    witness = subprocess.run(
        [*carry, "--from-witness"], input="0000\n2468\n", capture_output=True, text=True, cwd=ROOT
    )
    assert witness.returncode == 2 and "--from-witness needs --pg" in witness.stderr
    done = subprocess.run(
        [*carry, "--from-report", str(report)],
        input="0000\n2468\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "verify cannot follow the chain across this carry" in done.stdout
    with Journal.open(tmp_path / "journal.db", table_id="T9") as journal:
        stored = journal.last_state()
    assert stored is not None and stored.snapshot["meters"] == meters
