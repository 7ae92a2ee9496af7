"""The one wiring path of a table, shared by ``tablectl run`` and ``tablectl simulate``.

Responsible for building one table from its validated configuration: the input port every driver
posts to, the GPIO devices on a pin factory, the shoe and shuffler adapters, the device adapter
(`TableDevices`), the round machine factory and the owner thread; and for the order of start and
stop (`Table.start` / `Table.stop`):

1. ``holds`` are taken by `wire` itself (e.g. the lock on the journal), before any pin, port or
   file is opened, and released last;
2. the owner starts (power-up, restore, re-apply of the committed outputs);
3. ``attachments`` start in order, each given the running owner (the meter sign's reader when a
   sign is fitted, the floor link, the supervisor console; later the page): they read the
   owner's published snapshot and post events, never touch the machine or the journal;
4. the inputs are armed (`Table.arm_inputs`, the one place for what inputs need once the owner
   can take their events): the GPIO inputs, claimed when built, get their handlers; the held
   switches' positions are posted once (a key already turned on posts no edge); the serial
   links start (a command the power-up re-applied waits in its link until then);
5. stop runs it backwards: attachments (reversed), the owner (which stops the adapters it
   drives), the readers marked ``stop_after_owner`` (the meter sign), the holds (reversed).

``wire`` builds (holds first); ``Table.start`` runs steps 2-4; ``Table.stop`` step 5.

What differs between the Pi and the simulated table is only what `Parts` carries: the pin
factory, how the serial adapters are opened (the configured ports, or the pty simulators), the
draw source and the clock, the debounce / glitch-filter times, the SPI bus of the MAX7219
chain; the scripted people of the simulation drive the pins and never pass through here.

Must never: hold a game rule, choose a pin factory itself, or start anything before ``start`` is
called (building opens the pins and ports, nothing runs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from controller.config import TableConfig
from controller.console.server import ConsoleServer
from controller.floor.service import start_floor
from controller.journal.lock import owner_journal_options
from controller.link.link_config import link_terms
from controller.link.table_link import PoolOverlay, TableLink
from controller.service.devices import InputPort, Notice, TableDevices
from controller.service.meter_sign import SignReader
from controller.service.owner import NowMs, Owner, utc_now_ms
from controller.service.rng import DrawSource, draw_position
from controller.supervisor.lockout import release_book, shared_book
from drivers.gpio.devices import DebounceTimes
from drivers.gpio.gpio_table import build_gpio_table
from drivers.serial.shoe import ReferenceShoe, Shoe
from drivers.serial.shuffler import ReferenceShuffler, Shuffler
from fsm.round.events import LinkState
from fsm.round.machine import RoundMachine

log = logging.getLogger(__name__)


class SerialAdapter(Protocol):
    """What the wiring needs of a serial adapter besides its device interface."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


class Attachment(Protocol):
    """A component started after the owner runs and stopped before it stops (console, floor link,
    page, meter sign). ``start`` gets the running owner; an attachment that cannot start raises
    OSError and the table runs without it (`Table.failed` lists it; the command says so). An
    attachment that only reads the owner's publications and blocks waiting for them may set
    ``stop_after_owner = True``: it is stopped once the owner has stopped (which wakes it), so
    the owner's stop is not held up by it."""

    name: str

    def start(self, owner: Owner) -> None: ...

    def stop(self) -> None: ...


class Hold(Protocol):
    """Something taken before the owner starts and released after it stopped (a journal lock)."""

    def acquire(self) -> None: ...

    def release(self) -> None: ...


#: Opens the shoe and shuffler adapters (not started) posting to the port: the configured ports
#: on the Pi, the pty simulators in simulation.
OpenSerial = Callable[[TableConfig, InputPort], tuple[Any, Any]]


def open_configured_serial(config: TableConfig, port: InputPort) -> tuple[Any, Any]:
    """The reference adapters on the ports the configuration names (``[serial.*]``)."""
    shoe = ReferenceShoe.open(config.shoe, port)
    shuffler = ReferenceShuffler.open(config.shuffler, port)
    return shoe, shuffler


@dataclass(frozen=True)
class Parts:
    """What differs between the Pi and the simulated table."""

    pin_factory: Any
    open_serial: OpenSerial = open_configured_serial
    draw: DrawSource = draw_position
    now_ms: NowMs = utc_now_ms
    debounce: DebounceTimes | None = None
    notice: Notice | None = None
    #: SPI0 for the MAX7219 chain (digit, meter sign): None = the pin factory's; the simulated
    #: table passes a ``drivers.gpio.max7219.SimulatedChain``.
    spi: Any = None
    #: Post the held switches' positions once the owner runs (a real key may already be on at
    #: power-up). The simulated table's mock switches start off and only its scripted people
    #: move them, so it does not (a restart journals nothing but its power-up).
    post_held_switches: bool = True
    #: A training table (`tablectl simulate`): every power_up entry records ``training: true``,
    #: so reports, verify and the page mark the journal TRAINING.
    training: bool = False


@dataclass
class Table:
    """One wired table. ``start``/``stop`` follow the order of the module docstring."""

    config: TableConfig
    owner: Owner
    devices: TableDevices
    gpio: Any
    port: InputPort
    shoe: Shoe
    shuffler: Shuffler
    serial: list[SerialAdapter]
    parts: Parts
    holds: list[Hold] = field(default_factory=list)  # taken by `wire`, released by `stop`
    attachments: list[Attachment] = field(default_factory=list)
    started: list[Attachment] = field(default_factory=list)
    failed: list[tuple[Attachment, OSError]] = field(default_factory=list)

    def attach(self, attachment: Attachment) -> None:
        """Add an attachment (before ``start``). The page of a linked table shows the pool's
        value (its link attachment, attached by `wire`, is handed to it)."""
        if isinstance(attachment, WebAttachment):
            attachment.link = next(
                (a for a in self.attachments if isinstance(a, LinkAttachment)), None
            )
        self.attachments.append(attachment)

    def start(self, *, arm: bool = True) -> None:
        """Start the owner, the attachments, then arm the inputs (GPIO handlers, held switches,
        the serial links; ``arm`` False: not yet, the caller calls `arm_inputs`). Any exception
        but an attachment's OSError propagates, and nothing is left running (holds released)."""
        try:
            self.owner.start()
        except BaseException:
            self._stop_serial()
            _release(self.holds)
            raise
        try:
            self._unlink_if_configured_so()
            for attachment in self.attachments:
                try:
                    attachment.start(self.owner)
                except OSError as exc:  # the command reports `failed` in its own words
                    log.debug("%s not started: %s", attachment.name, exc)
                    self.failed.append((attachment, exc))
                    continue
                self.started.append(attachment)
            if arm:
                self.arm_inputs()
        except BaseException:
            self.stop()  # nothing is left running when start fails
            raise

    def _unlink_if_configured_so(self) -> None:
        """A table whose journal says it is linked but whose configuration has no ``[link]``
        any more journals that it is not (docs/link.md): its progressive is its own again."""
        view = self.owner.public.view
        link = view.get("link") if not self.config.link.linked else None
        if link:
            detail = "not linked: the configuration has no [link] section"
            unlinked = LinkState(
                up=True, linked=False, pool=link["pool"], level=link["level"], detail=detail
            )
            self.owner.post(unlinked.envelope())

    def arm_inputs(self) -> None:
        """Every input once the owner runs, the one place for it: the GPIO handlers attached
        (``gpio.arm()``: an edge before this is not seen), the held switches' current positions
        posted (a key already on at power-up posts no edge), then the serial links started (what
        the power-up re-applied to the shoe or shuffler waits in its link until then)."""
        self.gpio.arm()
        if self.parts.post_held_switches:
            for event in self.gpio.held_switch_events():
                self.owner.post(event)
        for device in self.serial:
            device.start()

    def stop(self) -> None:
        """Stop the attachments (reversed; a reader that waits on the owner's publications, with
        ``stop_after_owner``, only after the owner, whose stop wakes it), the owner (it closes the
        adapters), release the holds (reversed). Also for a table built and never started."""
        after = [a for a in self.started if getattr(a, "stop_after_owner", False)]
        before = [a for a in self.started if a not in after]
        self.started.clear()
        _stop_each(reversed(before))
        self.owner.stop()
        _stop_each(reversed(after))
        _release(self.holds)

    def _stop_serial(self) -> None:
        for device in self.serial:
            device.stop()


def _stop_each(attachments: Iterable[Attachment]) -> None:
    for attachment in attachments:
        try:
            attachment.stop()
        except Exception:  # one attachment's failure must not keep the table running
            log.exception("%s did not stop cleanly", attachment.name)


def _acquire(holds: Sequence[Hold]) -> list[Hold]:
    taken: list[Hold] = []
    try:
        for hold in holds:
            hold.acquire()
            taken.append(hold)
    except BaseException:
        _release(taken)
        raise
    return taken


def _release(holds: list[Hold]) -> None:
    while holds:
        holds.pop().release()


def wire(
    config: TableConfig, journal_path: Path, parts: Parts, holds: Sequence[Hold] = ()
) -> Table:
    """Build the table of ``config`` on ``parts`` around a new owner (nothing started).

    ``holds`` are acquired first, in order, before any pin, port or file is opened: the place for
    the journal's lock (a second controller on the same journal must touch nothing); they are
    released by `Table.stop`, or here when building fails. The GPIO and serial adapters opened
    here are closed again if a later part cannot be built."""
    taken = _acquire(holds)
    try:
        return _build(config, journal_path, parts, taken)
    except BaseException:
        _release(taken)
        raise


def _build(config: TableConfig, journal_path: Path, parts: Parts, holds: list[Hold]) -> Table:
    owner_box: list[Owner] = []

    def post(event: Any) -> None:
        owner_box[0].post(event)

    port = InputPort(post)
    shoe, shuffler = parts.open_serial(config, port)
    try:
        # claimed now, armed by Table.start once the owner runs (an edge before has no owner)
        gpio = build_gpio_table(
            config.pins, parts.pin_factory, port, debounce=parts.debounce, spi=parts.spi, arm=False
        )
    except BaseException:
        shoe.stop()
        shuffler.stop()
        raise
    # line noise: each serial adapter checks its line's rate itself (drivers/serial/noise.py)
    devices = TableDevices(gpio, shuffler, shoe, notice=parts.notice)
    game = config.game

    def make_machine(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    owner = Owner(
        journal_path,
        make_machine,
        devices,
        now_ms=parts.now_ms,
        draw=parts.draw,
        training=parts.training,
        **owner_journal_options(config),  # identity, game configuration, anchor, key
    )
    owner_box.append(owner)
    serial: list[SerialAdapter] = [shoe, shuffler]
    table = Table(config, owner, devices, gpio, port, shoe, shuffler, serial, parts, holds)
    link = LinkAttachment(config, journal_path) if config.link.enabled else None
    if link is not None:
        table.attach(link)
    if gpio.sign is not None:  # a linked level shows the pool's value (docs/link.md)
        table.attach(SignAttachment(gpio.sign, link))
    return table


class SignAttachment:
    """The meter sign's reader (`controller.service.meter_sign.SignReader`): keeps the MAX7219
    sign in step with the owner's publications. Attached by `wire` whenever a sign is fitted."""

    name = "meter sign"
    stop_after_owner = True  # it waits on the owner's publications; the owner's stop wakes it

    def __init__(self, sign: Any, link: LinkAttachment | None = None) -> None:
        self._sign = sign
        self._link = link
        self.reader: Any = None

    def start(self, owner: Owner) -> None:

        source: Any = owner
        if self._link is not None:
            link = self._link
            source = PoolOverlay(owner, lambda: link.link)
        self.reader = SignReader(source, self._sign)
        self.reader.start()

    def stop(self) -> None:
        if self.reader is not None:
            self.reader.stop()
            self.reader = None


class LinkAttachment:
    """The linked progressive's shipper and pool client (`controller.link.table_link.TableLink`):
    attached by `wire` when the configuration has ``[link]`` (docs/link.md)."""

    name = "link"
    #: stopped after the owner: the owner's last commit is shipped too (`TableLink.stop`)
    stop_after_owner = True

    def __init__(self, config: TableConfig, journal_path: Path) -> None:
        self._config = config
        self._journal_path = journal_path
        self.link: Any = None

    def start(self, owner: Owner) -> None:

        cfg = self._config
        section = cfg.link
        level = section.level or cfg.game.levels[0].name
        self.link = TableLink(
            section,
            cfg.table.id,
            cfg.table.asset_number,
            level,
            cfg.game.progressive_wager_cents,
            owner,
            self._journal_path,
            terms=link_terms(cfg.game, level),
        )
        self.link.start()

    def stop(self) -> None:
        if self.link is not None:
            self.link.stop()
            self.link = None


class FloorAttachment:
    """The floor link (`controller.floor.service.start_floor`: SAS on ``[sas] port``, or on a new
    pty symlinked at ``link_path``); ``floor`` is None when ``[sas]`` is disabled and no link
    path asks for one."""

    name = "floor link"

    def __init__(self, config: TableConfig, journal_path: Path, link_path: Path | None = None):
        self._config = config
        self._journal_path = journal_path
        self.link_path = link_path
        self.floor: Any = None

    def start(self, owner: Owner) -> None:

        self.floor = start_floor(self._config, owner, self._journal_path, self.link_path)

    def stop(self) -> None:
        if self.floor is not None:
            self.floor.stop()
            self.floor = None


class ConsoleAttachment:
    """The supervisor console (`controller.console.server`) on ``path``; ``note`` says where it
    listens or why it did not start."""

    name = "supervisor console"

    def __init__(
        self,
        config: TableConfig,
        path: str | Path,
        on_request: Callable[[str, Any], None] | None = None,
    ) -> None:
        self._config = config
        self.path = Path(path)
        self._on_request = on_request
        self.server: Any = None
        self.error: OSError | None = None
        self._book: Any = None  # the table's wrong-PIN book while started

    def start(self, owner: Owner) -> None:

        kwargs: dict[str, Any] = {}
        if self._on_request is not None:
            kwargs["on_request"] = self._on_request
        # the wrong-PIN limits survive a restart (rebuilt from the journal's recent entries) and
        # are the page's too: one book per table (controller.supervisor.lockout.shared_book)
        self._book = kwargs["book"] = shared_book(owner.journal_path)
        server = ConsoleServer(owner, self._config.supervisors, self.path, **kwargs)
        try:
            server.start()
        except OSError as exc:
            release_book(self._book)
            self._book = None
            self.error = exc
            raise
        self.server = server

    def stop(self) -> None:

        if self.server is not None:
            self.server.stop()
            self.server = None
        if self._book is not None:
            release_book(self._book)
            self._book = None


class WebAttachment:
    """The table's page (`controller.web.server.WebServer`): the pit's status page on the Pi
    (``[web]``), the virtual table in simulation (``inputs``: the MockPins clicks drive).
    ``server`` is None until started; ``error`` says why it did not start."""

    name = "page"

    def __init__(
        self,
        config: TableConfig,
        journal_path: Path,
        *,
        port: int | None = None,
        inputs: Any = None,
        mode: str = "pit",
        training: Any = None,
    ) -> None:
        self._config = config
        self._journal_path = journal_path
        self._port = port
        self._inputs = inputs
        self._mode = mode
        self._training = training  # the simulated table's trainer (controller.sim.training)
        self.server: Any = None
        self.error: OSError | None = None
        #: the table's link (`Table.attach` sets it): the page shows the pool's value
        self.link: LinkAttachment | None = None

    def start(self, owner: Owner) -> None:
        from controller.web.server import WebServer

        game = self._config.game
        lines = list(game.table.line_names)
        source: Any = owner
        if self.link is not None:
            link = self.link
            source = PoolOverlay(owner, lambda: link.link)
        server = WebServer(
            source,
            self._journal_path,
            self._config.supervisors,
            self._config.web,
            port=self._port,
            inputs=self._inputs,
            mode=self._mode,
            way=game.way,
            ranking=game.ranking,
            extra=lambda: {"lines": lines},
            training=self._training,
        )
        try:
            server.start()
        except OSError as exc:
            self.error = exc
            raise
        self.server = server

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
