"""The configurations of many tables, validated at load with `fsm.configread` (messages name the
key): a table's ``[link]`` section (`LinkSection`), and the link controller's own file
(`ControllerConfig`, ``tablectl link serve --config PATH``; docs/link.md lists every key).

Also the one place that turns either into the NATS client's connection options (TLS context,
user and password file). Must never open a connection, or read a password into a log line.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsm.configread import ConfigValueError, Reader, str_value
from fsm.round.config import ProgressiveLevel
from fsm.round.config import _five_dollar as five_dollar_reading
from fsm.rules.progressive import DEFAULT_TABLE, PayTableError, ProgressiveTable

LINK_KEYS = (
    "enabled", "pool", "servers", "timeout_s", "level", "user", "password_file",
    "tls_ca", "tls_cert", "tls_key", "key_file",
)  # fmt: skip
#: Subject tokens: a table or pool id must be one NATS token (no dot, wildcard or space). Here,
#: not in ``controller.link.messages``, so reading a table's configuration imports no wire format.
TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
_TOKEN_WHAT = "1-32 letters, digits, '_' or '-' (one NATS subject token)"
_URL = r"^(nats|tls)://[A-Za-z0-9_.\-\[\]:]+(:[0-9]{1,5})?$"


@dataclass(frozen=True)
class Connection:
    """How to reach the NATS servers: URLs, user and password file, TLS files."""

    servers: tuple[str, ...] = ("nats://127.0.0.1:4222",)
    user: str | None = None
    password_file: Path | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None

    def options(self) -> dict[str, Any]:
        """Keyword arguments for ``nats.connect`` (the password read from its file now)."""
        opts: dict[str, Any] = {"servers": list(self.servers)}
        if self.user is not None:
            opts["user"] = self.user
            if self.password_file is not None:
                opts["password"] = self.password_file.read_text(encoding="utf-8").strip()
        if self.tls_ca is not None:
            import ssl  # only a TLS connection pays for OpenSSL's context

            ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(self.tls_ca))
            if self.tls_cert is not None:
                ctx.load_cert_chain(
                    str(self.tls_cert), None if self.tls_key is None else str(self.tls_key)
                )
            opts["tls"] = ctx
        return opts


def _path(r: Reader, key: str) -> Path | None:
    if not r.has(key):
        return None
    text = r.string(key)
    if not text.startswith("/"):
        raise r.error(key, f"must be an absolute file path, got {text!r}")
    return Path(text)


def _connection(r: Reader) -> Connection:
    servers = r.items(
        "servers",
        lambda v, k: _url(v, k),
        min_length=1,
        what="a list of NATS server URLs (nats://host:port or tls://host:port)",
    )
    user = r.string("user") if r.has("user") else None
    conn = Connection(
        servers, user, _path(r, "password_file"), _path(r, "tls_ca"), _path(r, "tls_cert"),
        _path(r, "tls_key"),
    )  # fmt: skip
    if conn.tls_cert is not None and conn.tls_ca is None:
        raise r.error("tls_cert", "needs tls_ca (the CA that signed the server's certificate)")
    if conn.password_file is not None and user is None:
        raise r.error("password_file", "needs user")
    return conn


def _url(value: object, key: str) -> str:

    return str_value(
        value, key, pattern=_URL, what="a NATS URL nats://host:port or tls://host:port"
    )


@dataclass(frozen=True)
class LinkSection:
    """A table's ``[link]``: the NATS connection its journal is shipped on to the centre (the
    witness, issue 23), and the pool its progressive is linked to (``pool`` empty: not linked,
    the journal shipped all the same)."""

    enabled: bool = False
    pool: str = ""
    connection: Connection = field(default_factory=Connection)
    #: how long the table may go without the controller before the linked wager is unplayable
    timeout_s: float = 5.0
    #: the table's progressive level that is linked (default: its first level)
    level: str | None = None
    #: the table's link key (`controller.link.keys`): every shipped entry and request is MAC'd
    key_file: Path | None = None

    @classmethod
    def from_mapping(cls, data: object, table_id: str, where: str = "link") -> LinkSection:
        r = Reader(data, where, LINK_KEYS)
        enabled = r.boolean("enabled", True)
        if not enabled:
            return cls(False)
        pool = r.string("pool", pattern=TOKEN.pattern, what=_TOKEN_WHAT) if r.has("pool") else ""
        if not TOKEN.match(table_id):
            raise ConfigValueError(
                "table.id", f"a linked table's id must be {_TOKEN_WHAT}, got {table_id!r}"
            )
        timeout = r.number("timeout_s", 5.0, 0.5, 600.0, unit="seconds")
        level = r.string("level") if r.has("level") else None
        if level is not None and not pool:
            raise ConfigValueError(r.path("level"), "needs link.pool (the level linked to it)")
        key_file = _path(r, "key_file")
        if key_file is None:
            raise ConfigValueError(
                r.path("key_file"),
                "required: the table's link key, an absolute path (tablectl link keys new); the "
                "pool and central take no entry without its MAC",
            )
        return cls(True, pool, _connection(r), timeout, level, key_file)

    @property
    def linked(self) -> bool:
        """The progressive is linked to a pool (not only the journal shipped)."""
        return self.enabled and bool(self.pool)


def link_terms(game: Any, level: str) -> dict[str, Any]:
    """What a table says of its linked wager when it asks the controller's confirmation: the
    wager, the pay table, the linked level's rates, reset and limit, and its $5 reading (the
    pool refuses a table whose terms are not the pool's, `fsm.round.pool.PoolParams.terms`).
    ``game`` is the table's `fsm.round.config.GameConfig`."""
    lvl = game.level(level)
    return {
        "wager_cents": game.progressive_wager_cents,
        "paytable": game.paytable,
        "five_dollar_meter_share": game.five_dollar_meter_share,
        "level": {
            "name": lvl.name,
            "reset_cents": lvl.reset_cents,
            "rate_bp": lvl.rate_bp,
            "hidden_rate_bp": lvl.hidden_rate_bp,
            "limit_cents": lvl.limit_cents,
        },
    }


CONTROLLER_SECTIONS = ("link", "pool", "tables")
CONTROLLER_LINK_KEYS = (
    "pool", "servers", "user", "password_file", "tls_ca", "tls_cert", "tls_key", "journal",
    "anchor", "key_file", "batch", "replicas", "keys",
)  # fmt: skip
POOL_KEYS = (
    "level", "initial_cents", "reset_cents", "rate_bp", "hidden_rate_bp", "limit_cents",
    "wager_cents", "paytable", "five_dollar_meter_share", "five_dollar_ruling",
)  # fmt: skip


@dataclass(frozen=True)
class ControllerConfig:
    """The link controller's file: its NATS connection and journal, the pool's parameters and
    the tables allowed on it (id = asset number)."""

    pool: str
    connection: Connection
    journal: Path
    level: ProgressiveLevel
    wager_cents: int
    paytable: str
    tables: Mapping[str, int]
    anchor: Path | None = None
    key_file: Path | None = None
    batch: int = 256
    source: str = ""
    #: JetStream replicas of the stream and the bucket it creates (3 on a three-node cluster)
    replicas: int = 1
    #: the tables' link keys (a keyring directory, `controller.link.keys.Keyring`)
    keys: Path = Path("/etc/paigow/link-keys")
    #: the pool's reading of NY 5324.41(k)(4)(i) for a $5 wager's share of the meter, as a
    #: table's ``game.five_dollar_meter_share`` (the other reading names its ruling)
    five_dollar_meter_share: str = "times-five"
    five_dollar_ruling: str = ""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "<config>") -> ControllerConfig:
        top = Reader(data, "", CONTROLLER_SECTIONS)
        r = top.table("link", CONTROLLER_LINK_KEYS)
        pool = r.string("pool", pattern=TOKEN.pattern, what=_TOKEN_WHAT)
        journal = _path(r, "journal")
        if journal is None:
            raise r.error("journal", "required (an absolute path: the pool's journal)")
        conn = _connection(r)
        batch = r.integer("batch", 256, 1, 4096)
        replicas = r.integer("replicas", 1, 1, 5)
        keys = _path(r, "keys")
        if keys is None:
            raise r.error(
                "keys",
                "required: the tables' link keys, a directory (tablectl link keys new); no "
                "entry is taken without its table's MAC",
            )
        p = top.table("pool", POOL_KEYS)
        initial = p.integer("initial_cents", lo=0, hi=10**11)
        reset = p.integer("reset_cents", initial, 0, 10**11)
        level = ProgressiveLevel(
            p.string("level", "progressive"),
            initial,
            reset,
            p.integer("rate_bp", lo=1, hi=10_000),
            p.integer("hidden_rate_bp", 0, 0, 10_000),
            p.integer("limit_cents", 0, 0, 10**11),
        )
        if level.limit_cents and level.limit_cents < reset:
            raise p.error("limit_cents", f"must be 0 (none) or at least reset_cents ({reset})")
        paytable = p.string("paytable", DEFAULT_TABLE)
        try:
            table = ProgressiveTable.load(paytable)
        except PayTableError as exc:
            raise p.error("paytable", str(exc)) from None
        wager = p.integer("wager_cents", 100, 1)
        if wager not in table.wager_cents:
            raise p.error("wager_cents", f"pay table {paytable} takes {list(table.wager_cents)}")
        five, ruling = five_dollar_reading(p)
        t = data.get("tables")
        if not isinstance(t, Mapping) or not t:
            raise ConfigValueError("tables", "required: table id = asset number, one per table")
        tables: dict[str, int] = {}
        tr = Reader(t, "tables", [str(k) for k in t])
        for key in t:
            if not TOKEN.match(str(key)):
                raise tr.error(str(key), f"a table id must be {_TOKEN_WHAT}")
            tables[str(key)] = tr.integer(str(key), lo=1, hi=2**32 - 1)
        if len(set(tables.values())) != len(tables):
            raise ConfigValueError("tables", "two tables share an asset number")
        return cls(
            pool, conn, journal, level, wager, paytable, tables,
            _path(r, "anchor"), _path(r, "key_file"), batch, source, replicas, keys, five,
            ruling,
        )  # fmt: skip


def load_controller_config(path: str | Path) -> ControllerConfig:
    """Read and validate the link controller's TOML file; `ConfigValueError` names the key."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigValueError("", f"{p}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigValueError("", f"{p}: not valid TOML: {exc}") from None
    try:
        return ControllerConfig.from_mapping(data, str(p))
    except ConfigValueError as exc:
        raise ConfigValueError(exc.key, f"{exc.why} ({p})") from None
