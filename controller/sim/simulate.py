"""The controller on a simulated table: the same wiring (`controller.service.wiring`), owner,
machine, journal and device adapter as on the Pi, with gpiozero's MockFactory pins, simulated shoe
and shuffler and scripted people.

`build_service` wires one table through `wire` with the simulation's `Parts`; `run_headless`
plays until the journal holds N completed rounds (entries ``round_completed``), then stops (or
lingers until SIGTERM); `run_service` plays until SIGTERM / Ctrl-C, printing one status line per
round, with the supervisor console (`controller.console.server`, a wiring attachment) on a socket
beside the journal so a trainer can act as supervisor (`TrainerHold`: the scripted people leave a
table the trainer closed alone). Both resume from whatever the journal holds: a run killed at any
instant and started again ends with exactly N rounds. Simulation only: the seeded draw source and
the scripted people must never be wired into ``tablectl run``; this module holds no game rule.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Any, Protocol, TextIO

from controller.config import SIMULATED_TABLE, TableConfig, load_config
from controller.service.devices import InputPort, TableDevices
from controller.service.notify import Notifier, service_status
from controller.service.owner import Owner, PublicSnapshot, utc_now_ms
from controller.service.rng import SeededDraw
from controller.service.wiring import (
    ConsoleAttachment,
    FloorAttachment,
    Parts,
    Table,
    WebAttachment,
    wire,
)
from controller.sim.actors import ROLES, WAITING_STATES, Director, People
from controller.sim.commands import TrainerConsole
from controller.sim.faults import FaultPlan, parse_faults
from controller.sim.narrate import Narrator
from controller.sim.practice import PracticeDeck, PracticeShoe
from controller.sim.simulated_table import (
    MockPins,
    PersistentDeck,
    PtyFaults,
    deck_path_for,
)
from controller.sim.training import Drills, Trainer
from drivers.gpio.devices import DebounceTimes
from drivers.gpio.factory import make_pin_factory
from drivers.gpio.max7219 import SimulatedChain
from drivers.serial.shoe import ReferenceShoe
from drivers.serial.shuffler import ReferenceShuffler
from drivers.sim.bench import SimulatedDevices

#: A device-waiting state with no new commit for this long gets a supervisor's fault (s).
STALL_S = 3.0
#: A run that makes no progress at all for this long gives up with exit 3 (s).
GIVE_UP_S = 120.0
#: More actions than this in one state of one round means the people are refused (exit 3).
MAX_ACTIONS_IN_PLACE = 50
#: Mock pins have no contact bounce: the quiet-gap filters are off in simulation.
NO_BOUNCE = DebounceTimes(button_s=0.0, chip_s=0.0, shaker_s=0.0)


@dataclass
class Service:
    """One wired simulated table (`controller.service.wiring.Table`) and what the scripted
    people drive."""

    config: TableConfig
    table: Table
    pins: MockPins
    director: Director
    plan: FaultPlan
    faults: PtyFaults
    sim: Any = None  # the pty simulators; None once closed
    trainer: Any = None  # controller.sim.training.Trainer: roles, faults, practice deck, drills

    @property
    def owner(self) -> Owner:
        return self.table.owner

    @property
    def devices(self) -> TableDevices:
        return self.table.devices

    def start(self, *, arm: bool = True) -> None:
        """Start the table (`Table.start`: owner, adapters, attachments, inputs unless ``arm``
        is False)."""
        self.table.start(arm=arm)

    def close(self) -> None:
        """Stop the table, then the pty simulators."""
        self.table.stop()
        if self.sim is not None:
            self.sim.stop()
            self.sim = None


def seed_int(seed: int | str) -> int:
    """The simulators take an int seed; a text seed is hashed (stable across runs)."""
    if isinstance(seed, int):
        return seed
    text = str(seed).strip()
    return int(text) if text.lstrip("-").isdigit() else zlib.crc32(text.encode("utf-8"))


class PtySerial:
    """The simulation's serial ports (`Parts.open_serial`): the shoe and shuffler simulators on
    pseudo-terminals and the real adapters opened on them, the cards kept in the shoe across a
    restart (``deck_path``)."""

    def __init__(
        self,
        seed: int,
        deck_path: Path,
        practice: PracticeDeck | None = None,
        db: Path | None = None,
        ports: Path | None = None,
    ) -> None:
        self.seed = seed
        self.deck_path = deck_path
        self.practice = practice  # the training practice deck (a hit dealt on demand)
        self.db = db
        self.ports = ports
        self.sim: Any = None

    def __call__(self, config: TableConfig, port: InputPort) -> tuple[Any, Any]:

        sim = SimulatedDevices(card_reading=config.game.card_reading_shoe)
        sim.deck = PersistentDeck(self.deck_path)  # the cards stay in the shoe across a restart
        sim.shoe_logic.deck = sim.deck
        if self.practice is not None and self.db is not None:
            sim.shoe_logic = PracticeShoe(
                sim.deck, self.practice, self.db, port, card_reading=sim.card_reading
            )
        name = self.deck_path.name.replace(".sim-shoe.json", ".sim-ports")
        ports = self.ports or self.deck_path.with_name(name)
        ports.mkdir(exist_ok=True)  # beside the journal: nothing left in /tmp after a SIGKILL
        shoe_path, shuffler_path = sim.start(seed=self.seed, directory=str(ports))
        self.sim = sim
        shoe_cfg = replace(config.shoe, port=replace(config.shoe.port, path=shoe_path))
        shuffler_cfg = replace(
            config.shuffler, port=replace(config.shuffler.port, path=shuffler_path)
        )
        return ReferenceShoe.open(shoe_cfg, port), ReferenceShuffler.open(shuffler_cfg, port)


def build_service(
    config: TableConfig,
    db: Path,
    seed: int | str,
    fault_spec: str | None = None,
    *,
    now_ms: Callable[[], int] = utc_now_ms,
    people: People | None = None,
) -> Service:
    """Wire a simulated table through `controller.service.wiring` (nothing started) on the
    simulation's parts: MockFactory pins without bounce filters, the MAX7219 chain simulated in
    memory, the shoe and shuffler simulators on pseudo-terminals behind the real serial
    adapters, the seeded draw; the scripted people drive the mock pins."""
    plan = FaultPlan(parse_faults(fault_spec))
    factory = make_pin_factory("mock")
    practice = PracticeDeck(config.game.table.line_names)
    # the undealt deck in the simulator's private directory, the pty names beside the journal
    serial = PtySerial(
        seed_int(seed), deck_path_for(db), practice, db, db.with_name(db.name + ".sim-ports")
    )
    # the MAX7219 chain (1-7 digit, meter sign) as a simulated chip chain the page can read
    chain = SimulatedChain(config.pins.spi_chips) if config.pins.uses_spi else None
    parts = Parts(
        pin_factory=factory,
        open_serial=serial,
        draw=SeededDraw(seed),
        now_ms=now_ms,
        debounce=NO_BOUNCE,
        spi=chain,
        post_held_switches=False,
        training=True,  # a simulated table is a training table: its journal says so
    )
    try:
        table = wire(config, db, parts)
    except BaseException:
        if serial.sim is not None:
            serial.sim.stop()
        raise
    faults = PtyFaults(serial.sim, plan)
    pins = MockPins(factory, config.pins, chain)
    people = people if people is not None else People()
    director = Director(
        table.port, pins, seed, config.game.table.line_names, people=people, practice=practice
    )
    service = Service(config, table, pins, director, plan, faults, serial.sim)
    service.trainer = _make_trainer(config, table, people, practice, faults)
    return service


def _make_trainer(
    config: TableConfig, table: Table, people: People, practice: PracticeDeck, faults: PtyFaults
) -> Any:

    game = config.game
    drills = Drills(
        game.way,
        game.table,
        game.ranking,
        wager_cents=game.progressive_wager_cents,
        meter_cents=game.levels[0].reset_cents,
        five_times_meter=game.five_dollar_meter_share == "times-five",
    )
    return Trainer(table.port, people, practice, faults, drills)


# ``make run``: a demonstration / training pace: a pause after each scripted action.
DEFAULT_PACE_S = 0.4
#: The narrator notes the cards of this many entries before the last one at start (a round
#: resumed after a restart is shown whole when it resolves).
NARRATION_WINDOW = 500


class TrainerHold:
    """A trainer acting as supervisor through the console: after the trainer closes the table
    (or enters maintenance) the scripted people leave Closed and Maintenance to the trainer,
    until the trainer opens the table again. Set from the console thread (a plain flag)."""

    def __init__(self) -> None:
        self.active = False

    def on_request(self, name: str, args: Sequence[str]) -> None:
        if name == "close" or (name == "maintenance" and tuple(args[:1]) == ("enter",)):
            self.active = True
        elif name == "open":
            self.active = False

    def __call__(self, snap: PublicSnapshot) -> bool:
        return self.active and snap.state in ("Closed", "Maintenance")


_CONSOLE_TEMP_PREFIX = "paigow-console-"


def console_socket_path(db: Path) -> Path:
    """The simulation's console socket: beside the journal, or in a new temp directory when
    that path is too long for a UNIX socket."""
    beside = db.with_name(db.name + ".console.sock")
    if len(str(beside.resolve()).encode()) < 100:
        return beside
    return Path(tempfile.mkdtemp(prefix=_CONSOLE_TEMP_PREFIX)) / "console.sock"


class StopFlag(Protocol):
    """What `play` needs to know when to stop (a ``threading.Event`` will do)."""

    def is_set(self) -> bool: ...


class _Stop:
    """SIGTERM / SIGINT set a plain flag; the main loop polls it and stops the owner cleanly.
    The handler takes no lock: a signal handler runs in the main thread between bytecodes, and
    ``threading.Event.set`` there can deadlock against the same thread's ``Event.wait``."""

    def __init__(self) -> None:
        self.requested = False
        self._old: dict[int, Any] = {}

    def is_set(self) -> bool:
        return self.requested

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handler)

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True

    def wait(self) -> None:
        while not self.requested:
            time.sleep(0.1)

    def restore(self) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)


def load_sim_config(path: str | Path | None) -> TableConfig:
    return load_config(SIMULATED_TABLE if path is None else path)


def _status_line(snap: PublicSnapshot) -> str:
    shown = ", ".join(
        f"{name} ${int(m.get('display_cents', 0)) / 100:,.2f} ({int(m.get('hits', 0))} hits)"
        for name, m in snap.meters.items()
    )
    pending = f" | config pending: {', '.join(snap.config_pending)}" if snap.config_pending else ""
    return (
        f"TRAINING | {snap.rounds_completed} round{'' if snap.rounds_completed == 1 else 's'} | "
        f"journal seq {snap.seq} | {snap.state} | "
        f"display {snap.view.get('display', '?')!r} | {shown}{pending}"
    )


def play(
    service: Service,
    until_rounds: int | None,
    stop: StopFlag,
    out: TextIO | None,
    status_lines: bool = False,
    pace_s: float = 0.0,
    hold: Callable[[PublicSnapshot], bool] | None = None,
    narrator: Narrator | None = None,
) -> int:
    """Drive the scripted people until ``until_rounds`` rounds are journaled (None: until
    ``stop``). ``pace_s`` is a pause after each action so a person can follow the table (0 for
    tests and headless runs). ``hold(snap)`` true: the people wait (a trainer has the table).
    ``narrator``: one line per committed event to ``out`` (cards once the round is resolved)
    instead of one status line per state. While a person holds a role the run never gives up.
    Returns an exit code: 0 done, 3 no progress, 4 storage fault, 5
    owner died."""
    owner, director = service.owner, service.director
    snap = owner.public  # restarted mid-deal: the machine faults it (DEAL_INTERRUPTED) by itself
    last_progress = time.monotonic()
    last_rounds = snap.rounds_completed
    same_place, place = 0, (snap.state, snap.round_id)
    shown_state = ""
    while not stop.is_set():
        if snap.storage_fault:
            if out:
                print(f"storage fault, play refused: {snap.storage_fault}", file=out)
            return 4
        if not owner.alive:
            if out:
                print(f"the owner thread stopped: {owner.exit_error!r}", file=out)
            return 5
        if until_rounds is not None and snap.rounds_completed >= until_rounds:
            return 0
        if out and narrator is not None:
            for line in narrator.new_lines():
                print(line, file=out, flush=True)
        if (
            out
            and status_lines
            and (
                snap.rounds_completed != last_rounds
                or (narrator is None and pace_s > 0 and snap.state != shown_state)
            )
        ):
            print(_status_line(snap), file=out, flush=True)
            shown_state = snap.state
        if snap.rounds_completed != last_rounds:
            service.pins.forget_history()  # MockPin keeps every change: trimmed once a round
        last_rounds = snap.rounds_completed
        service.faults.arm(snap.state, snap.round_id)
        if snap.state == "Fault":
            service.faults.repair()
        if hold is not None and hold(snap):
            snap = owner.wait_published(snap.seq, timeout=0.5)
            last_progress = time.monotonic()
            continue
        acted = director.act(snap)
        if acted is not None:
            same_place = same_place + 1 if (snap.state, snap.round_id) == place else 0
            place = (snap.state, snap.round_id)
            if same_place > MAX_ACTIONS_IN_PLACE:  # refused again and again: a script bug
                if out:
                    print(f"no progress in {snap.state} after {same_place} actions", file=out)
                return 3
            _settle(owner, snap.seq)
            _pause(pace_s, stop)
            last_progress = time.monotonic()
            snap = owner.public
            continue
        newer = owner.wait_published(snap.seq, timeout=0.5)
        if newer.seq != snap.seq:
            last_progress = time.monotonic()
            snap = newer
            continue
        idle = time.monotonic() - last_progress
        if snap.state in WAITING_STATES and idle > STALL_S:
            director.interrupted(snap, f"no answer for {idle:.1f} s")
            _settle(owner, snap.seq)
            last_progress = time.monotonic()
            snap = owner.public
        elif idle > GIVE_UP_S and not director.people.any():
            if out:
                print(f"no progress for {idle:.0f} s in {snap.state}: giving up", file=out)
            return 3
    return 0


def _pause(seconds: float, stop: StopFlag) -> None:
    """Sleep up to ``seconds`` in small steps, waking early when a stop is requested."""
    end = time.monotonic() + seconds
    while not stop.is_set() and time.monotonic() < end:
        time.sleep(min(0.05, end - time.monotonic()))


def _settle(owner: Owner, seq: int) -> None:
    """Wait until the action just taken is committed and everything it posted processed."""
    owner.wait_published(seq, timeout=5.0)
    owner.wait_idle(timeout=5.0)


def run_headless(
    db: Path,
    rounds: int,
    seed: int | str,
    *,
    fault_spec: str | None = None,
    config_path: str | Path | None = None,
    linger: bool = False,
    out: TextIO | None = None,
    sas_link: Path | None = None,
    people: People | None = None,
) -> int:
    """Play until the journal at ``db`` holds ``rounds`` completed rounds; exit code. Fully
    scripted unless ``people`` names roles a person holds."""
    config = load_sim_config(config_path)
    service = build_service(config, db, seed, fault_spec, people=people)
    stopper = _Stop()
    stopper.install()
    floor = _attach_floor(service, db, sas_link)
    try:
        # the inputs are armed only when there is a round to play: a journal that already holds
        # the rounds gets its power-up and nothing else (no device answer to the requests the
        # power-up re-applied, e.g. the shuffle, racing the stop into the journal)
        service.start(arm=False)
        held = service.owner.public.rounds_completed
        if held < rounds:
            service.table.arm_inputs()
        elif out:
            print(
                f"journal {db} already holds {held} rounds and --rounds is the total to reach: "
                f"nothing to play (--rounds {held + rounds} plays {rounds} more)",
                file=out,
                flush=True,
            )
        _floor_note(floor, out)
        code = play(service, rounds, stopper, out)
        snap = service.owner.public
        if out:
            print(
                f"journal {db}: {snap.rounds_completed} rounds, {snap.seq} entries, "
                f"state {snap.state}; faults injected: "
                f"{', '.join(map(str, service.plan.fired)) or 'none'}",
                file=out,
                flush=True,
            )
        if code == 0 and linger:
            stopper.wait()
        return code
    finally:
        service.close()
        stopper.restore()


def _attach_floor(service: Service, db: Path, sas_link: Path | None) -> FloorAttachment | None:
    """The floor link on a pty whose host side is symlinked at ``sas_link`` (None: no link), as
    an attachment of the table (started with it)."""
    if sas_link is None:
        return None
    floor = FloorAttachment(service.config, db, Path(sas_link))
    service.table.attach(floor)
    return floor


def _floor_note(floor: FloorAttachment | None, out: TextIO | None) -> None:
    if out is not None and floor is not None and floor.floor is not None:
        link = floor.floor.transport.description
        print(f"SAS link: {floor.link_path} -> {link}", file=out, flush=True)


#: `run_service`'s exit code when its page could not start (its port in use): nothing played.
EXIT_PAGE_NOT_STARTED = 7


def _page_note(page: WebAttachment | None, out: TextIO) -> None:
    if page is None:
        return
    if page.server is None:
        print(f"page not started: {page.error}", file=out, flush=True)
    else:
        print(f"page: {page.server.url}", file=out, flush=True)


def run_service(
    db: Path | None,
    seed: int | str,
    *,
    config_path: str | Path | None = None,
    fault_spec: str | None = None,
    out: TextIO = sys.stdout,
    pace_s: float = DEFAULT_PACE_S,
    console_socket: Path | None = None,
    sas_link: Path | None = None,
    port: int | None = None,
    scripted: bool = True,
    people: People | None = None,
    commands: TextIO | None = None,
) -> int:
    """The simulated table until SIGTERM / Ctrl-C at a pace a person can follow (``pace_s``
    after each action of the scripted people), one line a dealer reads per committed event
    (`controller.sim.narrate`), with the supervisor console on ``console_socket`` (default:
    beside the journal) and the virtual table's page on ``port`` (None: no page; 0: any free
    port). ``people``: the roles a person holds (the rest are scripted); ``scripted`` False:
    every role is a person at the page (``--no-script``); ``commands``: the trainer's typed
    commands (`controller.sim.commands`, the terminal's stdin)."""
    if not scripted:
        people = People(ROLES)
    config = load_sim_config(config_path)
    path = Path(db) if db is not None else config.journal_path
    service = build_service(config, path, seed, fault_spec, people=people)
    stopper = _Stop()
    stopper.install()
    hold = TrainerHold()
    floor = _attach_floor(service, path, sas_link)
    page: WebAttachment | None = None
    if port is not None:
        page = WebAttachment(
            config, path, port=port, inputs=service.pins, mode="sim", training=service.trainer
        )
        service.table.attach(page)
    console: ConsoleAttachment | None = None
    if config.console.enabled:
        socket_path = console_socket or console_socket_path(path)
        console = ConsoleAttachment(config, socket_path, on_request=hold.on_request)
        service.table.attach(console)
    notifier = Notifier()  # systemd's notify protocol when NOTIFY_SOCKET is set (notify.py)
    service.owner.heartbeat = notifier.owner_watchdog()
    started = False
    try:
        service.start()
        if page is not None and page.server is None:
            # the page is the point of the simulated table (make run): never play without it
            print(
                f"tablectl simulate: the page could not start on port {port}: {page.error}; "
                f"stop what holds the port, or choose another (make run PORT=8081, tablectl "
                f"simulate --port 8081; 0: any free port)",
                file=sys.stderr,
                flush=True,
            )
            return EXIT_PAGE_NOT_STARTED
        started = True
        notifier.ready(service_status(service.owner.public))
        _floor_note(floor, out)
        snap = service.owner.public
        console_note = "supervisor console disabled"
        if console is not None and console.server is None:
            console_note = f"supervisor console not started: {console.error}"
        elif console is not None:
            names = ", ".join(sorted(config.supervisors))
            console_note = (
                f"supervisor console: tablectl console --socket {console.path} "
                f"--supervisor ID REQUEST (supervisors: {names})"
            )
        print(
            f"TRAINING simulated table {config.table.id}: journal {path}, "
            f"{snap.rounds_completed} rounds so far; {console_note}; "
            f"{service.director.people.describe()}; Ctrl-C to stop",
            file=out,
            flush=True,
        )
        _page_note(page, out)
        if commands is not None:
            TrainerConsole(service.trainer, commands, out).start()
        narrator = Narrator(config.game.way, config.game.ranking, after_seq=snap.seq - 1)
        # from a window before the last seq: a round resumed after a restart shows its cards
        narrator.attach(service.owner.tail, max(0, snap.seq - 1 - NARRATION_WINDOW))
        try:
            return play(
                service,
                None,
                stopper,
                out,
                status_lines=True,
                pace_s=pace_s,
                hold=hold,
                narrator=narrator,
            )
        finally:
            narrator.close()
    finally:
        notifier.stopping()
        service.close()
        notifier.close()
        if console is not None and console.path.parent.name.startswith(_CONSOLE_TEMP_PREFIX):
            with contextlib.suppress(OSError):
                console.path.parent.rmdir()
        stopper.restore()
        if started:
            print(
                f"TRAINING simulated table {config.table.id} stopped: journal {path} closed at "
                f"{service.owner.public.rounds_completed} rounds (tablectl journal verify "
                f"--db {path})",
                file=out,
                flush=True,
            )
