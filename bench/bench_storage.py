"""Benchmark of what a round costs the SD card (issue 29): bytes written and syncs per round.

A real ``tablectl simulate --headless`` process plays ``ROUNDS`` rounds on a journal that already
holds ``WARM_ROUNDS`` (so the figures are a table's steady state, not a new file's), with the
stress suite's write recorder (tests/stress/pcut.c, LD_PRELOADed, killing nothing) logging every
write to the journal, its WAL and its anchor, and every fsync/fdatasync of them.
``journal_bytes_per_round`` and ``journal_syncs_per_round`` are their totals over the rounds
played; ``journal_write_amplification``: the bytes written over the bytes of the entries they
store. ``journal_sealed_*``: the same with forward-secure seals, as a live table installed by
deploy/install.sh runs (the sealing-key file watched too). ``journal_wal_frames_per_commit``
and ``journal_wal_*_frames_per_round``: where the WAL's bytes go, each frame (a whole page and its
24-byte header) counted by the table its page belongs to (SQLite's ``dbstat``): the header page
(page 1, rewritten whenever the file grows), the journal table's new leaves, their overflow
pages, its interior pages, and the state and meters rows (``journal_wal_header_bytes_per_round``:
the header page's bytes). ``journal_hashes_as_blobs_saving_per_round``: what 32-byte blobs
instead of 64 hex digits for the three chain hashes would save a round;
``journal_blobs_and_zlib_data_saving_per_round``: the same with each entry's data (its canonical
JSON) stored zlib-compressed, so that more entries share a 512-byte leaf and fewer commits
allocate a page. Both are what-ifs for a next journal format, not the journal's: the same
entries committed one at a time into scratch tables of the journal's columns. Needs a C
compiler (cc); writes nothing but temporary files.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import subprocess
import sys
import tempfile
import zlib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.stress.disk import Op, build_recorder, parse_log  # noqa: E402
from tests.stress.powercut import sealed_table  # noqa: E402

WARM_ROUNDS = 20
ROUNDS = 100


def _simulate(db: Path, rounds: int, env: dict[str, str], config: Path | None = None) -> None:
    cmd = [sys.executable, "-m", "controller.cli", "simulate", "--headless"]
    if config is not None:
        cmd += ["--config", str(config)]
    cmd += ["--rounds", str(rounds), "--seed", "29", "--db", str(db)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"simulate exited {done.returncode}: {done.stderr[-800:]}")


def _entry_bytes(db: Path, after_seq: int) -> tuple[int, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        count, size = conn.execute(
            "SELECT count(*), sum(length(data) + length(hash) + length(prev_hash)"
            " + length(state_hash) + length(mac) + length(type) + 16) FROM journal WHERE seq > ?",
            (after_seq,),
        ).fetchone()
        return int(count), int(size or 0)
    finally:
        conn.close()


def _last_seq(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0])
    finally:
        conn.close()


WAL_HEADER = 32
FRAME_HEADER = 24
#: dbstat's (table, page type) -> the kind of WAL frame it is counted as.
_KIND = {
    ("journal", "leaf"): "entry_leaf",
    ("journal", "overflow"): "entry_overflow",
    ("journal", "internal"): "entry_tree",
}


def _page_kinds(db: Path) -> tuple[int, dict[int, str]]:
    """The journal's page size and each page's kind (`_KIND`; page 1: ``header``; the state and
    meters rows' pages: ``state``); no kinds where SQLite was built without ``dbstat``."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        kinds = {1: "header"}
        try:
            rows = conn.execute("SELECT name, pageno, pagetype FROM dbstat").fetchall()
        except sqlite3.OperationalError:
            return page_size, kinds
        for name, pageno, pagetype in rows:
            if pageno == 1:
                continue
            state = name in ("state", "meters") or name.startswith("sqlite_autoindex_meters")
            kinds[int(pageno)] = "state" if state else _KIND.get((name, pagetype), "other")
        return page_size, kinds
    finally:
        conn.close()


def _wal_frames(ops: list[Op], page_size: int, kinds: dict[int, str]) -> tuple[Counter[str], int]:
    """The WAL frames the recorded writes hold, by kind, and how many of them end a commit
    (a frame header whose database size is not 0)."""
    frames: Counter[str] = Counter()
    commits = 0
    for op in ops:
        if op.kind != "W" or not op.path.endswith("-wal") or op.off < WAL_HEADER:
            continue
        if (op.off - WAL_HEADER) % (page_size + FRAME_HEADER) or len(op.new) < 8:
            continue  # a page's bytes, or the rest of a frame written in one go
        pageno, db_size = struct.unpack(">II", op.new[:8])
        frames[kinds.get(pageno, "other")] += 1
        commits += db_size != 0
    return frames, commits


#: The what-if layouts of `_layout_savings`: the journal's own (hex hashes, JSON text), the
#: three chain hashes as 32-byte blobs, and those blobs with the data zlib-compressed.
_LAYOUTS = ("hex", "blobs", "blobs_zlib")


def _stored_as(layout: str, row: tuple[object, ...]) -> list[object]:
    """One journal row as ``layout`` would store it."""
    values = list(row)
    if layout != "hex":
        values[5:8] = [bytes.fromhex(str(h)) for h in values[5:8]]
    if layout == "blobs_zlib":
        values[4] = zlib.compress(str(values[4]).encode("ascii"), 9)
    return values


def _layout_savings(db: Path, after_seq: int, page_size: int, rounds: int) -> dict[str, int]:
    """What each what-if layout (`_LAYOUTS`) would save a round against the journal's own (WAL
    and checkpoint bytes; not the journal's format): the entries after ``after_seq`` committed one
    at a time into a scratch table of the journal's columns per layout."""
    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = src.execute(
            "SELECT seq, ts_ms, round_id, type, data, prev_hash, state_hash, hash, mac"
            " FROM journal WHERE seq > ? ORDER BY seq",
            (after_seq,),
        ).fetchall()
    finally:
        src.close()
    written: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="bench-storage-layouts-") as tmp:
        for layout in _LAYOUTS:
            path = Path(tmp) / f"{layout}.db"
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute(f"PRAGMA page_size={page_size}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")  # the WAL holds every frame written
            conn.execute(
                "CREATE TABLE journal (seq INTEGER PRIMARY KEY, ts_ms INTEGER, round_id INTEGER,"
                " type TEXT, data ANY, prev_hash ANY, state_hash ANY, hash ANY, mac TEXT)"
            )
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            for row in rows:
                conn.execute("BEGIN")
                conn.execute(
                    "INSERT INTO journal VALUES (?,?,?,?,?,?,?,?,?)", _stored_as(layout, row)
                )
                conn.execute("COMMIT")
            wal = Path(f"{path}-wal").read_bytes()
            frame = page_size + FRAME_HEADER
            pages = {
                struct.unpack_from(">I", wal, at)[0] for at in range(WAL_HEADER, len(wal), frame)
            }
            written[layout] = len(wal) - WAL_HEADER + len(pages) * page_size  # + the checkpoint
            conn.close()
    return {layout: round((written["hex"] - written[layout]) / rounds) for layout in _LAYOUTS[1:]}


def measure(
    rounds: int = ROUNDS, warm: int = WARM_ROUNDS, sealed: bool = False
) -> dict[str, float | int | str]:
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp_name:
        tmp = Path(tmp_name)
        recorder = build_recorder(tmp)
        db = tmp / "journal.db"
        env = dict(os.environ)
        config, seal_file = None, None
        if sealed:
            config, seal_file, _ = sealed_table(tmp, "journal")
        _simulate(db, warm, env, config)
        before = _last_seq(db)
        watched = [db, Path(f"{db}-wal"), Path(f"{db}.anchor")]
        if seal_file is not None:
            watched.append(seal_file)
        log = tmp / "pcut.log"
        env.update(
            LD_PRELOAD=str(recorder),
            PCUT_LOG=str(log),
            PCUT_WATCH=",".join(str(p) for p in watched),
            PCUT_KILL_AT="0",
            PCUT_KILL_AFTER="0",
        )
        _simulate(db, warm + rounds, env, config)
        ops = parse_log(log)
        entries, entry_bytes = _entry_bytes(db, before)
        page_size, kinds = _page_kinds(db)
        savings = _layout_savings(db, before, page_size, rounds)
    frames, commits = _wal_frames(ops, page_size, kinds)
    written: Counter[str] = Counter()
    syncs: Counter[str] = Counter()
    for op in ops:
        name = Path(op.path).name.replace("journal.db", "db").replace("journal.seal", "seal")
        if op.kind == "W":
            written[name] += len(op.new)
        elif op.kind == "S":
            syncs[name] += 1
    total = sum(written.values())
    figures: dict[str, float | int | str] = {
        "journal_bytes_per_round": round(total / rounds),
        "journal_syncs_per_round": round(sum(syncs.values()) / rounds, 1),
        "journal_entries_per_round": round(entries / rounds, 1),
        "journal_write_amplification": round(total / max(1, entry_bytes), 1),
        "journal_wal_frames_per_commit": round(sum(frames.values()) / max(1, commits), 2),
        "journal_wal_commits_per_round": round(commits / rounds, 1),
        "journal_wal_header_bytes_per_round": round(
            frames["header"] * (page_size + FRAME_HEADER) / rounds
        ),
        "journal_hashes_as_blobs_saving_per_round": savings["blobs"],
        "journal_blobs_and_zlib_data_saving_per_round": savings["blobs_zlib"],
    }
    for kind in ("header", "entry_leaf", "entry_overflow", "entry_tree", "state", "other"):
        figures[f"journal_wal_{kind}_frames_per_round"] = round(frames[kind] / rounds, 1)
    for name in sorted(written.keys() | syncs.keys()):
        key = name.replace("db-wal", "wal").replace("db.anchor", "anchor")
        figures[f"journal_{key}_bytes_per_round"] = round(written[name] / rounds)
        figures[f"journal_{key}_syncs_per_round"] = round(syncs[name] / rounds, 1)
    return figures


def run() -> dict[str, float | int | str]:
    figures = measure()
    sealed = measure(sealed=True)
    for key in ("bytes", "syncs"):
        figures[f"journal_sealed_{key}_per_round"] = sealed[f"journal_{key}_per_round"]
        figures[f"journal_seal_{key}_per_round"] = sealed.get(f"journal_seal_{key}_per_round", 0)
    return figures


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
