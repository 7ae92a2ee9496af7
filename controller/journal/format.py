"""The journal's file format: schema, pragmas, canonical JSON and the entry hash.

Shared by the writer (`controller.journal.store`) and the auditors (`controller.journal.audit`) so
both compute the hashes (entry, state, genesis, keyed MAC) from one definition.
Pure definitions and small helpers: this module must never open a database or write a file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import marshal
from _json import make_encoder as c_make_encoder  # what json.JSONEncoder.encode calls
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from functools import cached_property
from json.encoder import encode_basestring_ascii
from typing import Any

JSON = Any

SCHEMA_VERSION = 2
# PRAGMA application_id: "PGJ1" (pai gow journal) in the SQLite header, so a file that is not
# ours is told apart before any table is read.
APPLICATION_ID = 0x50474A31
#: The ``meta`` keys every journal has; all of them are covered by the genesis hash.
META_KEYS = ("asset_number", "config", "created", "key_id", "schema_version", "table_id")
#: ``meta.mode``: "live" or "training", recorded at creation (journals made before it have no
#: such row: their first power_up's ``training`` flag says which they are).
MODES = ("live", "training")
META_KEYS_WITH_MODE = tuple(sorted((*META_KEYS, "mode")))


def meta_keys_problem(meta: Mapping[str, str]) -> str | None:
    """Why the ``meta`` rows are not a journal's (None: they are)."""
    keys = tuple(sorted(meta))
    if keys not in (META_KEYS, META_KEYS_WITH_MODE):
        return f"meta holds keys {list(keys)}, expected {list(META_KEYS)} (and mode)"
    if "mode" in meta and meta["mode"] not in MODES:
        return f"meta.mode is {meta['mode']!r}, expected 'live' or 'training'"
    return None


ROUND_COMPLETED = "round_completed"
#: A journal opened with ``state_per_round`` (the owner's) writes its state row and meters when
#: an entry completes a round and at least every STATE_ENTRIES entries (issue 29: the snapshot
#: rewritten with every entry was half of the card's bytes); power-up and verify accept a stored
#: state at most this many entries behind the journal's end (the rest is replayed and checked
#: against each entry's state hash).
STATE_ENTRIES = 16


#: The state row keeps one size from round to round: its snapshot (canonical JSON, about 2.3 KB,
#: on overflow pages) is stored followed by spaces up to a multiple of STATE_PAD bytes. SQLite
#: rewrites a row of the same size in place, writing only the pages whose bytes changed; a row of
#: another size is deleted and inserted anew, its overflow pages freed and taken again (issue 29:
#: about a sixth of the card's bytes). The padding is nothing but fewer than STATE_PAD spaces
#: (`stored_snapshot_text`; verify names anything else); the state hash covers the JSON only.
STATE_PAD = 1024


def padded_snapshot(text: str) -> str:
    """The state row's stored snapshot of the canonical JSON ``text``."""
    return text + " " * (-len(text) % STATE_PAD)


def stored_snapshot_text(stored: str) -> str:
    """The canonical JSON of a stored snapshot: its padding (`STATE_PAD`) taken off. A journal
    made before the padding stores none."""
    return stored.rstrip(" ")


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
    state_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    mac TEXT NOT NULL
) STRICT
""",
    """
CREATE TABLE state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    rounds INTEGER NOT NULL,
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
  OR (NEW.seq > 1 AND NEW.prev_hash IS NOT (SELECT hash FROM journal WHERE seq = NEW.seq - 1))
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
        ("state_hash", "TEXT", True, False),
        ("hash", "TEXT", True, False),
        ("mac", "TEXT", True, False),
    ],
    "state": [
        ("id", "INTEGER", False, True),
        ("seq", "INTEGER", True, False),
        ("hash", "TEXT", True, False),
        ("rounds", "INTEGER", True, False),
        ("snapshot", "TEXT", True, False),
    ],
    "meters": [("level", "TEXT", True, True), ("values", "TEXT", True, False)],
}
EXPECTED_TRIGGERS = ("journal_no_update", "journal_no_delete", "journal_append_only")


class JournalError(Exception):
    """The file cannot be used as our journal, or an append was refused; the message says why."""


class StorageFault(JournalError):
    """The journal cannot be trusted at power-up (damaged, behind its anchor, a stored state the
    chain does not vouch for): play is refused until a restart passes the storage check."""


def canonical_json(value: JSON, what: str) -> str:
    """Encode ``value`` canonically; raise ``ValueError`` naming ``what`` if it is not JSON-able
    (a set, bytes, NaN, a non-string key ...)."""
    try:
        return _CANONICAL.encode(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: not JSON-serialisable: {exc}") from exc


class CanonicalWriter:
    """`canonical_json` for the journal's writer, which encodes much the same snapshot on every
    append: the same bytes, for less work. One instance per writer (not thread-safe).

    It keeps one instance of the C encoder that ``json.JSONEncoder.encode`` builds on each call
    (the same arguments as `_CANONICAL`, so the same output), and in `encode_object` it reuses the
    text of each top-level list or dict value that is the same as in the previous call under its
    key. "The same" is decided on ``marshal.dumps(value, 2)``: equal bytes mean equal types and
    values all the way down (``True`` is not ``1``, ``1`` is not ``1.0``, ``-0.0`` is not
    ``0.0``, a tuple is not a list), where ``==`` would call them equal and the text would
    differ; a value marshal refuses (a subclass, a foreign type) is simply encoded.
    ``tests/test_journal_props.py`` checks both against `canonical_json` on random values.
    """

    def __init__(self) -> None:
        self._fresh()
        self._keys: dict[str, str] = {}  # key -> its encoding and the colon
        self._parts: dict[str, tuple[bytes, str]] = {}  # key -> (marshal of value, '"key":text')
        self._calls = 0

    def _fresh(self) -> None:
        # A fresh instance after any failure: the encoder's cycle markers may be left filled.
        self._c = c_make_encoder(
            {}, _not_json, encode_basestring_ascii, None, ":", ",", True, False, False
        )

    def encode(self, value: JSON, what: str) -> str:
        """`canonical_json` (the same text, the same ``ValueError``)."""
        if type(value) is str:
            return encode_basestring_ascii(value)
        try:
            return "".join(self._c(value, 0))
        except (TypeError, ValueError) as exc:
            self._fresh()
            raise ValueError(f"{what}: not JSON-serialisable: {exc}") from exc
        except BaseException:
            self._fresh()
            raise

    def encode_object(self, value: Mapping[str, JSON], what: str) -> str:
        """`canonical_json` of a JSON object with string keys (`check_json_object`).

        An object's canonical text is its members' ``"key":value`` texts in key order, so each
        run of consecutive members that are not reused is encoded as one sub-object (its braces
        dropped) between the reused parts: one C call per run, not one Python step per member."""
        if type(value) is not dict:
            return self.encode(value, what)
        parts = self._parts
        self._calls += 1
        if len(parts) > 4096 or self._calls % _RELEARN_EVERY == 0:
            parts.clear()  # sizes are learnt again (a value first seen small may have grown)
        out: list[str] = []
        run: dict[str, JSON] = {}
        for key in sorted(value):
            item = value[key]
            kind = type(item)
            if not ((kind is list or kind is dict) and item):
                run[key] = item
                continue
            known = parts.get(key)
            if known is _SMALL:  # encoding it costs less than telling it is unchanged
                run[key] = item
                continue
            if run:  # first: a value that cannot be encoded is named in key order
                out.append(self.encode(run, what)[1:-1])
                run = {}
            try:
                fingerprint: bytes | None = marshal.dumps(item, 2)
            except ValueError:  # not marshal's own types all the way down: no reuse
                fingerprint = None
            if known is not None and known[0] == fingerprint:
                part = known[1]
            else:
                part = self._key(self._keys, key) + self.encode(item, what)
                if fingerprint is not None:
                    parts[key] = (fingerprint, part) if len(part) >= _REUSE_FROM else _SMALL
            out.append(part)
        if not out:
            return self.encode(run, what)
        if run:
            out.append(self.encode(run, what)[1:-1])
        return "{" + ",".join(out) + "}"

    @staticmethod
    def _key(keys: dict[str, str], key: str) -> str:
        text = keys.get(key)
        if text is None:
            if len(keys) > 4096:
                keys.clear()
            text = keys[key] = encode_basestring_ascii(key) + ":"
        return text


#: A key whose container value encodes shorter than this (in characters) is not fingerprinted
#: again: marshal and compare would cost about what encoding it does.
_REUSE_FROM = 160
#: Every so many calls the sizes are learnt again: a value first seen small may have grown.
_RELEARN_EVERY = 1024
_SMALL: tuple[bytes, str] = (b"", "")


def _not_json(value: object) -> None:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def hash_preimage(
    seq: int,
    ts_ms: int,
    round_id: int | None,
    type_: str,
    data_json: str,
    prev_hash: str,
    state_hash: str,
) -> str:
    """The exact text hashed for one entry: the canonical JSON array
    ``[seq, ts_ms, round_id, type, data, prev_hash, state_hash]``.

    ``data_json`` is the entry's stored data text (already canonical), spliced in verbatim: the
    result equals ``canonical_json([seq, ts_ms, round_id, type, data, prev_hash, state_hash])``
    without re-encoding data, and any change to the stored bytes changes the hash.
    """
    round_text = "null" if round_id is None else str(round_id)
    return (
        f"[{seq},{ts_ms},{round_text},{_string(type_)},{data_json},"
        f"{_string(prev_hash)},{_string(state_hash)}]"
    )


def _string(value: str) -> str:
    """``_CANONICAL.encode(value)``: for a str that is `encode_basestring_ascii` itself."""
    return encode_basestring_ascii(value) if type(value) is str else _CANONICAL.encode(value)


def entry_hash(
    seq: int,
    ts_ms: int,
    round_id: int | None,
    type_: str,
    data_json: str,
    prev_hash: str,
    state_hash: str,
) -> str:
    """SHA-256 hex of the UTF-8 (here: ASCII) bytes of `hash_preimage`."""
    text = hash_preimage(seq, ts_ms, round_id, type_, data_json, prev_hash, state_hash)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def meters_json(rows: Mapping[str, str]) -> str:
    """The canonical JSON object of the stored meter rows (level -> stored canonical values
    text), spliced without re-encoding: equal to ``canonical_json({level: values, ...})``."""
    return "{" + ",".join(f"{_string(k)}:{rows[k]}" for k in sorted(rows)) + "}"


def state_hash(snapshot_json: str, meters_text: str, rounds: int) -> str:
    """SHA-256 hex of the state an entry leaves behind: the canonical JSON object
    ``{"meters": meters, "rounds": rounds, "snapshot": snapshot}`` (stored texts spliced in).
    Each entry carries it, and its hash covers it: the stored snapshot, meters and round count
    are vouched for by the chain."""
    text = f'{{"meters":{meters_text},"rounds":{int(rounds)},"snapshot":{snapshot_json}}}'
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def genesis_hash(meta: Mapping[str, str]) -> str:
    """The prev_hash of seq 1: SHA-256 hex of the canonical JSON object of every ``meta`` row
    (identity, configuration, schema, key id). An edit of any meta row breaks seq 1."""
    return hashlib.sha256(_CANONICAL.encode(dict(meta)).encode("utf-8")).hexdigest()


def entry_mac(key: bytes, digest: str) -> str:
    """The keyed chain: HMAC-SHA256 (hex) of an entry's hash under the table's key. The hash
    covers the previous hash, so each MAC vouches for the whole history up to its entry."""
    return hmac.new(key, digest.encode("ascii"), hashlib.sha256).hexdigest()


def key_id(key: bytes) -> str:
    """Names a key without revealing it (first 16 hex digits of its SHA-256)."""
    return hashlib.sha256(b"paigow-journal-key:" + key).hexdigest()[:16]


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
    state_hash: str = ""
    mac: str = ""

    def to_json(self) -> dict[str, JSON]:
        """The entry as exported: ``seq, ts, round, type, data, prev_hash, state_hash, hash,
        mac``."""
        return {
            "seq": self.seq,
            "ts": self.ts_ms,
            "round": self.round_id,
            "type": self.type,
            "data": self.data,
            "prev_hash": self.prev_hash,
            "state_hash": self.state_hash,
            "hash": self.hash,
            "mac": self.mac,
        }


class AppendedEntry(Entry):
    """The entry `Journal.append` returns: ``data`` is decoded from the stored text on first
    use (most callers read only the seq and hash; decoding ~1 KB of JSON on every append was
    a measurable part of its cost). Equal to the `Entry` with the decoded data; immutable."""

    def __init__(
        self,
        seq: int,
        ts_ms: int,
        round_id: int | None,
        type: str,
        data_json: str,
        prev_hash: str,
        hash: str,
        state_hash: str = "",
        mac: str = "",
    ) -> None:
        fields = (seq, ts_ms, round_id, type, prev_hash, hash, state_hash, mac)
        for name, value in zip(_ENTRY_FIELDS_BUT_DATA, fields, strict=True):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_data_json", data_json)

    @cached_property
    def data(self) -> dict[str, JSON]:
        return decode_object(self.__dict__["_data_json"], f"seq {self.seq}: data")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _ENTRY_FIELDS)

    __hash__ = None  # type: ignore[assignment]


_ENTRY_FIELDS = tuple(f.name for f in dataclass_fields(Entry))
_ENTRY_FIELDS_BUT_DATA = tuple(f for f in _ENTRY_FIELDS if f != "data")


@dataclass(frozen=True)
class StoredState:
    """The latest snapshot as stored beside the journal: read without replaying anything."""

    seq: int
    snapshot: dict[str, JSON]
    meters: dict[str, dict[str, JSON]]
    hash: str
    rounds: int = 0


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
