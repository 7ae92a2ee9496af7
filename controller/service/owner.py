"""The owner thread: the one thread that steps the round machine, commits and applies effects.

Responsible for the event flow of DESIGN.md, in this order, one event at a time:
    1. take the next event (events posted by effects first, then the queue);
    2. ``effects = machine.step(event, now_ms)`` with the injected UTC clock;
    3. ONE journal commit: the entry (event data + ``"effects"``), the snapshot and the meters;
    4. only then apply the effects: device effects through the device adapter, ``draw_rng`` by
       drawing from the injected source (the OS CSPRNG on real hardware) and processing
       ``rng_drawn`` next, ``post`` by processing that event next;
    5. publish an immutable `PublicSnapshot` (an attribute swapped atomically) for readers.
Deadlines are waits on the queue with a timeout (no timer threads). Power-up opens the journal,
which vouches for its head (the stored snapshot, meters and round count are those the last
entry's state hash records; the anchor is not ahead), restores the stored snapshot (no replay),
journals ``power_up`` with the software hash, re-applies the committed state's outputs (which
repairs a crash between commit and output), then compares the configuration file with the
journal's (`controller.service.restart`). Every power-up step reads a fixed number of rows.

Other threads only call `Owner.post` (or `Owner.post_tracked`, whose `Receipt` tells the poster
the seq and effects of its event's entry once committed), `Owner.stop`, read `Owner.public` and
wait on `Owner.wait_idle` / `Owner.wait_published` / `Receipt.wait`; readers of committed entries
subscribe to `Owner.tail` (one follower of the journal for all of them). This module must never
decide what an event means (the machine does), never apply an effect before its commit, never let
a reader touch the machine or the database, and never start a timer thread.

A draw source that fails or returns anything but 1..7 gives ``fault_raised RNG_FAILURE`` (nothing
is drawn or shown); a device adapter that raises gives ``fault_raised DEVICE_OUTPUT``.

Storage fault at power-up (`StorageFault`: the storage check failed, the journal cannot be
read, its head is not vouched for, it is behind its anchor, or a live table's journal is missing
while its ``<journal>.has-run`` marker, written at the first power-up, says the table has run
here: a fresh journal only by `tablectl journal carry`): nothing is appended, the table goes
to the safe state with the fault glyph and `start` raises it. Storage failure while running (an
append raises `JournalError`): the machine has stepped past the journal, so its state can no
longer be trusted. The owner applies none of that event's effects, puts the table in the safe
state with the fault glyph, sets ``storage_fault`` in the public snapshot and refuses every later
event (logged, never stepped). No supervisor action clears either: only a restart whose power-up
passes the storage check (NJ 13:69E-1.39B(h): recover to the prior, committed state).

Two optional hooks, set before `start`: ``heartbeat`` is called by the owner thread once per loop
iteration (an event handled or the queue's timeout looked at: the progress systemd's watchdog
sees, `controller.service.notify.OwnerWatchdog`); an owner stuck in a step never calls it.
``software_approval(hash)`` compares the software hash journaled at power-up with the approved
one (`controller.service.selfcheck.approval_problem`): a problem is journaled as ``fault_raised
SOFTWARE_UNAPPROVED`` right after ``power_up`` and, like a storage fault, every later event is
refused until a restart whose software is the approved one (NY 5321.18(b)(3)(iv), NJ
13:69E-1.39B(e): the self-check fails, play is refused).
"""

from __future__ import annotations

import collections
import json
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from controller.journal.anchor import AnchorError, load_key
from controller.journal.format import (
    Entry,
    StorageFault,
    StoredState,
    canonical_json,
    check_json_object,
    completes_a_round,
    meters_json,
    state_hash,
)
from controller.journal.redact import hide_cards
from controller.journal.store import Journal, JournalError
from controller.journal.tail import JournalTail
from controller.service import restart, selfcheck
from controller.service.carry import has_run_marker
from controller.service.rng import DrawSource, check_draw, draw_position
from controller.service.timesync import clock_synchronised
from fsm.round.effects import DrawRng, Effect, Post, parse_effect
from fsm.round.events import JSON, Deadline, Event, FaultRaised, PowerUp, RngDrawn
from fsm.round.records import RecordError

log = logging.getLogger(__name__)

NowMs = Callable[[], int]

#: The machine's states whose entries store the snapshot and meters at once (issue 29: inside a
#: round they are stored at its end, `controller.journal.format.STATE_ENTRIES`).
STATE_STORED_AT_ONCE = frozenset({"Closed", "Maintenance", "Fault"})
#: Effects the owner carries out itself; every other effect goes to the device adapter.
OWNER_EFFECTS = frozenset({"post", "draw_rng"})
#: The longest the loop sleeps on the queue before looking at the clock again (seconds).
MAX_WAIT_S = 0.25
#: The fault journaled when the software hash is not the approved one.
SOFTWARE_FAULT_CODE = "SOFTWARE_UNAPPROVED"


class Machine(Protocol):
    """What the owner needs of the round machine (``fsm.round.machine.RoundMachine``)."""

    @property
    def state(self) -> str: ...

    @property
    def round_id(self) -> int: ...

    @property
    def entry_round_id(self) -> int: ...

    def step(self, event: Event, now_ms: int) -> list[Effect]: ...

    def snapshot(self) -> dict[str, JSON]: ...

    def public_view(self) -> dict[str, JSON]: ...

    def outputs(self) -> list[Effect]: ...

    def meters(self) -> dict[str, dict[str, JSON]]: ...

    def next_deadline_ms(self) -> int | None: ...


class MachineFactory(Protocol):
    """Builds the machine: fresh (snapshot None) or restored from the stored snapshot."""

    def __call__(self, snapshot: Mapping[str, JSON] | None) -> Machine: ...


class Devices(Protocol):
    """The device adapter (``controller.service.devices``): drives outputs, knows nothing of the
    game."""

    def apply(self, effect: Effect) -> None: ...

    def safe_state(self, glyph: str = " ") -> None: ...

    def close(self) -> None: ...


def utc_now_ms() -> int:
    """The real clock: UTC milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


def _freeze(value: JSON) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class PublicSnapshot:
    """What readers (status line, SAS responder, web page) may see; never mutated after
    publication. ``view`` and ``meters`` are read-only mappings (lists become tuples)."""

    seq: int
    ts_ms: int
    state: str
    round_id: int
    rounds_completed: int
    view: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    meters: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    storage_fault: str | None = None
    last_event: str = ""
    #: keys of the configuration file that differ from the journal's while the table is open:
    #: journaled as ``config_pending``, applied when the table next closes
    config_pending: tuple[str, ...] = ()
    #: the software is not the approved release (``fault_raised SOFTWARE_UNAPPROVED``): every
    #: event is refused until a restart with the approved software
    software_fault: str | None = None
    #: ``tablectl run --unapproved-bench``: a lab bench playing unapproved software (every
    #: screen says so)
    unapproved_bench: bool = False


@dataclass
class Receipt:
    """What became of one event posted with `Owner.post_tracked`; filled in by the owner thread
    once the event and everything it posted were processed and published. ``seq`` and
    ``effects`` are those of the event's own journal entry (``seq`` None: never committed, and
    ``error`` says why); ``public`` is the snapshot published after it."""

    event_type: str
    seq: int | None = None
    effects: tuple[Effect, ...] = ()
    public: PublicSnapshot | None = None
    error: str | None = None
    _done: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the owner has finished with the event (True) or ``timeout``."""
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def _finish(
        self,
        committed: tuple[int, list[Effect]] | None,
        public: PublicSnapshot | None,
        error: str | None,
    ) -> None:
        if committed is not None:
            self.seq, self.effects = committed[0], tuple(committed[1])
        elif error is None:
            error = "not committed"
        self.public = public
        self.error = None if committed is not None else error
        self._done.set()


@dataclass(frozen=True)
class _Tracked:
    """A queued input whose poster waits on a `Receipt`."""

    event: Event
    receipt: Receipt


_STOP = object()


def _missing_or_empty(path: Path) -> bool:
    return not path.exists() or path.stat().st_size == 0


def _owner_effects(journaled: object) -> list[Effect]:
    """The ``post`` / ``draw_rng`` effects among an entry's journaled effects, typed."""
    out: list[Effect] = []
    for raw in journaled if isinstance(journaled, list) else []:
        if isinstance(raw, dict) and raw.get("type") in OWNER_EFFECTS:
            try:
                out.append(parse_effect(raw))
            except RecordError:
                log.error("journaled owner effect is not a valid record: %r", raw)
    return out


class Owner:
    """The owner thread of one table. Build, `start` (which runs the power-up), `post` events,
    `stop`. Only the owner thread touches the machine, the journal and the devices."""

    def __init__(
        self,
        journal_path: str | Path,
        make_machine: MachineFactory,
        devices: Devices,
        *,
        now_ms: NowMs = utc_now_ms,
        draw: DrawSource = draw_position,
        software_hash: Callable[[], str] | None = None,
        storage_check: Callable[[Path], list[str]] | None = None,
        table_id: str | None = None,
        asset_number: int | None = None,
        game_config: Mapping[str, JSON] | None = None,
        anchor_path: str | Path | None = None,
        key_file: str | Path | None = None,
        seal_file: str | Path | None = None,
        training: bool = False,
    ) -> None:
        self.journal_path = Path(journal_path)
        self._training = training  # a simulated training table: every power_up says so
        self._make_machine = make_machine
        self._devices = devices
        self._now_ms = now_ms
        self._draw = draw
        self._software_hash = software_hash
        self._storage_check = storage_check
        self._table_id = table_id
        self._asset_number = asset_number
        self._game_config = None if game_config is None else dict(game_config)
        self._anchor_path = None if anchor_path is None else Path(anchor_path)
        self._key_file = None if key_file is None else Path(key_file)
        self._seal_file = None if seal_file is None else Path(seal_file)
        self._config_pending: tuple[str, ...] = ()
        self._config_refused = False
        self._queue: queue.Queue[Event | _Tracked | object] = queue.Queue()
        self._front: collections.deque[Event] = collections.deque()
        self._machine: Machine | None = None
        self._journal: Journal | None = None
        self._storage_fault: str | None = None
        self._stopping = threading.Event()
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._cond = threading.Condition()
        self._outstanding = 0  # posted but not yet processed (queue + front + current)
        self._fired_deadline: int | None = None
        self._rounds = 0
        self._seq = 0
        self.public = PublicSnapshot(0, 0, "", 0, 0)
        self.exit_error: BaseException | None = None
        self.heartbeat: Callable[[], None] | None = None
        self.software_approval: Callable[[str], str | None] | None = None
        #: set by ``tablectl run --unapproved-bench`` before start: journaled in the power_up
        self.unapproved_bench = False
        self._software_fault: str | None = None
        #: the one follower of this journal's commits: every reader of committed entries
        #: subscribes to it (controller.journal.tail)
        self.tail = JournalTail(self, self.journal_path)

    # ------------------------------------------------------------------ other threads' API
    def post(self, event: Event) -> None:
        """Queue ``event`` for the owner thread (any thread). Its data must be a JSON object
        without an ``effects`` key: ValueError names the problem, nothing is queued."""
        self._check_input(event)
        if self._stopping.is_set():  # shutting down: an input now would never be committed
            log.info("owner stopping: input %s dropped", event.type)
            return
        with self._cond:
            self._outstanding += 1
        self._queue.put(event)

    def post_tracked(self, event: Event) -> Receipt:
        """`post` ``event`` and return a `Receipt` the caller may wait on: after the event's
        entry is committed (and what it posted processed) it holds the entry's seq and effects;
        an event dropped at a stop or refused after a storage fault gets an ``error``."""
        self._check_input(event)
        receipt = Receipt(event.type)
        if self._stopping.is_set():
            receipt._finish(None, self.public, "the table service is stopping: not committed")
            return receipt
        with self._cond:
            self._outstanding += 1
        self._queue.put(_Tracked(event, receipt))
        return receipt

    def _check_input(self, event: Event) -> None:
        if not isinstance(event, Event) or not isinstance(event.type, str) or not event.type:
            raise ValueError(f"post: not an Event with a type: {event!r}")
        data = check_json_object(event.data, f"event {event.type}: data")
        if "effects" in data:
            raise ValueError(f"event {event.type}: data.effects: reserved for the journal")
        canonical_json(dict(data), f"event {event.type}: data")

    def start(self, timeout: float = 30.0) -> None:
        """Start the owner thread and wait for its power-up; re-raises a power-up failure
        (e.g. `JournalError` for a journal that cannot be opened)."""
        self._thread = threading.Thread(target=self._run, name="owner", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("owner: power-up did not finish")
        if self._startup_error is not None:
            self._thread.join()
            raise self._startup_error

    def stop(self, timeout: float | None = 30.0) -> None:
        """Finish the current event (and the events it posted), put the table in the safe
        state, close the devices and the journal, end the thread. Queued inputs are dropped:
        they were never committed, so they never happened."""
        self._stopping.set()
        self._queue.put(_STOP)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every posted event has been processed (True) or ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: self._outstanding == 0, timeout)

    def wait_published(self, after_seq: int, timeout: float | None = None) -> PublicSnapshot:
        """Block until a snapshot newer than ``after_seq`` is published (or ``timeout``, or the
        owner stopped); returns the current one either way."""
        with self._cond:
            self._cond.wait_for(
                lambda: self.public.seq > after_seq or not self.alive or bool(self._storage_fault),
                timeout,
            )
            return self.public

    # ------------------------------------------------------------------ the owner thread
    def _run(self) -> None:
        try:
            self._power_up()
        except BaseException as exc:
            self._startup_error = exc
            self._close()
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop()
        except BaseException as exc:  # a bug: leave the table safe, let the caller see it
            log.exception("owner thread failed")
            self.exit_error = exc
        finally:
            self._safe_and_close()

    @staticmethod
    def _clock_synced() -> bool:

        return clock_synchronised()

    def _power_up(self) -> None:
        """Open and vouch for the journal, restore, journal ``power_up``, re-apply outputs.

        Anything that makes the journal untrustworthy (the storage check's problems, a head the
        chain does not vouch for, a journal behind its anchor, any SQLite error while reading)
        is a `StorageFault`: nothing is appended, the table goes to the safe state with the
        fault glyph, and `start` raises it. Only a restart that passes the check clears it.
        """

        path = self.journal_path
        marker = has_run_marker(path)
        try:
            if not self._training and marker.exists() and _missing_or_empty(path):
                raise StorageFault(
                    f"{path}: storage fault: the journal is missing or empty but this table has "
                    f"run here ({marker}): the journal file was lost or replaced (restore it, or "
                    "begin a new journal carrying the meters over with two supervisors' PINs: "
                    "tablectl journal carry, docs/journal.md)"
                )
            if self._storage_check is not None:
                problems = list(self._storage_check(path))
            else:  # the power-up check: fixed cost (the full check is verify's, maintenance's)
                problems = selfcheck.check_storage(path, full=False)
            if any("not a pai gow table journal" in p for p in problems):
                raise JournalError(problems[0])  # another program's file: refused, untouched
            if problems:
                raise StorageFault(f"{path}: storage fault: {'; '.join(problems)[:500]}")
            software = (self._software_hash or selfcheck.software_hash)()
            key = None if self._key_file is None else load_key(self._key_file)
            genesis = self._game_config
            if genesis is None:  # a new journal records the configuration its machine runs
                recorded = self._make_machine(None).snapshot().get("config")
                genesis = dict(recorded) if isinstance(recorded, Mapping) else None
            self._journal = Journal.open(
                path,
                table_id=self._table_id,
                created_ms=self._now_ms(),
                asset_number=self._asset_number,
                config=genesis,
                anchor=self._anchor_path,
                key=key,
                seal_file=self._seal_file,
                mode="training" if self._training else "live",
                state_per_round=True,  # issue 29: the SD card's bytes
            )
            if not self._training and not marker.exists():
                try:  # the table has run here: a lost journal is never replaced by a fresh one
                    marker.write_text(f"{self._table_id or ''}\n")
                except OSError as exc:
                    raise StorageFault(f"{marker}: storage fault: cannot write: {exc}") from exc
            stored = self._journal.last_state()
            pending: list[Effect] = []
            if stored is None:
                self._machine = self._make_machine(None)
            else:
                self._machine = self._make_machine(stored.snapshot)
                last = self._replay_after(stored)
                effects = [] if last is None else last.data.get("effects", [])
                # a post / draw_rng of the last committed entry was never processed (it would
                # be the next entry): the crash came between commit and output
                pending = _owner_effects(effects)
        except (sqlite3.Error, ValueError, AnchorError) as exc:
            self._refuse_storage(StorageFault(f"{path}: storage fault at power-up: {exc}"))
        except StorageFault as exc:
            self._refuse_storage(exc)
        assert self._journal is not None and self._machine is not None
        self._seq = self._journal.count()
        self._rounds = self._journal.rounds
        power_up = PowerUp(
            software_hash=software,
            storage={"ok": True, "problems": []},
            restored_seq=0 if stored is None else stored.seq,
            # a Pi has no RTC: false = this and later timestamps predate time sync (timesync.py)
            clock_synced=self._clock_synced(),
            training=True if self._training else None,
            unapproved_bench=True if self.unapproved_bench else None,
        )
        self._process(power_up.envelope())
        if self._storage_fault:  # the power-up entry itself did not commit (disk full, ...)
            raise StorageFault(f"{path}: storage fault at power-up: {self._storage_fault}")
        self._approve_software(software)
        outputs = self._machine.outputs()
        self._apply([e for e in outputs if e.TYPE not in OWNER_EFFECTS], [])
        # the requests the committed state waits on (machine.outputs) and the post / draw_rng
        # effects of the last entry, each once: processed next, in order
        requests: dict[str, Effect] = {}
        if self._software_fault:  # nothing is requested or drawn for unapproved software
            pending, outputs = [], []
        for effect in [*pending, *(e for e in outputs if e.TYPE in OWNER_EFFECTS)]:
            requests.setdefault(canonical_json(effect.to_json(), "effect"), effect)
        for effect in reversed(list(requests.values())):
            event = self._owner_effect_event(effect)
            if event is not None:
                self._front.appendleft(event)
        self._drain_front()
        self._compare_config(at_power_up=True)
        self._publish("power_up")

    def _replay_after(self, stored: StoredState) -> Entry | None:
        """The entries after the stored state (written once a round: a cut may leave it up to
        `STATE_ENTRIES` behind), stepped through the restored machine exactly as journaled, each
        checked against the state hash it recorded; the last entry (None: none at all). A
        mismatch is a `StorageFault`: the table never resumes from a state the chain does not
        vouch for."""
        machine = self._machine
        journal = self._journal
        assert machine is not None and journal is not None
        last = next(journal.entries(stored.seq, stored.seq), None)
        rounds = stored.rounds
        for entry in journal.entries(stored.seq + 1):
            data = {k: v for k, v in entry.data.items() if k != "effects"}
            machine.step(Event(entry.type, data), entry.ts_ms)
            if completes_a_round(entry.type, entry.data):
                rounds += 1
            meters = {
                level: canonical_json(values, "meters")
                for level, values in machine.meters().items()
            }
            snapshot = canonical_json(machine.snapshot(), "snapshot")
            if state_hash(snapshot, meters_json(meters), rounds) != entry.state_hash:
                raise StorageFault(
                    f"{journal.path}: storage fault: seq {entry.seq} does not replay to the "
                    f"state it recorded from the stored state of seq {stored.seq} (run tablectl "
                    "journal verify)"
                )
            last = entry
        return last

    def _approve_software(self, software: str) -> None:
        """The software check can fail: a problem is journaled as a fault, then play refused."""
        if self.software_approval is None:
            return
        try:
            problem = self.software_approval(software)
        except Exception as exc:  # an approval that cannot be read is not an approval
            problem = f"approved software hash unreadable: {type(exc).__name__}: {exc}"
        if not problem:
            return
        log.critical("software not approved, play refused: %s", problem)
        fault = FaultRaised(code=SOFTWARE_FAULT_CODE, device="software", detail=problem[:200])
        self._process(fault.envelope())
        self._software_fault = problem
        self._front.clear()

    def _refuse_storage(self, fault: StorageFault) -> None:
        """A storage fault at power-up: safe state with the fault glyph, nothing appended."""
        log.critical("%s", fault)
        self._storage_fault = str(fault)
        try:
            self._devices.safe_state("F")
        except Exception:
            log.exception("could not put the table in the safe state")
        raise fault

    def _compare_config(self, at_power_up: bool = False) -> None:
        """The configuration file against the journal's (restart): journaled and applied when
        the table is closed, else one ``config_pending`` entry and applied at the next close."""
        machine = self._machine
        if self._game_config is None or machine is None or self._storage_fault:
            return
        if self._software_fault:
            return
        if not at_power_up and (not self._config_pending or self._config_refused):
            return
        journaled = machine.snapshot().get("config")
        differences = restart.config_differences(journaled, self._game_config)
        if not differences:
            self._config_pending = ()
            return
        if machine.state != "Closed":
            if at_power_up:
                self._config_pending = tuple(key for key, _, _ in differences)
                self._process(restart.pending_event(differences))
            return
        for event in restart.change_events(differences):
            committed = self._process(event)
            self._drain_front()
            if event.type == "config_changed" and committed is not None:
                refused = [e for e in committed[1] if e.get("type") == "rejected"]
                if refused:
                    log.error("configuration file refused by the table: %s", refused[0])
                    self._config_refused = True
        if not self._config_refused:
            self._config_pending = ()
        else:
            self._config_pending = tuple(key for key, _, _ in differences)

    def _loop(self) -> None:
        while not self._stopping.is_set():
            self._beat()
            try:
                item = self._queue.get(timeout=self._wait_s())
            except queue.Empty:
                self._check_deadline()
                continue
            if item is _STOP:
                break
            if isinstance(item, _Tracked):
                self._handle(item.event, item.receipt)
            else:
                assert isinstance(item, Event)
                self._handle(item)
            self._check_deadline()

    def _beat(self) -> None:
        """One loop iteration done: the watchdog's progress (never raises into the loop)."""
        if self.heartbeat is not None:
            try:
                self.heartbeat()
            except Exception:
                log.exception("heartbeat failed")

    def _wait_s(self) -> float:
        machine = self._machine
        deadline = None if machine is None or self._storage_fault else machine.next_deadline_ms()
        if deadline is None or deadline == self._fired_deadline:
            return MAX_WAIT_S
        return max(0.0, min(MAX_WAIT_S, (deadline - self._now_ms()) / 1000))

    def _check_deadline(self) -> None:
        machine = self._machine
        if machine is None or self._storage_fault or self._stopping.is_set():
            return
        deadline = machine.next_deadline_ms()
        if deadline is None or deadline == self._fired_deadline or self._now_ms() < deadline:
            return
        self._fired_deadline = deadline  # once per deadline value, even if the machine refuses
        with self._cond:
            self._outstanding += 1
        self._handle(Deadline().envelope())

    def _handle(self, event: Event, receipt: Receipt | None = None) -> None:
        """Process one input event and everything it posts, then publish once (and fill in the
        poster's receipt)."""
        committed: tuple[int, list[Effect]] | None = None
        try:
            committed = self._process(event)
            self._drain_front()
            self._compare_config()
        finally:
            self._publish(event.type)
            if receipt is not None:
                fault = self._storage_fault
                error = f"storage fault: {fault}" if fault else None
                if self._software_fault:
                    error = f"software not approved: {self._software_fault}"
                receipt._finish(committed, self.public, error)
            with self._cond:
                self._outstanding -= 1
                self._cond.notify_all()

    def _drain_front(self) -> None:
        while self._front:
            self._process(self._front.popleft())

    def _process(self, event: Event) -> tuple[int, list[Effect]] | None:
        """Step, commit, apply one event; its entry's (seq, effects), None when not committed."""
        if self._storage_fault:
            # never the cards of a dealt event (NJ 13:69F-31.10): the log leaves the controller
            log.error("storage fault: refused %s %s", event.type, hide_cards(event.data))
            return None
        if self._software_fault:
            log.error("software not approved: refused %s %s", event.type, dict(event.data))
            return None
        machine = self._machine
        journal = self._journal
        assert machine is not None and journal is not None
        now = self._now_ms()
        # the machine sees the data exactly as it is journaled (canonical JSON: sorted keys,
        # lists for tuples), so a replay of the journal steps the same input
        event = Event(event.type, json.loads(canonical_json(dict(event.data), "event data")))
        left = machine.state  # the state this entry leaves
        effects = machine.step(event, now)
        data: dict[str, JSON] = {**event.data, "effects": [e.to_json() for e in effects]}
        try:
            entry = journal.append(
                now,
                machine.entry_round_id,  # never a round id taken from the event unchecked
                event.type,
                data,
                snapshot=machine.snapshot(),
                meters=machine.meters(),
                # stored at once outside a round (closed, maintenance, a fault) and when the
                # entry leaves one (the table opened, a fault cleared): what readers of the
                # stored state (reports, rng dump, archive) ask about; in a round, at its end
                store_state=machine.state in STATE_STORED_AT_ONCE or left in STATE_STORED_AT_ONCE,
            )
        except (JournalError, sqlite3.Error, OSError) as exc:
            self._fail_storage(event, exc)
            return None
        self._seq = entry.seq
        self._rounds = journal.rounds
        if event.type == "maintenance_entered" and machine.state == "Maintenance":
            self._maintenance_check(event)
            if self._storage_fault:
                return entry.seq, effects
        posted: list[Event] = []
        self._apply(effects, posted)
        for follow in reversed(posted):
            self._front.appendleft(follow)
        return entry.seq, effects

    def _owner_effect_event(self, effect: Effect) -> Event | None:
        if isinstance(effect, DrawRng):
            try:
                value = check_draw(self._draw())
            except Exception as exc:  # a failed RNG is a fault: nothing is drawn or shown
                log.exception("starting-position RNG failed")
                detail = f"{type(exc).__name__}: {exc}"[:500]
                return FaultRaised(code="RNG_FAILURE", device="rng", detail=detail).envelope()
            return RngDrawn(value=value).envelope()
        if isinstance(effect, Post):
            inner = effect.event.data
            return Event(effect.event.type, dict(inner) if isinstance(inner, Mapping) else {})
        return None

    def _apply(self, effects: Sequence[Effect], posted: list[Event]) -> None:
        """Apply committed effects in order; owner effects become events processed next."""
        for effect in effects:
            if effect.TYPE in OWNER_EFFECTS:
                follow = self._owner_effect_event(effect)
                if follow is not None:
                    posted.append(follow)
                continue
            try:
                self._devices.apply(effect)
            except Exception as exc:  # a device that fails is a fault, never a crash
                log.exception("device adapter failed on %r", effect)
                machine = self._machine
                if machine is not None and machine.state != "Fault":
                    detail = f"{type(exc).__name__}: {exc}"[:500]
                    fault = FaultRaised(code="DEVICE_OUTPUT", device=effect.TYPE, detail=detail)
                    posted.append(fault.envelope())

    def _maintenance_check(self, event: Event) -> None:
        """The full SQLite ``integrity_check`` of the whole journal, on entering maintenance
        (the table is closed; power-up checks only the pages it reads, at a fixed cost)."""

        try:
            problems = selfcheck.check_storage(self.journal_path, full=True)
        except Exception as exc:
            problems = [f"{type(exc).__name__}: {exc}"]
        if problems:
            self._fail_storage(event, StorageFault("; ".join(problems)[:500]))

    def _fail_storage(self, event: Event, exc: BaseException) -> None:
        self._storage_fault = f"{event.type}: {exc}"
        log.critical("journal commit failed, refusing play until restart: %s", exc)
        self._front.clear()
        try:
            self._devices.safe_state("F")
        except Exception:
            log.exception("could not put the table in the safe state")

    def _publish(self, last_event: str) -> None:
        machine = self._machine
        if machine is None:
            return
        if self._storage_fault:
            # the machine is past the journal: publish only the fault, keep the committed view
            old = self.public
            public = PublicSnapshot(
                old.seq, old.ts_ms, "Fault", old.round_id, old.rounds_completed, old.view,
                old.meters, self._storage_fault, last_event, self._config_pending,
                unapproved_bench=self.unapproved_bench,
            )  # fmt: skip
        else:
            public = PublicSnapshot(
                seq=self._seq,
                ts_ms=self._now_ms(),
                state=machine.state,
                round_id=machine.round_id,
                rounds_completed=self._rounds,
                view=_freeze(machine.public_view()),
                meters=_freeze(machine.meters()),
                storage_fault=None,
                last_event=last_event,
                config_pending=self._config_pending,
                software_fault=self._software_fault,
                unapproved_bench=self.unapproved_bench,
            )
        with self._cond:
            self.public = public
            self._cond.notify_all()

    def _safe_and_close(self) -> None:
        try:
            self._devices.safe_state(" " if not self._storage_fault else "F")
        except Exception:
            log.exception("could not put the table in the safe state")
        self._close()
        while True:  # inputs queued behind the stop were never committed: tell their posters
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, _Tracked):
                item.receipt._finish(None, self.public, "the table service stopped: not committed")
        with self._cond:
            self._outstanding = 0
            self._cond.notify_all()

    def _close(self) -> None:
        try:
            self._devices.close()
        except Exception:
            log.exception("closing the devices failed")
        if self._journal is not None:
            self._journal.close()
            self._journal = None
