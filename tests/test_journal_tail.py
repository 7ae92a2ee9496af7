"""The journal's one tail (controller/journal/tail.py): one follower reads each committed entry
once and hands it, typed, to every subscriber (the page, the floor link, the shipper, the
narrator), never past the owner's publication; a subscriber that starts behind is handed what it
missed first. Driven by the real owner, round machine and journal."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from sas_support import make_owner, post

from controller.config import SIMULATED_TABLE, load_config
from controller.journal.audit import connect_read_only
from controller.journal.tail import Committed, read_committed
from controller.service.owner import Owner
from fsm.round.effects import Lights, Wagers
from fsm.round.events import ChipDetected, TableOpened


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[Owner]:
    o = make_owner(load_config(SIMULATED_TABLE), tmp_path / "t.db")
    o.start()
    try:
        yield o
    finally:
        o.stop()


class Seen:
    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.published: list[int] = []
        self.entries: list[Committed] = []
        self.lock = threading.Lock()

    def __call__(self, batch: Sequence[Committed], public: Any) -> None:
        with self.lock:
            for c in batch:
                # never handed an entry the owner has not published yet
                assert c.seq <= public.seq
                self.seqs.append(c.seq)
                self.entries.append(c)


def wait_for(seen: Seen, seq: int) -> None:
    for _ in range(200):
        with seen.lock:
            if seen.seqs and seen.seqs[-1] >= seq:
                return
        threading.Event().wait(0.02)
    raise AssertionError(f"not handed seq {seq}: {seen.seqs[-5:]}")


def test_one_follower_reads_each_entry_once_for_every_subscriber(owner: Owner) -> None:
    tail = owner.tail
    page, floor, narrator = Seen(), Seen(), Seen()
    subs = [
        tail.subscribe("page", page, 0),
        tail.subscribe("floor", floor, 0),
        tail.subscribe("narrator", narrator, owner.public.seq),
    ]
    before = tail.read
    start = owner.public.seq
    post(owner, "table_opened", supervisor="s1")
    post(owner, "shuffle_complete", count=53)
    post(owner, "chip_detected", position=3)
    head = owner.public.seq
    for seen in (page, floor, narrator):
        wait_for(seen, head)
    # each entry read from SQLite once, though three subscribers were handed it
    assert tail.read - before == head - start
    assert page.seqs == floor.seqs == list(range(1, head + 1))
    assert narrator.seqs == list(range(start + 1, head + 1))
    for sub in subs:
        tail.unsubscribe(sub)


def test_entries_are_handed_as_typed_records(owner: Owner) -> None:
    seen = Seen()
    sub = owner.tail.subscribe("reader", seen, owner.public.seq)
    post(owner, "table_opened", supervisor="s1")
    post(owner, "shuffle_complete", count=53)
    post(owner, "chip_detected", position=2)
    wait_for(seen, owner.public.seq)
    owner.tail.unsubscribe(sub)
    opened = next(c for c in seen.entries if c.type == "table_opened")
    assert opened.event == TableOpened(supervisor="s1")
    chip = seen.entries[-1]
    assert chip.event == ChipDetected(position=2) and chip.rejected is None
    wagers = [e for e in chip.effects if isinstance(e, Wagers)]
    assert wagers and wagers[0].positions == (2,)
    assert any(isinstance(e, Lights) and e.states[1] == "lit" for e in chip.effects)


def test_a_refused_event_is_handed_with_its_refusal(owner: Owner) -> None:
    seen = Seen()
    sub = owner.tail.subscribe("reader", seen, owner.public.seq)
    post(owner, "chip_detected", position=1)  # the table is closed: untimely
    wait_for(seen, owner.public.seq)
    owner.tail.unsubscribe(sub)
    refusal = seen.entries[-1].rejected
    assert refusal is not None and refusal.event == "chip_detected"


def test_a_late_subscriber_is_handed_what_it_missed_before_subscribe_returns(
    owner: Owner,
) -> None:
    post(owner, "table_opened", supervisor="s1")
    first = Seen()
    sub1 = owner.tail.subscribe("first", first)  # from now on: nothing yet
    assert first.seqs == []
    post(owner, "shuffle_complete", count=53)
    wait_for(first, owner.public.seq)
    late = Seen()
    sub2 = owner.tail.subscribe("late", late, 0)
    assert late.seqs == list(range(1, owner.public.seq + 1))  # already, on this thread
    owner.tail.unsubscribe(sub1)
    owner.tail.unsubscribe(sub2)


def test_the_last_unsubscribe_stops_the_follower(owner: Owner) -> None:
    sub = owner.tail.subscribe("only", Seen())
    assert any(t.name == "journal-tail" for t in threading.enumerate())
    owner.tail.unsubscribe(sub)
    assert not any(t.name == "journal-tail" for t in threading.enumerate())


def test_the_offline_reader_reads_every_row_as_stored(owner: Owner) -> None:
    post(owner, "table_opened", supervisor="s1")
    offline = [(c.seq, c.type, c.data) for c in read_committed(owner.journal_path)]
    conn = connect_read_only(owner.journal_path)
    try:
        rows = conn.execute("SELECT seq, type, data FROM journal ORDER BY seq").fetchall()
    finally:
        conn.close()
    assert offline == [(seq, kind, json.loads(data)) for seq, kind, data in rows]
    assert [c.seq for c in read_committed(owner.journal_path, after=1)] == [2]
