"""The tamper-evident journal: one SQLite file, one writer, one transaction per event.

Each `Journal.append` commits, in ONE transaction, a hash-chained entry, the round machine's
latest snapshot and its meters, so a restart reads the state back without replaying anything and
an audit (`verify`) can replay the chain to prove the stored state. The format (tables, pragmas,
canonical hash encoding) lives in `controller.journal.format` and docs/journal.md.

This module must never decide what an event means (the round machine does), never change or delete
a committed entry, and never hold a game rule.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType

from controller.journal.audit import VerifyReport, export, schema_problems, verify
from controller.journal.format import (
    APPLICATION_ID,
    GENESIS_HASH,
    JSON,
    PRAGMAS,
    SCHEMA_SQL,
    SCHEMA_VERSION,
    Entry,
    JournalError,
    StoredState,
    canonical_json,
    check_json_object,
    decode_object,
    entry_hash,
)

__all__ = ["Entry", "Journal", "JournalError", "StoredState", "VerifyReport", "export", "verify"]

_INSERT_ENTRY = (
    "INSERT INTO journal (seq, ts_ms, round_id, type, data, prev_hash, hash)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_PUT_STATE = (
    "INSERT INTO state (id, seq, hash, snapshot) VALUES (1, ?, ?, ?)"
    " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,"
    " snapshot = excluded.snapshot"
)
_PUT_METER = (
    'INSERT INTO meters (level, "values") VALUES (?, ?)'
    ' ON CONFLICT (level) DO UPDATE SET "values" = excluded."values"'
)
_SELECT_ENTRIES = (
    "SELECT seq, ts_ms, round_id, type, data, prev_hash, hash FROM journal"
    " WHERE seq >= ? AND seq <= ? ORDER BY seq"
)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Journal:
    """The single writer of one journal file. Used by one thread at a time (the owner thread)."""

    def __init__(self, path: Path, conn: sqlite3.Connection, last_seq: int, last_hash: str) -> None:
        self.path = path
        self._conn = conn
        self._last_seq = last_seq
        self._last_hash = last_hash

    # ----------------------------------------------------------------------------- opening
    @classmethod
    def open(
        cls, path: str | Path, *, table_id: str | None = None, created_ms: int | None = None
    ) -> Journal:
        """Open the journal at ``path``, creating the file and its schema if it is new or empty.

        An existing file must be our journal at `SCHEMA_VERSION` with its tables and triggers
        intact, and (when ``table_id`` is given) belong to that table; otherwise `JournalError`.
        ``created_ms`` (UTC ms, injected clock) is recorded in ``meta`` for a new file only.
        """
        p = Path(path)
        if p.is_dir():
            raise JournalError(f"{p}: is a directory, not a journal file")
        new = not p.exists() or p.stat().st_size == 0
        try:
            # The owner may open the journal before its thread starts: one thread at a time
            # uses it, not necessarily the one that opened it.
            conn = sqlite3.connect(str(p), isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise JournalError(f"{p}: cannot open: {exc}") from exc
        try:
            if new:
                cls._create_schema(conn, p, table_id, created_ms)
            else:
                cls._check_schema(conn, p, table_id)
            for pragma in PRAGMAS:
                row = conn.execute(pragma).fetchone()
                if pragma.endswith("journal_mode=WAL") and (row is None or row[0] != "wal"):
                    raise JournalError(f"{p}: cannot switch to WAL mode (got {row})")
            last = conn.execute(
                "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            last_seq, last_hash = (0, GENESIS_HASH) if last is None else (last[0], last[1])
            state = conn.execute("SELECT seq, hash FROM state WHERE id = 1").fetchone()
            if (state is None and last_seq != 0) or (
                state is not None and (state[0] != last_seq or state[1] != last_hash)
            ):
                raise JournalError(
                    f"{p}: stored state reflects seq {None if state is None else state[0]} but "
                    f"the journal ends at seq {last_seq}: refusing to append (run verify)"
                )
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise JournalError(f"{p}: not a usable journal: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return cls(p, conn, last_seq, last_hash)

    @staticmethod
    def _create_schema(
        conn: sqlite3.Connection, path: Path, table_id: str | None, created_ms: int | None
    ) -> None:
        created = time.time_ns() // 1_000_000 if created_ms is None else created_ms
        if not _is_int(created):
            raise JournalError(f"{path}: created_ms must be an int (UTC ms), got {created!r}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in SCHEMA_SQL:
                conn.execute(statement)
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("schema_version", str(SCHEMA_VERSION)),
                    ("table_id", table_id or ""),
                    ("created", str(created)),
                ],
            )
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _check_schema(conn: sqlite3.Connection, path: Path, table_id: str | None) -> None:
        problems = schema_problems(conn)
        if problems:
            raise JournalError(f"{path}: {problems[0]}")
        if table_id is not None:
            row = conn.execute("SELECT value FROM meta WHERE key = 'table_id'").fetchone()
            if row is not None and row[0] != table_id:
                raise JournalError(f"{path}: journal belongs to table {row[0]!r}, not {table_id!r}")

    # ----------------------------------------------------------------------------- writing
    def append(
        self,
        ts_ms: int,
        round_id: int | None,
        type: str,
        data: Mapping[str, JSON],
        snapshot: Mapping[str, JSON],
        meters: Mapping[str, Mapping[str, JSON]],
    ) -> Entry:
        """Commit one entry plus the snapshot and meters it leads to, in one transaction.

        Nothing is written if any argument is invalid or any statement fails; the error names the
        argument (``ValueError``) or the storage failure (`JournalError`).
        """
        if not _is_int(ts_ms) or ts_ms < 0:
            raise ValueError(f"ts_ms: must be a non-negative int (UTC ms), got {ts_ms!r}")
        if round_id is not None and not _is_int(round_id):
            raise ValueError(f"round_id: must be an int or None, got {round_id!r}")
        if not isinstance(type, str) or not type:
            raise ValueError(f"type: must be a non-empty string, got {type!r}")
        data_json = canonical_json(check_json_object(data, "data"), "data")
        snapshot_json = canonical_json(check_json_object(snapshot, "snapshot"), "snapshot")
        meter_rows = [
            (level, canonical_json(check_json_object(values, f"meters[{level!r}]"), "meters"))
            for level, values in check_json_object(meters, "meters").items()
        ]
        seq = self._last_seq + 1
        prev = self._last_hash
        digest = entry_hash(seq, ts_ms, round_id, type, data_json, prev)
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(_INSERT_ENTRY, (seq, ts_ms, round_id, type, data_json, prev, digest))
                conn.execute(_PUT_STATE, (seq, digest, snapshot_json))
                if meter_rows:
                    conn.executemany(_PUT_METER, meter_rows)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: append of seq {seq} ({type}) failed: {exc}") from exc
        self._last_seq = seq
        self._last_hash = digest
        return Entry(seq, ts_ms, round_id, type, json.loads(data_json), prev, digest)

    # ----------------------------------------------------------------------------- reading
    def last_state(self) -> StoredState | None:
        """The stored snapshot, meters and last hash, or None for an empty journal. Reads two
        small tables: never replays, so it takes the same time whatever the journal's length."""
        row = self._conn.execute("SELECT seq, hash, snapshot FROM state WHERE id = 1").fetchone()
        if row is None:
            return None
        meters = {
            level: decode_object(values, f"meters[{level!r}]")
            for level, values in self._conn.execute('SELECT level, "values" FROM meters')
        }
        return StoredState(row[0], decode_object(row[2], "state.snapshot"), meters, row[1])

    def entries(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Entry]:
        """Stream entries ``from_seq..to_seq`` (inclusive) in order, one row at a time."""
        upper = self._last_seq if to_seq is None else to_seq
        cursor = self._conn.execute(_SELECT_ENTRIES, (from_seq, upper))
        for seq, ts_ms, round_id, type_, data, prev, digest in cursor:
            yield Entry(
                seq, ts_ms, round_id, type_, decode_object(data, f"seq {seq}: data"), prev, digest
            )

    def count(self) -> int:
        """Number of committed entries (the last seq: seqs are gapless from 1)."""
        return self._last_seq

    @property
    def last_hash(self) -> str:
        return self._last_hash

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ----------------------------------------------------------------------------- bench/test only
    def _bulk_load_for_bench(self, count: int, ts_ms: int = 0, batch: int = 50_000) -> None:
        """Append ``count`` small entries with a valid chain, fast (bench and tests only).

        Entries are ``tick`` events with ``{"n": i}``; one round_completed every 100 entries.
        Uses ``synchronous=OFF`` while loading, then restores FULL and writes the state row.
        """
        conn = self._conn
        conn.execute("PRAGMA synchronous=OFF")
        try:
            seq, prev = self._last_seq, self._last_hash
            remaining = count
            while remaining > 0:
                rows = []
                for _ in range(min(batch, remaining)):
                    seq += 1
                    type_ = "round_completed" if seq % 100 == 0 else "tick"
                    data_json = f'{{"n":{seq}}}'
                    rnd = seq // 100
                    digest = entry_hash(seq, ts_ms + seq, rnd, type_, data_json, prev)
                    rows.append((seq, ts_ms + seq, rnd, type_, data_json, prev, digest))
                    prev = digest
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.executemany(_INSERT_ENTRY, rows)
                    conn.execute(_PUT_STATE, (seq, prev, canonical_json({"n": seq}, "snapshot")))
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                self._last_seq, self._last_hash = seq, prev
                remaining -= len(rows)
        finally:
            conn.execute("PRAGMA synchronous=FULL")
