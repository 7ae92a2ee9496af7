"""The link controller itself (NY 5321.18(b)): power-up self-check of its journal, parameter
changes refused while the link operates, tables identified by asset number, an altered entry
refused with the table and seq named, one controller per pool journal. Real journals; a real
nats-server for the stream.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from link_support import InProcessController, NatsServer, controller_toml, table_key, wait_for

from controller.journal.audit import connect_read_only
from controller.journal.format import Entry, JournalError, StorageFault, canonical_json, entry_hash
from controller.link.keys import TableKey, load_table_key
from controller.link.link_config import load_controller_config
from controller.link.messages import encode_entry, headers_for, journal_subject
from controller.link.service import PoolJournal, SelfCheckFailed


def entries(db: Path) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    conn = connect_read_only(db)
    try:
        return [(t, json.loads(d)) for t, d in conn.execute("SELECT type, data FROM journal")]
    finally:
        conn.close()


def test_parameter_change_is_refused_while_the_link_operates(tmp_path: Path) -> None:
    """NY 5321.18(b)(4): the pool's parameters never change while the link is live."""
    path = controller_toml(tmp_path / "link.toml", "nats://127.0.0.1:1", {"T1": 70001})
    PoolJournal(load_controller_config(path)).close()
    path.write_text(path.read_text().replace("rate_bp = 2100", "rate_bp = 2500"))
    state = PoolJournal(load_controller_config(path))
    try:
        assert state.pool.params.level.rate_bp == 2100
    finally:
        state.close()
    refused = [d for t, d in entries(tmp_path / "pool.db") if t == "parameter_change_refused"]
    assert refused and refused[0]["changes"]["level"]["configured"]["rate_bp"] == 2500


def test_power_up_self_check_refuses_a_tampered_pool(tmp_path: Path) -> None:
    """NY 5321.18(b): the controller checks itself at power-up; a pool whose stored meters the
    journal does not vouch for does not run."""
    path = controller_toml(tmp_path / "link.toml", "nats://127.0.0.1:1", {"T1": 70001})
    PoolJournal(load_controller_config(path)).close()
    conn = sqlite3.connect(tmp_path / "pool.db")
    snap = json.loads(conn.execute("SELECT snapshot FROM state").fetchone()[0])
    snap["meters"]["display"] += 1_000_000
    conn.execute("UPDATE state SET snapshot = ?", (canonical_json(snap, "s"),))
    conn.commit()
    conn.close()
    with pytest.raises(StorageFault):
        PoolJournal(load_controller_config(path))


def test_a_second_link_controller_on_the_same_journal_is_refused(tmp_path: Path) -> None:
    """One link controller per pool journal (issue 22): a second one, in this process or
    another, is refused at once naming the journal, and touches nothing."""
    path = controller_toml(tmp_path / "link.toml", "nats://127.0.0.1:1", {"T1": 70001})
    first = PoolJournal(load_controller_config(path))
    try:
        count = first.journal.count()
        with pytest.raises(SelfCheckFailed, match=r"pool\.db is in use .*one link controller"):
            PoolJournal(load_controller_config(path))
        assert first.journal.count() == count
    finally:
        first.close()
    PoolJournal(load_controller_config(path)).close()  # released with the first


async def _publish(url: str, table: str, asset: int, entry: Entry, key: TableKey) -> None:
    import nats

    nc = await nats.connect(url)
    try:
        mac = key.entry_header(entry.seq, entry.hash)
        await nc.jetstream().publish(
            journal_subject(table), encode_entry(entry), headers=headers_for(table, asset, 1, mac)
        )
    finally:
        await nc.close()


def test_an_altered_entry_is_refused_with_the_table_and_seq(
    tmp_path: Path,
    nats: NatsServer,
    controllers: list,  # type: ignore[type-arg]
) -> None:
    ctl = InProcessController(controller_toml(tmp_path / "link.toml", nats.url, {"T1": 70001}))
    ctl.start()
    controllers.append(ctl)
    pool_db = tmp_path / "pool.db"
    wait_for(lambda: _powered_up(pool_db), 15, what="power-up")
    data = {"effects": []}
    digest = entry_hash(1, 5, None, "power_up", canonical_json(data, "d"), "g", "s")
    forged = Entry(1, 5, None, "power_up", {"effects": [], "x": 1}, "g", digest, "s", "")
    key = load_table_key(table_key(tmp_path, "T1"), "T1")  # MAC'd over the hash it claims
    wait_for(lambda: _try(nats.url, forged, key), 15, what="the stream")
    wait_for(lambda: any(t == "entry_refused" for t, _ in entries(pool_db)), 15, what="refusal")
    (refusal,) = [d for t, d in entries(pool_db) if t == "entry_refused"]
    assert refusal["table"] == "T1" and refusal["seq"] == 1
    assert "does not match its hash" in refusal["reason"]
    # the entry alone is refused, never the table (its real entries may still come)
    assert not any(t == "chain_refused" for t, _ in entries(pool_db))


def _powered_up(db: Path) -> bool:
    try:
        return any(t == "link_power_up" for t, _ in entries(db))
    except (sqlite3.Error, OSError, ValueError, JournalError):
        return False


def _try(url: str, entry: Entry, key: TableKey) -> bool:
    try:
        asyncio.run(_publish(url, "T1", 70001, entry, key))
    except Exception:
        return False
    return True


def test_an_idle_fetch_past_its_deadline_is_nothing_yet_not_an_outage(
    tmp_path: Path, nats: NatsServer
) -> None:
    """nats-py's pull fetch raises a plain ``asyncio.TimeoutError`` (not its own
    ``nats.errors.TimeoutError``) when its deadline passed before it could make the lingering
    request — an event loop busy for longer than the fetch's 50 ms. The consumer takes it as
    "no entry yet", as central ingest does, never as an outage of the server (which would stall
    consumption with a back-off and log it as a failure)."""
    import time

    import nats as nats_py

    from controller.link.service import LinkController

    cfg = load_controller_config(controller_toml(tmp_path / "link.toml", nats.url, {"T1": 70001}))

    async def main() -> None:
        ctl = LinkController(cfg)
        nc = await nats_py.connect(**cfg.connection.options())
        try:
            sub = await ctl._setup(nc.jetstream())
            # the loop busy past the fetch's deadline, once the fetch has started
            asyncio.get_running_loop().call_soon(time.sleep, 0.3)
            await ctl._consume(sub)  # nothing in the stream: returns, raises nothing
        finally:
            await nc.close()
            ctl.state.close()

    asyncio.run(main())
