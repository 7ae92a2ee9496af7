"""Property tests of the journal's tamper evidence on real SQLite files (hypothesis).

Any sequence of appends verifies; any single-byte change to any stored column of the journal, the
state row or the meters is reported by `verify` (the record of every progressive wager and payout
must not change unnoticed: NJ 13:69D-1.52(f); a storage fault must be detected: NJ
13:69E-1.39B(d)). The append-only triggers are dropped for the edit and put back afterwards, so
only the edit itself can give the tampering away.
"""

from __future__ import annotations

import math
import sqlite3
import string
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from controller.journal import format as journal_format
from controller.journal.format import SCHEMA_SQL, CanonicalWriter, canonical_json
from controller.journal.store import Entry, Journal, verify

TYPES = ("chip_detected", "lockout_pressed", "round_completed", "fault_raised", "rng_drawn")

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
events = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2**62),
        st.none() | st.integers(min_value=0, max_value=2**40),
        st.sampled_from(TYPES),
        st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    ),
    min_size=1,
    max_size=12,
)


class ToyReplayer:
    """Stand-in for the round machine: the snapshot follows the number and types of events; its
    recomputed effects are the recorded ones."""

    def __init__(self, config: object = None) -> None:
        self.count = 0
        self.rounds = 0
        self.last = ""

    def step(self, entry: Entry) -> list[Any]:
        self.count += 1
        self.rounds += entry.type == "round_completed"
        self.last = entry.type
        return list(entry.data.get("effects", []))

    def snapshot(self) -> dict[str, Any]:
        return {"events": self.count, "last_type": self.last}

    def meters(self) -> dict[str, Any]:
        return {"main": {"events": self.count, "rounds": self.rounds}}


toy_replay = ToyReplayer


def build(path: Path, evs: list[tuple[int, int | None, str, dict[str, Any]]]) -> list[Entry]:
    made = []
    rounds = 0
    with Journal.open(path, created_ms=0) as journal:
        for i, (ts, round_id, type_, data) in enumerate(evs, start=1):
            rounds += type_ == "round_completed"
            made.append(
                journal.append(
                    ts,
                    round_id,
                    type_,
                    data,
                    {"events": i, "last_type": type_},
                    {"main": {"events": i, "rounds": rounds}},
                )
            )
    return made


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(events)
def test_any_sequence_of_appends_verifies_and_reads_back(
    evs: list[tuple[int, int | None, str, dict[str, Any]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.db"
        made = build(path, evs)
        report = verify(path, toy_replay)
        assert report.ok, report.problems
        assert report.entries == len(evs)
        assert report.rounds == sum(t == "round_completed" for _, _, t, _ in evs)
        with Journal.open(path) as journal:
            stored = list(journal.entries())
        assert stored == made
        assert [(e.ts_ms, e.round_id, e.type, e.data) for e in stored] == evs


# Equal under == but not as JSON text: a writer that reused text on == would store the wrong one.
confusable = st.sampled_from([True, 1, 1.0, 0.0, -0.0, 0, False, 2**70, float(2**70), None, ""])
not_json = st.sampled_from([float("nan"), float("inf"), b"x", {1, 2}, object()])
writer_values = st.recursive(
    json_scalars | confusable,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3) | st.sampled_from([1, True, 1.0]), inner, max_size=3)
    ),
    max_leaves=10,
)
# few keys and few values: consecutive snapshots often hold equal (==) values under one key
few = st.lists(st.sampled_from([True, 1, 1.0]), min_size=1, max_size=2) | st.lists(
    st.sampled_from([0.0, -0.0, 0, False]), min_size=1, max_size=2
)
writer_snapshots = st.dictionaries(
    st.sampled_from(["a", "b", "\u00e9t\u00e9"]),
    few | few.map(lambda v: {"k": v}) | few.map(tuple) | writer_values | not_json,
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(writer_snapshots | writer_values, min_size=1, max_size=10))
# found by CI: two faults, the first in key order must be the one named (a run of scalars holding
# NaN before a dict whose keys cannot be sorted)
@example(
    values=[{"b": [True]}, {"a": math.nan, "b": math.nan, "\u00e9t\u00e9": {"": None, 1: None}}]
)
def test_the_writer_s_canonical_text_is_canonical_json_byte_for_byte(values: list[Any]) -> None:
    """`CanonicalWriter` (the journal writer's encoder, which reuses the text of unchanged parts)
    gives exactly `canonical_json`'s text, or its exact error, for any sequence of values: the
    bytes hashed by the chain do not depend on which encoder wrote them, so journals written
    before verify the same (tests/test_journal_compat.py checks recorded journals)."""
    default = journal_format._REUSE_FROM
    for reuse_from in (0, default):  # every container reused, or only the large ones
        journal_format._REUSE_FROM = reuse_from
        try:
            writer = CanonicalWriter()
            for value in values:
                try:
                    expected = canonical_json(value, "snapshot")
                except ValueError as exc:
                    expected = f"error: {exc}"
                try:
                    got = (
                        writer.encode_object(value, "snapshot")
                        if isinstance(value, dict) and all(isinstance(k, str) for k in value)
                        else writer.encode(value, "snapshot")
                    )
                except ValueError as exc:
                    got = f"error: {exc}"
                assert got == expected
        finally:
            journal_format._REUSE_FROM = default


# (table, column, key column) that a tamperer might edit
TARGETS = [
    ("journal", "seq", "seq"),
    ("journal", "ts_ms", "seq"),
    ("journal", "round_id", "seq"),
    ("journal", "type", "seq"),
    ("journal", "data", "seq"),
    ("journal", "prev_hash", "seq"),
    ("journal", "hash", "seq"),
    ("state", "seq", "id"),
    ("state", "hash", "id"),
    ("state", "snapshot", "id"),
    ("meters", '"values"', "level"),
]
PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " "


@FAST
@given(events, st.sampled_from(TARGETS), st.data())
def test_any_single_byte_change_in_a_stored_column_is_detected(
    evs: list[tuple[int, int | None, str, dict[str, Any]]],
    target: tuple[str, str, str],
    data: st.DataObject,
) -> None:
    table, column, key = target
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.db"
        build(path, evs)
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            keys = [r[0] for r in conn.execute(f"SELECT {key} FROM {table} ORDER BY {key}")]
            row_key = data.draw(st.sampled_from(keys), label="row")
            (value,) = conn.execute(
                f"SELECT {column} FROM {table} WHERE {key} = ?", (row_key,)
            ).fetchone()
            if isinstance(value, str):
                assert value.isascii()  # the journal stores canonical, ASCII-only JSON and hex
                i = data.draw(st.integers(0, len(value) - 1), label="byte")
                new = data.draw(st.sampled_from(PRINTABLE.replace(value[i], "")), label="to")
                changed: object = value[:i] + new + value[i + 1 :]
            else:
                bit = data.draw(st.integers(0, 40), label="bit")
                changed = (1 << bit) if value is None else value ^ (1 << bit)
            for statement in SCHEMA_SQL:
                if "CREATE TRIGGER" in statement:
                    conn.execute(f"DROP TRIGGER {statement.split()[2]}")
            try:
                conn.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", (changed, row_key))
            except sqlite3.IntegrityError:
                assume(False)  # the new seq is taken by another entry: not a single-row edit
            for statement in SCHEMA_SQL:
                if "CREATE TRIGGER" in statement:
                    conn.execute(statement)
        finally:
            conn.close()
        report = verify(path, toy_replay)
        assert not report.ok, (target, row_key, changed)
        assert not any("trigger" in p for p in report.problems)
