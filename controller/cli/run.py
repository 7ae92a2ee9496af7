"""``tablectl run --config PATH``: the table service on real hardware (the systemd ExecStart).

Responsible for choosing the Pi's parts for the one wiring path (`controller.service.wiring`,
which builds the GPIO devices, claimed first and armed only once the owner thread runs, the
serial adapters, the device adapter, the owner, the meter sign's reader): the lgpio pin factory
on the header's GPIO chip (found by its label or ``pins.gpio_chip``, set explicitly, never a
fallback), the configured serial ports, the UTC clock and the OS CSPRNG, and the supervisor
console on its socket (``[console]``, `controller.console.server`); for watching lgpio's
callback thread (dead: exit 1, so systemd restarts) and the clock's synchronisation; for running
until SIGTERM / SIGINT and then stopping cleanly (the owner finishes the event in hand, puts the
table in the safe state and closes the journal); and for saying clearly what is missing when the
service cannot start. Exit codes: 0 stopped by a signal; 1 the owner failed while running; 2 the
configuration is invalid (systemd must not restart: RestartPreventExitStatus=2); 3 the hardware
or the journal cannot be opened (systemd retries).

systemd (``Type=notify``, `controller.service.notify`): ``READY=1`` once the GPIO, the ports, the
journal and the restore are up (after `Table.start`), ``STATUS=`` with the table's state at
each change, ``WATCHDOG=1`` from the owner loop itself only while it makes progress (a stuck
owner stops the pings and systemd restarts the service after ``WatchdogSec=``), ``STOPPING=1``
on SIGTERM / SIGINT. ``--approved-manifest PATH`` (the unit passes the manifest install.sh
writes): the power-up's software hash is compared with it, and a mismatch is a journaled fault
that refuses play (`controller.service.selfcheck.approval_problem`). Fail closed (issue 28): no
manifest given and none at ``/etc/paigow/software.manifest`` is that fault too, unless
``--unapproved-bench`` (a lab bench: journaled in the power_up, UNAPPROVED SOFTWARE on every
screen and report).

Must never: fall back to another pin factory, use the simulation's seeded draw or scripted
people, hold a game rule, or touch the journal other than through the owner.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from controller.config import ConfigError, TableConfig, load_config
from controller.service.notify import Notifier, service_status
from controller.service.selfcheck import approval_problem
from controller.service.wiring import (
    ConsoleAttachment,
    FloorAttachment,
    Parts,
    Table,
    WebAttachment,
    wire,
)
from fsm.round.events import DeviceRecovered

log = logging.getLogger("tablectl.run")

EXIT_STOPPED = 0
EXIT_OWNER_FAILED = 1
EXIT_CONFIG = 2
EXIT_UNAVAILABLE = 3


def register(sub: Any) -> None:
    parser = sub.add_parser("run", help="run the table service on real hardware (systemd)")
    parser.add_argument("--config", required=True, help="the table configuration (TOML)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="validate the configuration and report what the service needs, then exit",
    )
    parser.add_argument(
        "--approved-manifest",
        metavar="PATH",
        help="the approved software manifest (install.sh writes /etc/paigow/software.manifest); "
        "a different software hash at power-up is a fault that refuses play",
    )
    parser.add_argument(
        "--unapproved-bench",
        action="store_true",
        help="a lab bench: play without an approved manifest (journaled; every report and "
        "screen says UNAPPROVED SOFTWARE). Without it and without an approved manifest, play "
        "is refused (fail closed)",
    )
    # bench and tests only: gpiozero's MockFactory instead of lgpio (never in the unit file)
    parser.add_argument(
        "--pin-factory", choices=("pi", "mock"), default="pi", help=argparse.SUPPRESS
    )
    parser.set_defaults(func=run)


@dataclass
class Readiness:
    """What the service needs and does not have; ``fatal`` stops it from starting; ``info``:
    what it found (the GPIO chip, its label, the lines in use)."""

    fatal: list[str]
    warnings: list[str]
    info: list[str] = field(default_factory=list)


def check_environment(
    config: TableConfig, pin_mode: str = "pi", chips: Any = None, model_of: Any = None
) -> Readiness:
    """Look, without claiming anything, at what the configured service needs on this machine
    (``chips``: the GPIO chip listing, ``drivers.gpio.factory.list_gpio_chips`` by default;
    ``model_of``: the board's model string, ``board_model`` by default)."""
    fatal: list[str] = []
    warnings: list[str] = []
    journal_dir = config.journal_path.parent
    if not journal_dir.is_dir():
        fatal.append(
            f"journal.path: directory {journal_dir} does not exist (deploy/install.sh creates "
            "/var/lib/paigow)"
        )
    elif not os.access(journal_dir, os.W_OK | os.X_OK):
        fatal.append(f"journal.path: directory {journal_dir} is not writable by this user")
    elif config.journal_path.exists() and not os.access(config.journal_path, os.R_OK | os.W_OK):
        fatal.append(f"journal.path: {config.journal_path} is not readable and writable")
    info: list[str] = []
    if pin_mode == "pi":
        fatal.extend(_check_gpio(config, info, chips, model_of))
    for name, device in config.serial.items():
        if not Path(device.port).exists():
            warnings.append(
                f"serial.{name}.port.path: {device.port} is not present now; the service starts "
                "and reopens it with backoff (the round faults if the device stays silent)"
            )
    if (
        config.sas.enabled
        and config.sas.port.startswith("/dev/")
        and not Path(config.sas.port).exists()
    ):
        warnings.append(
            f"sas.port: {config.sas.port} is not present now; the floor link reopens it with "
            "backoff (docs/sas.md)"
        )
    if config.console.enabled:
        socket_dir = Path(config.console.socket).parent
        if not socket_dir.is_dir() or not os.access(socket_dir, os.W_OK | os.X_OK):
            warnings.append(
                f"console.socket: directory {socket_dir} is missing or not writable; the "
                "service runs without the supervisor console (systemd's RuntimeDirectory=paigow "
                "creates /run/paigow)"
            )
    return Readiness(fatal, warnings, info)


def _check_gpio(
    config: TableConfig, info: list[str], chips: Any, model_of: Any = None
) -> list[str]:
    """The GPIO chip the service will open (found by its label, or ``pins.gpio_chip``), the
    lines it will use, and whether lgpio loads; the problems, each naming its real cause."""
    from drivers.gpio.factory import (
        PinFactoryError,
        board_model,
        find_header_chip,
        is_rp1_board,
        list_gpio_chips,
        load_lgpio,
    )

    pins = config.pins
    problems: list[str] = []
    listing = list((chips or list_gpio_chips)())
    model = (model_of or board_model)()
    rp1 = is_rp1_board(model)
    if model is not None:
        info.append(f"board: {model}{' (header on the RP1)' if rp1 else ''}")
    try:
        if pins.gpio_chip is not None:
            chip = next((c for c in listing if c.number == pins.gpio_chip), None)
            if chip is None:
                raise PinFactoryError(f"pins.gpio_chip: /dev/gpiochip{pins.gpio_chip} is missing")
            info.append(
                f"gpio chip: /dev/gpiochip{chip.number} (pins.gpio_chip), {chip.describe()}"
            )
        else:
            chip = find_header_chip(listing)
            info.append(
                f"gpio chip: /dev/gpiochip{chip.number}, label {chip.label}, {chip.lines} lines"
            )
            if rp1 and chip.label != "pinctrl-rp1":
                problems.append(
                    f"pins: this {model} has its header on the RP1, but the chip found is "
                    f"{chip.describe()}: is the kernel too old for this board?"
                )
        if chip.error is not None:
            problems.append(f"pins: /dev/gpiochip{chip.number}: {chip.error}")
    except PinFactoryError as exc:
        problems.append(f"pins: {exc}")
    lines = ", ".join(f"{key.removeprefix('pins.')}={pin}" for key, pin in pins.assignments())
    info.append(f"gpio lines in use: {lines}")
    if pins.uses_spi:
        info.append(
            f"spi: /dev/spidev0.0 (BCM 8, 9, 10, 11), {pins.spi_chips} MAX7219 chips "
            f"(digit: {pins.number_display}, sign modules: {pins.sign_modules})"
        )
        if not Path("/dev/spidev0.0").exists():
            problems.append(
                "pins: /dev/spidev0.0 is missing: SPI0 is off (deploy/install.sh sets "
                "dtparam=spi=on and dtoverlay=spi0-1cs in config.txt; reboot after it)"
            )
    try:
        load_lgpio()
    except PinFactoryError as exc:
        problems.append(f"pins: {exc}")
    return problems


class _Signals:
    """SIGTERM / SIGINT set an event; the main thread then stops the owner."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._old: dict[int, Any] = {}

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handler)

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.event.set()

    def restore(self) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)


def build_service(config: TableConfig, pin_mode: str = "pi") -> Table:
    """The table wired by `controller.service.wiring` (nothing started) on the Pi's parts: the
    lgpio pin factory on the header's chip (MockFactory only with the hidden bench option), the
    input glitch filter of ``pins.glitch_filter_ms``, the configured serial ports, the OS CSPRNG
    draw and the UTC clock, effects logged. The inputs are claimed now and armed by
    `Table.start` once the owner runs."""
    from drivers.gpio.devices import DebounceTimes
    from drivers.gpio.factory import make_pin_factory

    factory = make_pin_factory("mock" if pin_mode == "mock" else "pi", chip=config.pins.gpio_chip)
    glitch = DebounceTimes(glitch_s=config.pins.glitch_filter_ms / 1000)
    parts = Parts(pin_factory=factory, debounce=glitch, notice=_log_notice)
    return wire(config, config.journal_path, parts)


def attach_page(table: Table) -> WebAttachment | None:
    """The pit's status page (``[web]``, `controller.web`), read-only unless a supervisor signs
    in; None when ``[web] enabled`` is false."""
    if not table.config.web.enabled:
        return None
    page = WebAttachment(table.config, table.config.journal_path, mode="pit")
    table.attach(page)
    return page


def _page_note(page: WebAttachment | None, out: TextIO) -> None:
    if page is None:
        return
    if page.server is None:
        print(f"warning: page not started: {page.error}", file=sys.stderr)
    else:
        print(f"page: {page.server.url}", file=out, flush=True)


def attach_console(table: Table, path: Any = None) -> ConsoleAttachment | None:
    """The supervisor console on ``path`` (default: the config's ``[console] socket``), added to
    the table's attachments; None when ``[console]`` disables it."""
    if not table.config.console.enabled:
        return None
    console = ConsoleAttachment(table.config, path or table.config.console.socket)
    table.attach(console)
    return console


class _Watch:
    """What the main loop watches besides the owner: lgpio's callback thread (dead: every input
    is dead, so the service exits and systemd restarts it) and the clock's synchronisation
    (journaled once as ``device_recovered {device: clock}``). The meter sign's reader is a wiring
    attachment (`controller.service.wiring.SignAttachment`)."""

    def __init__(self, owner: Any) -> None:
        from controller.service.timesync import clock_synchronised

        self._owner = owner
        self._synced = clock_synchronised
        self._clock_ok = clock_synchronised()
        self.failure: str | None = None

    def check(self) -> bool:
        from drivers.gpio.factory import callback_thread_alive

        if callback_thread_alive() is False:
            self.failure = "lgpio's callback thread died: no input would be seen"
            return False
        if not self._clock_ok and self._synced():
            self._clock_ok = True
            self._owner.post(DeviceRecovered(device="clock", code="TIME_SYNC").envelope())
        return True


def _log_notice(effect: Any) -> None:
    kind = effect.get("type")
    if kind in ("alert", "rejected", "pay", "hit_pending", "round_voided"):
        log.info("%s", effect)


#: What every screen of a lab bench says (`tablectl run --unapproved-bench`).
BENCH_BANNER = (
    "UNAPPROVED SOFTWARE (lab bench, --unapproved-bench): no approved manifest vouches for "
    "this software; not a live table"
)


def software_policy(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """``(approved manifest, refusal)`` for this start (fail closed, issue 28 item 2): the
    manifest given, else `APPROVED_MANIFEST` where the installer wrote it; without one, the
    refusal that faults the power-up, unless ``--unapproved-bench`` (both None: a lab bench)."""
    from controller.service.selfcheck import APPROVED_MANIFEST

    given = getattr(args, "approved_manifest", None)
    if given:
        return str(given), None
    if APPROVED_MANIFEST.exists():
        return str(APPROVED_MANIFEST), None
    if getattr(args, "unapproved_bench", False):
        return None, None
    return None, (
        f"no approved software manifest (--approved-manifest, or {APPROVED_MANIFEST}): play "
        "refused; a lab bench starts with --unapproved-bench"
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"run: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    ready = check_environment(config, args.pin_factory)
    for warning in ready.warnings:
        print(f"run: warning: {warning}", file=sys.stderr)
    for problem in ready.fatal:
        print(f"run: cannot start: {problem}", file=sys.stderr)
    approved, no_manifest = software_policy(args)
    if args.check:
        if no_manifest:
            ready.info.append(f"software: {no_manifest}")
        elif args.unapproved_bench:
            ready.info.append("software: UNAPPROVED SOFTWARE (lab bench, --unapproved-bench)")
        if approved:  # what the power-up will find: a mismatch starts the table in a fault
            from controller.service.selfcheck import software_hash

            digest = software_hash()
            unapproved = approval_problem(approved, digest)
            if unapproved:
                print(f"run: warning: software not approved, play will be refused: {unapproved}",
                      file=sys.stderr)  # fmt: skip
            ready.info.append(
                f"software: {digest[:12]} "
                + (f"NOT APPROVED ({unapproved})" if unapproved else f"approved ({approved})")
            )
        print("ok" if not ready.fatal else "not ready", file=out)
        for line in [*config.summary(), *ready.info]:
            print(f"  {line}", file=out)
        return EXIT_UNAVAILABLE if ready.fatal else EXIT_STOPPED
    if ready.fatal:
        return EXIT_UNAVAILABLE
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from controller.journal.audit import recorded_mode
    from controller.journal.lock import JournalInUse, JournalLock

    if recorded_mode(config.journal_path) == "training":  # before anything is started
        print(
            f"run: cannot start: journal {config.journal_path} is a TRAINING journal (made by "
            "tablectl simulate): a live table never carries on a training journal (nothing "
            "was appended); give [journal] path the live journal",
            file=sys.stderr,
        )
        return EXIT_CONFIG

    try:  # one controller per journal: before any device, socket or thread is started
        lock = JournalLock.acquire(config.journal_path)
    except JournalInUse as exc:
        print(f"run: cannot start: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except OSError as exc:  # the journal's directory cannot take the lock file
        print(
            f"run: cannot start: journal {config.journal_path}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return EXIT_UNAVAILABLE
    try:
        return _run_locked(config, args, out)
    finally:
        lock.release()


def _run_locked(config: TableConfig, args: argparse.Namespace, out: TextIO) -> int:
    signals = _Signals()
    signals.install()
    try:
        try:
            table = build_service(config, args.pin_factory)
        except Exception as exc:  # PinFactoryError, a port or pin that cannot be claimed
            print(f"run: cannot start: {type(exc).__name__}: {exc}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        console = attach_console(table)
        table.attach(FloorAttachment(config, config.journal_path))  # [sas]: the floor link
        page = attach_page(table)  # [web]: the pit's status page
        owner = table.owner
        notifier = Notifier()
        owner.heartbeat = notifier.owner_watchdog()  # pinged by the owner loop itself
        approved, no_manifest = software_policy(args)
        if approved:
            owner.software_approval = lambda digest: approval_problem(approved, digest)
        elif no_manifest:  # fail closed: a power-up fault, play refused
            owner.software_approval = lambda digest: no_manifest
        else:
            owner.unapproved_bench = True
            print(f"run: warning: {BENCH_BANNER}", file=sys.stderr)
        notifier.status("power-up: journal, restore, devices")
        # the hand-ranking tables are built now, before READY (bounded by TimeoutStartSec), not
        # lazily in the owner's first settlement: about 2 s on a PC, several times that on a
        # Pi, over a minute under emulation, where they stalled the owner loop past WatchdogSec
        # and systemd killed it (make pi-vm)
        from fsm.rules.ranking import fill_rank_tables

        fill_rank_tables(config.game.ranking)  # (filled lazily elsewhere: `tablectl` commands)
        try:
            table.start()  # owner, then sign reader and console, then inputs and serial links
        except Exception as exc:  # JournalError: wrong table, damaged file
            print(f"run: cannot start: {type(exc).__name__}: {exc}", file=sys.stderr)
            notifier.status(f"cannot start: {type(exc).__name__}")
            return EXIT_UNAVAILABLE
        if console is not None and console.error is not None:
            error = console.error
            print(
                f"warning: supervisor console not started: {error.strerror or error} "
                f"({console.path})",
                file=sys.stderr,
            )
        watch = _Watch(owner)
        served = console is not None and console.server is not None
        print(
            f"table {config.table.id}: running, journal {config.journal_path} "
            f"(entries {owner.public.seq}, state {owner.public.state}), supervisor console "
            f"{console.path if served and console is not None else 'off'}",
            file=out,
            flush=True,
        )
        _page_note(page, out)
        if owner.unapproved_bench:
            print(f"table {config.table.id}: {BENCH_BANNER}", file=out, flush=True)
        if owner.public.software_fault:
            print(f"run: software not approved, play refused: {owner.public.software_fault}",
                  file=sys.stderr)  # fmt: skip
        notifier.ready(service_status(owner.public))
        while not signals.event.wait(1.0):
            notifier.status(service_status(owner.public))
            if not owner.alive:
                break
            if not watch.check():
                print(f"run: {watch.failure}; exiting so systemd restarts", file=sys.stderr)
                break
        notifier.stopping(f"stopping: {service_status(owner.public)}")
        table.stop()
        if watch.failure is not None:
            return EXIT_OWNER_FAILED
        if owner.exit_error is not None:
            print(f"run: the owner thread failed: {owner.exit_error!r}", file=sys.stderr)
            return EXIT_OWNER_FAILED
        if not signals.event.is_set():
            print("run: the owner thread stopped unexpectedly", file=sys.stderr)
            return EXIT_OWNER_FAILED
        print(f"table {config.table.id}: stopped", file=out, flush=True)
        return EXIT_STOPPED
    finally:
        signals.restore()
