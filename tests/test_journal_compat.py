"""Journals written by earlier code stay valid, and the writer stores the same bytes it did.

``tests/golden/journal-v2-*.sql`` are SQL dumps (``iterdump``) of journals written by the code of
main at 3f10860 (before `CanonicalWriter`), each with its anchor (``.anchor``):

- ``journal-v2-toy``: `_inputs` appended by `Journal.append` (keyed chain, key `KEY`): snapshots
  with large unchanged parts, values that flip between equal numbers of different JSON types
  (``true``/``1``/``1.0``, ``0.0``/``-0.0``), non-ASCII text, levels added and meters unchanged;
- ``journal-v2-headless``: ``simulate --headless --rounds 5 --seed 7``.

Verify accepts both (the headless one with the full replay); power-up opens them and appends; and
the same inputs appended by today's writer give the same rows, byte for byte (entries, hashes,
MACs, stored snapshot and meters), so nothing recorded before verifies differently now (a
recorded history must stay provable: NJ 13:69E-1.39B(h); NJ 13:69D-1.52(f)).

Regenerate (only on purpose, with the old writer checked out) with
``.venv/bin/python tests/test_journal_compat.py``.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "golden"
KEY = bytes(range(32))
CREATED_MS = 1_764_000_000_000
CONFIG: dict[str, Any] = {"wager_cents": 100, "rate": 0.21, "levels": [{"name": "L1"}], "n": None}
TABLES = ("meta", "journal", "state", "meters")


def _inputs() -> list[tuple[int, int | None, str, dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """Deterministic append arguments (ts_ms, round_id, type, data, snapshot, meters)."""
    out = []
    flips: list[Any] = [True, 1, 1.0, 0.0, -0.0, 0, False, None, "1", [1], (1,), {"1": 1}]
    equal: list[Any] = [True, 1, 1.0, 0.0, -0.0, 0, False]
    equal_keys: list[Any] = [1, True, 1.0]
    for i in range(48):
        positions = [
            {
                "position": p,
                "wager_cents": 500 * p + (i // 16) * 100,
                "progressive": p % 2 == 0,
                "light": "lit" if (p + i // 8) % 2 else "off",
                "hand": "As Kd Qh Jc Tc 9s JK" if p % 3 == 0 else None,
                "note": "caf\u00e9 \u20ac \u2028 \U0001f0a1" if p == 5 else "",
            }
            for p in range(1, 7)
        ]
        snapshot: dict[str, Any] = {
            "state": "Betting" if i % 5 else "Dealing_Settle",
            "round_id": 1000 + i // 6,
            "positions": positions,
            "flip": flips[i % len(flips)],
            "flips": [flips[(i + k) % len(flips)] for k in range(3)] * 8,
            # equal to the previous append's under ==, yet another text (true, 1, 1.0, -0.0 ...)
            "same": [equal[i % len(equal)]] * 40,
            "keys": [{equal_keys[i % len(equal_keys)]: "x"}] * 20,
            "rng": {"value": i % 7, "drawn_at_ms": CREATED_MS + i, "ratio": i / 7},
            "recent_hits": [{"position": 4, "level": "L1", "amount_cents": 98_765_400}] * 3,
            "\u00fcber": {"b": 1, "a": [2, 3], "\u00e9": "\u00e9"},
            "pending": [],
            "faults": ["LOW_PAPER"] if 10 <= i < 20 else [],
        }
        levels: dict[str, dict[str, Any]] = {
            "L1": {"display_cents": 12_345_600 + (i // 3) * 21, "hits": i // 12},
            "L2": {"display_cents": 500_000, "wins_cents": 0},
        }
        if i >= 30:
            levels["L3"] = {"display_cents": 1_000 + i, "ratio": 0.5}
        type_ = "round_completed" if i % 6 == 5 else "chip_detected"
        effects: list[Any] = [{"type": "lights", "states": ["off", "lit"] * 3}]
        if i == 11:
            effects.append({"type": "rejected", "reason": "repeat"})
        data = {"position": i % 6 + 1, "effects": effects, "x": flips[(i * 5) % len(flips)]}
        out.append(
            (
                CREATED_MS + 10 * i,
                None if i % 9 == 0 else 1000 + i // 6,
                type_,
                data,
                snapshot,
                levels,
            )
        )
    return out


def _write_toy(path: Path) -> None:
    from controller.journal.store import Journal

    with Journal.open(
        path, table_id="T-7", created_ms=CREATED_MS, asset_number=70, config=CONFIG, key=KEY
    ) as journal:
        for args in _inputs():
            journal.append(*args)


def _write_headless(path: Path) -> None:
    from controller.sim.simulate import run_headless

    code = run_headless(path, 5, 7)
    if code != 0:
        raise RuntimeError(f"the headless run ended with exit code {code}")


def _dump(path: Path) -> str:
    conn = sqlite3.connect(str(path))
    try:
        return "\n".join(conn.iterdump()) + "\n"
    finally:
        conn.close()


def _restore(name: str, into: Path) -> Path:
    """The golden journal ``name`` as a journal file in ``into``, with its anchor beside it."""
    db = into / f"{name}.db"
    conn = sqlite3.connect(str(db))
    try:
        conn.executescript((GOLDEN / f"{name}.sql").read_text(encoding="ascii"))
        # iterdump does not carry the header's identity: put it back as Journal.open wrote it
        from controller.journal.format import APPLICATION_ID, SCHEMA_VERSION

        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()
    shutil.copyfile(GOLDEN / f"{name}.anchor", into / f"{name}.db.anchor")
    return db


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(str(path))
    try:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in TABLES}
    finally:
        conn.close()


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for name, write in (
            ("journal-v2-toy", _write_toy),
            ("journal-v2-headless", _write_headless),
        ):
            db = Path(tmp) / f"{name}.db"
            write(db)
            (GOLDEN / f"{name}.sql").write_text(_dump(db), encoding="ascii")
            shutil.copyfile(Path(f"{db}.anchor"), GOLDEN / f"{name}.anchor")
            print(f"wrote {GOLDEN / name}.sql and .anchor")
    return 0


# ----------------------------------------------------------------------------------- the tests


def test_a_journal_written_by_the_previous_writer_verifies(tmp_path: Path) -> None:
    from controller.journal.store import verify

    db = _restore("journal-v2-toy", tmp_path)
    report = verify(db, key=KEY)
    assert report.ok, report.problems
    assert report.entries == len(_inputs())


def test_today_s_writer_stores_the_previous_writer_s_bytes(tmp_path: Path) -> None:
    """The same appends give the same rows in every table: the canonical text of data, snapshot
    and meters, the entry and state hashes and the keyed chain's MACs are unchanged. (Since
    issue 29 the state row's snapshot is stored padded with spaces to a multiple of
    ``STATE_PAD``, so that SQLite rewrites the row in place: its canonical text, the padding
    taken off, is the previous writer's; the padding is spaces only.)"""
    from controller.journal.format import STATE_PAD, stored_snapshot_text

    old = _rows(_restore("journal-v2-toy", tmp_path))
    db = tmp_path / "new.db"
    _write_toy(db)
    new = _rows(db)
    (state_id, seq, digest, rounds, padded), *others = new["state"]
    assert others == []
    assert len(padded) % STATE_PAD == 0 and len(padded) - len(padded.rstrip(" ")) < STATE_PAD
    new["state"] = [(state_id, seq, digest, rounds, stored_snapshot_text(padded))]
    for table in TABLES:
        assert new[table] == old[table], f"table {table} differs from the previous writer's"


def test_a_previous_headless_journal_replays_then_takes_appends_and_still_verifies(
    tmp_path: Path,
) -> None:
    from controller.cli.journal import make_replay
    from controller.journal.store import Journal, verify

    db = _restore("journal-v2-headless", tmp_path)
    replay, why_not = make_replay(db, None)
    assert why_not is None
    report = verify(db, replay)
    assert report.ok, report.problems
    with Journal.open(db) as journal:  # power-up vouches for the stored head, then appends
        state = journal.last_state()
        assert state is not None
        journal.append(CREATED_MS, None, "tick", {"n": 1}, state.snapshot, state.meters)
    report = verify(db)
    assert report.ok, report.problems


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
