"""Issue 23 item 3 (b): a lost journal carried from central's witness (its stored copy of the
table's chain in PostgreSQL), only when that chain runs whole to the witnessed head and replays
through the round machine (NJ 13:69E-1.39B(h): the table recovers to the prior committed state
or does not play; NJ 13:69D-1.52(f): no meter changes without a record).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psycopg
import pytest
from test_central import journal_entries

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from report_journals import TableDriver

from controller.cli.journal import make_replay
from controller.journal.audit import verify
from controller.journal.store import Journal
from controller.link.central import SCHEMA
from controller.link.messages import encode_entry
from controller.service.carry import CarryError, from_witness, start_carried_journal
from fsm.round import GameConfig

GAME = GameConfig(table_id="T9")


def _witnessed(db: Path, dsn: str) -> dict[str, object]:
    """A played table whose every entry central holds (as ingest stores them) with its head;
    returns the table's complete meters."""
    driver = TableDriver(db, GAME)
    driver.open_table()
    for _ in range(3):
        driver.play_round([1, 2, 4], {})
    driver.play_round([3], {3: "royal_flush"})
    meters = dict(driver.machine.snapshot()["meters"])
    driver.close()
    entries = journal_entries(db)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SCHEMA)
        for e in entries:
            conn.execute(
                "INSERT INTO entries (table_id, seq, ts_ms, round_id, type, data, prev_hash,"
                " state_hash, hash, mac, asset, body)"
                " VALUES ('T9', %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, 7, %s)",
                (e.seq, e.ts_ms, e.round_id, e.type, json.dumps(e.data), e.prev_hash,
                 e.state_hash, e.hash, e.mac, encode_entry(e).decode()),
            )  # fmt: skip
        last = entries[-1]
        conn.execute("INSERT INTO heads VALUES ('T9', %s, %s)", (last.seq, last.hash))
    return meters


def _replay():  # type: ignore[no-untyped-def]
    replay, _ = make_replay(Path("unused"), None)
    return replay


def test_nj_13_69e_1_39b_h_a_lost_journal_is_carried_from_the_witness_to_the_sub_unit(
    tmp_path: Path, pg: str
) -> None:
    old = tmp_path / "lost.db"
    meters = _witnessed(old, pg)
    with psycopg.connect(pg, autocommit=True) as conn:
        source = from_witness(conn, "T9", _replay())
        head = conn.execute("SELECT seq, hash FROM heads").fetchone()
    assert source.source == "witness" and (source.seq, source.hash) == tuple(head)
    assert source.meters == meters  # complete, sub-units: the replay's
    new = tmp_path / "journal.db"
    entry = start_carried_journal(
        new, source, ["ana", "bo"], game=GAME, table_id="T9", now_ms=lambda: 1_800_000_000_000
    )
    assert entry.data["source"] == "witness"
    assert verify(new, _replay()).ok
    with Journal.open(new, table_id="T9") as journal:
        stored = journal.last_state()
    assert stored is not None and stored.snapshot["meters"] == meters


def test_nj_13_69d_1_52_f_a_witness_whose_stored_chain_was_altered_or_cut_carries_nothing(
    tmp_path: Path, pg: str
) -> None:
    _witnessed(tmp_path / "lost.db", pg)
    with psycopg.connect(pg, autocommit=True) as conn:
        with pytest.raises(CarryError, match="holds no head of table 'T1'"):
            from_witness(conn, "T1", _replay())
        # the witnessed head is ahead of what is stored: the copy is cut short
        conn.execute("UPDATE heads SET seq = seq + 1")
        with pytest.raises(CarryError, match="not at its witnessed head"):
            from_witness(conn, "T9", _replay())
        conn.execute("UPDATE heads SET seq = seq - 1")
        # one stored entry's body edited (a payout made larger): it no longer hashes
        seq, body = conn.execute(
            "SELECT seq, body FROM entries WHERE body LIKE '%meter_movement%' ORDER BY seq LIMIT 1"
        ).fetchone()
        edited = body.replace('"wagers":3', '"wagers":4', 1)
        assert edited != body
        conn.execute("UPDATE entries SET body = %s WHERE seq = %s", (edited, seq))
        with pytest.raises(CarryError, match=f"seq {seq}: does not hash"):
            from_witness(conn, "T9", _replay())
