"""The table's configuration file: one TOML document, read and validated at load.

Responsible for reading the file (stdlib ``tomllib``), checking every section and collecting every
problem into one `ConfigError` whose lines each start with the full key path and say what is
allowed. Every value is read with the one reader set, ``fsm.configread``. Each component
validates its own section through its ``from_mapping``: ``[pins]`` -> ``drivers.gpio.PinConfig``;
``[game]`` and ``[bonus]`` -> ``fsm.round.config.GameConfig`` (the bonus offering, checked by
``fsm.rules.paytables.BonusConfig``, is part of the journaled game configuration);
``[serial.shoe]`` and ``[serial.shuffler]`` -> ``drivers.serial`` ``ShoeConfig`` /
``ShufflerConfig`` (one ``DeviceConfig``). This module validates the sections no component owns
(``[table]``, ``[sas]``, ``[journal]``, ``[console]``, ``[supervisors]``) and the device model. A
section or key that nothing reads is refused; ``[web]`` -> ``controller.web.web_config.WebSection``
(the page). Supervisor PINs are stored
hashed with scrypt (`check_pin` verifies one); a plain PIN is an error.

Must never: change a running table's configuration (that is the round machine's journaled
``config_changed`` event, accepted only with the table closed), write any file, or crash on a bad
file (every problem is reported as text).
"""

from __future__ import annotations

import base64
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from controller.floor.sas_config import SasSection, parse_sas
from controller.link.link_config import LinkSection
from controller.web.web_config import WebSection
from drivers.gpio.pins import PinConfig
from drivers.serial.settings import DeviceConfig, ShoeConfig, ShufflerConfig
from fsm.configread import (
    ConfigValueError,
    Reader,
    describe,
    parse_toml,
    table_value,
    unknown_keys,
)
from fsm.round.config import GameConfig, check_reset_amounts
from fsm.rules.paytables import BonusConfig

T = TypeVar("T")

DATA_DIR = Path(__file__).parent / "data"
SIMULATED_TABLE = DATA_DIR / "simulated-table.toml"

SECTIONS = (
    "table", "pins", "serial", "sas", "game", "bonus", "journal", "console", "supervisors",
    "web",
    "link",
)  # fmt: skip
SERIAL_DEVICES = ("shoe", "shuffler")
SERIAL_MODELS = ("reference",)
SAS_DEFAULT_PORT = "/dev/ttyAMA0"
DEFAULT_JOURNAL = "/var/lib/paigow/journal.db"
#: The most a configuration file may hold (the example is about 12 KB): a path to /dev/zero or a
#: FIFO is refused, not read for ever.
CONFIG_SIZE_LIMIT = 1024 * 1024
DEFAULT_CONSOLE_SOCKET = "/run/paigow/console.sock"

_TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
_SUPERVISOR_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
_PIN = re.compile(r"^[0-9]{4,12}$")

# scrypt parameters for supervisor PINs: 16 MiB of memory per check, ~50 ms on a Pi 4.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
_SCRYPT_FORMAT = re.compile(
    r"^scrypt\$n=(?P<n>[0-9]+),r=(?P<r>[0-9]+),p=(?P<p>[0-9]+)"
    r"\$(?P<salt>[A-Za-z0-9+/=]+)\$(?P<hash>[A-Za-z0-9+/=]+)$"
)
PLAIN_PIN_KEYS = ("pin", "password", "pin_plain", "code")


class ConfigError(Exception):
    """The configuration cannot be used; ``problems`` lists every one, each naming its key."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = list(problems)
        count = len(self.problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{source}: {count} problem{'s' if count != 1 else ''}:\n{lines}")


# ------------------------------------------------------------------------------------- PINs
def hash_pin(pin: str, salt: bytes | None = None) -> str:
    """The stored form of a supervisor PIN: ``scrypt$n=..,r=..,p=..$<salt b64>$<hash b64>``.

    Raises ValueError unless ``pin`` is 4 to 12 digits.
    """
    if not _PIN.match(pin):
        raise ValueError("pin: must be 4 to 12 digits")
    salt = os.urandom(16) if salt is None else salt
    import hashlib  # OpenSSL: only hashing or checking a PIN, not reading the file

    digest = hashlib.scrypt(
        pin.encode("ascii"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32
    )
    b64 = base64.b64encode
    return (
        f"scrypt$n={SCRYPT_N},r={SCRYPT_R},p={SCRYPT_P}${b64(salt).decode()}${b64(digest).decode()}"
    )


def _parse_pin_hash(stored: str) -> tuple[int, int, int, bytes, bytes] | str:
    """(n, r, p, salt, digest) of a stored hash, or why it is not one."""
    m = _SCRYPT_FORMAT.match(stored)
    if m is None:
        return "must look like 'scrypt$n=16384,r=8,p=1$<salt>$<hash>' (tablectl config hash-pin)"
    n, r, p = int(m["n"]), int(m["r"]), int(m["p"])
    if n < 2**14 or n > 2**20 or n & (n - 1):
        return f"scrypt n={n} must be a power of two from 16384 to 1048576"
    if not 1 <= r <= 32 or not 1 <= p <= 16:
        return f"scrypt r={r}, p={p} out of range (r 1..32, p 1..16)"
    try:
        salt = base64.b64decode(m["salt"], validate=True)
        digest = base64.b64decode(m["hash"], validate=True)
    except ValueError:
        return "salt or hash is not valid base64"
    if len(salt) < 16:
        return f"salt is {len(salt)} bytes; at least 16 are required"
    if len(digest) != 32:
        return f"hash is {len(digest)} bytes; expected 32"
    return n, r, p, salt, digest


def check_pin(stored: str, pin: str) -> bool:
    """True when ``pin`` matches the stored scrypt hash (constant-time compare); False for a
    wrong PIN or a malformed stored value."""
    parsed = _parse_pin_hash(stored)
    if isinstance(parsed, str) or not isinstance(pin, str) or not _PIN.match(pin):
        return False
    n, r, p, salt, digest = parsed
    import hashlib
    import hmac

    got = hashlib.scrypt(
        pin.encode("ascii"), salt=salt, n=n, r=r, p=p, maxmem=2 * 128 * r * n + 2**20, dklen=32
    )
    return hmac.compare_digest(got, digest)


# ------------------------------------------------------------------------------------- sections
@dataclass(frozen=True)
class TableSection:
    """``[table]``: the table's identity (journal and floor system)."""

    id: str = "T1"
    asset_number: int = 0
    location: str = ""


@dataclass(frozen=True)
class SerialDevice:
    """One serial device (shoe or shuffler): its protocol adapter and its driver configuration
    (``drivers.serial.shoe.ShoeConfig`` / ``shuffler.ShufflerConfig``: port, link, timeouts)."""

    model: str
    driver: DeviceConfig

    @property
    def port(self) -> str:
        return str(self.driver.port.path)

    @property
    def baudrate(self) -> int:
        return int(self.driver.port.baudrate)


@dataclass(frozen=True)
class ConsoleSection:
    """``[console]``: the supervisor console's UNIX socket (``controller.console.server``)."""

    enabled: bool = True
    socket: str = DEFAULT_CONSOLE_SOCKET


@dataclass(frozen=True)
class Supervisor:
    """One supervisor: an id used in journal entries, a display name and the hashed PIN."""

    id: str
    name: str
    pin_hash: str

    def check(self, pin: str) -> bool:
        return check_pin(self.pin_hash, pin)


@dataclass(frozen=True)
class TableConfig:
    """The whole validated configuration of one table."""

    table: TableSection
    pins: PinConfig
    serial: dict[str, SerialDevice]
    sas: SasSection
    game: GameConfig
    journal_path: Path
    supervisors: dict[str, Supervisor]
    source: str = ""
    console: ConsoleSection = field(default_factory=ConsoleSection)
    #: [journal] anchor: the head anchor's file (None: beside the journal, <path>.anchor)
    journal_anchor: Path | None = None
    #: [journal] key_file: the keyed chain's key (None: an unkeyed chain)
    journal_key_file: Path | None = None
    #: [journal] seal_key: the forward-secure sealing key's file (None: no seals)
    journal_seal_key: Path | None = None
    #: [web]: the table's page (controller/web)
    web: WebSection = field(default_factory=WebSection)
    #: [link]: the linked progressive's pool and NATS servers (controller/link/link_config.py)
    link: LinkSection = field(default_factory=LinkSection)

    @property
    def bonus(self) -> BonusConfig | None:
        """The bonus offering (``[bonus]``; None without one), part of the game configuration."""
        return self.game.bonus

    @property
    def shoe(self) -> ShoeConfig:
        driver = self.serial["shoe"].driver
        assert isinstance(driver, ShoeConfig)
        return driver

    @property
    def shuffler(self) -> ShufflerConfig:
        driver = self.serial["shuffler"].driver
        assert isinstance(driver, ShufflerConfig)
        return driver

    def _web_line(self) -> str:
        w = self.web
        if not w.enabled:
            return "disabled (tablectl run serves no page)"
        acts = (
            f"supervisor actions after sign-in{' with the key switch' if w.require_key else ''}, "
            f"sessions end {w.session_minutes} min after their last use"
            if w.actions
            else "read-only (no sign-in)"
        )
        return f"http://{w.host}:{w.port}/, {acts}"

    def summary(self) -> list[str]:
        """Human-readable lines describing the configuration (``tablectl config check``)."""
        g = self.game
        levels = ", ".join(
            f"{lvl.name} (reset ${lvl.reset_cents / 100:,.2f}, rate {lvl.rate_bp / 100:g}%"
            f"{f', limit ${lvl.limit_cents / 100:,.2f}' if lvl.limit_cents else ''})"
            for lvl in g.levels
        )
        serial = ", ".join(
            f"{name} {dev.port} @{dev.baudrate}" for name, dev in self.serial.items()
        )
        sas = f"address {self.sas.address} on {self.sas.port}" if self.sas.enabled else "disabled"
        return [
            f"table {self.table.id} (asset {self.table.asset_number})",
            f"pins: {len(self.pins.assignments())} assigned",
            f"serial: {serial}",
            f"sas: {sas}",
            f"game: start {g.start_mode}, ${g.progressive_wager_cents / 100:g} progressive wager, "
            f"pay table {g.paytable}, ace-low straight {g.ace_low_straight}, joker flush "
            f"{g.joker_flush}, house way {g.house_way}, EZ pai gow "
            f"{'on' if g.ez_pai_gow else 'off'}, side wager "
            f"{'offered' if g.side_wager_offered else 'not offered'}",
            f"levels: {levels}",
            f"bonus wagers: {', '.join(self.bonus.offered if self.bonus else ()) or 'none'}",
            f"journal: {self.journal_path}",
            f"console: {self.console.socket if self.console.enabled else 'disabled'}",
            f"web: {self._web_line()}",
            f"supervisors: {len(self.supervisors)} ({', '.join(sorted(self.supervisors))})",
            f"link: pool {self.link.pool} via {', '.join(self.link.connection.servers)} "
            f"(linked wager unplayable after {self.link.timeout_s:g} s without the controller)"
            if self.link.linked
            else f"link: not linked; journal shipped to the centre (the witness) via "
            f"{', '.join(self.link.connection.servers)}"
            if self.link.enabled
            else "link: not linked",
        ]


# ------------------------------------------------------------------------------------- helpers
# The loader lists every problem of the file, so each `fsm.configread` reader's ConfigValueError
# becomes one line of `ConfigError` and the key takes its default for the rest of the check.
def _kind(value: object) -> str:
    return describe(value)


def _collect(problems: list[str], default: T, read: Callable[[], T]) -> T:
    try:
        return read()
    except ConfigValueError as exc:
        problems.append(str(exc))
        return default


def _unknown(data: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> list[str]:
    return [str(p) for p in unknown_keys(data, where, allowed)]


def _table_of(value: object, where: str, problems: list[str]) -> Mapping[str, Any] | None:
    return _collect(problems, None, lambda: table_value(value, where))


def _delegate(
    build: Callable[[Mapping[str, Any], str], Any], data: Any, where: str, problems: list[str]
) -> Any:
    """Run a component's ``from_mapping``; its ValueError (message starts with the key path)
    becomes one problem. None when it failed."""
    try:
        return build(data, where)
    except ValueError as exc:
        message = str(exc)
        named = message.startswith(where) or message.split(":")[0].split(".")[0] in SECTIONS
        problems.append(message if named else f"{where}: {message}")
    except Exception as exc:  # a component's bug must not crash the loader
        problems.append(f"{where}: could not be validated ({type(exc).__name__}: {exc})")
    return None


# ------------------------------------------------------------------------------------- sections


def _parse_table(raw: object, problems: list[str]) -> TableSection:
    data = _table_of(raw, "table", problems)
    if data is None:
        return TableSection()
    problems.extend(_unknown(data, ("id", "asset_number", "location"), "table"))
    if "id" not in data:
        problems.append("table.id: required (1-32 letters, digits, '_', '.', '-')")
        table_id = "T1"
    else:
        table_id = data["id"]
        if not isinstance(table_id, str) or not _TABLE_ID.match(table_id):
            problems.append(
                f"table.id: must be 1-32 letters, digits, '_', '.', '-' (starting with a letter "
                f"or digit), got {_kind(table_id)}"
            )
            table_id = "T1"
    if "asset_number" not in data:
        problems.append(
            "table.asset_number: required (an integer 1..4294967295, the SAS asset number)"
        )
        asset = 0
    else:
        table = Reader(data, "table", ("asset_number",), check=False)
        asset = _collect(problems, 0, lambda: table.integer("asset_number", 0, 1, 2**32 - 1))
    location = data.get("location", "")
    if not isinstance(location, str):
        problems.append(f"table.location: must be a string, got {_kind(location)}")
        location = ""
    return TableSection(table_id, asset, location)


_SERIAL_DRIVERS: dict[str, Any] = {"shoe": ShoeConfig, "shuffler": ShufflerConfig}


def _parse_serial_device(name: str, raw: object, problems: list[str]) -> SerialDevice:
    where = f"serial.{name}"
    driver_cls = _SERIAL_DRIVERS[name]
    data = _table_of(raw, where, problems)
    if data is None:
        return SerialDevice("reference", driver_cls())
    model = data.get("model", "reference")
    if model not in SERIAL_MODELS:
        problems.append(
            f"{where}.model: must be one of {', '.join(SERIAL_MODELS)}, got {_kind(model)}"
        )
        model = "reference"
    rest = {k: v for k, v in data.items() if k != "model"}
    driver = _delegate(driver_cls.from_mapping, rest, where, problems)
    device = SerialDevice(str(model), driver if driver is not None else driver_cls())
    if driver is not None and (
        not device.port.isprintable() or not device.port.startswith("/dev/")
    ):
        problems.append(
            f"{where}.port.path: must be a device path under /dev/, got {device.port!r}"
        )
    return device


def _parse_serial(raw: object, problems: list[str]) -> dict[str, SerialDevice]:
    data = _table_of(raw, "serial", problems)
    if data is None:
        data = {}
    problems.extend(_unknown(data, SERIAL_DEVICES, "serial"))
    devices = {
        name: _parse_serial_device(name, data.get(name, {}), problems) for name in SERIAL_DEVICES
    }
    ports: dict[str, str] = {}
    for name, dev in devices.items():
        if dev.port in ports:
            problems.append(
                f"serial.{name}.port.path: {dev.port} is also used by serial.{ports[dev.port]}"
            )
        ports[dev.port] = name
    return devices


def _parse_sas(raw: object, problems: list[str]) -> SasSection:
    return parse_sas(raw, problems)  # controller/floor/sas_config.py: every key of [sas]


def _parse_journal_files(
    raw: object, problems: list[str]
) -> tuple[Path | None, Path | None, Path | None]:
    """``[journal] anchor``, ``key_file`` and ``seal_key``: absolute paths when given (the
    journal's own module checks their content at power-up)."""
    data = raw if isinstance(raw, dict) else {}
    out: list[Path | None] = []
    for key in ("anchor", "key_file", "seal_key"):
        value = data.get(key)
        if value is None:
            out.append(None)
        elif (
            not isinstance(value, str)
            or not value.isprintable()
            or not value.startswith("/")
            or value.endswith("/")
        ):
            problems.append(f"journal.{key}: must be an absolute file path, got {value!r}")
            out.append(None)
        else:
            out.append(Path(value))
    if out[1] is not None and out[2] is not None:
        problems.append(
            "journal.key_file and journal.seal_key: configure one (seal_key: forward-secure "
            "seals; key_file: the static keyed chain of journals made before)"
        )
    return out[0], out[1], out[2]


def _parse_journal(raw: object, problems: list[str]) -> Path:
    data = _table_of(raw, "journal", problems)
    if data is None:
        return Path(DEFAULT_JOURNAL)
    problems.extend(_unknown(data, ("path", "anchor", "key_file", "seal_key"), "journal"))
    journal = Reader(data, "journal", ("path",), check=False)
    path = _collect(problems, DEFAULT_JOURNAL, lambda: journal.string("path", DEFAULT_JOURNAL))
    if not path.isprintable():  # a NUL no file system takes; a newline no operator can read
        problems.append(f"journal.path: control characters are not allowed, got {path!r}")
        return Path(DEFAULT_JOURNAL)
    if not path.startswith("/"):
        problems.append(f"journal.path: must be an absolute path, got {path!r}")
    elif path.endswith("/"):
        problems.append(f"journal.path: must name a file, not a directory, got {path!r}")
    return Path(path)


def _parse_console(raw: object, problems: list[str]) -> ConsoleSection:
    data = _table_of(raw, "console", problems)
    if data is None:
        return ConsoleSection()
    problems.extend(_unknown(data, ("enabled", "socket"), "console"))
    console = Reader(data, "console", ("enabled", "socket"), check=False)
    enabled = _collect(problems, True, lambda: console.boolean("enabled", True))
    default = DEFAULT_CONSOLE_SOCKET
    path = _collect(problems, default, lambda: console.string("socket", default))
    if not path.isprintable() or not path.startswith("/") or path.endswith("/"):
        problems.append(f"console.socket: must be an absolute path to a file, got {path!r}")
    elif len(path.encode("utf-8")) >= 104:
        problems.append(
            f"console.socket: at most 103 bytes (a UNIX socket path), got {len(path.encode())}"
        )
    return ConsoleSection(enabled, path)


def _parse_supervisors(raw: object, problems: list[str]) -> dict[str, Supervisor]:
    data = _table_of(raw, "supervisors", problems)
    if data is None:
        return {}
    out: dict[str, Supervisor] = {}
    for sid, entry in data.items():
        where = f"supervisors.{sid}"
        if not _SUPERVISOR_ID.match(sid):
            problems.append(
                f"{where}: supervisor id must be 1-32 lowercase letters, digits, '_' or '-'"
            )
            continue
        body = _table_of(entry, where, problems)
        if body is None:
            continue
        plain = [k for k in PLAIN_PIN_KEYS if k in body]
        for key in plain:
            problems.append(
                f"{where}.{key}: a plain PIN must never be stored; store pin_hash instead "
                "(make one with: tablectl config hash-pin)"
            )
        problems.extend(
            _unknown({k: v for k, v in body.items() if k not in plain}, ("name", "pin_hash"), where)
        )
        name = _collect(
            problems, sid, partial(Reader(body, where, ("name",), check=False).string, "name", sid)
        )
        stored = body.get("pin_hash")
        if stored is None:
            if not plain:
                problems.append(
                    f"{where}.pin_hash: required (make one with: tablectl config hash-pin)"
                )
            continue
        if not isinstance(stored, str):
            problems.append(f"{where}.pin_hash: must be a string, got {_kind(stored)}")
            continue
        parsed = _parse_pin_hash(stored)
        if isinstance(parsed, str):
            if _PIN.match(stored):
                problems.append(
                    f"{where}.pin_hash: looks like a plain PIN; store its hash "
                    "(tablectl config hash-pin)"
                )
            else:
                problems.append(f"{where}.pin_hash: {parsed}")
            continue
        out[sid] = Supervisor(sid, name, stored)
    if not out and not any(p.startswith("supervisors") for p in problems):
        problems.append("supervisors: at least one supervisor is required (faults, hits, closing)")
    hashes: dict[str, str] = {}
    for sid, sup in out.items():
        if sup.pin_hash in hashes:
            problems.append(
                f"supervisors.{sid}.pin_hash: same stored hash as {hashes[sup.pin_hash]}"
            )
        hashes[sup.pin_hash] = sid
    return out


def _parse_game(
    raw: object, bonus: object, table: TableSection, problems: list[str]
) -> GameConfig | None:
    """``[game]`` and ``[bonus]``: delegated to ``GameConfig.from_mapping`` (the bonus offering
    is part of the game configuration the journal records); the table's id comes from
    ``[table]``."""
    data = _table_of(raw, "game", problems)
    if data is None:
        return None
    for_game = dict(data)
    if "table_id" in for_game:
        problems.append("game.table_id: set the table's id in [table] id, not in [game]")
        for_game.pop("table_id")
    if "bonus" in for_game:
        problems.append("game.bonus: the bonus offering is its own section, [bonus]")
        for_game.pop("bonus")
    for_game["table_id"] = table.id
    if bonus is not None:
        for_game["bonus"] = bonus
    result: GameConfig | None = _delegate(GameConfig.from_mapping, for_game, "game", problems)
    if result is not None:  # a table's meters start and reset where the pay table makes sense
        try:
            check_reset_amounts(result)
        except ValueError as exc:
            problems.append(str(exc))
    return result


# ------------------------------------------------------------------------------------- loading
def parse_config(data: Mapping[str, Any], source: str = "<config>") -> TableConfig:
    """Validate a parsed TOML document; `ConfigError` listing every problem if it is unusable."""
    problems: list[str] = []
    for key in data:
        if key not in SECTIONS:
            problems.append(f"{key}: unknown section (allowed: {', '.join(SECTIONS)})")
    for required in ("table", "game", "supervisors"):
        if required not in data:
            problems.append(f"{required}: required section [{required}] is missing")
    table = _parse_table(data.get("table", {}), problems) if "table" in data else TableSection()
    pins = _delegate(PinConfig.from_mapping, data.get("pins", {}), "pins", problems)
    serial = _parse_serial(data.get("serial", {}), problems)
    sas = _parse_sas(data.get("sas", {}), problems)
    game = _parse_game(data["game"], data.get("bonus"), table, problems) if "game" in data else None
    journal = _parse_journal(data.get("journal", {}), problems)
    anchor, key_file, seal_key = _parse_journal_files(data.get("journal", {}), problems)
    console = _parse_console(data.get("console", {}), problems)
    supervisors = _parse_supervisors(data["supervisors"], problems) if "supervisors" in data else {}
    web = _delegate(WebSection.from_mapping, data.get("web", {}), "web", problems)
    link = LinkSection()
    if "link" in data:
        link = _delegate(
            lambda raw, where: LinkSection.from_mapping(raw, table.id, where),
            data["link"], "link", problems,
        ) or LinkSection()  # fmt: skip
        names = [lvl.name for lvl in game.levels] if game is not None else []
        if link.level is not None and game is not None and link.level not in names:
            problems.append(f"link.level: {link.level!r} is not a level of [[game.levels]]")
    if problems or pins is None or game is None:
        raise ConfigError(source, problems or ["configuration could not be validated"])
    return TableConfig(
        table=table,
        pins=pins,
        serial=serial,
        sas=sas,
        game=game,
        journal_path=journal,
        journal_anchor=anchor,
        journal_key_file=key_file,
        journal_seal_key=seal_key,
        supervisors=supervisors,
        source=source,
        console=console,
        web=web or WebSection(),
        link=link,
    )


def load_config(path: str | Path) -> TableConfig:
    """Read and validate the TOML file at ``path``; `ConfigError` for any problem (a missing or
    unreadable file, bad TOML, a bad key or value), never another exception."""
    from controller.journal.safeio import SafeReadError, read_small_file

    p = Path(path)
    source = str(p)
    try:
        raw = read_small_file(p, CONFIG_SIZE_LIMIT, "configuration")
    except FileNotFoundError:
        raise ConfigError(source, ["no such file"]) from None
    except SafeReadError as exc:
        reason = str(exc).split(f"configuration {p}: ", 1)[-1]
        if "a directory" in reason:
            reason = "is a directory, not a configuration file"
        raise ConfigError(source, [reason]) from None
    except OSError as exc:
        raise ConfigError(source, [f"cannot read: {exc.strerror or exc}"]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(source, [f"not UTF-8 text (byte {exc.start})"]) from None
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, [f"not valid TOML: {exc}"]) from None
    return parse_config(data, source)
