"""Auditing a journal file: `verify` (integrity, chain, everything stored, anchor, replay of
history) and `export`.

Opens the file read-only (on read-only media too) and reports what it finds as specific problem
strings; it must never write to a journal, never raise on a damaged, truncated or foreign file
(verify reports instead), and never hold a game rule (the round machine's replay is passed in as a
`ReplayFactory`).
"""

from __future__ import annotations

import csv
import hmac
import json
import os
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TextIO

import sqlite_utils

from controller.journal.anchor import (
    AnchorError,
    AnchorRecord,
    anchor_mac,
    default_anchor_path,
    judge,
    read_anchor,
)
from controller.journal.format import (
    APPLICATION_ID,
    EXPECTED_COLUMNS,
    EXPECTED_TRIGGERS,
    JSON,
    SCHEMA_SQL,
    SCHEMA_VERSION,
    STATE_ENTRIES,
    STATE_PAD,
    Entry,
    JournalError,
    canonical_json,
    completes_a_round,
    decode_object,
    entry_hash,
    entry_mac,
    genesis_hash,
    key_id,
    meta_keys_problem,
    meters_json,
    state_hash,
    stored_snapshot_text,
)
from controller.journal.seal import SEAL_PREFIX, SealChain


class Replayer(Protocol):
    """The round machine re-running history (built by the caller from the journal's own
    configuration): ``step`` answers the recomputed effects of one entry as JSON."""

    def step(self, entry: Entry) -> list[JSON]: ...

    def snapshot(self) -> dict[str, JSON]: ...

    def meters(self) -> dict[str, JSON]: ...


#: Builds the replayer from the game configuration recorded in the journal's meta (or None).
ReplayFactory = Callable[[dict[str, JSON] | None], Replayer]

_COLUMNS = "seq, ts_ms, round_id, type, data, prev_hash, hash, state_hash, mac"
_ROWS = f"SELECT {_COLUMNS} FROM journal ORDER BY seq"
_ROWS_FROM = f"SELECT {_COLUMNS} FROM journal WHERE seq >= ? ORDER BY seq"
_EXPECTED_SQL = {statement.split()[2]: statement.strip() for statement in SCHEMA_SQL}
EXPORT_FIELDS = ("seq", "ts", "round", "type", "data", "prev_hash", "state_hash", "hash", "mac")
#: How far past an unreadable row verify probes, seq by seq, for the next readable one.
PROBE_LIMIT = 100_000


@dataclass(frozen=True)
class VerifyReport:
    """``ok`` is true only when ``problems`` is empty. ``rounds`` counts accepted
    round_completed entries; ``power_ups`` lists each power-up's seq and software hash;
    ``notes`` say what was not checked (no key, no anchor) without failing the check."""

    ok: bool
    entries: int
    rounds: int
    problems: list[str] = field(default_factory=list)
    power_ups: list[dict[str, JSON]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the first seq a problem names (chain, hash, seal, data, replay); None when none does
    first_bad_seq: int | None = None
    #: the head: the last entry's seq and hash (0 and "" for an empty or unreadable journal)
    head_seq: int = 0
    head_hash: str = ""

    def to_json(self) -> dict[str, JSON]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "rounds": self.rounds,
            "problems": list(self.problems),
            "power_ups": [dict(p) for p in self.power_ups],
            "notes": list(self.notes),
            "first_bad_seq": self.first_bad_seq,
            "head": {"seq": self.head_seq, "hash": self.head_hash},
        }


class _Problems:
    """Problem list with a cap, so a wholly rewritten journal cannot flood the report."""

    def __init__(self, cap: int) -> None:
        self.items: list[str] = []
        self.cap = cap
        self.dropped = 0
        self.first_seq: int | None = None

    def at(self, seq: int) -> None:
        """Entry ``seq`` cannot be trusted (the lowest such seq is the report's first bad)."""
        if self.first_seq is None or seq < self.first_seq:
            self.first_seq = seq

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
    """A read-only connection to an existing file (never creates one, never writes).

    ``mode=ro`` first; where that cannot work because the directory is read-only and SQLite
    cannot make the ``-shm`` file (a journal copied to read-only media, without ``-wal``/``-shm``
    files), ``immutable=1``. A non-empty ``-wal`` file that cannot be opened is refused rather
    than ignored: committed entries may be in it. The one opener of every reader of a journal
    (auditors, reports, the journal's tail, tests); usable from any one thread at a time.
    """
    p = Path(path)
    if not p.exists():
        raise JournalError(f"{p}: no such journal file")
    if not p.is_file():
        raise JournalError(f"{p}: not a regular file")
    quoted = urllib.parse.quote(str(p.resolve()))
    conn = sqlite3.connect(
        f"file:{quoted}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        conn.close()
        wal = p.with_name(p.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise JournalError(
                f"{p}: cannot read it with its -wal file here ({exc}); copy the journal and its "
                "-wal file to writable storage and verify the copy"
            ) from exc
        if os.access(p.parent, os.W_OK):
            raise JournalError(f"{p}: cannot open: {exc}") from exc
        conn = sqlite3.connect(
            f"file:{quoted}?immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )
    except sqlite3.DatabaseError:
        pass  # not a database: verify reports it from the first statement
    # A damaged page may hold bytes that are not UTF-8: decode them with U+FFFD so the row is
    # still reported (its hash no longer matches) instead of stopping the audit.
    conn.text_factory = _decode_text
    return conn


def _decode_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def journal_mode(conn: sqlite3.Connection) -> str | None:
    """Whether the journal on ``conn`` is a ``"live"`` or a ``"training"`` journal: its
    ``meta.mode`` row, or for a journal made before that row, its first entry's ``training``
    flag (a simulated table's power_up says so); None for a journal without either (empty).
    Reads two rows: the same cost for any length."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'mode'").fetchone()
    if row is not None:
        return str(row[0])
    first = conn.execute("SELECT data FROM journal WHERE seq = 1").fetchone()
    if first is None:
        return None
    try:
        data = json.loads(first[0])
    except (TypeError, ValueError):
        return None
    return "training" if isinstance(data, dict) and data.get("training") is True else "live"


def recorded_mode(path: str | Path) -> str | None:
    """`journal_mode` of the journal file at ``path``, read-only; None when there is no file or
    it is not a readable journal of ours (the writer then says what is wrong)."""
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return None
    try:
        conn = connect_read_only(p)
    except (JournalError, sqlite3.Error):
        return None
    try:
        if schema_problems(conn):
            return None
        return journal_mode(conn)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def is_empty_database(conn: sqlite3.Connection) -> bool:
    """True for an SQLite file that holds nothing at all: no table, index or trigger, no
    application_id, no user_version. A power cut during a journal's very first power-up leaves
    one (the switch to WAL mode was synced, the schema's transaction was not): it is a journal
    never written, to be created like a missing file, not "another program's file"."""
    return bool(
        conn.execute("PRAGMA application_id").fetchone()[0] == 0
        and conn.execute("PRAGMA user_version").fetchone()[0] == 0
        and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    )


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
    """Streams the journal rows once, checking seq, prev_hash (seq 1: the genesis hash of the
    meta rows), hash, MAC and data as it goes, and yields the decodable entries (to the replay,
    or to nobody). An unreadable row is named, and the walk resumes at the next readable seq."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        problems: _Problems,
        genesis: str,
        key: bytes | None,
        keyed: bool,
        chain: SealChain | None = None,
    ) -> None:
        self.conn = conn
        self.problems = problems
        self.genesis = genesis
        self.key = key
        self.keyed = keyed
        self.chain = chain  # forward-secure seals, re-derived from the verification key
        self.bad_seals = 0
        self.entries = 0
        self.rounds = 0
        self.last_seq = 0
        self.last_hash = genesis
        #: the seq the stored state reflects (set before the walk), and that entry's hash, state
        #: hash and the rounds completed up to it, once walked
        self.state_at: int | None = None
        self.at: tuple[str, str, int] | None = None
        self.power_ups: list[dict[str, JSON]] = []
        self.damaged = False
        self._rows = self._walk()

    def __iter__(self) -> Iterator[Entry]:
        """The one pass over the rows: iterating again resumes it, never restarts it."""
        return self._rows

    def _walk(self) -> Iterator[Entry]:
        cursor = self.conn.execute(_ROWS)
        floor = 1  # the walk always moves on: never probes below a seq it resumed at
        while True:
            try:
                row = cursor.fetchone()
            except sqlite3.Error as exc:
                self.damaged = True
                resume = self._probe(exc, max(self.last_seq + 1, floor))
                if resume is None:
                    return
                floor = resume + 1
                cursor = self.conn.execute(_ROWS_FROM, (resume,))
                continue
            if row is None:
                return
            entry = self._check(*row)
            if entry is not None:
                yield entry

    def _probe(self, exc: sqlite3.Error, first: int) -> int | None:
        """Name the unreadable seqs from ``first`` and find where reading can resume."""
        for seq in range(first, first + PROBE_LIMIT):
            try:
                row = self.conn.execute("SELECT seq FROM journal WHERE seq = ?", (seq,)).fetchone()
            except sqlite3.Error:
                continue
            if row is None:
                try:
                    more = self.conn.execute(
                        "SELECT min(seq) FROM journal WHERE seq > ?", (seq,)
                    ).fetchone()
                except sqlite3.Error:
                    more = None
                if more is None or more[0] is None:
                    self.problems.add(
                        f"seq {first} onward cannot be read (damaged page: {exc}); the journal "
                        f"ends there"
                    )
                    return None
                seq = int(more[0])
            if seq > first:
                self.problems.add(f"seqs {first}..{seq - 1} cannot be read (damaged page: {exc})")
            else:
                self.problems.add(f"cannot read the entry after seq {self.last_seq}: {exc}")
            return seq
        self.problems.add(f"seq {first} onward cannot be read (damaged page: {exc})")
        return None

    def _check(
        self,
        seq: int,
        ts_ms: int,
        round_id: int | None,
        type_: str,
        data: str,
        prev: str,
        digest: str,
        s_hash: str,
        mac: str,
    ) -> Entry | None:
        problems = self.problems
        add = problems.add
        self.entries += 1
        if seq != self.last_seq + 1:
            add(f"gap after seq {self.last_seq}: next entry is seq {seq}")
            problems.at(self.last_seq + 1)
        if prev != self.last_hash:
            problems.at(seq)
            if seq == 1:
                add("seq 1: prev_hash is not the genesis hash of the meta rows (meta edited)")
            else:
                add(f"seq {seq}: prev_hash does not match the hash of seq {self.last_seq}")
        try:
            computed: str | None = entry_hash(seq, ts_ms, round_id, type_, data, prev, s_hash)
        except Exception as exc:  # a column of the wrong type (STRICT removed by hand)
            add(f"seq {seq}: cannot recompute hash: {exc}")
            problems.at(seq)
            computed = None
        if computed is not None and computed != digest:
            add(f"seq {seq}: hash mismatch (stored {digest}, computed {computed})")
            problems.at(seq)
        if self.chain is not None and isinstance(seq, int) and isinstance(digest, str):
            expected = self.chain.seal_of(seq, digest)
            if expected is None or not (
                isinstance(mac, str) and hmac.compare_digest(mac, expected)
            ):
                self.bad_seals += 1
                problems.at(seq)
                if self.bad_seals == 1:
                    add(
                        f"seq {seq}: seal does not match: the entry was altered, or re-sealed "
                        "without its key (forward-secure seals, docs/journal.md)"
                    )
        if not self.keyed and mac != "":
            add(f"seq {seq}: a MAC in an unkeyed journal (mac column edited)")
        elif self.keyed and not (isinstance(mac, str) and len(mac) == 64):
            add(f"seq {seq}: keyed chain: MAC missing or malformed")
            problems.at(seq)
        if self.key is not None and not (
            isinstance(mac, str)
            and isinstance(digest, str)
            and hmac.compare_digest(mac, entry_mac(self.key, digest))
        ):
            add(f"seq {seq}: keyed chain: MAC does not match (rewritten without the key)")
            problems.at(seq)
        self.last_seq, self.last_hash = seq, digest
        try:
            obj = decode_object(data, f"seq {seq}: data")
            if canonical_json(obj, f"seq {seq}: data") != data:
                add(f"seq {seq}: data is not in canonical JSON form")
                problems.at(seq)
        except (ValueError, TypeError) as exc:
            add(str(exc))
            problems.at(seq)
            return None
        if completes_a_round(type_, obj):
            self.rounds += 1
        if seq == self.state_at:
            self.at = (digest, s_hash, self.rounds)
        if type_ == "power_up":
            self.power_ups.append(
                {"seq": seq, "ts": ts_ms, "software_hash": obj.get("software_hash")}
                | ({"training": True} if obj.get("training") is True else {})
                | ({"unapproved_bench": True} if obj.get("unapproved_bench") is True else {})
            )
        return Entry(seq, ts_ms, round_id, type_, obj, prev, digest, s_hash, mac)


def _normal(value: JSON) -> JSON:
    """JSON round trip, so tuples and lists (or int keys and str keys) compare as stored."""
    return json.loads(canonical_json(value, "replay result"))


@dataclass
class _Stored:
    """The state row and meters as stored (None where missing or undecodable)."""

    seq: int | None = None
    hash: str | None = None
    rounds: int | None = None
    snapshot_text: str | None = None
    meter_rows: dict[str, str] | None = None


def _read_state(conn: sqlite3.Connection, problems: _Problems) -> _Stored:
    stored = _Stored()
    row = conn.execute("SELECT seq, hash, rounds, snapshot FROM state WHERE id = 1").fetchone()
    if row is not None:
        stored.seq, stored.hash, stored.rounds = row[0], row[1], row[2]
        text = row[3]
        if isinstance(text, str):
            text = stored_snapshot_text(text)
            if len(row[3]) - len(text) >= STATE_PAD:
                problems.add(
                    f"stored state snapshot: padded with {len(row[3]) - len(text)} spaces, "
                    f"more than the {STATE_PAD - 1} the writer adds"
                )
        if _decode_canonical(text, "stored state snapshot", problems) is not None:
            stored.snapshot_text = text
    rows: dict[str, str] = {}
    for level, values in conn.execute('SELECT level, "values" FROM meters ORDER BY level'):
        if _decode_canonical(values, f"meter level {level!r}", problems) is None:
            return stored
        rows[str(level)] = values
    stored.meter_rows = rows
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
    """The state row must reflect an entry at most `STATE_ENTRIES` before the chain's end (the
    owner stores it once a round) and its hash, and the stored snapshot, meters and round count
    must be the ones that entry's state hash records (the replay checks the entries after it)."""
    if stored.seq is None:
        if walk.entries:
            problems.add(f"stored state is missing but the journal ends at seq {walk.last_seq}")
        elif stored.meter_rows:
            problems.add("meters are stored but the journal has no entry")
        return
    # written once a round by the owner (issue 29): it may trail the end by STATE_ENTRIES
    if not walk.last_seq - STATE_ENTRIES <= stored.seq <= walk.last_seq or walk.at is None:
        problems.add(
            f"stored state reflects seq {stored.seq} but the journal ends at seq {walk.last_seq}"
        )
        return
    at_hash, at_state_hash, at_rounds = walk.at
    if stored.hash != at_hash:
        problems.add(f"stored state hash does not match the hash of seq {stored.seq}")
    if stored.rounds != at_rounds:
        problems.add(
            f"stored round count is {stored.rounds} but the journal holds {at_rounds} rounds"
            + ("" if stored.seq == walk.last_seq else f" up to seq {stored.seq}")
        )
    if stored.snapshot_text is not None and stored.meter_rows is not None:
        try:
            computed = state_hash(
                stored.snapshot_text, meters_json(stored.meter_rows), int(stored.rounds or 0)
            )
        except (TypeError, ValueError) as exc:
            problems.add(f"stored state: cannot hash it: {exc}")
            return
        if computed != at_state_hash:
            problems.add(
                f"stored snapshot, meters or round count are not the state seq {stored.seq} "
                "recorded (state hash mismatch)"
            )


def _check_meta(conn: sqlite3.Connection, problems: _Problems) -> dict[str, str]:
    meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    problem = meta_keys_problem(meta)
    if problem is not None:
        problems.add(problem)
    return meta


def _recorded_config(meta: dict[str, str], problems: _Problems) -> dict[str, JSON] | None:
    try:
        value = json.loads(meta.get("config", "null"))
    except ValueError:
        problems.add("meta.config: not valid JSON")
        return None
    return value if isinstance(value, dict) else None


def _effects_json(effects: object) -> str:
    try:
        return canonical_json(_normal(effects), "effects")
    except ValueError as exc:
        return f"<not JSON: {exc}>"


def _first_difference(recorded: object, recomputed: object) -> str:
    """Where two effect lists first differ: the index, the recorded and the recomputed effect."""
    rec = recorded if isinstance(recorded, list) else [recorded]
    new = recomputed if isinstance(recomputed, list) else [recomputed]
    for i in range(max(len(rec), len(new))):
        a = _effects_json(rec[i]) if i < len(rec) else "(none)"
        b = _effects_json(new[i]) if i < len(new) else "(none)"
        if a != b:
            return f"effect {i}: recorded {a[:400]}, recomputed {b[:400]}"
    return f"recorded {_effects_json(recorded)[:400]}, recomputed {_effects_json(recomputed)[:400]}"


class _ReplayCheck:
    """Re-runs every entry through the round machine and compares, entry by entry, the
    recomputed effects with the recorded ones and the recomputed state with the entry's state
    hash; names the first differing seq."""

    def __init__(self, replayer: Replayer, problems: _Problems) -> None:
        self.replayer = replayer
        self.problems = problems
        self.rounds = 0
        self.effect_diffs = 0
        self.state_diffs = 0

    def feed(self, entries: Iterator[Entry]) -> None:
        for entry in entries:
            recorded = entry.data.get("effects", [])
            try:
                recomputed = self.replayer.step(entry)
            except Exception as exc:
                self.problems.at(entry.seq)
                self.problems.add(
                    f"replay failed at seq {entry.seq} ({entry.type}): {type(exc).__name__}: {exc}"
                )
                return
            if completes_a_round(entry.type, entry.data):
                self.rounds += 1
            rec, new = _effects_json(recorded), _effects_json(recomputed)
            if rec != new:
                self.effect_diffs += 1
                self.problems.at(entry.seq)
                if self.effect_diffs == 1:
                    self.problems.add(
                        f"seq {entry.seq} ({entry.type}): recorded effects differ from the "
                        f"replay: {_first_difference(recorded, recomputed)}"
                    )
            snap = canonical_json(_normal(self.replayer.snapshot()), "replayed snapshot")
            meters = canonical_json(_normal(self.replayer.meters()), "replayed meters")
            if state_hash(snap, meters, self.rounds) != entry.state_hash:
                self.state_diffs += 1
                self.problems.at(entry.seq)
                if self.state_diffs == 1:
                    self.problems.add(
                        f"seq {entry.seq} ({entry.type}): the state it recorded is not the state "
                        "the replay reaches (state hash mismatch)"
                    )

    def finish(self) -> None:
        if self.effect_diffs > 1:
            self.problems.add(f"replay: {self.effect_diffs} entries in all with differing effects")
        if self.state_diffs > 1:
            self.problems.add(f"replay: {self.state_diffs} entries in all with a differing state")


def _read_anchor(anchor_path: Path, problems: _Problems) -> AnchorRecord | bool | None:
    """The anchor, read BEFORE the journal's read transaction starts: the owner writes it just
    after each commit, so on a live journal the anchor read first is never ahead of the journal
    read next. False: unreadable (reported)."""
    try:
        return read_anchor(anchor_path)
    except AnchorError as exc:
        problems.add(str(exc))
        return False


def _check_anchor(
    anchor_path: Path,
    record: AnchorRecord | None,
    walk: _Walk,
    key: bytes | None,
    problems: _Problems,
    notes: list[str],
) -> None:
    if record is None:
        if walk.entries:
            problems.add(
                f"anchor {anchor_path} not found: vanished entries at the end cannot be ruled "
                "out (give --anchor PATH, or --no-anchor to check without it)"
            )
        return
    if key is not None and not hmac.compare_digest(
        record.mac, anchor_mac(key, record.seq, record.hash, record.acked)
    ):
        problems.add(f"anchor {anchor_path}: MAC does not match (anchor forged)")

    def hash_at(seq: int) -> str | None:
        if seq == walk.last_seq:
            return walk.last_hash
        row = walk.conn.execute("SELECT hash FROM journal WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else str(row[0])

    verdict = judge(record, walk.last_seq, hash_at)
    if verdict.vanished:
        problems.add(
            f"the journal ends at seq {walk.last_seq} but its anchor {anchor_path} records seq "
            f"{record.seq}: {verdict.vanished} committed entries have vanished"
        )
        return
    if verdict.in_flight:
        notes.append(
            f"anchor {anchor_path}: seq {record.seq} was being committed when the anchor was "
            f"last written and is not in the journal (never acknowledged; the journal ends at "
            f"seq {walk.last_seq})"
        )
        return
    if record.seq and record.seq < walk.last_seq:
        notes.append(
            f"anchor {anchor_path} is at seq {record.seq}, the journal at seq {walk.last_seq} "
            "(a live journal, or a stop just after a commit; it catches up at the next start)"
        )
    if verdict.mismatch:
        problems.add(
            f"seq {record.seq}: hash differs from the one its anchor {anchor_path} records: "
            "the journal was rewritten or replaced"
        )


def _check_expected_head(
    conn: sqlite3.Connection, walk: _Walk, expected: tuple[int, str], problems: _Problems
) -> None:
    seq, digest = expected
    row = conn.execute("SELECT hash FROM journal WHERE seq = ?", (seq,)).fetchone()
    if row is None:
        problems.add(
            f"the signed head seq {seq} is not in the journal, which ends at seq "
            f"{walk.last_seq}: entries vanished (rolled back, cut short or replaced)"
        )
        problems.at(walk.last_seq + 1)
    elif str(row[0]) != digest:
        problems.add(
            f"seq {seq}: hash {row[0]} is not the signed head's {digest}: the journal was "
            "rewritten or replaced since the head was signed"
        )
        problems.at(seq)


def verify(
    path: str | Path,
    replay: ReplayFactory | None = None,
    *,
    max_problems: int = 1000,
    anchor: str | Path | None = None,
    use_anchor: bool = True,
    key: bytes | None = None,
    verify_key: bytes | None = None,
    expect_head: tuple[int, str] | None = None,
) -> VerifyReport:
    """Check the journal file at ``path``; never raises for a bad file, reports problems instead.

    Checks: SQLite ``PRAGMA integrity_check`` (page numbers as SQLite gives them); that it is
    our journal (application_id, schema version, STRICT tables, the append-only triggers); the
    meta rows against the genesis hash seq 1 chains to; seq gapless from 1; each prev_hash; each
    hash recomputed (and with ``key``, each MAC of the keyed chain); data in canonical JSON; the
    stored state, meters and round count against the last entry's state hash; the anchor
    (``anchor``, default beside the journal) not ahead of the journal and agreeing with it; and,
    with ``replay``, every entry re-run through the round machine from the journal's own
    configuration, its effects and state compared entry by entry. The replay is skipped when the
    file or its schema is damaged (its differences would be noise).

    ``verify_key`` (the verification key `setup-keys` printed): every entry's forward-secure seal
    is checked against the key chain re-derived from it; a journal that is not sealed is then a
    problem (made without seals, or re-forged without them). Without it a sealed journal's seals
    are not checked (a note says so).

    ``expect_head`` (seq, hash): a head signed earlier (the shift report's paper witness, or the
    centre's witnessed head): the journal must still hold that entry with that hash.
    """
    problems = _Problems(max_problems)
    notes: list[str] = []
    walk: _Walk | None = None
    anchor_path = Path(anchor) if anchor is not None else default_anchor_path(path)
    record = _read_anchor(anchor_path, problems) if use_anchor else False
    try:
        conn = connect_read_only(path)
    except (JournalError, sqlite3.Error) as exc:
        return VerifyReport(False, 0, 0, [str(exc)])
    stage = "running integrity_check"
    try:
        # One read transaction: every check sees the same snapshot of a journal that may be live
        # (WAL lets the owner go on appending meanwhile).
        conn.execute("BEGIN")
        try:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc) or "file is encrypted" in str(exc):
                raise
            rows = [(f"stopped: {exc} (the rows that can be read are checked below)",)]
        damaged = rows != [("ok",)]
        if damaged:
            for (message,) in rows:
                problems.add(f"integrity_check: {message}")
        stage = "checking the schema"
        schema = schema_problems(conn)
        for problem in schema:
            problems.add(problem)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        foreign = any(p.startswith("not a pai gow table journal") for p in schema)
        if not foreign and {"journal", "state", "meters", "meta"} <= tables:
            stage = "reading the meta rows"
            meta = _check_meta(conn, problems)
            stored_key = meta.get("key_id", "")
            sealed = stored_key.startswith(SEAL_PREFIX)
            chain = None if verify_key is None else SealChain(verify_key)
            if chain is not None and not sealed:
                problems.add(
                    f"the journal is not sealed (key id {stored_key or 'none'}) but a "
                    "verification key was given: a journal made without seals, or re-forged "
                    "without them (downgraded)"
                )
                problems.at(1)
                chain = None
            elif chain is not None and stored_key != SEAL_PREFIX + chain.id:
                problems.add(
                    f"the verification key given ({SEAL_PREFIX}{chain.id}) is not the "
                    f"journal's ({stored_key})"
                )
                problems.at(1)
                chain = None
            elif chain is None and sealed:
                notes.append(
                    f"forward-secure seals ({stored_key}) not checked: no --verify-key given"
                )
            if sealed and key is not None:
                problems.add("the journal is sealed: a static key (--key-file) does not apply")
            elif key is not None and stored_key != key_id(key):
                problems.add(
                    f"the key given (id {key_id(key)}) is not the journal's "
                    f"({stored_key or 'unkeyed journal'})"
                )
            elif key is None and stored_key and not sealed:
                notes.append(f"keyed chain (key id {stored_key}) not checked: no key given")
            stage = "reading the journal"
            walk = _Walk(
                conn, problems, genesis_hash(meta), None if sealed else key, bool(stored_key), chain
            )
            stored = _read_state(conn, problems)
            walk.state_at = stored.seq
            if replay is not None and not (damaged or schema):
                check = _ReplayCheck(replay(_recorded_config(meta, problems)), problems)
                check.feed(iter(walk))
                check.finish()
            elif replay is not None:
                notes.append("replay not run: the file or its schema is damaged")
            for _ in walk:  # whatever the replay did not consume
                pass
            if walk.bad_seals > 1:
                problems.add(f"seals: {walk.bad_seals} entries in all with a bad seal")
            if expect_head is not None:
                _check_expected_head(conn, walk, expect_head, problems)
            _check_head(stored, walk, problems)
            if use_anchor:
                if record is not False:
                    assert not isinstance(record, bool)
                    _check_anchor(anchor_path, record, walk, key, problems, notes)
            else:
                notes.append(
                    "anchor not checked (--no-anchor): vanished entries at the end "
                    "cannot be ruled out"
                )
    except sqlite3.Error as exc:
        problems.add(f"sqlite error while {stage}: {exc}")
    except Exception as exc:  # the report must come back whatever the file holds
        problems.add(f"unexpected error while verifying: {type(exc).__name__}: {exc}")
    finally:
        conn.close()
    entries = walk.entries if walk else 0
    rounds = walk.rounds if walk else 0
    result = problems.result()
    return VerifyReport(
        not result,
        entries,
        rounds,
        result,
        walk.power_ups if walk else [],
        notes,
        first_bad_seq=problems.first_seq if result else None,
        head_seq=walk.last_seq if walk else 0,
        head_hash=walk.last_hash if walk and walk.last_seq else "",
    )


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
            seq, ts_ms, round_id, type_, data, prev, digest, s_hash, mac = row
            entry = _entry(row) if writer is None or redactor is not None else None
            hidden = redactor.redact(entry) if redactor is not None and entry else None
            if writer is not None:
                text = data if hidden is None else canonical_json(hidden, "redacted data")
                writer.writerow(
                    (
                        seq,
                        ts_ms,
                        "" if round_id is None else round_id,
                        type_,
                        text,
                        prev,
                        s_hash,
                        digest,
                        mac,
                    )
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


def _entry(row: tuple[int, int, int | None, str, str, str, str, str, str]) -> Entry:
    seq, ts_ms, round_id, type_, data, prev, digest, s_hash, mac = row
    obj = decode_object(data, f"seq {seq}: data")
    return Entry(seq, ts_ms, round_id, type_, obj, prev, digest, s_hash, mac)
