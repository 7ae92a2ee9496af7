"""Forward-secure seals (issue 23): the insider with root on the Pi, or the SD card in hand.

Each attack of issue 23 tried on main c291293 passed there (a full re-forge with the project's own
code, a rollback with journal and anchor, a deletion, a downgrade, a meta configuration edit);
here each is made on real files and must fail: verification re-derives every sealing key from
the verification key `setup-keys` printed, and the sealing key on the Pi only moves forward.
Rules: NJ 13:69D-1.52(f) (no meter change without a recorded reason: a rewritten payout must show),
NJ 13:69E-1.39B(h) (recover to the prior, committed state, never a silent rollback).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from journal_support import journal_entries
from report_journals import TableDriver, standard_journal
from test_journal_storage import _pay_entry

from controller.journal.anchor import default_anchor_path
from controller.journal.audit import verify
from controller.journal.format import (
    SCHEMA_SQL,
    JournalError,
    StorageFault,
    entry_hash,
    genesis_hash,
)
from controller.journal.seal import (
    SEAL_FILE_SIZE,
    SealChain,
    SealError,
    SealKeyFile,
    evolve,
    first_key,
    format_verification_key,
    new_verification_key,
    parse_verification_key,
    seal,
    write_new_seal_file,
)
from controller.journal.store import Journal

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def vk() -> bytes:
    return new_verification_key()


@pytest.fixture
def sealed(tmp_path: Path, vk: bytes) -> tuple[Path, Path]:
    """A standard shift journal, sealed; returns (journal, sealing-key file)."""
    seal_file = tmp_path / "journal.seal"
    write_new_seal_file(seal_file, vk)
    db = tmp_path / "sealed.db"
    standard_journal(db, seal_file=seal_file)
    return db, seal_file


def _key_at(vk: bytes, seq: int) -> bytes:
    key = first_key(vk)
    for _ in range(seq - 1):
        key = evolve(key)
    return key


def _reforge(
    db: Path,
    from_seq: int,
    edit: tuple[str, str] | None,
    seal_key_of: dict[int, bytes] | None = None,
    *,
    meta: dict[str, str] | None = None,
    unseal: bool = False,
) -> None:
    """The insider of issue 23 with the project's own code: triggers dropped, meta and/or one
    entry rewritten, every later hash recomputed with the public rule and (``seal_key_of``: the
    sealing keys the attacker holds, by seq; any other seq gets the earliest key held) every seal
    recomputed, the triggers, state row and anchor put back in step."""
    conn = sqlite3.connect(db, isolation_level=None)
    for name in ("journal_no_update", "journal_no_delete", "journal_append_only"):
        conn.execute(f"DROP TRIGGER {name}")
    if meta is not None:
        for k, v in meta.items():
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (v, k))
        full = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        prev = genesis_hash(full)
    else:
        prev = conn.execute("SELECT prev_hash FROM journal WHERE seq = ?", (from_seq,)).fetchone()[
            0
        ]
    rows = conn.execute(
        "SELECT seq, ts_ms, round_id, type, data, state_hash, mac FROM journal WHERE seq >= ?"
        " ORDER BY seq",
        (from_seq,),
    ).fetchall()
    last = ""
    for seq, ts, rnd, type_, data, s_hash, mac in rows:
        if edit is not None and seq == from_seq:
            assert edit[0] in data
            data = data.replace(edit[0], edit[1])
        last = entry_hash(seq, ts, rnd, type_, data, prev, s_hash)
        if unseal:
            mac = ""
        elif seal_key_of is not None:
            held = [s for s in seal_key_of if s <= seq] or [min(seal_key_of)]
            key = seal_key_of[max(held)]
            for _ in range(seq - max(held) if max(held) <= seq else 0):
                key = evolve(key)
            mac = seal(key, last)
        conn.execute(
            "UPDATE journal SET data = ?, prev_hash = ?, hash = ?, mac = ? WHERE seq = ?",
            (data, prev, last, mac, seq),
        )
        prev = last
    conn.execute("UPDATE state SET hash = ?", (last,))
    for statement in SCHEMA_SQL:
        if "CREATE TRIGGER" in statement:
            conn.execute(statement)
    count = conn.execute("SELECT max(seq) FROM journal").fetchone()[0]
    conn.close()
    from controller.journal.anchor import AnchorWriter

    writer = AnchorWriter(default_anchor_path(db))
    writer.settle(count, last)
    writer.close()


# ------------------------------------------------------------------------------ the key
def test_the_verification_key_string_round_trips_and_a_mistyped_one_is_refused(vk: bytes) -> None:
    text = format_verification_key(vk)
    assert text.startswith("pgvk1-")
    assert parse_verification_key(text) == vk
    assert parse_verification_key(text.upper().replace("-", " ")) == vk  # read back from paper
    wrong = text[:-6] + ("0" if text[-6] != "0" else "1") + text[-5:]
    with pytest.raises(SealError, match="check digits"):
        parse_verification_key(wrong)
    with pytest.raises(SealError, match="pgvk1"):
        parse_verification_key("deadbeef")


def test_the_sealing_key_file_holds_only_the_next_key_never_an_earlier_one(
    sealed: tuple[Path, Path], vk: bytes
) -> None:
    """The key of every sealed entry is overwritten: the file holds the key of the next seq,
    and SHA-256 is one-way (nothing in the file derives an earlier key)."""
    db, seal_file = sealed
    n = len(journal_entries(db))
    raw = seal_file.read_bytes()
    assert len(raw) == SEAL_FILE_SIZE
    keyfile = SealKeyFile(seal_file)
    assert keyfile.next_seq == n + 1
    assert keyfile.key_for(n + 1) == _key_at(vk, n + 1)
    for seq in (1, n // 2, n):
        assert _key_at(vk, seq).hex().encode() not in raw
    with pytest.raises(SealError, match="was erased"):
        keyfile.key_for(n)
    keyfile.close()


def test_a_sealed_journal_verifies_with_its_key_and_says_when_seals_were_not_checked(
    sealed: tuple[Path, Path], vk: bytes
) -> None:
    db, _ = sealed
    report = verify(db, verify_key=vk)
    assert report.ok, report.problems
    assert not any("not checked" in n for n in report.notes)
    plain = verify(db)
    assert plain.ok
    assert any("seals" in n and "not checked" in n for n in plain.notes)
    other = verify(db, verify_key=new_verification_key())
    assert not other.ok and "is not the journal's" in other.problems[0]


# ------------------------------------------------------------------------------ re-forge
def test_a_reforged_payout_without_any_sealing_key_fails_the_seals_nj_13_69d_1_52f(
    sealed: tuple[Path, Path], vk: bytes
) -> None:
    """Issue 23: a full re-forge with the project's own code (every hash recomputed) passed
    verify on main. The seals cannot be recomputed without the keys: the rewritten seq is named."""
    db, _ = sealed
    seq, cents = _pay_entry(db)
    _reforge(db, seq, (f'"cents":{cents},', '"cents":5000000,'))
    assert verify(db).ok  # the public chain alone is consistent again
    report = verify(db, verify_key=vk)
    assert not report.ok
    assert report.first_bad_seq == seq
    assert report.problems[0].startswith(f"seq {seq}: seal does not match")


def test_a_reforge_with_the_sealing_key_of_a_later_time_fails_for_every_earlier_entry(
    sealed: tuple[Path, Path], vk: bytes
) -> None:
    """Root on the Pi at seq t holds k_t (and can compute every later key), never an earlier
    one: a payout sealed before t re-sealed with what the attacker holds fails at its seq, while
    the entries from t on (which the attacker could rewrite) verify."""
    db, _ = sealed
    seq, cents = _pay_entry(db)
    t = seq + 5
    _reforge(db, seq, (f'"cents":{cents},', '"cents":5000000,'), {t: _key_at(vk, t)})
    report = verify(db, verify_key=vk)
    assert not report.ok
    assert report.first_bad_seq == seq
    assert f"seals: {t - seq} entries in all with a bad seal" in report.problems


def test_a_reforge_with_the_sealing_key_taken_just_before_the_entry_passes_documented_limit(
    sealed: tuple[Path, Path], vk: bytes
) -> None:
    """What forward security does not prove (docs/journal.md): with the key of seq t, entries
    from t on can be re-sealed. The witness off the Pi is what catches that."""
    db, _ = sealed
    seq, cents = _pay_entry(db)
    _reforge(db, seq, (f'"cents":{cents},', '"cents":5000000,'), {seq: _key_at(vk, seq)})
    assert verify(db, verify_key=vk).ok


def test_a_meta_configuration_edit_with_every_entry_regenerated_fails_at_seq_1(
    sealed: tuple[Path, Path], vk: bytes
) -> None:
    """Issue 23: the configuration in meta edited and every entry regenerated passed plain
    verify on main. Seq 1's seal covers the genesis hash of the meta rows."""
    db, _ = sealed
    conn = sqlite3.connect(db)
    config = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0]
    conn.close()
    edited = config.replace('"rate_bp":', '"rate_bp":1', 1)
    assert edited != config
    _reforge(db, 1, None, {999_999: b"\0" * 32}, meta={"config": edited})
    report = verify(db, verify_key=vk)
    assert report.first_bad_seq == 1
    assert report.problems[0].startswith("seq 1: seal does not match")


def test_a_sealed_journal_reforged_unsealed_is_named_as_downgraded(
    sealed: tuple[Path, Path], vk: bytes
) -> None:
    """Issue 23: a keyed journal re-forged unkeyed; here a sealed one re-forged with no seals
    (meta key_id emptied, every hash and seal column regenerated)."""
    db, seal_file = sealed
    _reforge(db, 1, None, meta={"key_id": ""}, unseal=True)
    report = verify(db, verify_key=vk)
    assert not report.ok
    assert "downgraded" in report.problems[0]
    with pytest.raises(JournalError, match="not sealed"):
        Journal.open(db, seal_file=seal_file)


# ------------------------------------------------------------------------------ rollback, deletion
def test_a_rollback_with_journal_and_anchor_is_refused_by_the_sealing_key_nj_13_69e_1_39b_h(
    tmp_path: Path, vk: bytes
) -> None:
    """Issue 23: journal and anchor restored from an older consistent copy were resumed on main
    (seqs re-used with new hashes). The sealing key has moved past them: power-up refuses."""
    seal_file = tmp_path / "journal.seal"
    write_new_seal_file(seal_file, vk)
    db = tmp_path / "live.db"
    driver = TableDriver(db, seal_file=seal_file)
    driver.open_table()
    driver.play_round([1, 2], {})
    driver.close()
    old = tmp_path / "old"
    old.mkdir()
    shutil.copyfile(db, old / "live.db")
    shutil.copyfile(default_anchor_path(db), old / "live.db.anchor")
    driver = TableDriver(db, seal_file=seal_file)
    driver.play_round([3], {})
    driver.close()
    shutil.copyfile(old / "live.db", db)
    shutil.copyfile(old / "live.db.anchor", default_anchor_path(db))
    assert verify(db).ok  # the copy alone is consistent
    with pytest.raises(StorageFault, match="sealed entries have vanished"):
        Journal.open(db, seal_file=seal_file)


def test_a_deleted_journal_and_anchor_do_not_start_afresh_with_the_same_sealing_key(
    sealed: tuple[Path, Path],
) -> None:
    """Issue 23: journal and anchor deleted, a fresh journal started on main with its meters at
    their initial amounts. The sealing key has sealed entries of a journal that is gone."""
    db, seal_file = sealed
    for p in (db, default_anchor_path(db), db.with_name(db.name + "-wal")):
        p.unlink(missing_ok=True)
    with pytest.raises(StorageFault, match="was lost or replaced"):
        Journal.open(db, table_id="T9", seal_file=seal_file)
    assert not db.exists() or db.stat().st_size == 0 or verify(db).entries == 0


# ------------------------------------------------------------------------------ power cuts
def test_a_sealing_key_file_left_behind_by_a_cut_derives_forward_and_checks_the_last_seal(
    tmp_path: Path, vk: bytes
) -> None:
    """The key file is synced when the table is idle, not at every entry: a cut may leave an
    older key on disk. The writer derives forward (the last entry's seal is checked then) and the
    journal goes on verifying; a key file whose last seal does not match is a storage fault."""
    seal_file = tmp_path / "journal.seal"
    write_new_seal_file(seal_file, vk)
    early = seal_file.read_bytes()  # the key of seq 1, as a lost write would leave it
    db = tmp_path / "cut.db"
    standard_journal(db, seal_file=seal_file)
    n = len(journal_entries(db))
    seal_file.write_bytes(early)
    driver = TableDriver(db, seal_file=seal_file)  # opens: derives k_n, checks seal n
    driver.play_round([4], {})
    driver.close()
    assert verify(db, verify_key=vk).ok
    assert SealKeyFile(seal_file).next_seq == len(journal_entries(db)) + 1 > n + 1
    # the last seal rewritten: power-up with a key file behind the journal sees it
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER journal_no_update")
    conn.execute(
        "UPDATE journal SET mac = ? WHERE seq = (SELECT max(seq) FROM journal)", ("0" * 64,)
    )
    conn.commit()
    conn.execute(next(s for s in SCHEMA_SQL if "journal_no_update" in s))
    conn.close()
    seal_file.write_bytes(early)
    with pytest.raises(StorageFault, match="seal does not match"):
        Journal.open(db, seal_file=seal_file)


def _cut(durable: bytes, now: bytes) -> bytes:
    """The sealing-key file as a power cut may leave it (`tests/stress/disk.py`): every
    512-byte sector written since ``durable`` (the file at the last sync) torn."""
    out = bytearray(now)
    for start in range(0, len(now), 512):
        if now[start : start + 512] != durable[start : start + 512]:
            end = min(start + 120, len(now))
            out[start + 40 : end] = bytes(range(end - start - 40))  # inside the slot's record
    return bytes(out)


def test_between_two_syncs_no_key_goes_over_the_synced_one_so_a_cut_tearing_every_write_leaves_it(
    tmp_path: Path, vk: bytes
) -> None:
    """NJ 13:69D-1.52(f): between two syncs every new key goes into the slot the last sync did
    not leave its key in, so a cut that tears every sector written since (the disk model of
    `make stress`, which found a file with both slots torn) leaves the synced key, from which
    power-up derives forward; after a sync the file holds no key of an entry already sealed."""
    seal_file = tmp_path / "journal.seal"
    write_new_seal_file(seal_file, vk)
    kf = SealKeyFile(seal_file)
    for seq in range(2, 6):
        kf.advance(seq, _key_at(vk, seq))
    kf.sync()
    durable = seal_file.read_bytes()
    for seq in (2, 3, 4):  # a sync leaves only the next key
        assert _key_at(vk, seq).hex().encode() not in durable
    for seq in range(6, 10):
        kf.advance(seq, _key_at(vk, seq))
        torn = tmp_path / f"torn{seq}.seal"
        torn.write_bytes(_cut(durable, seal_file.read_bytes()))
        assert SealKeyFile(torn).next_seq == 5, f"after the key of seq {seq}"
    kf.sync()
    durable = seal_file.read_bytes()
    assert _key_at(vk, 5).hex().encode() not in durable
    kf.advance(10, _key_at(vk, 10))
    kf.advance(11, _key_at(vk, 11))
    (tmp_path / "torn.seal").write_bytes(_cut(durable, seal_file.read_bytes()))
    assert SealKeyFile(tmp_path / "torn.seal").next_seq == 9
    kf.close()
    closed = seal_file.read_bytes()
    assert SealKeyFile(seal_file).next_seq == 11
    assert _key_at(vk, 9).hex().encode() not in closed


def test_a_key_written_while_the_anchor_thread_syncs_is_not_erased_nor_taken_as_synced(
    tmp_path: Path, vk: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NJ 13:69D-1.52(f): the owner's thread writes the next key while the anchor's thread
    syncs the file (its fdatasync holds no lock). That key is not durable yet, so the sync
    neither empties its slot nor makes it the synced one: it syncs again (`SYNC_TRIES`), and a
    cut tearing every write since the last durable state still leaves a key. Written during
    every try, the slots wait for the next sync and the first synced key stays untouched."""
    import os

    from controller.journal.seal import SYNC_TRIES

    real = os.fdatasync

    def syncing_while_the_owner_appends(
        kf: SealKeyFile, seal_file: Path, during: int
    ) -> list[bytes]:
        durable: list[bytes] = []
        nxt = [kf.next_seq + 1]

        def fdatasync(fd: int) -> None:
            real(fd)
            durable.append(seal_file.read_bytes())
            if len(durable) <= during:
                kf.advance(nxt[0], _key_at(vk, nxt[0]))  # the next entry's key, mid-sync
                nxt[0] += 1

        monkeypatch.setattr(os, "fdatasync", fdatasync)
        try:
            kf.sync()
        finally:
            monkeypatch.undo()
        return durable

    # written during the first try: the second flips the slots over key 3
    seal_file = tmp_path / "journal.seal"
    write_new_seal_file(seal_file, vk)
    kf = SealKeyFile(seal_file)
    kf.advance(2, _key_at(vk, 2))
    durable = syncing_while_the_owner_appends(kf, seal_file, during=1)
    assert len(durable) == 2
    assert SealKeyFile(seal_file).next_seq == 3
    assert _key_at(vk, 2).hex().encode() not in seal_file.read_bytes()  # key 3 went over it
    torn = tmp_path / "torn.seal"
    torn.write_bytes(_cut(durable[-1], seal_file.read_bytes()))
    assert SealKeyFile(torn).next_seq == 3  # the emptied slot torn: key 3, synced, is left
    kf.close()

    # written during every try: nothing flips, the synced key 2 stays where a cut leaves it
    seal_file = tmp_path / "busy.seal"
    write_new_seal_file(seal_file, vk)
    kf = SealKeyFile(seal_file)
    kf.advance(2, _key_at(vk, 2))
    kf.sync()
    synced = seal_file.read_bytes()  # key 2 durable, the other slot emptied
    kf.advance(3, _key_at(vk, 3))
    durable = syncing_while_the_owner_appends(kf, seal_file, during=SYNC_TRIES)
    assert len(durable) == SYNC_TRIES
    assert SealKeyFile(seal_file).next_seq == 3 + SYNC_TRIES  # the newest key is there
    torn.write_bytes(_cut(synced, seal_file.read_bytes()))
    assert SealKeyFile(torn).next_seq == 2  # never written over, never erased
    kf.sync()  # the next sync, with no key written during it, leaves only the newest
    assert _key_at(vk, 2).hex().encode() not in seal_file.read_bytes()
    kf.close()
    assert SealKeyFile(seal_file).next_seq == 3 + SYNC_TRIES


def test_a_key_write_torn_by_a_power_cut_leaves_the_key_before_it_and_play_goes_on(
    tmp_path: Path, vk: bytes
) -> None:
    """NJ 13:69D-1.52(f): a power cut must not cost the table its journal. The key is overwritten
    after every entry and synced once a round, so a cut can tear the sector being written
    (tests/stress/disk.py); the other slot still holds the key before it, the writer derives
    forward, checks the last seal and plays on, and every seal verifies."""
    seal_file = tmp_path / "journal.seal"
    write_new_seal_file(seal_file, vk)
    db = tmp_path / "cut.db"
    standard_journal(db, seal_file=seal_file)
    n = len(journal_entries(db))
    # the file as the cut left it: k_n in one slot, the write of k_(n+1) torn in the other
    torn_file = tmp_path / "torn.seal"
    write_new_seal_file(torn_file, vk)
    kf = SealKeyFile(torn_file)
    kf.advance(n, _key_at(vk, n))  # into slot 1; slot 0 is the one being written at the cut
    raw = bytearray(torn_file.read_bytes())
    raw[40:120] = bytes(range(80))  # random bytes inside the written range of slot 0
    seal_file.write_bytes(bytes(raw))
    (tmp_path / "slot0.seal").write_bytes(bytes(raw[:160]))
    with pytest.raises(SealError, match="no valid record"):  # the torn slot alone is no key
        SealKeyFile(tmp_path / "slot0.seal")
    driver = TableDriver(db, seal_file=seal_file)  # derives k_(n+1) from k_n, checks seal n
    driver.play_round([2], {})
    driver.close()
    assert verify(db, verify_key=vk).ok
    assert SealKeyFile(seal_file).next_seq == len(journal_entries(db)) + 1 > n + 1


def test_a_key_record_spliced_in_from_another_journal_is_refused_not_used_nj_13_69d_1_52f(
    tmp_path: Path, vk: bytes
) -> None:
    """The insider with root: the sealing-key file's other slot is written with a later key of
    another journal's file (a higher next seq, so it would be the newest record). The file is
    refused as naming two journals, and the journal does not open on it (a storage fault, in
    words), where taking the newest record would seal this journal with the other's keys."""
    own, other = tmp_path / "own.seal", tmp_path / "other.seal"
    write_new_seal_file(own, vk)
    other_vk = new_verification_key()
    write_new_seal_file(other, other_vk)
    SealKeyFile(other).advance(5, _key_at(other_vk, 5))  # into slot 1, next seq 5
    spliced = tmp_path / "spliced.seal"
    spliced.write_bytes(own.read_bytes().ljust(512, b"\0")[:512] + other.read_bytes()[512:])
    assert SealKeyFile(other).next_seq == 5 and SealKeyFile(own).next_seq == 1
    with pytest.raises(SealError, match="different journals"):
        SealKeyFile(spliced)
    with pytest.raises(StorageFault, match="sealing key"):
        Journal.open(tmp_path / "j.db", seal_file=spliced)


@pytest.mark.parametrize("what", ["missing", "damaged", "dev_zero", "fifo"])
def test_a_sealing_key_that_cannot_be_used_is_a_storage_fault_not_a_hang(
    tmp_path: Path, what: str
) -> None:
    seal_file = tmp_path / "journal.seal"
    if what == "damaged":
        seal_file.write_bytes(b"x" * SEAL_FILE_SIZE)
    elif what == "dev_zero":
        seal_file = Path("/dev/zero")
    elif what == "fifo":
        import os

        os.mkfifo(seal_file)
    with pytest.raises(StorageFault, match="sealing key"):
        Journal.open(tmp_path / "j.db", seal_file=seal_file)


def test_setup_keys_prints_the_verification_key_once_and_never_replaces_a_sealing_key(
    tmp_path: Path,
) -> None:
    seal_file = tmp_path / "journal.seal"
    cmd = [sys.executable, "-m", "controller.cli", "journal", "setup-keys", "--seal-key"]
    first = subprocess.run(
        [*cmd, str(seal_file)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert first.returncode == 0, first.stderr
    line = next(x for x in first.stdout.splitlines() if x.strip().startswith("pgvk1-"))
    key = parse_verification_key(line.strip())
    assert key.hex() not in seal_file.read_text()
    assert "\u2580" in first.stdout or "\u2588" in first.stdout or "\u2584" in first.stdout  # QR
    assert oct(seal_file.stat().st_mode & 0o777) == "0o600"
    again = subprocess.run(
        [*cmd, str(seal_file)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert again.returncode == 1 and "refusing to replace" in again.stderr
    db = tmp_path / "t.db"
    standard_journal(db, seal_file=seal_file)
    ok = subprocess.run(
        [sys.executable, "-m", "controller.cli", "journal", "verify", "--db", str(db),
         "--verify-key", line.strip()],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stdout
    assert "journal verify: ok" in ok.stdout
    assert f"head: seq {len(journal_entries(db))} hash" in ok.stdout
    chain = SealChain(key)
    assert chain.seal_of(2, "a") is not None and chain.seal_of(1, "a") is None
