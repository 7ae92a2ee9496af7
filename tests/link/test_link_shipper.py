"""The journal shipper (docs/link.md): every committed entry reaches the stream exactly as
journaled, in order, with its hashes; an outage only grows the backlog; the cursor moves only on
the stream's acknowledgement; an entry sent again (a crash before the cursor was written) is kept
once (Nats-Msg-Id). Real nats-server, real journals.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from link_support import LinkedTable, NatsServer, wait_for

from controller.journal.audit import connect_read_only
from controller.link.messages import (
    DUPLICATE_WINDOW_S,
    MAC_HEADER,
    MSG_ID_HEADER,
    STREAM,
    STREAM_SUBJECTS,
    Head,
    check_next,
    decode_entry,
)
from controller.link.table_link import read_cursor, write_cursor


async def _stream(url: str, create: bool = False) -> list[Any]:
    import nats
    from nats.js import api

    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        if create:
            await js.add_stream(
                api.StreamConfig(
                    name=STREAM,
                    subjects=[STREAM_SUBJECTS],
                    storage=api.StorageType.FILE,
                    duplicate_window=DUPLICATE_WINDOW_S,
                )
            )
            return []
        info = await js.stream_info(STREAM)
        out = []
        for seq in range(1, info.state.last_seq + 1):
            out.append(await js.get_msg(STREAM, seq))
        return out
    finally:
        await nc.close()


def stream(url: str, create: bool = False) -> list[Any]:
    return asyncio.run(_stream(url, create))


def journal_count(db: Path) -> int:
    conn = connect_read_only(db)
    try:
        return int(conn.execute("SELECT max(seq) FROM journal").fetchone()[0])
    finally:
        conn.close()


def test_every_entry_shipped_once_as_journaled_backlog_through_outage(
    tmp_path: Path,
    nats: NatsServer,
    tables: list,  # type: ignore[type-arg]
) -> None:
    stream(nats.url, create=True)
    t = LinkedTable(tmp_path, "T1", 70001, nats.url)
    t.start()
    tables.append(t)
    t.open()
    wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), what="shipped")
    nats.kill()
    cursor = read_cursor(t.link.cursor_file)
    t.ev("table_closed", supervisor="trainer")
    t.ev("table_opened", supervisor="trainer")
    wait_for(lambda: t.link.status.backlog >= 2, what="the backlog to grow")
    assert read_cursor(t.link.cursor_file) == cursor  # never advanced without the ack
    nats.start()
    wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), 20, what="backlog sent")
    msgs = stream(nats.url)
    assert len(msgs) == journal_count(t.db)
    head = None
    conn = connect_read_only(t.db)
    rows = conn.execute("SELECT seq, data, hash FROM journal ORDER BY seq").fetchall()
    conn.close()
    for msg, (seq, data, digest) in zip(msgs, rows, strict=True):
        assert msg.subject == "table.T1.journal"
        mac = t.link.key.entry_header(seq, digest)  # the table's key's MAC (issue 22)
        assert msg.headers[MAC_HEADER] == mac
        # the dedupe id: another entry at the seq has another id (issue 23), and no one without
        # the table's key can know it before the entry is shipped (issue 22)
        assert msg.headers[MSG_ID_HEADER] == f"T1:{seq}:{mac.partition(':')[2][:16]}"
        entry = decode_entry(msg.data)
        assert (entry.seq, entry.hash, entry.data) == (seq, digest, json.loads(data))
        assert check_next("T1", head, entry) == ("take", None)
        head = Head(entry.seq, entry.hash)


def test_an_entry_sent_again_after_a_crash_is_kept_once(
    tmp_path: Path,
    nats: NatsServer,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """A crash between the stream's ack and the cursor's write resends; the stream keeps one."""
    stream(nats.url, create=True)
    t = LinkedTable(tmp_path, "T1", 70001, nats.url)
    t.start()
    t.open()
    wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), what="shipped")
    t.stop()
    write_cursor(t.db.with_name("T1.db.link-cursor"), 1)
    again = LinkedTable(tmp_path, "T1", 70001, nats.url)
    again.start()
    tables.append(again)
    wait_for(lambda: again.link.status.shipped_seq == journal_count(again.db), what="shipped again")
    assert len(stream(nats.url)) == journal_count(again.db)


def test_a_forged_entry_is_refused_with_the_table_and_seq() -> None:
    """A consumer checks each table's chain on arrival: an altered entry, a gap, an entry that
    does not chain to the one before are refused, each naming the table and seq."""
    from controller.journal.format import Entry, canonical_json, entry_hash

    def make(seq: int, prev: str, data: dict[str, Any]) -> Entry:
        digest = entry_hash(seq, 5, None, "x", canonical_json(data, "d"), prev, "s")
        return Entry(seq, 5, None, "x", data, prev, digest, "s", "")

    one = make(1, "g", {"a": 1})
    two = make(2, one.hash, {"a": 2})
    assert check_next("T9", None, one) == ("take", None)
    assert check_next("T9", Head(1, one.hash), two) == ("take", None)
    assert check_next("T9", Head(2, two.hash), two) == ("duplicate", None)
    forged = Entry(2, 5, None, "x", {"a": 3}, one.hash, two.hash, "s", "")
    action, why = check_next("T9", Head(1, one.hash), forged)
    assert action == "refuse" and why is not None and "table T9 seq 2" in why
    action, why = check_next("T9", None, two)
    assert action == "refuse" and why is not None and "gap" in why and "seq 2" in why
    other = make(2, "not-one", {"a": 2})
    action, why = check_next("T9", Head(1, one.hash), other)
    assert action == "refuse" and why is not None and "does not chain" in why


def test_a_table_that_stops_with_unshipped_entries_says_how_many(
    tmp_path: Path,
    nats: NatsServer,
    tables: list,  # type: ignore[type-arg]
    caplog: Any,
) -> None:
    """Issue 22 item 4: a stop during an outage cannot send the backlog; the link's status and
    log say how many entries stay unshipped (they are in the journal and go at the next start)."""
    stream(nats.url, create=True)
    t = LinkedTable(tmp_path, "T1", 70001, nats.url)
    t.start()
    tables.append(t)
    t.open()
    wait_for(lambda: t.link.status.shipped_seq == journal_count(t.db), what="shipped")
    nats.kill()
    t.ev("table_closed", supervisor="trainer")
    t.ev("table_opened", supervisor="trainer")
    shipped = t.link.status.shipped_seq
    link = t.link
    t.stop()
    tables.remove(t)
    waiting = journal_count(t.db) - shipped
    assert waiting >= 2 and link.status.unshipped == waiting
    assert f"link: stopped with {waiting} entries unshipped (seq {shipped + 1} to" in caplog.text
    nats.start()
    again = LinkedTable(tmp_path, "T1", 70001, nats.url)
    again.start()
    tables.append(again)
    wait_for(lambda: again.link.status.shipped_seq == journal_count(again.db), 20, what="sent")
    again.stop()
    tables.remove(again)
    assert again.attachment.link is None and len(stream(nats.url)) == journal_count(again.db)
