"""The journal's file format: schema, pragmas, canonical JSON and the entry hash.

Shared by the writer (`controller.journal.store`) and the auditors (`controller.journal.audit`) so
both
compute the hash from one definition. Pure definitions and small helpers: this module must never
open a database or write a file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

JSON = Any

SCHEMA_VERSION = 1
# PRAGMA application_id: "PGJ1" (pai gow journal, format 1) in the SQLite header, so a file that
# is not ours is told apart before any table is read.
APPLICATION_ID = 0x50474A31
GENESIS_HASH = "0" * 64
ROUND_COMPLETED = "round_completed"


def completes_a_round(type_: str, data: Mapping[str, object]) -> bool:
    """True for an entry that completed a round: a ``round_completed`` the machine accepted (a
    rejected one, e.g. re-posted after a restart, completes nothing). Everything that counts
    rounds (verify, the owner, the simulator's stop rule) uses this one definition."""
    if type_ != ROUND_COMPLETED:
        return False
    effects = data.get("effects")
    return not (
        isinstance(effects, list)
        and any(isinstance(e, dict) and e.get("type") == "rejected" for e in effects)
    )


# One encoder, built once: canonical JSON = sorted keys, no whitespace, ASCII only, no NaN.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
)

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",
    "PRAGMA foreign_keys=ON",
)

SCHEMA_SQL: tuple[str, ...] = (
    """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT
""",
    """
CREATE TABLE journal (
    seq INTEGER PRIMARY KEY,
    ts_ms INTEGER NOT NULL,
    round_id INTEGER,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
) STRICT
""",
    """
CREATE TABLE state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    snapshot TEXT NOT NULL
) STRICT
""",
    """
CREATE TABLE meters (
    level TEXT PRIMARY KEY,
    "values" TEXT NOT NULL
) STRICT
""",
    """
CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal
BEGIN
    SELECT RAISE(ABORT, 'journal is append-only: UPDATE refused');
END
""",
    """
CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
BEGIN
    SELECT RAISE(ABORT, 'journal is append-only: DELETE refused');
END
""",
    """
CREATE TRIGGER journal_append_only BEFORE INSERT ON journal
WHEN NEW.seq IS NOT (SELECT coalesce(max(seq), 0) + 1 FROM journal)
  OR NEW.prev_hash IS NOT coalesce(
       (SELECT hash FROM journal WHERE seq = NEW.seq - 1),
       '0000000000000000000000000000000000000000000000000000000000000000')
BEGIN
    SELECT RAISE(ABORT, 'journal is append-only: seq must be last seq + 1, prev_hash its hash');
END
""",
)

# name -> [(column, declared type, not null, primary key)] as PRAGMA table_info reports them.
EXPECTED_COLUMNS: dict[str, list[tuple[str, str, bool, bool]]] = {
    "meta": [("key", "TEXT", True, True), ("value", "TEXT", True, False)],
    "journal": [
        ("seq", "INTEGER", False, True),
        ("ts_ms", "INTEGER", True, False),
        ("round_id", "INTEGER", False, False),
        ("type", "TEXT", True, False),
        ("data", "TEXT", True, False),
        ("prev_hash", "TEXT", True, False),
        ("hash", "TEXT", True, False),
    ],
    "state": [
        ("id", "INTEGER", False, True),
        ("seq", "INTEGER", True, False),
        ("hash", "TEXT", True, False),
        ("snapshot", "TEXT", True, False),
    ],
    "meters": [("level", "TEXT", True, True), ("values", "TEXT", True, False)],
}
EXPECTED_TRIGGERS = ("journal_no_update", "journal_no_delete", "journal_append_only")


class JournalError(Exception):
    """The file cannot be used as our journal, or an append was refused; the message says why."""


def canonical_json(value: JSON, what: str) -> str:
    """Encode ``value`` canonically; raise ``ValueError`` naming ``what`` if it is not JSON-able
    (a set, bytes, NaN, a non-string key ...)."""
    try:
        return _CANONICAL.encode(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: not JSON-serialisable: {exc}") from exc


def hash_preimage(
    seq: int, ts_ms: int, round_id: int | None, type_: str, data_json: str, prev_hash: str
) -> str:
    """The exact text hashed for one entry: the canonical JSON array
    ``[seq, ts_ms, round_id, type, data, prev_hash]``.

    ``data_json`` is the entry's stored data text (already canonical), spliced in verbatim: the
    result equals ``canonical_json([seq, ts_ms, round_id, type, data, prev_hash])`` without
    re-encoding data, and any change to the stored bytes changes the hash.
    """
    round_text = "null" if round_id is None else str(round_id)
    return (
        f"[{seq},{ts_ms},{round_text},{_CANONICAL.encode(type_)},{data_json},"
        f"{_CANONICAL.encode(prev_hash)}]"
    )


def entry_hash(
    seq: int, ts_ms: int, round_id: int | None, type_: str, data_json: str, prev_hash: str
) -> str:
    """SHA-256 hex of the UTF-8 (here: ASCII) bytes of `hash_preimage`."""
    text = hash_preimage(seq, ts_ms, round_id, type_, data_json, prev_hash)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Entry:
    """One committed journal entry. ``data`` is the decoded JSON object (do not mutate it)."""

    seq: int
    ts_ms: int
    round_id: int | None
    type: str
    data: dict[str, JSON]
    prev_hash: str
    hash: str

    def to_json(self) -> dict[str, JSON]:
        """The entry as exported: ``seq, ts, round, type, data, prev_hash, hash``."""
        return {
            "seq": self.seq,
            "ts": self.ts_ms,
            "round": self.round_id,
            "type": self.type,
            "data": self.data,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


@dataclass(frozen=True)
class StoredState:
    """The latest snapshot as stored beside the journal: read without replaying anything."""

    seq: int
    snapshot: dict[str, JSON]
    meters: dict[str, dict[str, JSON]]
    hash: str


def decode_object(text: str, what: str) -> dict[str, JSON]:
    """Decode stored JSON text that must be an object; ``ValueError`` naming ``what`` if not."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{what}: not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise ValueError(f"{what}: not a JSON object")
    return value


def check_json_object(value: object, what: str) -> Mapping[str, JSON]:
    """``value`` itself must be a mapping with string keys (a JSON object)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{what}: must be a JSON object (a dict), got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise ValueError(f"{what}: key {key!r} is not a string")
    return value
