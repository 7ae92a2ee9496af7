"""The floor page's configuration file (``tablectl central serve --config PATH``; docs/link.md
"The floor's page"): where the page listens, its TLS files, the sections of the floor and their
tables, each table's stale timeout, the alarm sound, the linked pools' journals and the
supervisors who may acknowledge alarms (PIN hashes, the same rules as a table's ``[supervisors]``).

Responsible for reading and validating the file with `fsm.configread` (every problem names its
key). Must never open a socket, a database or a journal.
"""

from __future__ import annotations

import ipaddress
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from controller.config import Supervisor, _parse_supervisors
from fsm.configread import ConfigValueError, Reader, str_value

TOP_KEYS = ("floor", "sections", "pools", "supervisors")
FLOOR_KEYS = (
    "title", "host", "port", "stale_s", "sound", "tls_cert", "tls_key", "session_minutes",
    "page_size",
)  # fmt: skip
SECTION_KEYS = ("name", "tables", "stale_s")
POOL_KEYS = ("id", "journal")
TABLE_ID = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"
UNASSIGNED = "Unassigned"


@dataclass(frozen=True)
class Section:
    """A part of the floor (a pit): its name, its tables in the order shown, their timeout."""

    name: str
    tables: tuple[str, ...]
    stale_s: float


@dataclass(frozen=True)
class PoolJournal:
    """A linked pool whose journal this machine can read (the link controller beside it)."""

    id: str
    journal: Path | None


@dataclass(frozen=True)
class FloorConfig:
    title: str = "Pai gow floor"
    host: str = "127.0.0.1"
    port: int = 8090
    #: a table that ships nothing for this long (seconds) is shown stale (per section: its own)
    stale_s: float = 120.0
    #: a new alarm sounds in the browsers (they may still mute it)
    sound: bool = False
    tls_cert: Path | None = None
    tls_key: Path | None = None
    session_minutes: int = 5
    #: tiles per page of a section (200 tables: paged, each section its own pages)
    page_size: int = 60
    sections: tuple[Section, ...] = ()
    pools: tuple[PoolJournal, ...] = ()
    supervisors: Mapping[str, Supervisor] = field(default_factory=dict)

    def section_of(self, table: str) -> Section | None:
        for s in self.sections:
            if table in s.tables:
                return s
        return None

    def stale_after(self, table: str) -> float:
        s = self.section_of(table)
        return self.stale_s if s is None else s.stale_s

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.host).is_loopback


def parse_floor_config(data: Mapping[str, object], source: str = "floor.toml") -> FloorConfig:
    """The validated configuration; `ConfigValueError` names the first bad key."""
    top = Reader(data, "", TOP_KEYS)
    f = top.table("floor", FLOOR_KEYS)
    host = f.string("host", "127.0.0.1")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise f.error("host", f"must be an IP address such as 127.0.0.1, got {host!r}") from None
    cert = f.string("tls_cert") if f.has("tls_cert") else None
    key = f.string("tls_key") if f.has("tls_key") else None
    if (cert is None) != (key is None):
        raise f.error("tls_key" if cert else "tls_cert", "tls_cert and tls_key go together")
    stale = f.seconds("stale_s", 120.0)
    if stale < 1.0:
        raise f.error("stale_s", f"must be at least 1 second, got {stale:g}")
    sections: list[Section] = []
    seen: dict[str, str] = {}
    raw_sections = top.raw("sections", [])
    if not isinstance(raw_sections, list):
        raise top.error("sections", "must be an array of tables ([[sections]])")
    for i, raw in enumerate(raw_sections):
        where = f"sections[{i}]"
        r = Reader(raw, where, SECTION_KEYS)
        name = r.string("name")
        tables = r.items(
            "tables", lambda v, k: str_value(v, k, pattern=TABLE_ID, what="a table id"),
            what="a list of table ids",
        )  # fmt: skip
        for t in tables:
            if t in seen:
                raise r.error("tables", f"table {t} is already in section {seen[t]}")
            seen[t] = name
        sections.append(Section(name, tables, r.seconds("stale_s", stale)))
    pools: list[PoolJournal] = []
    raw_pools = top.raw("pools", [])
    if not isinstance(raw_pools, list):
        raise top.error("pools", "must be an array of tables ([[pools]])")
    for i, raw in enumerate(raw_pools):
        r = Reader(raw, f"pools[{i}]", POOL_KEYS)
        journal = r.string("journal") if r.has("journal") else None
        pools.append(
            PoolJournal(
                r.string("id", pattern=TABLE_ID), None if journal is None else Path(journal)
            )
        )
    problems: list[str] = []
    supervisors = (
        _parse_supervisors(top.raw("supervisors", {}), problems) if top.has("supervisors") else {}
    )
    if problems:
        raise ConfigValueError("", f"{source}: {problems[0]}")
    return FloorConfig(
        title=f.string("title", "Pai gow floor"),
        host=host,
        port=f.integer("port", 8090, 0, 65535),
        stale_s=stale,
        sound=f.boolean("sound", False),
        tls_cert=None if cert is None else Path(cert),
        tls_key=None if key is None else Path(key),
        session_minutes=f.integer("session_minutes", 5, 1, 720),
        page_size=f.integer("page_size", 60, 4, 500),
        sections=tuple(sections),
        pools=tuple(pools),
        supervisors=supervisors,
    )


def load_floor_config(path: str | Path) -> FloorConfig:
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigValueError("", f"{p}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigValueError("", f"{p}: not TOML: {exc}") from None
    return parse_floor_config(data, str(p))
