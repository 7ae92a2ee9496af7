"""The controller on a simulated table: the same owner, machine, journal and device adapter as on
the Pi, with gpiozero's MockFactory pins, simulated shoe and shuffler and scripted people.

`build_service` wires one table (owner thread, devices, input port); `run_headless` plays until
the journal holds N completed rounds (entries ``round_completed``), then stops (or lingers until
SIGTERM); `run_service` plays until SIGTERM / Ctrl-C, printing one status line per round. Both
resume from whatever the journal holds: a run killed at any instant and started again ends with
exactly N rounds. Simulation only: the seeded draw source and the scripted people must never be
wired into ``tablectl run``; this module holds no game rule.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from controller.config import SIMULATED_TABLE, TableConfig, load_config
from controller.devices import InputPort, TableDevices
from controller.owner import Owner, PublicSnapshot, utc_now_ms
from controller.rng import SeededDraw
from controller.sim_actors import WAITING_STATES, Director
from controller.sim_faults import FaultPlan, parse_faults
from controller.sim_table import MockPins, SimDeck, SimShoe, SimShuffler
from drivers.gpio.devices import DebounceTimes
from drivers.gpio.factory import make_pin_factory
from drivers.gpio.table import build_gpio_table
from fsm.round.machine import RoundMachine

#: A device-waiting state with no new commit for this long gets a supervisor's fault (s).
STALL_S = 3.0
#: A run that makes no progress at all for this long gives up with exit 3 (s).
GIVE_UP_S = 120.0
#: Mock pins have no contact bounce: the quiet-gap filters are off in simulation.
NO_BOUNCE = DebounceTimes(button_s=0.0, chip_s=0.0, shaker_s=0.0)


@dataclass
class Service:
    """One wired table: the owner thread and what the scripted people drive."""

    config: TableConfig
    owner: Owner
    devices: TableDevices
    pins: MockPins
    director: Director
    plan: FaultPlan


def build_service(
    config: TableConfig,
    db: Path,
    seed: int | str,
    fault_spec: str | None = None,
    *,
    now_ms: Callable[[], int] = utc_now_ms,
) -> Service:
    """Wire a simulated table around a new owner (not started)."""
    plan = FaultPlan(parse_faults(fault_spec))
    owner_box: list[Owner] = []

    def post(event: Any) -> None:
        owner_box[0].post(event)

    port = InputPort(post)

    def round_of() -> int:
        return owner_box[0].public.round_id

    factory = make_pin_factory("mock")
    gpio = build_gpio_table(config.pins, factory, port, debounce=NO_BOUNCE)
    deck = SimDeck(seed)
    shuffler = SimShuffler(port, deck, plan, round_of)
    shoe = SimShoe(port, deck, plan, round_of, card_reading=config.game.card_reading_shoe)
    devices = TableDevices(gpio, shuffler, shoe)
    game = config.game

    def make_machine(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    owner = Owner(
        db,
        make_machine,
        devices,
        now_ms=now_ms,
        draw=SeededDraw(seed),
        table_id=config.table.id,
    )
    owner_box.append(owner)
    director = Director(port, MockPins(factory, config.pins), seed, game.table.line_names)
    return Service(config, owner, devices, MockPins(factory, config.pins), director, plan)


class _Stop:
    """SIGTERM / SIGINT set this; the main loop stops the owner cleanly."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._old: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handler)

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.event.set()

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
    return (
        f"{snap.rounds_completed} rounds | journal seq {snap.seq} | {snap.state} | "
        f"display {snap.view.get('display', '?')!r} | {shown}"
    )


def play(
    service: Service,
    until_rounds: int | None,
    stop: threading.Event,
    out: TextIO | None,
    status_lines: bool = False,
) -> int:
    """Drive the scripted people until ``until_rounds`` rounds are journaled (None: until
    ``stop``). Returns an exit code: 0 done, 3 no progress, 4 storage fault, 5 owner died."""
    owner, director = service.owner, service.director
    snap = owner.public
    if snap.state == "Open_Dealing":  # restarted mid-deal: the dispense is never re-issued
        director.interrupted(snap, "the table restarted while the shoe was dealing")
        _settle(owner, snap.seq)
        snap = owner.public
    last_progress = time.monotonic()
    last_rounds = snap.rounds_completed
    while not stop.is_set():
        if snap.storage_fault:
            if out:
                print(f"storage fault, play refused: {snap.storage_fault}", file=out)
            return 4
        if not owner.alive:
            return 5
        if until_rounds is not None and snap.rounds_completed >= until_rounds:
            return 0
        if out and status_lines and snap.rounds_completed != last_rounds:
            print(_status_line(snap), file=out, flush=True)
        last_rounds = snap.rounds_completed
        acted = director.act(snap)
        if acted is not None:
            _settle(owner, snap.seq)
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
        elif idle > GIVE_UP_S:
            if out:
                print(f"no progress for {idle:.0f} s in {snap.state}: giving up", file=out)
            return 3
    return 0


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
) -> int:
    """Play until the journal at ``db`` holds ``rounds`` completed rounds; exit code."""
    config = load_sim_config(config_path)
    service = build_service(config, db, seed, fault_spec)
    stopper = _Stop()
    stopper.install()
    try:
        service.owner.start()
        code = play(service, rounds, stopper.event, out)
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
            stopper.event.wait()
        return code
    finally:
        service.owner.stop()
        stopper.restore()


def run_service(
    db: Path | None,
    seed: int | str,
    *,
    config_path: str | Path | None = None,
    fault_spec: str | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """The simulated table until SIGTERM / Ctrl-C, one status line per round."""
    config = load_sim_config(config_path)
    path = Path(db) if db is not None else config.journal_path
    service = build_service(config, path, seed, fault_spec)
    stopper = _Stop()
    stopper.install()
    try:
        service.owner.start()
        snap = service.owner.public
        print(
            f"simulated table {config.table.id}: journal {path}, {snap.rounds_completed} rounds "
            "so far; Ctrl-C to stop",
            file=out,
            flush=True,
        )
        return play(service, None, stopper.event, out, status_lines=True)
    finally:
        service.owner.stop()
        stopper.restore()
