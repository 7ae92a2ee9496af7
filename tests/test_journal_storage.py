"""The journal as storage: everything stored under the chain, vanished entries, damaged pages and
WALs, read-only media, one controller per journal, the configuration at restart, storage faults.

Each finding of issue 7 is reproduced here on real files (real SQLite, real processes):
rows outside the chain, a WAL byte flip dropping committed entries, play on a corrupt journal,
two controllers on one journal, a restart ignoring a changed configuration, power-up growing
with the journal. Rules: NJ 13:69E-1.39B(h) (recover to the prior state, never a silent
rollback), NJ 13:69D-1.52(f) (no meter change without a recorded reason), NY 5321.18(b)(3)(iv)
(the self-check of the controller and its storage).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from journal_support import journal_entries
from report_journals import TableDriver, standard_journal

from controller.cli.journal import make_replay
from controller.journal.anchor import (
    SYNC_ENTRIES,
    AnchorWriter,
    default_anchor_path,
    read_anchor,
)
from controller.journal.audit import connect_read_only, verify
from controller.journal.format import StorageFault
from controller.journal.lock import JournalInUse, JournalLock
from controller.journal.store import Journal
from controller.service.owner import Owner
from fsm.round.config import GameConfig
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]


def tablectl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TABLECTL, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )


def replay_verify(path: Path, **kw: Any) -> list[str]:
    factory, _ = make_replay(path, None)
    return verify(path, factory, **kw).problems


def copy_journal(src: Path, dst: Path, *, wal: bool = False) -> Path:
    shutil.copyfile(src, dst)
    shutil.copyfile(default_anchor_path(src), default_anchor_path(dst))
    if wal:
        shutil.copyfile(src.with_name(src.name + "-wal"), dst.with_name(dst.name + "-wal"))
    return dst


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("storage") / "journal.db"
    standard_journal(path)
    return path


@pytest.fixture()
def db(made: Path, tmp_path: Path) -> Path:
    return copy_journal(made, tmp_path / "journal.db")


class NoDevices:
    def __init__(self) -> None:
        self.safe: list[str] = []

    def apply(self, effect: Any) -> None:
        pass

    def safe_state(self, glyph: str = " ") -> None:
        self.safe.append(glyph)

    def close(self) -> None:
        pass


def owner_for(db: Path, game: GameConfig, devices: NoDevices | None = None) -> Owner:
    def make(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    return Owner(
        db,
        make,
        devices or NoDevices(),
        software_hash=lambda: "s" * 64,
        table_id=game.table_id,
        game_config=game.to_mapping(),
    )


# ------------------------------------------------------------------ rows outside the chain
def test_an_edited_table_id_in_meta_is_detected_by_verify_and_power_up(db: Path) -> None:
    """Issue 7 finding: ``UPDATE meta SET value='X' WHERE key='table_id'`` verified, and reports
    then named table X. The meta rows are covered by the genesis hash seq 1 chains to."""
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value = 'X' WHERE key = 'table_id'")
    conn.commit()
    conn.close()
    problems = replay_verify(db)
    assert any("seq 1: prev_hash is not the genesis hash of the meta rows" in p for p in problems)
    with pytest.raises(StorageFault, match="does not chain to the meta rows"):
        Journal.open(db)


def test_a_rewritten_snapshot_configuration_with_its_meters_is_a_storage_fault(db: Path) -> None:
    """Issue 7 finding: the snapshot's ``levels[0].initial_cents`` changed together with the
    snapshot and meters a replay with that value gives passed verify, and the resumed table paid
    $4,000 more from the meter (NJ 13:69D-1.52(f)). Now the last entry's state hash binds them:
    verify fails and power-up refuses to trust the snapshot."""
    conn = sqlite3.connect(db)
    snap = json.loads(conn.execute("SELECT snapshot FROM state").fetchone()[0])
    snap["config"]["levels"][0]["initial_cents"] += 400_000
    level = snap["meters"]["progressive"]
    for key in level:
        if key.endswith("cents") and isinstance(level[key], int):
            level[key] += 400_000
            break
    text = json.dumps(snap, sort_keys=True, separators=(",", ":"))
    conn.execute("UPDATE state SET snapshot = ?", (text,))
    conn.commit()
    conn.close()
    problems = replay_verify(db)
    assert any("stored snapshot, meters or round count are not the state" in p for p in problems)
    with pytest.raises(StorageFault, match=r"not those seq .* recorded"):
        Journal.open(db)


def _rewrite_with_recomputed_hashes(db: Path, seq: int, old: str, new: str) -> None:
    """The attacker of issue 7: triggers dropped, one entry's data rewritten, every later hash
    recomputed with the documented rule, the triggers and (plain) anchor put back."""
    from controller.journal.format import SCHEMA_SQL, entry_hash

    conn = sqlite3.connect(db, isolation_level=None)
    triggers = [s for s in SCHEMA_SQL if "CREATE TRIGGER" in s]
    for name in ("journal_no_update", "journal_no_delete", "journal_append_only"):
        conn.execute(f"DROP TRIGGER {name}")
    rows = conn.execute(
        "SELECT seq, ts_ms, round_id, type, data, prev_hash, state_hash FROM journal"
        " WHERE seq >= ? ORDER BY seq",
        (seq,),
    ).fetchall()
    prev = rows[0][5]
    last = ""
    for s, ts, rnd, type_, data, _, state in rows:
        if s == seq:
            assert old in data
            data = data.replace(old, new)
        last = entry_hash(s, ts, rnd, type_, data, prev, state)
        conn.execute(
            "UPDATE journal SET data = ?, prev_hash = ?, hash = ? WHERE seq = ?",
            (data, prev, last, s),
        )
        prev = last
    conn.execute("UPDATE state SET hash = ?", (last,))
    for statement in triggers:
        conn.execute(statement)
    conn.close()
    anchor = read_anchor(default_anchor_path(db))
    assert anchor is not None
    writer = AnchorWriter(default_anchor_path(db))
    writer.write(anchor.seq, last)
    writer.close()


def _pay_entry(db: Path) -> tuple[int, int]:
    for seq, _, data in journal_entries(db):
        for effect in data.get("effects", []):
            if effect.get("type") == "pay" and effect.get("from") == "meter":
                return seq, int(effect["cents"])
    raise AssertionError("no meter pay in the standard journal")


def test_a_rewritten_pay_effect_with_recomputed_hashes_is_named_by_the_replay(db: Path) -> None:
    """Issue 7 finding: a ``pay`` effect rewritten (hashes recomputed) passed verify and the
    reports showed the larger payout. Verify re-runs every entry through the round machine and
    compares the effects entry by entry: the rewritten seq is named (NJ 13:69D-1.52(f))."""
    seq, cents = _pay_entry(db)
    _rewrite_with_recomputed_hashes(db, seq, f'"cents":{cents},', '"cents":5000000,')
    assert verify(db).ok  # the plain chain alone is consistent again: only the replay sees it
    problems = replay_verify(db)
    assert problems and problems[0].startswith(f"seq {seq} (hit_validated): recorded effects")
    assert '"cents":5000000' in problems[0]


def test_the_keyed_chain_detects_a_rewrite_even_with_recomputed_plain_hashes(
    tmp_path: Path,
) -> None:
    """With the keyed chain (HMAC-SHA256, key outside the journal) a rewrite whose plain hashes
    were recomputed fails without any replay: the attacker cannot recompute the MACs."""
    key = os.urandom(32)
    db = tmp_path / "keyed.db"
    standard_journal(db, key=key)
    assert verify(db, key=key).ok
    seq, cents = _pay_entry(db)
    _rewrite_with_recomputed_hashes(db, seq, f'"cents":{cents},', '"cents":5000000,')
    problems = verify(db, key=key).problems
    assert f"seq {seq}: keyed chain: MAC does not match (rewritten without the key)" in problems
    assert any("anchor" in p and "MAC does not match" in p for p in problems)
    with pytest.raises(StorageFault):
        Journal.open(db, key=key)
    note = verify(db).notes  # without the key: said, never silently passed as keyed
    assert any("keyed chain" in n and "not checked" in n for n in note)


# ------------------------------------------------------------------ vanished entries
def _flip_wal_frame(wal: Path, frame_fraction: float) -> None:
    data = bytearray(wal.read_bytes())
    page = int.from_bytes(data[8:12], "big")
    frames = (len(data) - 32) // (24 + page)
    k = int(frames * frame_fraction)
    data[32 + k * (24 + page) + 24 + page // 2] ^= 0xFF
    wal.write_bytes(bytes(data))


def test_a_damaged_wal_frame_is_a_storage_fault_never_a_silent_rollback(tmp_path: Path) -> None:
    """Issue 7 finding: one flipped byte in the WAL of a killed run dropped 222 committed
    entries; verify said ok and power-up reused the seqs (NJ 13:69E-1.39B(h)). The anchor
    outside the journal records the head: power-up refuses, verify names the loss."""
    live = tmp_path / "live.db"
    driver = standard_journal(live)  # closed: its WAL is checkpointed; write more, kept open
    journal = Journal.open(live, table_id="T9")
    machine = RoundMachine(GameConfig(table_id="T9"))
    last = journal.last_state()
    assert last is not None
    machine = RoundMachine.restore(GameConfig(table_id="T9"), last.snapshot)
    for i in range(60):
        journal.append(driver.now + i, machine.round_id, "power_up", {}, machine.snapshot(),
                       machine.meters())  # fmt: skip
    killed = copy_journal(live, tmp_path / "killed.db", wal=True)  # the files of a killed run
    journal.close()
    head = journal.count()
    anchored = read_anchor(default_anchor_path(killed))
    # a record is written at a round's end or every SYNC_ENTRIES records (issue 29): these
    # entries end no round, so the killed run's anchor trails the head by at most that many
    assert anchored is not None and head - SYNC_ENTRIES - 1 <= anchored.seq <= head
    _flip_wal_frame(killed.with_name("killed.db-wal"), 0.5)
    with pytest.raises(
        StorageFault, match=rf"anchor .* records seq {anchored.seq}: \d+ committed entries"
    ):
        Journal.open(killed)
    problems = verify(killed).problems
    assert any(f"records seq {anchored.seq}" in p and "vanished" in p for p in problems), problems
    assert not verify(killed, use_anchor=False).problems  # what SQLite alone sees: nothing


def test_simulate_on_a_journal_behind_its_anchor_stops_with_exit_4(tmp_path: Path) -> None:
    """A journal restored from an older copy (behind its anchor): ``simulate`` refuses to play,
    exit 4 with a clear message, nothing appended (NJ 13:69E-1.39B(h))."""
    db = tmp_path / "sim.db"
    first = tablectl("simulate", "--headless", "--rounds", "2", "--seed", "7", "--db", str(db))
    assert first.returncode == 0, first.stderr
    old = tmp_path / "old.db"
    shutil.copyfile(db, old)
    more = tablectl("simulate", "--headless", "--rounds", "3", "--seed", "7", "--db", str(db))
    assert more.returncode == 0, more.stderr
    shutil.copyfile(old, db)  # the older copy put back; the anchor stayed
    before = journal_entries(db)
    again = tablectl("simulate", "--headless", "--rounds", "5", "--seed", "7", "--db", str(db))
    assert again.returncode == 4, again.stdout + again.stderr
    assert "storage fault" in again.stderr and "vanished" in again.stderr
    assert journal_entries(db) == before


# ------------------------------------------------------------------ damaged pages
def _page_size(db: Path) -> int:
    return int.from_bytes(db.read_bytes()[16:18], "big")


def _root_page(db: Path, table: str) -> int:
    conn = connect_read_only(db)
    try:
        return int(conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
                   .fetchone()[0])  # fmt: skip
    finally:
        conn.close()


def _smash_page(db: Path, page: int) -> None:
    size = _page_size(db)
    data = bytearray(db.read_bytes())
    start = (page - 1) * size
    data[start : start + size] = bytes(range(256)) * (size // 256)
    db.write_bytes(bytes(data))


def test_a_damaged_page_of_what_power_up_reads_is_a_storage_fault_exit_4(tmp_path: Path) -> None:
    """Issue 7 finding: play went on on a corrupt journal (the scripted supervisor cleared
    STORAGE_CHECK, count_rounds swallowed the SQLite error). Now the power-up check of the state
    page fails: exit 4, nothing appended, no supervisor can clear it (NY 5321.18(b)(3)(iv))."""
    db = tmp_path / "sim.db"
    done = tablectl("simulate", "--headless", "--rounds", "2", "--seed", "7", "--db", str(db))
    assert done.returncode == 0, done.stderr
    _smash_page(db, _root_page(db, "state"))
    again = tablectl("simulate", "--headless", "--rounds", "4", "--seed", "7", "--db", str(db))
    assert again.returncode == 4, again.stdout + again.stderr
    assert "storage fault" in again.stderr
    report = verify(db)
    assert not report.ok


def _break_first_cell_pointer(db: Path, page: int) -> None:
    """A damage SQLite can name: the page's first cell pointer out of range."""
    size = _page_size(db)
    data = bytearray(db.read_bytes())
    data[(page - 1) * size + 8 : (page - 1) * size + 10] = b"\x00\x05"
    db.write_bytes(bytes(data))


def _page_of(db: Path, marker: bytes) -> int:
    data = db.read_bytes()
    offset = data.index(marker)
    return offset // _page_size(db) + 1


def test_verify_names_the_damaged_page_and_seqs_and_the_replay_is_not_run(tmp_path: Path) -> None:
    """Verify names the damaged page (integrity_check) and the seqs it cannot read, and a
    damaged file or schema gives no false meter difference (the replay is not run)."""
    db = tmp_path / "big.db"
    with Journal.open(db, created_ms=0) as journal:
        for n in range(1, 1501):
            data = {"n": n, "pad": f"MARKER-{n}-" + "x" * 200}
            journal.append(n, n // 10, "tick", data, {"n": n}, {})
    page = _page_of(db, b"MARKER-700-")
    named = copy_journal(db, tmp_path / "named.db")
    _break_first_cell_pointer(named, page)
    factory, _ = make_replay(named, None)
    report = verify(named, factory)
    assert any(f"page {page}" in p.lower() for p in report.problems), report.problems
    assert not any("recorded effects" in p or "state the replay" in p for p in report.problems)
    assert "replay not run: the file or its schema is damaged" in report.notes
    _smash_page(db, page)  # a page SQLite cannot even parse: the unreadable seqs are named
    report = verify(db, make_replay(db, None)[0])
    text = "\n".join(report.problems)
    assert "seqs " in text and "cannot be read" in text, text
    assert not any("recorded effects" in p or "state the replay" in p for p in report.problems)


def test_entering_maintenance_runs_the_full_integrity_check(tmp_path: Path) -> None:
    """Power-up checks only the pages it reads (fixed cost); the full integrity_check runs in
    verify and on entering maintenance, where a damaged page is a storage fault."""
    db = tmp_path / "m.db"
    game = GameConfig()
    owner = owner_for(db, game)
    owner.start()
    for n in range(300):
        reason = f"MARKER-{n}-" + "p" * 300
        owner.post(Event("console_refused", {"supervisor": "x", "request": "r", "reason": reason}))
    assert owner.wait_idle(30)
    owner.stop()
    _break_first_cell_pointer(db, _page_of(db, b"MARKER-100-"))
    owner = owner_for(db, game)
    owner.start()  # the head is intact: power-up passes
    receipt = owner.post_tracked(Event("maintenance_entered", {"supervisor": "ana"}))
    assert receipt.wait(30)
    assert owner.public.storage_fault and "integrity_check" in owner.public.storage_fault
    refused = owner.post_tracked(Event("maintenance_exited", {"supervisor": "ana"}))
    assert refused.wait(10) and refused.seq is None  # nothing is played on
    owner.stop()


# ------------------------------------------------------------------ read-only media
def test_verify_works_on_read_only_media_without_wal_or_shm_files(db: Path) -> None:
    """An auditor verifies a journal copied to read-only media: no -wal/-shm files can be made
    there (a read-only bind mount in its own mount namespace)."""
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed for the read-only mount")
    media = db.parent / "media"
    media.mkdir()
    copy_journal(db, media / "journal.db")
    script = (
        f"mount --bind {media} {media} && mount -o remount,ro,bind {media} && "
        f"! touch {media}/probe 2>/dev/null && "
        f"{sys.executable} -m controller.cli journal verify --db {media}/journal.db --json"
    )
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["ok"] is True
    assert sorted(p.name for p in media.iterdir()) == ["journal.db", "journal.db.anchor"]


# ------------------------------------------------------------------ one controller
def test_a_second_journal_lock_is_refused_naming_the_holder(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from controller.journal.lock import JournalLock; "
         f"lock = JournalLock.acquire({str(db)!r}); print('held', flush=True); time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with pytest.raises(JournalInUse, match=rf"journal {db} is in use \(pid {child.pid}\)"):
            JournalLock.acquire(db)
    finally:
        child.kill()
        child.wait()
    JournalLock.acquire(db).release()  # the holder died: the kernel released its lock


def test_a_second_simulate_on_the_same_journal_exits_and_touches_nothing(tmp_path: Path) -> None:
    """Issue 7 finding: a second ``simulate --db X`` started silently, took over the console
    socket, and the first died. Now the second exits non-zero at once with "journal PATH is in
    use (pid N)", before anything is started: the first's socket and journal are untouched."""
    db = tmp_path / "table.db"
    first = subprocess.Popen(
        [*TABLECTL, "simulate", "--db", str(db), "--pace", "30", "--seed", "3"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert first.stdout is not None
        banner = first.stdout.readline()
        assert "supervisor console" in banner, banner
        sock = db.with_name(db.name + ".console.sock")
        assert sock.exists()
        inode, before = sock.stat().st_ino, journal_entries(db)
        second = tablectl("simulate", "--headless", "--rounds", "1", "--db", str(db), timeout=30)
        assert second.returncode == 6
        assert f"journal {db} is in use (pid {first.pid})" in second.stderr
        after = journal_entries(db)  # the first goes on playing; the second added nothing
        assert sock.stat().st_ino == inode
        assert after[: len(before)] == before
        assert [t for _, t, _ in after].count("power_up") == 1
        assert first.poll() is None  # the first goes on
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)


# ------------------------------------------------------------------ configuration at restart
RATE_21 = GameConfig(table_id="T1")
RATE_30_AT_5 = GameConfig.from_mapping(
    {**{k: v for k, v in RATE_21.to_mapping().items() if k != "levels"},
     "progressive_wager_cents": 500,
     "levels": [{**RATE_21.to_mapping()["levels"][0], "rate_bp": 3000}]}
)  # fmt: skip


def test_a_changed_configuration_at_restart_with_the_table_closed_is_journaled_and_applies(
    tmp_path: Path,
) -> None:
    """Issue 7 finding: rate 21% -> 30% and wager $1 -> $5 in the file were ignored at restart.
    With the table closed the change is journaled (via the file, each key old -> new) and
    applies (NJ 13:69D-1.52(f): no meter change without a recorded reason)."""
    db = tmp_path / "c.db"
    first = owner_for(db, RATE_21)
    first.start()
    first.stop()
    second = owner_for(db, RATE_30_AT_5)
    second.start()
    second.stop()
    rows = journal_entries(db)
    assert [t for _, t, _ in rows] == [
        "power_up", "power_up", "maintenance_entered", "config_changed", "maintenance_exited"
    ]  # fmt: skip
    changed = rows[3][2]
    assert changed["via"] == "file" and changed["supervisor"] == "config-file"
    (effect,) = [e for e in changed["effects"] if e["type"] == "config_changed"]
    assert sorted((c["key"], c["old"], c["new"]) for c in effect["changes"]) == [
        ("levels[0].rate_bp", 2100, 3000),
        ("progressive_wager_cents", 100, 500),
    ]
    assert second.public.config_pending == ()
    assert replay_verify(db) == []
    third = owner_for(db, RATE_30_AT_5)  # the same file again: nothing more to journal
    third.start()
    third.stop()
    assert [t for _, t, _ in journal_entries(db)][5:] == ["power_up"]


def test_a_changed_configuration_with_the_table_open_is_pending_until_it_closes(
    tmp_path: Path,
) -> None:
    """With the table open the journaled configuration stays; a ``config_pending`` entry names
    every differing key, the published snapshot, the status line and the console show it, and
    it applies when the table next closes."""
    from controller.sim.simulate import _status_line

    db = tmp_path / "o.db"
    first = owner_for(db, RATE_21)
    first.start()
    opened = first.post_tracked(Event("table_opened", {"supervisor": "ana"}))
    assert opened.wait(10) and opened.seq is not None
    first.stop()
    second = owner_for(db, RATE_30_AT_5)
    second.start()
    rows = journal_entries(db)
    pending = [d for _, t, d in rows if t == "config_pending"]
    assert len(pending) == 1
    assert pending[0]["keys"] == ["levels[0].rate_bp", "progressive_wager_cents"]
    assert second.public.config_pending == ("levels[0].rate_bp", "progressive_wager_cents")
    assert "config pending: levels[0].rate_bp, progressive_wager_cents" in _status_line(
        second.public
    )
    assert second.public.view["config"]["progressive_wager_cents"] == 100  # journaled one stays
    closed = second.post_tracked(Event("table_closed", {"supervisor": "ana"}))
    assert closed.wait(10)
    assert not second.public.config_pending
    assert second.public.view["config"]["progressive_wager_cents"] == 500
    second.stop()
    types = [t for _, t, _ in journal_entries(db)]
    assert types[-4:] == ["table_closed", "maintenance_entered", "config_changed",
                          "maintenance_exited"]  # fmt: skip
    assert replay_verify(db) == []


def test_the_console_status_shows_a_pending_configuration(tmp_path: Path) -> None:
    from controller.console.server import ConsoleServer

    db = tmp_path / "p.db"
    first = owner_for(db, RATE_21)
    first.start()
    assert first.post_tracked(Event("table_opened", {"supervisor": "ana"})).wait(10)
    first.stop()
    owner = owner_for(db, RATE_30_AT_5)
    owner.start()
    try:
        console = ConsoleServer(owner, {}, tmp_path / "c.sock")
        status = console._status()["status"]
        assert isinstance(status, dict)
        assert status["config_pending"] == ["levels[0].rate_bp", "progressive_wager_cents"]
    finally:
        owner.stop()


# ------------------------------------------------------------------ storage faults and power-up
def test_the_scripted_supervisor_never_clears_a_storage_fault() -> None:
    """Storage faults are cleared only by a restart that passes the storage check."""
    from controller.service.owner import PublicSnapshot
    from controller.sim.actors import Director

    posted: list[Event] = []
    director = Director(posted.append, None, 1, ("flush",))  # type: ignore[arg-type]
    snap = PublicSnapshot(5, 0, "Fault", 1, 0, storage_fault="journal: disk I/O error")
    assert director.act(snap) is None
    assert posted == []


class _TracedSqlite:
    """The sqlite3 module as the journal's writer sees it, with ``connect`` traced."""

    def __init__(self, connect: Any) -> None:
        self.connect = connect

    def __getattr__(self, name: str) -> Any:
        return getattr(sqlite3, name)


def test_power_up_reads_a_fixed_number_of_rows_and_never_scans_the_journal(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 7 finding: power-up grew with the journal (count_rounds scanned every round, a full
    integrity_check ran). Every statement power-up runs is a lookup by key or LIMIT 1: none
    scans the journal table (checked with SQLite's own query plans)."""
    import controller.journal.store as store

    statements: list[str] = []
    real_connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = real_connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(store, "sqlite3", _TracedSqlite(traced))
    owner = owner_for(db, GameConfig(table_id="T9"))
    owner.start()
    owner.stop()
    monkeypatch.undo()
    plans = connect_read_only(db)
    scans = []
    for text in statements:
        if not text.lstrip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE")):
            continue
        sql = text.split(" VALUES ")[0] if text.lstrip().upper().startswith("INSERT") else text
        if sql.lstrip().upper().startswith("INSERT"):
            continue
        for row in plans.execute(f"EXPLAIN QUERY PLAN {sql}"):
            if "SCAN journal" in row[3]:
                scans.append(text)
    plans.close()
    assert statements and scans == []


def test_run_on_a_journal_in_use_exits_3_before_opening_anything(tmp_path: Path) -> None:
    """``tablectl run`` takes the journal's lock before any device, port or socket: held by
    another process, it exits 3 with "journal PATH is in use (pid N)" and creates nothing."""
    from controller.config import SIMULATED_TABLE

    db = tmp_path / "journal.db"
    config = tmp_path / "table.toml"
    config.write_text(
        SIMULATED_TABLE.read_text().replace('"/tmp/paigow-simulated.db"', json.dumps(str(db)))
    )
    with JournalLock.acquire(db):
        done = tablectl("run", "--config", str(config), "--pin-factory", "mock", timeout=60)
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"journal {db} is in use (pid {os.getpid()})" in done.stderr
    assert not db.exists()


def test_a_damaged_schema_gives_no_false_meter_differences(db: Path) -> None:
    """A schema edited by hand (a trigger neutered, a table rebuilt) is reported as such; the
    replay is not run, so no meter or effect difference is invented from a damaged file."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TRIGGER journal_no_delete")
    conn.execute(
        "CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal WHEN 0 BEGIN SELECT 1; END"
    )
    conn.close()
    factory, _ = make_replay(db, None)
    report = verify(db, factory)
    assert report.problems == ["trigger journal_no_delete has been altered"]
    assert "replay not run: the file or its schema is damaged" in report.notes


# ------------------------------------------------------------------ the state once a round
def test_the_state_is_stored_once_a_round_and_what_follows_is_replayed_against_its_hashes(
    tmp_path: Path,
) -> None:
    """Issue 29: the owner's journal stores the snapshot and meters when a round completes (and
    outside a round), not with every entry; every entry still carries the state hash of what it
    left. A cut mid-round leaves the stored state at the last round's end: power-up accepts it
    (at most STATE_ENTRIES behind), verify replays every entry after it against its state hash,
    and a clean stop stores the last state (NJ 13:69E-1.39B(h): the committed state, or no
    play)."""
    live = tmp_path / "live.db"
    driver = TableDriver(live, GameConfig(table_id="T9"), state_per_round=True)
    driver.open_table()
    driver.play_round([1, 2], {})
    for area in (3, 4):
        driver.send("chip_detected", position=area)
    driver.send("lockout_pressed")  # contributions counted: money moved mid-round
    cut = copy_journal(live, tmp_path / "cut.db", wal=True)  # the files of a power cut
    head = driver.journal.count()
    expected = (driver.machine.state, driver.machine.meters())
    driver.close()
    conn = sqlite3.connect(cut)
    stored_seq = conn.execute("SELECT seq FROM state").fetchone()[0]
    last_round = conn.execute(
        "SELECT max(seq) FROM journal WHERE type = 'round_completed'"
    ).fetchone()[0]
    conn.close()
    assert stored_seq == last_round < head  # the round in progress is not stored yet
    replay, _ = make_replay(cut, None)
    assert verify(cut, replay).ok
    with Journal.open(cut, table_id="T9", state_per_round=True) as journal:
        assert journal.count() == head
        stored = journal.last_state()
        assert stored is not None and stored.seq == stored_seq
    # the owner's power-up replays the entries after the stored state, each checked against
    # its state hash, and resumes exactly where the journal ends: meters to the cent
    owner = owner_for(cut, GameConfig(table_id="T9"))
    owner.start()
    assert owner.wait_idle(30)
    published = json.loads(json.dumps(owner.public.meters, default=dict))
    assert (owner.public.state, published) == (expected[0], json.loads(json.dumps(expected[1])))
    assert owner.public.seq == head + 1  # its power_up
    owner.stop()
    # a clean stop stored the last entry's state
    with Journal.open(live, table_id="T9") as journal:
        stored = journal.last_state()
        assert stored is not None and stored.seq == journal.count() == head
    # a stored state said to be of another seq is not vouched for (farther back than
    # STATE_ENTRIES, or not that entry's state)
    far = copy_journal(live, tmp_path / "far.db")
    conn = sqlite3.connect(far)
    conn.execute("UPDATE state SET seq = ?", (head - 3,))
    conn.commit()
    conn.close()
    with pytest.raises(StorageFault, match=f"stored state hash does not match .* seq {head - 3}"):
        Journal.open(far, table_id="T9")
    assert not verify(far).ok
