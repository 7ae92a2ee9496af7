"""The owner thread's event flow (DESIGN.md "How an event flows"; issue 3): commit before output,
events posted by effects ahead of the queue, the RNG draw journaled as ``rng_drawn``, deadlines
without timer threads, power-up repair of outputs, storage failure refusing play, safe stop.

The owner is the thing under test; the round machine here is a small scripted machine with the
same API (the real one is exercised end to end by tests/test_simulate*.py). Journals are real
SQLite files; "committed" is read through a second, read-only connection.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from journal_support import journal_entries

from controller.journal.audit import connect_read_only
from controller.journal.store import Journal
from controller.service.owner import Owner
from fsm.round.effects import Display, DrawRng, Effect, Lights, Post, PostedEvent, Rejected
from fsm.round.events import JSON, Event

LIT = ["lit", "off", "off", "off", "off", "off"]


class ScriptMachine:
    """A tiny machine: each event type answers fixed effects; the state is the event history."""

    def __init__(self, snapshot: Mapping[str, JSON] | None = None) -> None:
        snap = dict(snapshot or {})
        self.history: list[str] = list(snap.get("history", []))
        self.lights: list[str] = list(snap.get("lights", ["off"] * 6))
        self.deadline: int | None = snap.get("deadline")
        self.rng: list[int] = list(snap.get("rng", []))
        self.fault = bool(snap.get("fault", False))

    @property
    def state(self) -> str:
        return "Fault" if self.fault else "Open"

    @property
    def round_id(self) -> int:
        return self.history.count("round_completed")

    @property
    def entry_round_id(self) -> int:
        return self.round_id

    def step(self, event: Event, now_ms: int) -> list[Effect]:
        self.history.append(event.type)
        kind = event.type
        if kind == "light":
            self.lights = list(event.data["states"])
            return [Lights(tuple(self.lights)), Display("-")]
        if kind == "chain":
            return [
                Post(PostedEvent("first", {"n": 1})),
                Display("7"),
                Post(PostedEvent("second", {})),
            ]
        if kind == "first":
            return [Post(PostedEvent("nested", {}))]
        if kind == "start_position":
            return [DrawRng()]
        if kind == "rng_drawn":
            self.rng.append(event.data["value"])
            return [Display(str(event.data["value"]))]  # type: ignore[arg-type]
        if kind == "arm":
            self.deadline = now_ms + int(event.data["ms"])
            return []
        if kind == "deadline":
            if self.deadline is None or now_ms < self.deadline:
                return [Rejected("deadline", "not due", "refused")]
            self.deadline = None
            self.fault = True
            return [Display("F")]
        return []

    def snapshot(self) -> dict[str, JSON]:
        return {
            "history": list(self.history),
            "lights": list(self.lights),
            "deadline": self.deadline,
            "rng": list(self.rng),
            "fault": self.fault,
        }

    def public_view(self) -> dict[str, JSON]:
        return {"lights": list(self.lights), "events": len(self.history)}

    def outputs(self) -> list[Effect]:
        out: list[Effect] = [Lights(tuple(self.lights))]  # type: ignore[arg-type]
        if self.history and self.history[-1] == "start_position":  # waiting on the draw
            out.append(DrawRng())
        return out

    def meters(self) -> dict[str, dict[str, JSON]]:
        return {"progressive": {"display_cents": 100 * len(self.history)}}

    def next_deadline_ms(self) -> int | None:
        return self.deadline


class RecordingDevices:
    """Records every effect it is told to apply together with the last seq committed in the
    journal file at that moment (read through its own read-only connection)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.applied: list[tuple[Effect, int]] = []
        self.safe: list[str] = []
        self.closed = False

    def committed_seq(self) -> int:
        conn = connect_read_only(self.path)
        try:
            return int(conn.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0])
        finally:
            conn.close()

    def apply(self, effect: Effect) -> None:
        self.applied.append((effect, self.committed_seq()))

    def safe_state(self, glyph: str = " ") -> None:
        self.safe.append(glyph)

    def close(self) -> None:
        self.closed = True


def _clock() -> Any:
    return lambda: time.time_ns() // 1_000_000


def _owner(path: Path, devices: Any, **kw: Any) -> Owner:
    return Owner(
        path,
        ScriptMachine,
        devices,
        now_ms=_clock(),
        software_hash=lambda: "f" * 64,
        storage_check=lambda p: [],
        **kw,
    )


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "journal.db"


def test_effects_are_applied_only_after_their_entry_is_committed(db: Path) -> None:
    """DESIGN.md step 3: the entry, snapshot and meters are committed before any effect."""
    devices = RecordingDevices(db)
    owner = _owner(db, devices)
    owner.start()
    owner.post(Event("light", {"states": LIT}))
    owner.post(Event("chain"))
    assert owner.wait_idle(10)
    owner.stop()
    entries = journal_entries(db)
    entry_of: dict[str, int] = {}
    for seq, _type, data in entries:
        for effect in data["effects"]:
            entry_of.setdefault(repr(effect), seq)
    device_effects = [e for e, _ in devices.applied]
    assert {"type": "lights", "states": LIT} in device_effects
    for effect, committed in devices.applied:
        if repr(effect) in entry_of:  # outputs re-applied at power-up belong to no entry
            assert committed >= entry_of[repr(effect)], (effect, committed)
    # the stored state row moved with the entry (same transaction)
    with Journal.open(db) as journal:
        stored = journal.last_state()
    assert stored is not None and stored.seq == entries[-1][0]
    assert stored.snapshot["lights"] == LIT


def test_posted_events_are_processed_next_ahead_of_the_queue(db: Path) -> None:
    """A ``post`` effect is the very next event, before anything already queued (depth first)."""
    owner = _owner(db, RecordingDevices(db))
    # queued before the owner runs, so "later" is already waiting when "chain" is processed
    owner.post(Event("chain"))
    owner.post(Event("later"))
    owner.start()
    assert owner.wait_idle(10)
    owner.stop()
    types = [t for _, t, _ in journal_entries(db)]
    assert types == ["power_up", "chain", "first", "nested", "second", "later"]


def test_draw_rng_is_drawn_once_and_journaled_as_rng_drawn_next(db: Path) -> None:
    """table-rules.md RNG: the value displayed and journaled is the value drawn, one draw."""
    draws: list[int] = []

    def source() -> int:
        draws.append(5)
        return 5

    devices = RecordingDevices(db)
    owner = _owner(db, devices, draw=source)
    owner.post(Event("start_position"))
    owner.post(Event("later"))
    owner.start()
    assert owner.wait_idle(10)
    owner.stop()
    entries = journal_entries(db)
    types = [t for _, t, _ in entries]
    assert types == ["power_up", "start_position", "rng_drawn", "later"]
    assert entries[2][2]["value"] == 5 and draws == [5]
    assert ({"type": "display", "glyph": "5"}, 3) in devices.applied


def test_a_failing_draw_source_is_a_journaled_fault_never_a_value(db: Path) -> None:
    """table-rules.md RNG: only a value 1..7 drawn by the RNG is shown; a source that fails or
    returns anything else gives an RNG_FAILURE fault and no rng_drawn entry."""
    for bad in (lambda: 8, lambda: 1 // 0):
        path = db.with_name(f"j{id(bad)}.db")
        owner = _owner(path, RecordingDevices(path), draw=bad)
        owner.start()
        owner.post(Event("start_position"))
        owner.wait_idle(5)
        owner.stop()
        entries = journal_entries(path)
        assert [t for _, t, _ in entries] == ["power_up", "start_position", "fault_raised"]
        assert entries[2][2]["code"] == "RNG_FAILURE" and entries[2][2]["device"] == "rng"
        assert owner.exit_error is None


def test_deadline_is_posted_by_the_loop_when_reached(db: Path) -> None:
    """DESIGN.md: timeouts are deadlines in the owner loop, not timer threads."""
    owner = _owner(db, RecordingDevices(db))
    owner.start()
    threads_before = threading.active_count()
    owner.post(Event("arm", {"ms": 40}))
    snap = owner.public
    while snap.state != "Fault":
        snap = owner.wait_published(snap.seq, timeout=10)
        assert owner.alive
    assert threading.active_count() == threads_before
    owner.stop()
    types = [t for _, t, _ in journal_entries(db)]
    assert types == ["power_up", "arm", "deadline"]


def test_power_up_journals_software_hash_and_storage_check(db: Path) -> None:
    """table-rules.md self-check (NY 5321.18(b)(3)(iv)): the power-up entry records the
    software's SHA-256 and the storage check that passed."""
    owner = Owner(
        db, ScriptMachine, RecordingDevices(db), now_ms=_clock(), software_hash=lambda: "a" * 64
    )
    owner.start()
    owner.stop()
    entries = journal_entries(db)
    assert entries[0][1] == "power_up"
    assert entries[0][2]["software_hash"] == "a" * 64
    assert entries[0][2]["storage"]["ok"] is True


def test_a_failed_storage_check_refuses_play_and_appends_nothing(db: Path) -> None:
    """A failed storage check is a storage fault (NJ 13:69E-1.39B(d)): the table goes to the
    safe state with the fault glyph, nothing is appended, and start raises: no supervisor
    action can clear it, only a restart whose check passes."""
    from controller.journal.format import StorageFault

    first = _owner(db, RecordingDevices(db))
    first.start()
    first.stop()
    before = journal_entries(db)
    devices = RecordingDevices(db)
    owner = Owner(
        db,
        ScriptMachine,
        devices,
        now_ms=_clock(),
        storage_check=lambda p: [f"{p}: only 10 bytes free, need 16777216"],
    )
    with pytest.raises(StorageFault, match="only 10 bytes free"):
        owner.start()
    assert journal_entries(db) == before
    assert devices.safe[:1] == ["F"] and devices.applied == []
    again = _owner(db, RecordingDevices(db))  # a restart that passes the check: play resumes
    again.start()
    again.stop()
    assert [t for _, t, _ in journal_entries(db)] == ["power_up", "power_up"]


def test_power_up_reapplies_outputs_of_the_committed_state(db: Path) -> None:
    """DESIGN.md: a crash between commit and output is repaired on restart by re-applying the
    outputs of the committed state (here the first run's devices never saw the lights)."""

    class DeadDevices(RecordingDevices):
        def apply(self, effect: Effect) -> None:  # the process "died" before any output
            pass

    first = _owner(db, DeadDevices(db))
    first.start()
    first.post(Event("light", {"states": LIT}))
    assert first.wait_idle(10)
    first.stop()
    devices = RecordingDevices(db)
    second = _owner(db, devices)
    second.start()
    second.stop()
    assert devices.applied[-1][0] == {"type": "lights", "states": LIT}
    assert second.public.view["lights"] == tuple(LIT)


def test_power_up_processes_a_post_committed_but_never_processed(db: Path) -> None:
    """A crash right after committing an entry whose effects post an event: the posted event
    (e.g. round_completed) is processed after power-up, exactly once."""
    machine = ScriptMachine()
    effects = machine.step(Event("chain"), 1)
    with Journal.open(db) as journal:
        journal.append(
            1,
            0,
            "chain",
            {"effects": [e.to_json() for e in effects]},
            machine.snapshot(),
            machine.meters(),
        )
    owner = _owner(db, RecordingDevices(db))
    owner.start()
    owner.stop()
    types = [t for _, t, _ in journal_entries(db)]
    assert types == ["chain", "power_up", "first", "nested", "second"]
    owner2 = _owner(db, RecordingDevices(db))
    owner2.start()
    owner2.stop()
    assert [t for _, t, _ in journal_entries(db)][5:] == ["power_up"]


def test_storage_failure_stops_effects_shows_fault_and_refuses_play(db: Path) -> None:
    """Owner docstring: an append that fails applies none of its effects, shows the fault glyph
    and refuses every later event until a restart."""
    devices = RecordingDevices(db)
    owner = _owner(db, devices)
    owner.start()
    blocker = sqlite3.connect(str(db), timeout=0.1, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the file: the append fails
    try:
        applied_before = len(devices.applied)
        owner.post(Event("light", {"states": LIT}))
        assert owner.wait_idle(30)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert owner.public.storage_fault is not None and "light" in owner.public.storage_fault
    assert len(devices.applied) == applied_before  # no lights for an uncommitted event
    assert devices.safe[-1] == "F"
    owner.post(Event("light", {"states": LIT}))  # storage is back, but play stays refused
    assert owner.wait_idle(10)
    owner.stop()
    assert [t for _, t, _ in journal_entries(db)] == ["power_up"]


def test_post_refuses_data_that_is_not_json_or_uses_the_effects_key(db: Path) -> None:
    owner = _owner(db, RecordingDevices(db))
    with pytest.raises(ValueError, match="event light: data"):
        owner.post(Event("light", {"states": {1, 2}}))
    with pytest.raises(ValueError, match=r"data\.effects"):
        owner.post(Event("light", {"effects": []}))


def test_stop_finishes_current_event_then_safe_state_and_close(db: Path) -> None:
    """SIGTERM path: the table ends lights off, display blank, devices closed."""
    devices = RecordingDevices(db)
    owner = _owner(db, devices)
    owner.start()
    owner.post(Event("chain"))
    owner.wait_idle(10)
    owner.stop()
    assert not owner.alive
    assert devices.safe == [" "] and devices.closed
    assert [t for _, t, _ in journal_entries(db)][-1] == "second"


def test_public_snapshot_is_immutable_and_counts_rounds(db: Path) -> None:
    owner = _owner(db, RecordingDevices(db))
    owner.start()
    owner.post(Event("round_completed", {"round_id": 1}))
    owner.wait_idle(10)
    snap = owner.public
    owner.stop()
    assert snap.rounds_completed == 1 and snap.seq == 2
    with pytest.raises(TypeError):
        snap.view["lights"] = ()  # type: ignore[index]
    with pytest.raises(AttributeError):
        snap.seq = 9  # type: ignore[misc]


def test_power_up_draws_once_when_the_state_and_last_entry_both_await_the_draw(db: Path) -> None:
    """table-rules.md: one draw per round. A crash after committing the entry that asked for the
    draw: the committed state (outputs) and the entry's effects both ask; the owner draws once."""
    machine = ScriptMachine()
    effects = machine.step(Event("start_position"), 1)
    with Journal.open(db) as journal:
        journal.append(
            1,
            0,
            "start_position",
            {"effects": [e.to_json() for e in effects]},
            machine.snapshot(),
            machine.meters(),
        )
    draws: list[int] = []

    def source() -> int:
        draws.append(3)
        return 3

    owner = _owner(db, RecordingDevices(db), draw=source)
    owner.start()
    owner.stop()
    assert [t for _, t, _ in journal_entries(db)] == ["start_position", "power_up", "rng_drawn"]
    assert draws == [3]
