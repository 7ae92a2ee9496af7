"""Auditing a journal file: `verify` (integrity, chain, stored state, replay) and `export`.

Opens the file read-only and reports what it finds as specific problem strings; it must never
write to a journal, never raise on a damaged, truncated or foreign file (verify reports instead),
and never hold a game rule (the round machine's replay is passed in).
"""

from __future__ import annotations

import csv
import json
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TextIO

import sqlite_utils

from controller.journal.format import (
    APPLICATION_ID,
    EXPECTED_COLUMNS,
    EXPECTED_TRIGGERS,
    GENESIS_HASH,
    JSON,
    SCHEMA_SQL,
    SCHEMA_VERSION,
    Entry,
    JournalError,
    canonical_json,
    completes_a_round,
    decode_object,
    entry_hash,
)

Replay = Callable[[Iterator[Entry]], tuple[dict[str, JSON], dict[str, JSON]]]

_ROWS = "SELECT seq, ts_ms, round_id, type, data, prev_hash, hash FROM journal ORDER BY seq"
_EXPECTED_SQL = {statement.split()[2]: statement.strip() for statement in SCHEMA_SQL}
EXPORT_FIELDS = ("seq", "ts", "round", "type", "data", "prev_hash", "hash")


@dataclass(frozen=True)
class VerifyReport:
    """``ok`` is true only when ``problems`` is empty. ``rounds`` counts round_completed
    entries."""

    ok: bool
    entries: int
    rounds: int
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, JSON]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "rounds": self.rounds,
            "problems": list(self.problems),
        }


class _Problems:
    """Problem list with a cap, so a wholly rewritten journal cannot flood the report."""

    def __init__(self, cap: int) -> None:
        self.items: list[str] = []
        self.cap = cap
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.items) < self.cap:
            self.items.append(text)
        else:
            self.dropped += 1

    def result(self) -> list[str]:
        if self.dropped:
            return [*self.items, f"... and {self.dropped} more problems"]
        return list(self.items)


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to an existing file (never creates one)."""
    p = Path(path)
    if not p.exists():
        raise JournalError(f"{p}: no such journal file")
    if not p.is_file():
        raise JournalError(f"{p}: not a regular file")
    uri = f"file:{urllib.parse.quote(str(p.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    # A damaged page may hold bytes that are not UTF-8: decode them with U+FFFD so the row is
    # still reported (its hash no longer matches) instead of stopping the audit.
    conn.text_factory = _decode_text
    return conn


def _decode_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def schema_problems(conn: sqlite3.Connection) -> list[str]:
    """Why the database on ``conn`` is not our journal at `SCHEMA_VERSION` (empty if it is).

    The header's application_id is checked first (a foreign file gets that one problem only);
    then sqlite-utils' introspection checks tables, columns, STRICT and the triggers.
    """
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if app_id != APPLICATION_ID:
        return [
            f"not a pai gow table journal (application_id {app_id:#x}, "
            f"expected {APPLICATION_ID:#x})"
        ]
    problems: list[str] = []
    user_version = conn.execute("PRAGMA user_version").fetchone()[0]
    if user_version != SCHEMA_VERSION:
        problems.append(f"schema version {user_version}, this software reads {SCHEMA_VERSION}")
    db = sqlite_utils.Database(conn, execute_plugins=False, recursive_triggers=False)
    names = set(db.table_names())
    for name, expected in EXPECTED_COLUMNS.items():
        if name not in names:
            problems.append(f"table {name} is missing")
            continue
        table = db.table(name)
        columns = [(c.name, c.type.upper(), bool(c.notnull), bool(c.is_pk)) for c in table.columns]
        if columns != expected:
            problems.append(f"table {name} has columns {columns}, expected {expected}")
        if not table.strict:
            problems.append(f"table {name} is not STRICT")
    triggers = db.triggers_dict
    for name in EXPECTED_TRIGGERS:
        if name not in triggers:
            problems.append(f"trigger {name} is missing")
        elif triggers[name].strip() != _EXPECTED_SQL[name]:
            problems.append(f"trigger {name} has been altered")
    if not problems:  # same columns, STRICT, triggers: any other difference (a CHECK, a default)
        for name in EXPECTED_COLUMNS:
            if db.table(name).schema.strip() != _EXPECTED_SQL[name]:
                problems.append(f"table {name} differs from schema version {SCHEMA_VERSION}")
    if "meta" in names:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None or row[0] != str(SCHEMA_VERSION):
            found = None if row is None else row[0]
            problems.append(f"meta.schema_version is {found!r}, expected '{SCHEMA_VERSION}'")
    return problems


class _Walk:
    """Streams the journal rows once, checking seq, prev_hash, hash and data as it goes, and
    yields the decodable entries (to the replay, or to nobody)."""

    def __init__(self, conn: sqlite3.Connection, problems: _Problems) -> None:
        self.conn = conn
        self.problems = problems
        self.entries = 0
        self.rounds = 0
        self.last_seq = 0
        self.last_hash = GENESIS_HASH
        self._rows = self._walk()

    def __iter__(self) -> Iterator[Entry]:
        """The one pass over the rows: iterating again resumes it, never restarts it."""
        return self._rows

    def _walk(self) -> Iterator[Entry]:
        cursor = self.conn.execute(_ROWS)
        while True:
            try:
                row = cursor.fetchone()
            except sqlite3.Error as exc:
                self.problems.add(f"cannot read the entry after seq {self.last_seq}: {exc}")
                return
            if row is None:
                return
            entry = self._check(*row)
            if entry is not None:
                yield entry

    def _check(
        self,
        seq: int,
        ts_ms: int,
        round_id: int | None,
        type_: str,
        data: str,
        prev: str,
        digest: str,
    ) -> Entry | None:
        add = self.problems.add
        self.entries += 1
        if seq != self.last_seq + 1:
            add(f"gap after seq {self.last_seq}: next entry is seq {seq}")
        if prev != self.last_hash:
            if self.last_seq == 0:
                add(f"seq {seq}: prev_hash is not the genesis hash")
            else:
                add(f"seq {seq}: prev_hash does not match the hash of seq {self.last_seq}")
        try:
            computed: str | None = entry_hash(seq, ts_ms, round_id, type_, data, prev)
        except Exception as exc:  # a column of the wrong type (STRICT removed by hand)
            add(f"seq {seq}: cannot recompute hash: {exc}")
            computed = None
        if computed is not None and computed != digest:
            add(f"seq {seq}: hash mismatch (stored {digest}, computed {computed})")
        self.last_seq, self.last_hash = seq, digest
        try:
            obj = decode_object(data, f"seq {seq}: data")
            if canonical_json(obj, f"seq {seq}: data") != data:
                add(f"seq {seq}: data is not in canonical JSON form")
        except (ValueError, TypeError) as exc:
            add(str(exc))
            return None
        if completes_a_round(type_, obj):
            self.rounds += 1
        return Entry(seq, ts_ms, round_id, type_, obj, prev, digest)


def _normal(value: JSON) -> JSON:
    """JSON round trip, so tuples and lists (or int keys and str keys) compare as stored."""
    return json.loads(canonical_json(value, "replay result"))


@dataclass
class _Stored:
    """The state row and meters as stored (None where missing or undecodable)."""

    seq: int | None = None
    hash: str | None = None
    snapshot: dict[str, JSON] | None = None
    meters: dict[str, JSON] | None = None


def _read_state(conn: sqlite3.Connection, problems: _Problems) -> _Stored:
    stored = _Stored()
    row = conn.execute("SELECT seq, hash, snapshot FROM state WHERE id = 1").fetchone()
    if row is not None:
        stored.seq, stored.hash = row[0], row[1]
        stored.snapshot = _decode_canonical(row[2], "stored state snapshot", problems)
    meters: dict[str, JSON] = {}
    for level, values in conn.execute('SELECT level, "values" FROM meters ORDER BY level'):
        decoded = _decode_canonical(values, f"meter level {level!r}", problems)
        if decoded is None:
            return stored
        meters[level] = decoded
    stored.meters = meters
    return stored


def _decode_canonical(text: object, what: str, problems: _Problems) -> dict[str, JSON] | None:
    """Decode a stored JSON object, which the writer always stores in canonical form."""
    try:
        if not isinstance(text, str):
            raise TypeError(f"{what}: stored as {type(text).__name__}, not text")
        value = decode_object(text, what)
    except (ValueError, TypeError) as exc:
        problems.add(str(exc))
        return None
    if canonical_json(value, what) != text:
        problems.add(f"{what}: not in canonical JSON form")
    return value


def _check_head(stored: _Stored, walk: _Walk, problems: _Problems) -> None:
    """The state row must reflect the chain's last seq and hash."""
    if stored.seq is None:
        if walk.entries:
            problems.add(f"stored state is missing but the journal ends at seq {walk.last_seq}")
    elif stored.seq != walk.last_seq:
        problems.add(
            f"stored state reflects seq {stored.seq} but the journal ends at seq {walk.last_seq}"
        )
    elif stored.hash != walk.last_hash:
        problems.add(f"stored state hash does not match the hash of seq {walk.last_seq}")


def _check_replay(
    replay: Replay,
    walk: _Walk,
    stored_snapshot: dict[str, JSON] | None,
    stored_meters: dict[str, JSON] | None,
    problems: _Problems,
) -> None:
    """Replay every entry through the round machine's ``replay``; compare with the stored row."""
    try:
        snapshot, meters = replay(iter(walk))
        snapshot, meters = _normal(snapshot), _normal(meters)
    except Exception as exc:
        problems.add(f"replay failed after seq {walk.last_seq}: {type(exc).__name__}: {exc}")
        return
    if stored_snapshot is not None and snapshot != stored_snapshot:
        if not isinstance(snapshot, dict):
            problems.add("replay: snapshot is not a JSON object")
        else:
            keys = sorted(
                k
                for k in set(snapshot) | set(stored_snapshot)
                if snapshot.get(k, ...) != stored_snapshot.get(k, ...)
            )
            problems.add(f"replay: snapshot differs from the stored state at keys {keys[:10]}")
    if stored_meters is not None and meters != stored_meters:
        if not isinstance(meters, dict):
            problems.add("replay: meters are not a JSON object")
        else:
            for level in sorted(set(meters) | set(stored_meters)):
                if meters.get(level) != stored_meters.get(level):
                    problems.add(
                        f"replay: meter level {level!r} differs (replayed "
                        f"{meters.get(level)}, stored {stored_meters.get(level)})"
                    )


def verify(
    path: str | Path, replay: Replay | None = None, *, max_problems: int = 1000
) -> VerifyReport:
    """Check the journal file at ``path``; never raises for a bad file, reports problems instead.

    Checks: SQLite ``PRAGMA integrity_check``; that it is our journal (application_id, schema
    version, STRICT tables, the append-only triggers); seq gapless from 1; each prev_hash is the
    previous hash (genesis = 64 zeros); each hash recomputed; data is canonical JSON; the stored
    state reflects the last seq and hash; and, with ``replay``, that replaying every entry gives
    the stored snapshot and meters exactly.
    """
    problems = _Problems(max_problems)
    walk: _Walk | None = None
    try:
        conn = connect_read_only(path)
    except (JournalError, sqlite3.Error) as exc:
        return VerifyReport(False, 0, 0, [str(exc)])
    stage = "running integrity_check"
    try:
        # One read transaction: every check sees the same snapshot of a journal that may be live
        # (WAL lets the owner go on appending meanwhile).
        conn.execute("BEGIN")
        rows = conn.execute("PRAGMA integrity_check").fetchall()
        if rows != [("ok",)]:
            for (message,) in rows:
                problems.add(f"integrity_check: {message}")
        stage = "checking the schema"
        for problem in schema_problems(conn):
            problems.add(problem)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        foreign = any(p.startswith("not a pai gow table journal") for p in problems.items)
        if not foreign and {"journal", "state", "meters"} <= tables:
            stage = "reading the journal"
            walk = _Walk(conn, problems)
            stored = _read_state(conn, problems)
            if replay is not None:
                _check_replay(replay, walk, stored.snapshot, stored.meters, problems)
            for _ in walk:  # whatever the replay did not consume
                pass
            _check_head(stored, walk, problems)
    except sqlite3.Error as exc:
        problems.add(f"sqlite error while {stage}: {exc}")
    except Exception as exc:  # the report must come back whatever the file holds
        problems.add(f"unexpected error while verifying: {type(exc).__name__}: {exc}")
    finally:
        conn.close()
    entries = walk.entries if walk else 0
    rounds = walk.rounds if walk else 0
    result = problems.result()
    return VerifyReport(not result, entries, rounds, result)


class Redactor(Protocol):
    """Hides part of some entries on export. ``see`` is shown every entry first (same snapshot),
    then ``redact`` is asked for each entry: new data to write instead, or None to keep it."""

    def see(self, entry: Entry) -> None: ...

    def redact(self, entry: Entry) -> dict[str, JSON] | None: ...


def export(
    path: str | Path,
    fmt: Literal["jsonl", "csv"] | str,
    out: TextIO,
    redactor: Redactor | None = None,
) -> int:
    """Write every entry of the journal at ``path`` to ``out`` as JSON lines or CSV.

    JSON lines: one object per entry with ``seq, ts, round, type, data, prev_hash, hash``. CSV: a
    header row with the same names; ``data`` is the stored canonical JSON text (so a reader can
    recompute each hash), ``round`` is empty for none. An entry the ``redactor`` hides carries its
    replacement data (and ``"redacted": true`` in JSON lines); its hash then no longer recomputes
    from the exported data. Returns the number of entries written.
    Raises `JournalError` if the file is not a readable journal, ``ValueError`` for a bad format.
    """
    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"format: must be 'jsonl' or 'csv', got {fmt!r}")
    try:
        conn = connect_read_only(path)
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot open: {exc}") from exc
    count = 0
    try:
        conn.execute("BEGIN")  # one snapshot of a journal that may be live
        problems = schema_problems(conn)
        if problems:
            raise JournalError(f"{path}: {problems[0]}")
        writer = csv.writer(out, lineterminator="\n") if fmt == "csv" else None
        if writer is not None:
            writer.writerow(EXPORT_FIELDS)
        if redactor is not None:
            for row in conn.execute(_ROWS):
                redactor.see(_entry(row))
        for row in conn.execute(_ROWS):
            seq, ts_ms, round_id, type_, data, prev, digest = row
            entry = _entry(row) if writer is None or redactor is not None else None
            hidden = redactor.redact(entry) if redactor is not None and entry else None
            if writer is not None:
                text = data if hidden is None else canonical_json(hidden, "redacted data")
                writer.writerow(
                    (seq, ts_ms, "" if round_id is None else round_id, type_, text, prev, digest)
                )
            else:
                assert entry is not None
                obj = entry.to_json()
                if hidden is not None:
                    obj["data"] = hidden
                    obj["redacted"] = True
                out.write(json.dumps(obj, separators=(",", ":")) + "\n")
            count += 1
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read: {exc}") from exc
    except ValueError as exc:
        raise JournalError(f"{path}: {exc}") from exc
    finally:
        conn.close()
    return count


def _entry(row: tuple[int, int, int | None, str, str, str, str]) -> Entry:
    seq, ts_ms, round_id, type_, data, prev, digest = row
    return Entry(seq, ts_ms, round_id, type_, decode_object(data, f"seq {seq}: data"), prev, digest)
