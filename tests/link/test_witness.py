"""The witness off the Pi (issue 23, item 2): the centre keeps each table's witnessed head and
raises an alarm at once when a table it knows ships an entry that contradicts it.

On main c291293 a journal and anchor restored from an older copy resumed and re-used seqs with new
hashes, and a deleted journal started afresh: nothing off the Pi noticed (the stream even dropped
the re-used seqs as duplicates of their Nats-Msg-Id). Here real tables ship through the real
shipper and a real nats-server into a real PostgreSQL (``tablectl central ingest``): a rolled-back,
a forked and a wiped table each raise the alarm at the next entry they ship (NJ 13:69E-1.39B(h):
never a silent rollback).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import psycopg
from link_support import SUP, LinkedTable, NatsServer, table_key, wait_for
from test_central import ingest, stored
from test_link_shipper import journal_count, stream

from controller.journal.anchor import default_anchor_path
from controller.journal.format import SCHEMA_SQL, entry_hash
from controller.service.carry import has_run_marker


def alarms(dsn: str) -> list[tuple[str, str, int]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT table_id, kind, seq FROM alarms ORDER BY id").fetchall()
    return [(str(t), str(k), int(s)) for t, k, s in rows]


def _run(tmp_path: Path, url: str, tables: list, table_id: str) -> LinkedTable:  # type: ignore[type-arg]
    t = LinkedTable(tmp_path, table_id, 70_100, url)
    t.start()
    tables.append(t)
    wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), timeout=20, what="shipped")
    return t


def _stop(t: LinkedTable, tables: list) -> None:  # type: ignore[type-arg]
    t.stop()
    tables.remove(t)


def _witnessed(tmp_path: Path, nats: NatsServer, pg: str, tables: list, table_id: str) -> Path:  # type: ignore[type-arg]
    """A table that played a little, stopped (an old copy of its journal and anchor kept in
    ``old/``), played on, and whose whole journal the centre holds."""
    stream(nats.url, create=True)
    t = _run(tmp_path, nats.url, tables, table_id)
    t.open()
    wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), what="shipped")
    _stop(t, tables)
    old = tmp_path / "old"
    old.mkdir()
    shutil.copyfile(t.db, old / t.db.name)
    shutil.copyfile(default_anchor_path(t.db), old / default_anchor_path(t.db).name)
    t = _run(tmp_path, nats.url, tables, table_id)
    t.ev("table_closed", supervisor=SUP)
    t.open()
    wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), what="shipped")
    _stop(t, tables)
    ingest(nats.url, pg, tmp_path)
    assert len(stored(pg, table_id)) == journal_count(t.db)
    assert alarms(pg) == []
    return t.db


def test_a_rolled_back_table_raises_the_alarm_at_the_next_entry_it_ships(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    tables: list,  # type: ignore[type-arg]
) -> None:
    db = _witnessed(tmp_path, nats, pg, tables, "W1")
    old = tmp_path / "old"
    k = journal_count(old / db.name)
    shutil.copyfile(old / db.name, db)  # journal and anchor restored from the older copy
    shutil.copyfile(old / default_anchor_path(db).name, default_anchor_path(db))
    _run(tmp_path, nats.url, tables, "W1")  # power-up appends seq k + 1: a re-used seq
    ingest(nats.url, pg, tmp_path)
    assert alarms(pg) == [("W1", "rollback", k + 1)]


def test_a_wiped_table_raises_the_alarm_at_the_next_entry_it_ships(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    tables: list,  # type: ignore[type-arg]
) -> None:
    db = _witnessed(tmp_path, nats, pg, tables, "W2")
    # root wipes everything on the Pi that remembers the table ran: the journal, its anchor and
    # the has-run marker (with the marker the table itself refuses: test_journal_carry.py)
    for p in (db, default_anchor_path(db), has_run_marker(db)):
        p.unlink()
    _run(tmp_path, nats.url, tables, "W2")  # a fresh journal: its power-up is seq 1
    ingest(nats.url, pg, tmp_path)
    assert alarms(pg) == [("W2", "wipe", 1)]


def test_a_forked_table_raises_the_alarm_at_the_next_entry_it_ships(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """Its history rewritten on the Pi (an entry edited, every later hash recomputed with the
    public rule, the anchor moved): the next entry chains to a head the centre never saw."""
    db = _witnessed(tmp_path, nats, pg, tables, "W3")
    n = journal_count(db)
    conn = sqlite3.connect(db, isolation_level=None)
    for name in ("journal_no_update", "journal_no_delete", "journal_append_only"):
        conn.execute(f"DROP TRIGGER {name}")
    rows = conn.execute(
        "SELECT seq, ts_ms, round_id, type, data, prev_hash, state_hash FROM journal"
        " WHERE seq >= 3 ORDER BY seq"
    ).fetchall()
    prev, last = rows[0][5], ""
    for seq, ts, rnd, type_, data, _, s_hash in rows:
        if seq == 3:
            data = data.replace("}", ',"forged":1}', 1) if '"forged"' not in data else data
        last = entry_hash(seq, ts, rnd, type_, data, prev, s_hash)
        conn.execute(
            "UPDATE journal SET data = ?, prev_hash = ?, hash = ? WHERE seq = ?",
            (data, prev, last, seq),
        )
        prev = last
    conn.execute("UPDATE state SET hash = ?", (last,))
    for statement in SCHEMA_SQL:
        if "CREATE TRIGGER" in statement:
            conn.execute(statement)
    conn.close()
    from controller.journal.anchor import AnchorWriter

    writer = AnchorWriter(default_anchor_path(db))
    writer.settle(n, last)
    writer.close()
    _run(tmp_path, nats.url, tables, "W3")  # its power-up, seq n + 1, chains to the forgery
    ingest(nats.url, pg, tmp_path)
    assert alarms(pg) == [("W3", "fork", n + 1)]


def test_a_table_with_a_floor_connection_but_no_pool_ships_its_journal_to_the_witness(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """``[link]`` without ``pool``: nothing linked (no link_state, the progressive its own), the
    journal shipped all the same, and the centre witnesses its head."""
    import tomllib

    from link_support import Recorder

    from controller.config import SIMULATED_TABLE, parse_config

    raw = tomllib.loads(SIMULATED_TABLE.read_text())
    raw["table"].update(id="W4", asset_number=70_104)
    raw["game"].update(card_reading_shoe=False, side_wager={"offered": False})
    raw["journal"]["path"] = str(tmp_path / "W4.db")
    raw["sas"]["enabled"] = False
    raw["link"] = {"servers": [nats.url], "key_file": str(table_key(tmp_path, "W4"))}
    config = parse_config(raw, "W4.toml")
    assert config.link.enabled and not config.link.linked
    assert "witness" in " ".join(config.summary())
    t = LinkedTable.__new__(LinkedTable)
    t.config, t.db, t.devices = config, config.journal_path, Recorder()
    from controller.journal.lock import owner_journal_options
    from controller.service.owner import Owner
    from controller.service.wiring import LinkAttachment
    from fsm.round.machine import RoundMachine

    game = config.game

    def make(snapshot: object) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)  # type: ignore[arg-type]

    t.owner = Owner(t.db, make, t.devices, draw=lambda: 3, **owner_journal_options(config))
    t.attachment = LinkAttachment(config, t.db)
    stream(nats.url, create=True)
    t.start()
    tables.append(t)
    t.open()
    wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), what="shipped")
    ingest(nats.url, pg, tmp_path)
    assert [s for s, _ in stored(pg, "W4")] == list(range(1, journal_count(t.db) + 1))
    conn = sqlite3.connect(f"file:{t.db}?mode=ro", uri=True)
    types = [ty for (ty,) in conn.execute("SELECT type FROM journal")]
    conn.close()
    assert "link_state" not in types  # nothing linked
