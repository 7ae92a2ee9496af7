"""Issue 22 item 3: no single table's credential inflates the pool, and no forger gets an honest
table refused (docs/link.md "Keys and the threat model", NY 5321.18(b): the link controller
identifies each table and keeps the pool's meters; NJ 13:69E-1.39B).

Each attack is made on the real stack: a linked table (owner, round machine, journal, the real
shipper and pool client), the link controller, a real nats-server and a real PostgreSQL fed by
``central ingest``. The forger publishes on the linked table's own subject, as the table's NATS
user may (``tests/link/test_link_security.py`` shows the server lets that user publish there and
nowhere else), but it does not hold the table's link key. In each test the pool's meter holds the
table's real contributions and nothing else, central's reports equal the table's own, the forged
message is refused and journaled with the table, seq and reason, and the honest table keeps
playing. On main c291293 every one of them failed: the pool took the forged contribution, central
stored the forged hit, a message without its header or a forged entry that took the real
entry's Nats-Msg-Id got the real table refused for good, and a rolled-back table was seen late.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
from link_support import (
    SUP,
    InProcessController,
    LinkedTable,
    NatsServer,
    controller_toml,
    table_key,
    wait_for,
)
from test_central import ingest, journal_entries, refused, stored
from test_link_shipper import journal_count
from test_witness import alarms

from controller.journal import reports
from controller.journal.anchor import default_anchor_path
from controller.journal.audit import connect_read_only
from controller.journal.format import Entry
from controller.link.central import floor_hits, floor_shift
from controller.link.keys import load_table_key
from controller.link.messages import (
    ASSET_HEADER,
    MSG_ID_HEADER,
    encode_entry,
    hit_subject,
    journal_subject,
    recomputed_hash,
)

T1, A1 = "T1", 70001
T2, A2 = "T2", 70002


def pool_entries(db: Path) -> list[tuple[str, dict[str, Any]]]:
    conn = connect_read_only(db)
    try:
        return [(t, json.loads(d)) for t, d in conn.execute("SELECT type, data FROM journal")]
    finally:
        conn.close()


def pool_took(db: Path, table: str) -> int:
    """The cents wagered the pool took from ``table`` (its pool_contribution effects)."""
    return sum(
        int(e["wagered_cents"])
        for _, d in pool_entries(db)
        for e in d.get("effects", [])
        if e["type"] == "pool_contribution" and e["table"] == table
    )


def contributed(db: Path) -> int:
    """The cents wagered the table's own journal contributed to the linked level."""
    return sum(
        int(e["wagered_cents"])
        for e in journal_entries_effects(db)
        if e["type"] == "meter_movement" and e["kind"] == "contribution"
    )


def journal_entries_effects(db: Path) -> list[dict[str, Any]]:
    return [e for entry in journal_entries(db) for e in entry.data.get("effects", [])]


def publish(url: str, subject: str, body: bytes, headers: dict[str, str] | None) -> None:
    """One message on the stream, as anyone allowed to publish on ``subject`` can send it."""
    import nats

    async def go() -> None:
        nc = await nats.connect(url)
        try:
            await nc.jetstream().publish(subject, body, headers=headers, timeout=5)
        finally:
            await nc.close()

    asyncio.run(go())


def request(url: str, subject: str, body: dict[str, Any]) -> dict[str, Any]:
    import nats

    async def go() -> dict[str, Any]:
        nc = await nats.connect(url)
        try:
            msg = await nc.request(subject, json.dumps(body).encode(), timeout=5)
            return dict(json.loads(msg.data))
        finally:
            await nc.close()

    return asyncio.run(go())


class Floor:
    """A pool with tables T1 (and T2), each opened and one round played."""

    def __init__(
        self, tmp: Path, nats: NatsServer, controllers: list[Any], tables: list[Any], n: int = 1
    ) -> None:
        self.tmp, self.nats, self.fixture_tables = tmp, nats, tables
        made = {T1: A1, T2: A2}
        self.ctl = InProcessController(controller_toml(tmp / "link.toml", nats.url, made))
        self.ctl.start()
        controllers.append(self.ctl)
        self.pool_db = tmp / "pool.db"
        self.tables = [LinkedTable(tmp, tid, asset, nats.url) for tid, asset in made.items()][:n]
        for t in self.tables:
            t.start()
            tables.append(t)
        for t in self.tables:
            wait_for(lambda t=t: not t.link_down(), 20, what=f"{t.config.table.id} confirmed")
            t.open()
            t.play((1, 2))
        self.t1 = self.tables[0]
        self.settled(self.t1)
        self.meter = self.display()

    @property
    def controller(self) -> Any:
        return self.ctl.thread.controller

    def display(self) -> int:
        return int(self.controller.pool.display_cents)

    def settled(self, t: LinkedTable) -> None:
        """Everything ``t`` journaled is shipped and held by the pool."""
        tid = t.config.table.id
        wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), 20, what="shipped")
        wait_for(
            lambda: (
                self.controller.heads.get(tid) is not None
                and self.controller.heads[tid].seq == journal_count(t.db)
            ),
            20,
            what=f"the pool holding {tid}",
        )

    def last(self, t: LinkedTable) -> Entry:
        return journal_entries(t.db)[-1]

    def plays_on(self, t: LinkedTable) -> None:
        """The honest table plays a round with a linked wager, and the pool takes it."""
        assert not t.link_down(), t.view.get("link")
        t.play((3, 4, 5))
        self.settled(t)
        assert not t.link_down()

    def refusals(self, kind: str) -> list[dict[str, Any]]:
        return [d for t, d in pool_entries(self.pool_db) if t == kind]

    def pool_holds_only_the_tables_contributions(self) -> None:
        for t in self.tables:
            tid = t.config.table.id
            assert pool_took(self.pool_db, tid) == contributed(t.db) > 0, tid
        assert not self.refusals("chain_refused")

    def central_equals_the_tables(self, dsn: str) -> None:
        """Central holds each table's journal exactly, and its reports equal the table's."""
        for t in self.tables:
            t.stop()
        self.fixture_tables.clear()
        self.ctl.stop()
        ingest(self.nats.url, dsn, self.tmp)
        with psycopg.connect(dsn, autocommit=True) as conn:
            floor = floor_shift(conn)
            hits = floor_hits(conn, limit=0)
        by_table = {r["table"]: r for r in floor["tables"]}  # type: ignore[union-attr,index]
        for t in self.tables:
            tid = t.config.table.id
            assert stored(dsn, tid) == [(e.seq, e.hash) for e in journal_entries(t.db)]
            with reports.JournalReader(t.db) as reader:
                own = reports.shift_report(reader)
                own_hits = reports.hits_report(reader, limit=0)
            mine = by_table[tid]["progressive"]  # type: ignore[index]
            for key in ("wagers", "wagered_cents", "contributed_cents", "paid_from_meter_cents"):
                assert mine[key] == own["progressive"][key], key  # type: ignore[index]
            assert hits["tables"][tid] == own_hits  # type: ignore[index]


def forged_contribution(last: Entry, wagers: int) -> Entry:
    """The next entry of a table's chain, claiming ``wagers`` linked wagers at the lock-out."""
    rid = (last.round_id or 0) + 1
    effect = {
        "type": "meter_movement", "level": "progressive", "kind": "contribution",
        "round_id": rid, "wagers": wagers, "wagered_cents": wagers * 100,
        "display_cents": wagers * 21, "overflow_cents": 0, "reserve_cents": wagers * 5,
        "house_cents": 0,
    }  # fmt: skip
    e = Entry(last.seq + 1, last.ts_ms + 1, rid, "chips_confirmed", {"effects": [effect]},
              last.hash, "", last.state_hash)  # fmt: skip
    return replace(e, hash=recomputed_hash(e))


def test_a_forged_contribution_of_100000_wagers_without_the_tables_key_moves_nothing(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """100,000 wagers published on T1's own subject, chained to T1's head, with T1's asset
    number and a made-up MAC: the pool refuses that entry alone (journaled with the table, seq
    and reason), takes T1's real entry at the same seq, and its meter moves only by T1's real
    contributions; central refuses it as unauthenticated."""
    f = Floor(tmp_path, nats, controllers, tables)
    forged = forged_contribution(f.last(f.t1), 100_000)
    headers = {ASSET_HEADER: str(A1), "Paigow-Mac": "0123456789abcdef:" + "0" * 64}
    publish(nats.url, journal_subject(T1), encode_entry(forged), headers)
    wait_for(lambda: bool(f.refusals("entry_refused")), 15, what="the refusal")
    (refusal,) = f.refusals("entry_refused")
    assert (refusal["table"], refusal["seq"]) == (T1, forged.seq)
    assert "not a key of table T1" in refusal["reason"]
    assert f.display() == f.meter  # nothing moved
    f.plays_on(f.t1)  # its real seq n + 1 is taken
    f.pool_holds_only_the_tables_contributions()
    f.central_equals_the_tables(pg)
    assert [(t, s, k) for t, s, k, _ in refused(pg)] == [(T1, forged.seq, "unauthenticated")]


def test_a_tables_own_key_cannot_claim_more_than_six_wagers_it_is_refused_and_told(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """A table's root holds its key: an entry it MACs claiming 100,000 wagers is implausible
    (at most six wagers, wagered = wagers x the pool's wager amount). The pool refuses the
    table (journaled), tells it in its next confirmation, and the table makes its linked wager
    unplayable at once (acceptors not armed, journaled) while the other table plays on; the
    meter never takes the claim and central refuses it as implausible."""
    f = Floor(tmp_path, nats, controllers, tables, n=2)
    t2 = f.tables[1]
    f.settled(t2)
    meter = f.display()
    key = load_table_key(table_key(tmp_path, T1), T1)
    forged = forged_contribution(f.last(f.t1), 100_000)
    headers = {ASSET_HEADER: str(A1), "Paigow-Mac": key.entry_header(forged.seq, forged.hash)}
    publish(nats.url, journal_subject(T1), encode_entry(forged), headers)
    wait_for(lambda: bool(f.refusals("chain_refused")), 15, what="the table refused")
    (refusal,) = f.refusals("chain_refused")
    assert refusal["table"] == T1 and refusal["seq"] == forged.seq
    assert "implausible" in refusal["reason"] and "100000 wagers" in refusal["reason"]
    assert f.display() == meter
    wait_for(f.t1.link_down, 10, what="T1 told and its linked wager unplayable")
    assert f.t1.devices.armed is False
    states = [d for _, ty, d in _entries(f.t1.db) if ty == "link_state"]
    assert states[-1]["up"] is False and "refused by the pool" in states[-1]["detail"]
    f.plays_on(t2)  # the other table is not touched
    assert pool_took(f.pool_db, T2) == contributed(t2.db)
    for t in (t2, f.t1):
        t.stop()
    tables.clear()
    f.ctl.stop()
    ingest(nats.url, pg, tmp_path)
    kinds = [(t, s, k) for t, s, k, _ in refused(pg)]
    assert (T1, forged.seq, "implausible") in kinds


def _entries(db: Path) -> list[tuple[int, str, dict[str, Any]]]:
    return [(e.seq, e.type, e.data) for e in journal_entries(db)]


def test_a_forged_hit_without_a_mac_is_stored_nowhere_and_locks_nothing(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """A royal-flush hit of $50,000 on T1's subject with a bogus state hash and no MAC, and a
    hit request in T1's name without T1's key: central stores neither (its hits report equals
    T1's own), the pool locks nothing and journals the refused request."""
    f = Floor(tmp_path, nats, controllers, tables)
    last = f.last(f.t1)
    pay = {"type": "pay", "position": 1, "level": "progressive", "line": "royal-flush",
           "cents": 5_000_000, "from": "meter", "supervisor": SUP}  # fmt: skip
    data = {"effects": [pay], "position": 1, "supervisor": SUP}
    hit = Entry(last.seq + 1, last.ts_ms + 1, last.round_id, "hit_validated", data, last.hash,
                "", "f" * 64)  # fmt: skip
    hit = replace(hit, hash=recomputed_hash(hit))
    publish(nats.url, journal_subject(T1), encode_entry(hit), {ASSET_HEADER: str(A1)})
    body = {"table": T1, "asset": A1, "round": last.round_id, "position": 1, "seq": last.seq,
            "level": "progressive", "line": "royal-flush", "wager_cents": 100}  # fmt: skip
    reply = request(nats.url, hit_subject("POOL1"), body)
    assert reply["ok"] is False and "no MAC" in reply["reason"]
    (req,) = f.refusals("request_refused")
    assert req["table"] == T1 and "no MAC" in req["reason"]
    wait_for(lambda: bool(f.refusals("entry_refused")), 15, what="the refusal")
    assert not f.refusals("hit_locked") and f.display() == f.meter
    f.plays_on(f.t1)
    f.pool_holds_only_the_tables_contributions()
    f.central_equals_the_tables(pg)
    with psycopg.connect(pg, autocommit=True) as conn:
        assert floor_hits(conn, limit=0)["total"]["cents"] == 0  # type: ignore[index]
    assert [(t, s, k) for t, s, k, _ in refused(pg)] == [(T1, hit.seq, "unauthenticated")]


def test_a_message_without_its_headers_is_refused_alone(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """T1's own next entry, MAC'd with its key, sent without any header (no Paigow-Asset, no
    MAC): refused alone, journaled; T1 is not refused and its real entry is taken."""
    f = Floor(tmp_path, nats, controllers, tables)
    forged = forged_contribution(f.last(f.t1), 2)
    publish(nats.url, journal_subject(T1), encode_entry(forged), None)
    wait_for(lambda: bool(f.refusals("entry_refused")), 15, what="the refusal")
    (refusal,) = f.refusals("entry_refused")
    assert refusal["table"] == T1 and refusal["seq"] == forged.seq
    assert "asset number None" in refusal["reason"]
    f.plays_on(f.t1)
    f.pool_holds_only_the_tables_contributions()
    f.central_equals_the_tables(pg)
    assert [(t, s, k) for t, s, k, _ in refused(pg)] == [(T1, forged.seq, "malformed")]


def test_a_replayed_entry_is_a_duplicate_and_changes_nothing(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """T1's real contribution entry sent again, exactly as shipped (its MAC) but under another
    message id (so the stream keeps it): the pool and central drop it as the same entry at a
    held seq; no fork, no second contribution. The same entry replayed on T2's subject with
    T2's asset number is not T2's (the MAC names T1): refused alone, T2 plays on."""
    f = Floor(tmp_path, nats, controllers, tables, n=2)
    t2 = f.tables[1]
    f.settled(t2)
    key = load_table_key(table_key(tmp_path, T1), T1)
    (entry,) = [
        e for e in journal_entries(f.t1.db)
        if any(m.get("kind") == "contribution" for m in e.data.get("effects", []))
    ]  # fmt: skip
    headers = {ASSET_HEADER: str(A1), "Paigow-Mac": key.entry_header(entry.seq, entry.hash),
               MSG_ID_HEADER: "replay-1"}  # fmt: skip
    for _ in range(2):
        publish(nats.url, journal_subject(T1), encode_entry(entry), headers)
        headers[MSG_ID_HEADER] = "replay-2"
    on_t2 = {**headers, ASSET_HEADER: str(A2), MSG_ID_HEADER: "replay-3"}
    publish(nats.url, journal_subject(T2), encode_entry(entry), on_t2)
    f.plays_on(f.t1)
    f.plays_on(t2)
    assert not f.refusals("fork_alarm")
    (refusal,) = f.refusals("entry_refused")  # the replay on T2's subject, alone
    assert refusal["table"] == T2 and "not a key of table T2" in refusal["reason"]
    f.pool_holds_only_the_tables_contributions()
    f.central_equals_the_tables(pg)
    assert [(t, k) for t, _, k, _ in refused(pg)] == [(T2, "unauthenticated")]
    assert alarms(pg) == []


def test_a_forged_entry_that_takes_the_real_entrys_message_id_cannot_drop_it(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """A forger who read T1's journal (its hashes) publishes, before T1 ships them, forged
    entries under the message ids the old shipper would have used (``T1:seq:hash16``) and under
    the bare ``T1:seq``: the stream's dedupe id is now made from the entry's MAC, which no one
    without T1's key can know beforehand, so T1's real entries reach the pool and central."""
    f = Floor(tmp_path, nats, controllers, tables)
    f.t1.attachment.stop()  # T1's link is away for a moment; it plays on
    shipped = journal_count(f.t1.db)
    f.t1.bet(1, 2)
    f.t1.ev("lockout_pressed")
    f.t1.ev("chips_confirmed")
    unshipped = journal_entries(f.t1.db)[shipped:]
    assert unshipped
    for e in unshipped:
        fake = forged_contribution(replace(e, seq=e.seq - 1), 6)
        for mid in (f"{T1}:{e.seq}:{e.hash[:16]}", f"{T1}:{e.seq}"):
            publish(nats.url, journal_subject(T1), encode_entry(fake),
                    {ASSET_HEADER: str(A1), MSG_ID_HEADER: mid})  # fmt: skip
    f.t1.attachment.start(f.t1.owner)
    f.settled(f.t1)
    f.t1.ev("rng_activated")
    wait_for(lambda: f.t1.state == "Open_Dealing", what="the RNG draw")
    f.t1.ev("dealt", remaining=4)
    f.t1.ev("play_complete")
    f.t1.settle({1: None, 2: None})
    wait_for(lambda: f.t1.state in ("Open_Betting", "Open_Shuffling"), what="round end")
    f.plays_on(f.t1)
    assert len(f.refusals("entry_refused")) >= 1
    f.pool_holds_only_the_tables_contributions()
    f.central_equals_the_tables(pg)
    assert {k for _, _, k, _ in refused(pg)} == {"unauthenticated"}


def test_a_rolled_back_table_is_a_fork_at_the_first_reused_seq(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """T1 restored to an older copy of its journal and anchor re-uses seqs with new hashes (MAC'd
    with its own key): the pool raises the fork alarm at the first re-used seq (not when T1
    passes its old head), journals it, refuses T1 and tells it; central raises its rollback
    alarm at that seq; the pool's meter never takes the re-used seqs; T2 plays on."""
    f = Floor(tmp_path, nats, controllers, tables, n=2)
    t1, t2 = f.tables
    old = tmp_path / "old"
    old.mkdir()
    t1.stop()
    tables.remove(t1)
    shutil.copyfile(t1.db, old / t1.db.name)
    shutil.copyfile(default_anchor_path(t1.db), old / default_anchor_path(t1.db).name)
    t1 = LinkedTable(tmp_path, T1, A1, nats.url)
    t1.start()
    tables.append(t1)
    wait_for(lambda: not t1.link_down(), 20, what="T1 back")
    t1.play((1, 2))
    f.settled(t1)
    head = journal_count(t1.db)
    meter = f.display()
    t1.stop()
    tables.remove(t1)
    shutil.copyfile(old / t1.db.name, t1.db)  # journal and anchor restored from the older copy
    shutil.copyfile(old / default_anchor_path(t1.db).name, default_anchor_path(t1.db))
    k = journal_count(t1.db)
    t1 = LinkedTable(tmp_path, T1, A1, nats.url)
    t1.start()  # its power-up is seq k + 1: a re-used seq with another hash
    tables.append(t1)
    wait_for(lambda: bool(f.refusals("fork_alarm")), 20, what="the fork alarm")
    (fork,) = f.refusals("fork_alarm")
    assert fork["table"] == T1 and fork["seq"] == k + 1 < head
    assert fork["held_hash"] != fork["received_hash"]
    wait_for(lambda: bool(f.refusals("chain_refused")), 10, what="T1 refused")
    (refusal,) = f.refusals("chain_refused")
    assert refusal["table"] == T1 and "fork" in refusal["reason"]
    wait_for(t1.link_down, 10, what="T1 told")
    assert f.display() == meter
    f.plays_on(t2)
    t1.stop()
    tables.remove(t1)
    t2.stop()
    f.ctl.stop()
    ingest(nats.url, pg, tmp_path)
    assert (T1, "rollback", k + 1) in alarms(pg)
