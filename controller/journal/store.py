"""The tamper-evident journal: one SQLite file, one writer, one transaction per event.

Each `Journal.append` commits, in ONE transaction, a hash-chained entry, the round machine's
latest snapshot and its meters, so a restart reads the state back without replaying anything and
an audit (`verify`) can replay the chain to prove the stored state. The format (tables, pragmas,
canonical hash encoding) lives in `controller.journal.format` and docs/journal.md.

This module must never decide what an event means (the round machine does), never change or delete
a committed entry, and never hold a game rule.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType

from controller.journal.anchor import (
    AnchorError,
    AnchorWriter,
    anchor_mac,
    default_anchor_path,
    judge,
    read_anchor,
)
from controller.journal.audit import (
    VerifyReport,
    export,
    is_empty_database,
    journal_mode,
    schema_problems,
    verify,
)
from controller.journal.format import (
    APPLICATION_ID,
    JSON,
    META_KEYS,
    MODES,
    PRAGMAS,
    ROUND_COMPLETED,
    SCHEMA_SQL,
    SCHEMA_VERSION,
    STATE_ENTRIES,
    AppendedEntry,
    CanonicalWriter,
    Entry,
    JournalError,
    StorageFault,
    StoredState,
    canonical_json,
    check_json_object,
    completes_a_round,
    decode_object,
    entry_hash,
    entry_mac,
    genesis_hash,
    key_id,
    meta_keys_problem,
    meters_json,
    padded_snapshot,
    state_hash,
    stored_snapshot_text,
)
from controller.journal.seal import SEAL_PREFIX, SealError, SealKeyFile, evolve, seal

__all__ = [
    "Entry",
    "Journal",
    "JournalError",
    "StorageFault",
    "StoredState",
    "VerifyReport",
    "export",
    "verify",
]

log = logging.getLogger(__name__)

_INSERT_ENTRY = (
    "INSERT INTO journal (seq, ts_ms, round_id, type, data, prev_hash, state_hash, hash, mac)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_PUT_STATE = (
    "INSERT INTO state (id, seq, hash, rounds, snapshot) VALUES (1, ?, ?, ?, ?)"
    " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,"
    " rounds = excluded.rounds, snapshot = excluded.snapshot"
)
_PUT_METER = (
    'INSERT INTO meters (level, "values") VALUES (?, ?)'
    ' ON CONFLICT (level) DO UPDATE SET "values" = excluded."values"'
)
# The row exists once seq 1 is committed (power-up checks it): a plain UPDATE is less work.
_SET_STATE = "UPDATE state SET seq = ?, hash = ?, rounds = ?, snapshot = ? WHERE id = 1"
_COLUMNS = "seq, ts_ms, round_id, type, data, prev_hash, hash, state_hash, mac"
_SELECT_ENTRIES = f"SELECT {_COLUMNS} FROM journal WHERE seq >= ? AND seq <= ? ORDER BY seq"
#: The page size of a new journal (an existing journal keeps its own). Each commit writes every
#: page it changes to the WAL, whole: the journal's last leaf (and an overflow page of a large
#: entry), its parent, page 1 when the file grows, the state row's and (when money moved) the
#: meters' pages. Most entries are 300-800 bytes: a page seldom holds two, so nearly every commit
#: adds a page whatever the size, and the smallest pages write the least. Per round, with the
#: fixed-size state row (`STATE_PAD`): 36.0 KB at 512, 48.1 KB at 1 KiB, about 60 KB at 2 KiB
#: (bench/bench_storage.py, docs/operator-guide.md "The SD card").
PAGE_SIZE = 512
#: The small tables power-up checks page by page (the journal table is checked by verify).
_QUICK_CHECKED = ("meta", "state", "meters")


def _mode_refusal(path: Path, recorded: str) -> str:
    """The refusal of a journal of the other mode, in words for whoever started the table."""
    if recorded == "live":
        return (
            f"{path} is a LIVE table's journal: a training or simulated table never writes to "
            "it (nothing was appended); give tablectl simulate a --db of its own"
        )
    return (
        f"{path} is a TRAINING journal (made by tablectl simulate): a live table never carries "
        "on a training journal (nothing was appended); give [journal] path the live journal"
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Journal:
    """The single writer of one journal file. Used by one thread at a time (the owner thread)."""

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        last_seq: int,
        last_hash: str,
        *,
        rounds: int = 0,
        meters: dict[str, str] | None = None,
        key: bytes | None = None,
        anchor: AnchorWriter | None = None,
        meta: dict[str, str] | None = None,
        sealer: SealKeyFile | None = None,
    ) -> None:
        self.path = path
        self._conn = conn
        self._cursor = conn.cursor()
        self._last_seq = last_seq
        self._last_hash = last_hash
        self._rounds = rounds
        self._meters: dict[str, str] = dict(meters or {})
        # the state row and meters as stored (state_per_round: they may trail the last entry)
        self._stored_meters: dict[str, str] = dict(self._meters)
        self._state_seq = last_seq
        self._state_per_round = False
        self._unstored: tuple[tuple[int, str, int, str], list[tuple[str, str]]] | None = None
        self._meters_text = meters_json(self._meters)  # what the state hash splices in
        self._encoder = CanonicalWriter()
        self._key = key
        self._anchor = anchor
        self.meta: dict[str, str] = dict(meta or {})
        # forward-secure seals: the key of the next seq (the stored one is never behind it)
        self._sealer = sealer
        self._seal_key = None if sealer is None else sealer.key_for(last_seq + 1)

    # ----------------------------------------------------------------------------- opening
    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        table_id: str | None = None,
        created_ms: int | None = None,
        asset_number: int | None = None,
        config: Mapping[str, JSON] | None = None,
        anchor: str | Path | None = None,
        use_anchor: bool = True,
        key: bytes | None = None,
        seal_file: str | Path | None = None,
        mode: str | None = None,
        state_per_round: bool = False,
    ) -> Journal:
        """Open the journal at ``path``, creating the file and its schema if it is new or empty.

        A new file records ``table_id``, ``asset_number``, the game ``config`` and the key id
        (``key``: the keyed chain) in ``meta``, all covered by the genesis hash that seq 1 chains
        to. An existing file must be our journal at `SCHEMA_VERSION` with its tables and
        triggers intact and belong to ``table_id`` (`JournalError`); its head must be vouched for
        (`StorageFault`): the meta rows by seq 1, the last entry by its own hash (and MAC), the
        stored snapshot, meters and round count by the last entry's state hash, and the anchor
        (``anchor``, default ``<path>.anchor``) must not be ahead of the journal. Every check
        reads a fixed number of rows: power-up takes the same time for any journal length.

        ``seal_file``: the sealing-key file of forward-secure seals (`controller.journal.seal`):
        a new journal is sealed (``meta.key_id`` ``fss1:<seal id>``) and must start at the key's
        seq 1 (a key that already sealed entries belongs to a journal that is missing: refused);
        an existing sealed journal needs its own key file, never behind nor ahead of it; an
        unsealed journal is refused when a sealing key is configured (made without seals, or
        re-forged without them). ``key`` (the static keyed chain) is for journals made before.

        ``mode`` ("live" or "training"): a new journal records it (``meta.mode``); an existing
        one of the other mode is refused (`JournalError`, nothing appended): a training table
        never touches a live journal, a live table never carries on a training one.

        ``state_per_round`` (the owner's): the state row and meters are written when an entry
        completes a round, at least every `STATE_ENTRIES` entries, and at `close`, not with
        every entry; every entry still carries the state hash of the state it left. After a cut
        the stored state may trail the last entry: `last_state` is then the stored one and
        `entries` after it must be replayed by the caller (the owner checks each against its
        state hash). Any journal's stored state is accepted that far behind its end.
        """
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode: must be 'live' or 'training', got {mode!r}")
        p = Path(path)
        if p.is_dir():
            raise JournalError(f"{p}: is a directory, not a journal file")
        anchor_path = (
            (Path(anchor) if anchor is not None else default_anchor_path(p))
            if (use_anchor)
            else None
        )
        new = not p.exists() or p.stat().st_size == 0
        if new and anchor_path is not None:
            cls._check_new_against_anchor(p, anchor_path)
        sealer: SealKeyFile | None = None
        if seal_file is not None:
            if key is not None:
                raise JournalError(f"{p}: a sealing key and a static key: configure one only")
            try:
                sealer = SealKeyFile(seal_file)
            except SealError as exc:
                raise StorageFault(f"{p}: storage fault: {exc}") from exc
        try:
            journal = cls._open(
                p, new, anchor_path, table_id, created_ms, asset_number, config, key, sealer, mode
            )
            journal._state_per_round = state_per_round
            return journal
        except BaseException:
            if sealer is not None:
                sealer.close()
            raise

    @classmethod
    def _open(
        cls,
        p: Path,
        new: bool,
        anchor_path: Path | None,
        table_id: str | None,
        created_ms: int | None,
        asset_number: int | None,
        config: Mapping[str, JSON] | None,
        key: bytes | None,
        sealer: SealKeyFile | None,
        mode: str | None = None,
    ) -> Journal:
        try:
            # The owner may open the journal before its thread starts: one thread at a time
            # uses it, not necessarily the one that opened it.
            conn = sqlite3.connect(str(p), isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise JournalError(f"{p}: cannot open: {exc}") from exc
        writer: AnchorWriter | None = None
        try:
            if not new and is_empty_database(conn):
                # a power cut during the first power-up: WAL mode reached the disk, the schema
                # did not. Nothing was ever committed: create it, as for a missing file
                new = True
                if anchor_path is not None:
                    cls._check_new_against_anchor(p, anchor_path)
            if new:
                if sealer is not None and sealer.next_seq != 1:
                    raise StorageFault(
                        f"{p}: storage fault: the journal is empty or missing but its sealing "
                        f"key {sealer.path} has sealed {sealer.next_seq - 1} entries of journal "
                        f"{sealer.journal_key_id}: that journal was lost or replaced (restore it; "
                        "or begin a new journal carrying the meters over: tablectl journal carry, "
                        "docs/journal.md)"
                    )
                key_name = sealer.journal_key_id if sealer is not None else None
                cls._create_schema(
                    conn, p, table_id, created_ms, asset_number, config, key, key_name, mode
                )
            else:
                cls._check_schema(conn, p, table_id)
                recorded = journal_mode(conn)
                if mode is not None and recorded is not None and recorded != mode:
                    raise JournalError(_mode_refusal(p, recorded))
            for pragma in PRAGMAS:
                row = conn.execute(pragma).fetchone()
                if pragma.endswith("journal_mode=WAL") and (row is None or row[0] != "wal"):
                    raise JournalError(f"{p}: cannot switch to WAL mode (got {row})")
            journal = cls._vouch(conn, p, key, anchor_path, sealer)
            if anchor_path is not None:
                writer = AnchorWriter(anchor_path, key, on_sync=journal._sync_seal)
                # both slots: no record of an entry left in flight by a cut outlives power-up
                head = journal._last_hash if journal._last_seq else "0" * 64
                writer.settle(journal._last_seq, head)
            journal._anchor = writer
        except sqlite3.Error as exc:
            conn.close()
            if writer is not None:
                writer.close()
            raise StorageFault(f"{p}: storage fault: cannot read the journal: {exc}") from exc
        except (AnchorError, SealError) as exc:
            conn.close()
            if writer is not None:
                writer.close()
            raise StorageFault(f"{p}: storage fault: {exc}") from exc
        except BaseException:
            conn.close()
            if writer is not None:
                writer.close()
            raise
        return journal

    @staticmethod
    def _check_new_against_anchor(path: Path, anchor_path: Path) -> None:
        try:
            record = read_anchor(anchor_path)
        except AnchorError as exc:
            raise StorageFault(f"{path}: storage fault: {exc}") from exc
        if record is not None and record.acked > 0:
            raise StorageFault(
                f"{path}: storage fault: the journal is empty or missing but its anchor "
                f"{anchor_path} records seq {record.acked}: the journal file was lost or replaced "
                "(restore it, or begin a new journal carrying the meters over with two "
                "supervisors' PINs: tablectl journal carry, docs/journal.md)"
            )

    @staticmethod
    def _create_schema(
        conn: sqlite3.Connection,
        path: Path,
        table_id: str | None,
        created_ms: int | None,
        asset_number: int | None,
        config: Mapping[str, JSON] | None,
        key: bytes | None,
        key_name: str | None = None,
        mode: str | None = None,
    ) -> None:
        created = time.time_ns() // 1_000_000 if created_ms is None else created_ms
        if not _is_int(created):
            raise JournalError(f"{path}: created_ms must be an int (UTC ms), got {created!r}")
        if asset_number is not None and not _is_int(asset_number):
            raise JournalError(f"{path}: asset_number must be an int, got {asset_number!r}")
        config_text = "null" if config is None else canonical_json(dict(config), "config")
        meta = {
            "asset_number": "" if asset_number is None else str(asset_number),
            "config": config_text,
            "created": str(created),
            "key_id": key_name or ("" if key is None else key_id(key)),
            "schema_version": str(SCHEMA_VERSION),
            "table_id": table_id or "",
        }
        assert tuple(sorted(meta)) == META_KEYS
        if mode is not None:
            meta["mode"] = mode
        # before the first table: a new file's page size (an existing journal keeps its own)
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in SCHEMA_SQL:
                conn.execute(statement)
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(meta.items()))
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

    @classmethod
    def _vouch(
        cls,
        conn: sqlite3.Connection,
        p: Path,
        key: bytes | None,
        anchor_path: Path | None,
        sealer: SealKeyFile | None = None,
    ) -> Journal:
        """The power-up storage check of the head (fixed cost); raises `StorageFault`."""

        def fault(text: str) -> StorageFault:
            return StorageFault(f"{p}: storage fault: {text} (run tablectl journal verify)")

        for table in _QUICK_CHECKED:
            rows = conn.execute(f"PRAGMA quick_check({table})").fetchall()
            if rows != [("ok",)]:
                raise fault(f"quick_check of table {table}: {rows[0][0]}")
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        problem = meta_keys_problem(meta)
        if problem is not None:
            raise fault(problem)
        stored_key = meta["key_id"]
        sealed = stored_key.startswith(SEAL_PREFIX)
        if sealed and sealer is None:
            raise JournalError(
                f"{p}: the journal is sealed ({stored_key}) but no sealing key "
                "([journal] seal_key) is configured"
            )
        if sealer is not None and not sealed:
            raise JournalError(
                f"{p}: a sealing key is configured ({sealer.path}) but the journal is not sealed "
                f"(key id {stored_key or 'none'}): a journal made without seals, or re-forged "
                "without them (downgraded); refused"
            )
        if sealer is not None and sealer.journal_key_id != stored_key:
            raise JournalError(
                f"{p}: the sealing key {sealer.path} ({sealer.journal_key_id}) is not the "
                f"journal's ({stored_key})"
            )
        if sealed:
            pass
        elif stored_key and key is None:
            raise JournalError(
                f"{p}: the journal is keyed (key id {stored_key}) but no key file is configured"
            )
        elif key is not None and stored_key != key_id(key):
            raise JournalError(
                f"{p}: the configured key (id {key_id(key)}) is not the journal's "
                f"({stored_key or 'unkeyed journal'})"
            )
        first = conn.execute("SELECT prev_hash FROM journal WHERE seq = 1").fetchone()
        if first is not None and first[0] != genesis_hash(meta):
            raise fault("seq 1 does not chain to the meta rows (identity or configuration edited)")
        last = conn.execute(
            f"SELECT {_COLUMNS} FROM journal WHERE seq = (SELECT max(seq) FROM journal)"
        ).fetchone()
        meters = {
            str(level): str(values)
            for level, values in conn.execute('SELECT level, "values" FROM meters')
        }
        state = conn.execute(
            "SELECT seq, hash, rounds, snapshot FROM state WHERE id = 1"
        ).fetchone()
        if last is None:
            if state is not None or meters:
                raise fault("stored state or meters without any journal entry")
            cls._check_anchor(p, anchor_path, 0, None, key, conn)
            cls._check_sealer(p, sealer, 0, "", "")
            return cls(p, conn, 0, genesis_hash(meta), key=key, meta=meta, sealer=sealer)
        seq, ts_ms, round_id, type_, data, prev, digest, s_hash, mac = last
        if entry_hash(seq, ts_ms, round_id, type_, data, prev, s_hash) != digest:
            raise fault(f"the last entry, seq {seq}, does not match its hash")
        if seq > 1:
            before = conn.execute("SELECT hash FROM journal WHERE seq = ?", (seq - 1,)).fetchone()
            if before is None or before[0] != prev:
                raise fault(f"seq {seq} does not chain to seq {seq - 1}")
        if key is not None and not hmac.compare_digest(mac, entry_mac(key, digest)):
            raise fault(f"seq {seq}: the keyed chain's MAC does not match (entry rewritten)")
        if state is None or not seq - STATE_ENTRIES <= state[0] <= seq:
            raise fault(
                f"stored state reflects seq {None if state is None else state[0]} but the "
                f"journal ends at seq {seq}: refusing to append"
            )
        state_seq = int(state[0])
        at_hash, at_state_hash = digest, s_hash
        if state_seq < seq:  # written once a round: the entry it reflects, and those after it
            row = conn.execute(
                "SELECT hash, state_hash FROM journal WHERE seq = ?", (state_seq,)
            ).fetchone()
            at_hash, at_state_hash = (None, None) if row is None else (row[0], row[1])
        if state[1] != at_hash:
            raise fault(f"stored state hash does not match the hash of seq {state_seq}")
        snapshot_text = stored_snapshot_text(state[3])
        if state_hash(snapshot_text, meters_json(meters), state[2]) != at_state_hash:
            raise fault(
                f"the stored snapshot, meters or round count are not those seq {state_seq} recorded"
            )
        rounds = int(state[2])
        if state_seq < seq:
            for (data_text,) in conn.execute(
                "SELECT data FROM journal WHERE seq > ? AND type = ?", (state_seq, ROUND_COMPLETED)
            ):
                if completes_a_round(ROUND_COMPLETED, decode_object(data_text, "data")):
                    rounds += 1
        cls._check_anchor(p, anchor_path, seq, digest, key, conn)
        cls._check_sealer(p, sealer, seq, digest, mac)
        journal = cls(
            p, conn, seq, digest, rounds=rounds, meters=meters, key=key, meta=meta, sealer=sealer
        )
        journal._state_seq = state_seq
        return journal

    @staticmethod
    def _check_sealer(
        p: Path, sealer: SealKeyFile | None, last_seq: int, digest: str, mac: str
    ) -> None:
        """The sealing key against the journal's head: never ahead of it (entries sealed and
        vanished: a restored older copy, a deleted or truncated journal), and where the stored key
        is still at or below the last seq (a cut lost its unsynced write), the last seal checked.
        Then the stored key is moved to the next seq and synced."""
        if sealer is None:
            return
        if sealer.next_seq > last_seq + 1:
            raise StorageFault(
                f"{p}: storage fault: the journal ends at seq {last_seq} but its sealing key "
                f"{sealer.path} has sealed up to seq {sealer.next_seq - 1}: "
                f"{sealer.next_seq - 1 - last_seq} sealed entries have vanished (a restored "
                "older copy, or a journal deleted or cut short); play refused, nothing appended"
            )
        if last_seq >= sealer.next_seq and not hmac.compare_digest(
            mac, seal(sealer.key_for(last_seq), digest)
        ):
            raise StorageFault(
                f"{p}: storage fault: seq {last_seq}: its seal does not match (entry rewritten)"
            )
        if last_seq + 1 > sealer.next_seq:
            sealer.advance(last_seq + 1, sealer.key_for(last_seq + 1))
        sealer.sync()

    @staticmethod
    def _check_anchor(
        p: Path,
        anchor_path: Path | None,
        last_seq: int,
        last_hash: str | None,
        key: bytes | None,
        conn: sqlite3.Connection,
    ) -> None:
        if anchor_path is None:
            return
        record = read_anchor(anchor_path)
        if record is None:
            if last_seq > 0:
                raise StorageFault(
                    f"{p}: storage fault: its anchor {anchor_path} is missing, so vanished "
                    "entries cannot be ruled out (restore the anchor file; see docs/journal.md)"
                )
            return
        if key is not None and not hmac.compare_digest(
            record.mac, anchor_mac(key, record.seq, record.hash, record.acked)
        ):
            raise StorageFault(f"{p}: storage fault: anchor {anchor_path}: MAC does not match")

        def hash_at(seq: int) -> str | None:
            if seq == last_seq:
                return last_hash
            row = conn.execute("SELECT hash FROM journal WHERE seq = ?", (seq,)).fetchone()
            return None if row is None else str(row[0])

        verdict = judge(record, last_seq, hash_at)
        if verdict.vanished:
            raise StorageFault(
                f"{p}: storage fault: the journal ends at seq {last_seq} but its anchor "
                f"{anchor_path} records seq {record.seq}: {verdict.vanished} committed entries "
                "have vanished (damaged WAL or a restored older copy); play "
                "refused, nothing is appended"
            )
        if verdict.mismatch:
            raise StorageFault(
                f"{p}: storage fault: the entry at seq {record.seq} is not the one its anchor "
                f"{anchor_path} records: the journal was rewritten or replaced"
            )
        if verdict.in_flight:
            log.warning(
                "%s: seq %d was being committed at the last stop and never became durable "
                "(never acknowledged; the journal ends at seq %d, as its anchor allows)",
                p,
                record.seq,
                last_seq,
            )

    # ----------------------------------------------------------------------------- writing
    def append(
        self,
        ts_ms: int,
        round_id: int | None,
        type: str,
        data: Mapping[str, JSON],
        snapshot: Mapping[str, JSON],
        meters: Mapping[str, Mapping[str, JSON]],
        *,
        store_state: bool = False,
    ) -> Entry:
        """Commit one entry plus the snapshot and meters it leads to, in one transaction, then
        hand its anchor record to the anchor's thread. (``state_per_round``: the snapshot and
        meters are stored with the entries that complete a round, every `STATE_ENTRIES`, and
        with ``store_state``; every entry carries their state hash all the same.)

        ``meters`` must name every level already stored (levels are never dropped). Nothing is
        written if any argument is invalid or any statement fails; the error names the argument
        (``ValueError``) or the storage failure (`JournalError`). The previous entry's anchor
        record is durable when an append returns; if that write failed, `JournalError` says so:
        "seq n not appended" when it was known before the commit, "seq n committed but ..." when
        it was learnt after (the entries are committed, the anchor is behind them).
        """
        if not _is_int(ts_ms) or ts_ms < 0:
            raise ValueError(f"ts_ms: must be a non-negative int (UTC ms), got {ts_ms!r}")
        if round_id is not None and not _is_int(round_id):
            raise ValueError(f"round_id: must be an int or None, got {round_id!r}")
        if not isinstance(type, str) or not type:
            raise ValueError(f"type: must be a non-empty string, got {type!r}")
        encoder = self._encoder  # canonical_json's text, reusing what did not change
        data_json = encoder.encode(check_json_object(data, "data"), "data")
        snapshot_json = encoder.encode_object(check_json_object(snapshot, "snapshot"), "snapshot")
        meter_rows = [
            (level, encoder.encode(check_json_object(values, f"meters[{level!r}]"), "meters"))
            for level, values in check_json_object(meters, "meters").items()
        ]
        all_meters = {**self._meters, **dict(meter_rows)}
        if len(all_meters) != len(meter_rows):
            missing = sorted(set(self._meters) - {level for level, _ in meter_rows})
            raise ValueError(f"meters: must name every stored level; missing {missing}")
        meters_text = self._meters_text if all_meters == self._meters else meters_json(all_meters)
        seq = self._last_seq + 1
        prev = self._last_hash
        # the stored text decides whether a round completed (only a round_completed is read)
        completes = type == ROUND_COMPLETED and completes_a_round(type, json.loads(data_json))
        rounds = self._rounds + (1 if completes else 0)
        s_hash = state_hash(snapshot_json, meters_text, rounds)
        digest = entry_hash(seq, ts_ms, round_id, type, data_json, prev, s_hash)
        seal_key = self._seal_key
        if seal_key is not None:
            mac = seal(seal_key, digest)
        else:
            mac = "" if self._key is None else entry_mac(self._key, digest)
        conn = self._conn
        cursor = self._cursor  # one cursor for the writer: no new cursor per statement
        anchor = self._anchor
        try:
            cursor.execute("BEGIN IMMEDIATE")
            try:
                cursor.execute(
                    _INSERT_ENTRY,
                    (seq, ts_ms, round_id, type, data_json, prev, s_hash, digest, mac),
                )
                state_row = (seq, digest, rounds, snapshot_json)
                store_state = (
                    store_state
                    or not self._state_per_round
                    or completes
                    or seq == 1
                    or seq - self._state_seq >= STATE_ENTRIES
                )
                if store_state:
                    self._store_state(cursor, state_row, meter_rows)
                if anchor is not None:
                    # the previous entry's record is written beside this COMMIT, whose flush
                    # holds no GIL (an earlier write's failure: nothing is committed)
                    anchor.before_commit()
                cursor.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    cursor.execute("ROLLBACK")
                raise
        except AnchorError as exc:
            raise JournalError(f"{self.path}: seq {seq} not appended: {exc}") from exc
        except sqlite3.Error as exc:
            if anchor is not None:
                with contextlib.suppress(AnchorError):  # the commit's failure is the news
                    anchor.after_commit()
            raise JournalError(f"{self.path}: append of seq {seq} ({type}) failed: {exc}") from exc
        self._last_seq = seq
        self._last_hash = digest
        self._rounds = rounds
        if store_state:
            self._state_seq = seq
            self._stored_meters = dict(all_meters)
            self._unstored = None
        else:
            self._unstored = ((seq, digest, rounds, snapshot_json), meter_rows)
        self._meters = all_meters
        self._meters_text = meters_text
        if seal_key is not None:
            # the key of seq replaced by the key of seq + 1, in memory and in the file: only
            # now, after the COMMIT returned, so the file is never ahead of the journal
            self._seal_key = evolve(seal_key)
            assert self._sealer is not None
            try:
                self._sealer.advance(seq + 1, self._seal_key)
            except SealError as exc:
                raise JournalError(f"{self.path}: seq {seq} committed but {exc}") from exc
        if anchor is not None:
            try:  # the previous entry's record, written beside this COMMIT, is durable
                anchor.after_commit()
            except AnchorError as exc:
                raise JournalError(f"{self.path}: seq {seq} committed but {exc}") from exc
            # written beside the next COMMIT, or after LINGER_S, when due: the end of a round
            anchor.post(seq, digest, due=completes)
        return AppendedEntry(seq, ts_ms, round_id, type, data_json, prev, digest, s_hash, mac)

    def _store_state(
        self,
        cursor: sqlite3.Cursor,
        state_row: tuple[int, str, int, str],
        meter_rows: list[tuple[str, str]],
    ) -> None:
        """The state row and the meter rows that changed since they were last stored (inside
        the caller's transaction)."""
        seq, digest, rounds, snapshot = state_row
        state_row = (seq, digest, rounds, padded_snapshot(snapshot))  # one size: in place
        if state_row[0] == 1:
            cursor.execute(_PUT_STATE, state_row)
        elif cursor.execute(_SET_STATE, state_row).rowcount != 1:
            raise sqlite3.DatabaseError("the state row is missing")
        changed = [row for row in meter_rows if self._stored_meters.get(row[0]) != row[1]]
        if changed:  # most events move no money: their meter rows stay as they are
            cursor.executemany(_PUT_METER, changed)

    def _store_pending_state(self) -> None:
        """At a clean stop: the state of the last entry, when it was not stored with it (one
        transaction, no entry). A failure is logged: power-up replays from the stored state."""
        if self._unstored is None:
            return
        state_row, meter_rows = self._unstored
        cursor = self._cursor
        try:
            cursor.execute("BEGIN IMMEDIATE")
            try:
                self._store_state(cursor, state_row, meter_rows)
                cursor.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    cursor.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            log.warning(
                "%s: the state of seq %d not stored at close: %s", self.path, state_row[0], exc
            )
            return
        self._unstored = None
        self._state_seq = state_row[0]
        self._stored_meters = {**self._stored_meters, **dict(meter_rows)}

    # ----------------------------------------------------------------------------- reading
    def last_state(self) -> StoredState | None:
        """The stored snapshot, meters, round count and last hash, or None for an empty journal.
        Reads two small tables: never replays, so it takes the same time whatever the journal's
        length. (Power-up has already checked them against the last entry's state hash.)"""
        row = self._conn.execute(
            "SELECT seq, hash, rounds, snapshot FROM state WHERE id = 1"
        ).fetchone()
        if row is None:
            return None
        meters = {
            level: decode_object(values, f"meters[{level!r}]")
            for level, values in self._conn.execute('SELECT level, "values" FROM meters')
        }
        return StoredState(row[0], decode_object(row[3], "state.snapshot"), meters, row[1], row[2])

    def entries(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Entry]:
        """Stream entries ``from_seq..to_seq`` (inclusive) in order, one row at a time."""
        upper = self._last_seq if to_seq is None else to_seq
        cursor = self._conn.execute(_SELECT_ENTRIES, (from_seq, upper))
        for seq, ts_ms, round_id, type_, data, prev, digest, s_hash, mac in cursor:
            yield Entry(
                seq,
                ts_ms,
                round_id,
                type_,
                decode_object(data, f"seq {seq}: data"),
                prev,
                digest,
                s_hash,
                mac,
            )

    def count(self) -> int:
        """Number of committed entries (the last seq: seqs are gapless from 1)."""
        return self._last_seq

    @property
    def rounds(self) -> int:
        """Completed rounds (accepted ``round_completed`` entries), kept in the state row."""
        return self._rounds

    @property
    def last_hash(self) -> str:
        return self._last_hash

    @property
    def recorded_config(self) -> dict[str, JSON] | None:
        """The game configuration the journal began with (``meta.config``), or None."""
        value = json.loads(self.meta.get("config", "null"))
        return value if isinstance(value, dict) else None

    @property
    def sealed(self) -> bool:
        """True for a journal with forward-secure seals (``meta.key_id`` ``fss1:...``)."""
        return self.meta.get("key_id", "").startswith(SEAL_PREFIX)

    def _sync_seal(self) -> None:
        """Make the sealing key's last overwrite durable (the anchor's thread calls it after each
        record it writes; `flush_anchor` and `close` too). A failure is logged: the older key on
        disk still derives forward, only its erasure waits."""
        sealer = self._sealer
        if sealer is not None:
            try:
                sealer.sync()
            except SealError as exc:
                log.warning("%s", exc)

    def flush_anchor(self) -> None:
        """Wait until the anchor's record of the last entry is durable (`JournalError` if it
        failed), and the sealing key's last overwrite; `close` does this too."""
        self._sync_seal()
        if self._anchor is not None:
            try:
                self._anchor.flush()
            except AnchorError as exc:
                raise JournalError(f"{self.path}: {exc}") from exc

    def close(self) -> None:
        """Close the file once the anchor's record of the last entry is durable (`JournalError`
        if that write failed: the entries are committed, the anchor is one or two behind)."""
        self._store_pending_state()
        self._conn.close()
        try:
            if self._anchor is not None:
                anchor, self._anchor = self._anchor, None
                try:
                    anchor.close()
                except AnchorError as exc:
                    raise JournalError(f"{self.path}: {exc}") from exc
        finally:
            if self._sealer is not None:  # after the anchor's thread, which syncs it
                sealer, self._sealer = self._sealer, None
                try:
                    sealer.close()
                except SealError as exc:
                    log.warning("%s", exc)

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
