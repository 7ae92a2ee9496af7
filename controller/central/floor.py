"""The floor page's live state (docs/link.md "The floor's page"): every table's tile, the pools,
the alarms and their acknowledgements, fed on one asyncio loop by three sources:

- the shipped entries, live: an ordered JetStream consumer of ``table.*.journal`` from the
  moment the page starts (no durable consumer: the page keeps nothing the stream must hold for
  it);
- the stored entries: every ``POLL_S`` the heads central ingest holds in PostgreSQL; a table
  whose stored head is past its tile is folded on from the stored entries (at start every table
  from its last stored entries; a page without NATS, or that missed messages, catches up here),
  and the witness's alarms and the open refusals are read;
- the linked pools' values (the key-value bucket ``LINK``, watched) and, for a pool whose
  journal this machine can read, its verification (`tablectl link verify`) every ``VERIFY_S``.

Responsible for folding each entry once per table in seq order (`Tile.apply`), collecting the
tiles that changed, and handing the page one update every ``FLUSH_S``. PostgreSQL calls run on
one database thread (`FloorStore` is not shared between threads). Must never publish to the
stream, write a table's journal or central ingest's tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from controller.central.floor_config import UNASSIGNED, FloorConfig
from controller.central.store import FloorStore
from controller.central.tiles import Tile, alarms_of
from controller.journal.format import Entry
from controller.link.keys import Keyring
from controller.link.messages import (
    KV_BUCKET,
    MAC_HEADER,
    STREAM,
    STREAM_SUBJECTS,
    MessageError,
    decode_entry,
    ensure_stream,
    recomputed_hash,
    table_of_subject,
)

log = logging.getLogger(__name__)

POLL_S = 1.0
FLUSH_S = 0.05
VERIFY_S = 60.0


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Floor:
    """Tiles, pools and alarms; every method runs on the page's event loop."""

    def __init__(
        self,
        cfg: FloorConfig,
        store: FloorStore,
        *,
        servers: list[str] | None = None,
        connect_options: Mapping[str, Any] | None = None,
        clock: Callable[[], int] = wall_ms,
        keys: Keyring | None = None,
    ) -> None:
        self.cfg = cfg
        #: the tables' link keys: a live entry is shown only with its table's MAC; without a
        #: keyring only what central ingest stored (it checked the MAC) is shown
        self.keys = keys
        self.store = store
        self.servers = servers or []
        self.connect_options = dict(connect_options or {})
        self.clock = clock
        self.db = ThreadPoolExecutor(1, thread_name_prefix="floor-db")
        self.tiles: dict[str, Tile] = {}
        for section in cfg.sections:
            for t in section.tables:
                self.tiles[t] = Tile(t, section.name)
        self.dirty: set[str] = set()
        self.pools: dict[str, dict[str, Any]] = {p.id: {"pool": p.id} for p in cfg.pools}
        self.pool_checks: dict[str, dict[str, Any]] = {}
        self.central_alarms: list[dict[str, Any]] = []
        self.acks: dict[str, dict[str, Any]] = {}
        self.status: dict[str, str] = {"nats": "not connected", "pg": "not connected"}
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        self._alarms_text = ""
        self._pools_text = ""
        self._status_text = ""
        self._tables_shown = len(self.tiles)
        self._tasks: list[asyncio.Task[None]] = []
        self._nc: Any = None

    # ------------------------------------------------------------------ the fold
    def tile(self, table: str) -> Tile:
        t = self.tiles.get(table)
        if t is None:
            t = self.tiles[table] = Tile(table, UNASSIGNED)
        return t

    def take(
        self, table: str, entry: Entry, asset: int | None, seen_ms: int, *, check: bool = False
    ) -> None:
        """Fold ``entry`` into its table's tile. ``check`` (a live message, not yet checked by
        ingest): an entry that does not match its hash, or does not chain to the entry the tile
        holds before it, is not shown (ingest refuses it and the page shows the refusal)."""
        tile = self.tile(table)
        if check and entry.seq > tile.seq:
            try:
                intact = recomputed_hash(entry) == entry.hash
            except ValueError:
                intact = False
            follows = tile.seq == 0 or entry.seq != tile.seq + 1 or entry.prev_hash == tile.hash
            if not (intact and follows):
                log.warning("floor: table %s seq %s not shown: it does not chain", table, entry.seq)
                return
        if tile.apply(entry, seen_ms):
            if asset is not None:
                tile.asset = asset
            self.dirty.add(table)

    def take_live(self, table: str, entry: Entry, headers: Mapping[str, str]) -> bool:
        """A live entry from the stream, shown only with its table's MAC (nothing from a table
        counts until authenticated); without a keyring it waits for central ingest, which
        checked it, to store it. True when it was folded in."""
        if self.keys is None:
            return False
        why = self.keys.check_entry(table, entry.seq, entry.hash, headers.get(MAC_HEADER))
        if why is not None:
            log.warning("floor: table %s seq %s not shown: %s", table, entry.seq, why)
            return False
        raw = headers.get("Paigow-Asset")
        asset = int(raw) if isinstance(raw, str) and raw.isdigit() else None
        before = self.tile(table).seq
        self.take(table, entry, asset, self.clock(), check=True)
        return self.tile(table).seq != before

    # ------------------------------------------------------------------ what the page shows
    def alarms(self) -> list[dict[str, Any]]:
        now = self.clock()
        out: list[dict[str, Any]] = []
        for tile in self.tiles.values():
            out.extend(alarms_of(tile, now, self.cfg.stale_after(tile.table)))
        out.extend(self.central_alarms)
        for pid, check in self.pool_checks.items():
            if not check.get("ok", True):
                out.append(
                    {
                        "key": f"pool:{pid}:{check.get('entries')}", "kind": "pool",
                        "table": pid, "since": check.get("at", now),
                        "words": f"pool {pid}: its journal fails verification: "
                        + "; ".join(check.get("problems", [])[:3]),
                    }
                )  # fmt: skip
        for a in out:
            a["ack"] = self.acks.get(a["key"])
        return out

    def pools_view(self) -> list[dict[str, Any]]:
        out = []
        for pid in sorted(set(self.pools) | {t.pool for t in self.tiles.values() if t.pool}):
            value = dict(self.pools.get(pid) or {"pool": pid})
            tables = [
                {"table": t.table, "playable": t.playable, "link_up": t.link_up}
                for t in sorted(self.tiles.values(), key=lambda x: x.table)
                if t.pool == pid
            ]
            hits = sorted(
                (h for t in self.tiles.values() for h in t.hits if h["pool"] == pid),
                key=lambda h: (h["ts"], h["table"]),
            )[-10:]
            out.append(
                {**value, "tables_playable": tables, "last_hits": hits[::-1],
                 "check": self.pool_checks.get(pid)}
            )  # fmt: skip
        return out

    def sections_view(self) -> list[dict[str, Any]]:
        names = [s.name for s in self.cfg.sections]
        if any(t.section == UNASSIGNED for t in self.tiles.values()):
            names.append(UNASSIGNED)
        out = []
        for name in names:
            s = next((x for x in self.cfg.sections if x.name == name), None)
            tables = (
                list(s.tables)
                if s
                else sorted(t.table for t in self.tiles.values() if t.section == name)
            )
            out.append({"name": name, "tables": tables})
        return out

    def full(self) -> dict[str, Any]:
        now = self.clock()
        return {
            "type": "full",
            "title": self.cfg.title,
            "sound": self.cfg.sound,
            "page_size": self.cfg.page_size,
            "now": now,
            "sections": self.sections_view(),
            "tiles": [t.to_json(now, self.cfg.stale_after(t.table)) for t in self.tiles.values()],
            "alarms": self.alarms(),
            "pools": self.pools_view(),
            "status": self.status,
        }

    def flush(self) -> dict[str, Any] | None:
        """The update since the last one (None: nothing changed)."""
        now = self.clock()
        msg: dict[str, Any] = {"type": "update", "now": now}
        # a tile whose staleness changed is an update too
        for t in self.tiles.values():
            stale = t.stale(now, self.cfg.stale_after(t.table))
            if stale != t.shown_stale:
                self.dirty.add(t.table)
        if self.dirty:
            tiles = []
            for name in sorted(self.dirty):
                t = self.tiles[name]
                view = t.to_json(now, self.cfg.stale_after(name))
                t.shown_stale = view["stale"]
                tiles.append(view)
            msg["tiles"] = tiles
            self.dirty.clear()
        if len(self.tiles) != self._tables_shown:  # a table not in the file shipped: arranged
            self._tables_shown = len(self.tiles)
            msg["sections"] = self.sections_view()
        alarms = self.alarms()
        text = json.dumps(alarms, sort_keys=True)
        if text != self._alarms_text:
            self._alarms_text = text
            msg["alarms"] = alarms
        pools = self.pools_view()
        text = json.dumps(pools, sort_keys=True)
        if text != self._pools_text:
            self._pools_text = text
            msg["pools"] = pools
        text = json.dumps(self.status, sort_keys=True)
        if text != self._status_text:
            self._status_text = text
            msg["status"] = dict(self.status)
        return msg if len(msg) > 2 else None

    # ------------------------------------------------------------------ the sources
    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self.db, self.store.open)
            self.status["pg"] = "connected"
        except Exception as exc:
            self.status["pg"] = f"unreachable: {exc}"
            raise
        self.acks = await loop.run_in_executor(self.db, self.store.acks)
        self._tasks = [
            asyncio.create_task(self._poll_loop()),
            asyncio.create_task(self._flush_loop()),
            asyncio.create_task(self._verify_loop()),
        ]
        if self.servers:
            self._tasks.append(asyncio.create_task(self._nats()))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.close()
        await asyncio.get_running_loop().run_in_executor(self.db, self.store.close)
        self.db.shutdown(wait=False)

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_S)
            msg = self.flush()
            if msg is not None:
                for listener in list(self.listeners):
                    listener(msg)

    async def _poll_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                await self.poll_once(loop)
                self.status["pg"] = "connected"
            except Exception as exc:  # psycopg.Error: restart of PostgreSQL, no schema yet
                self.status["pg"] = f"problem: {type(exc).__name__}: {exc}"[:200]
                log.warning("floor: PostgreSQL: %s", exc)
            await asyncio.sleep(POLL_S)

    async def poll_once(self, loop: asyncio.AbstractEventLoop) -> None:
        store = self.store
        if not await loop.run_in_executor(self.db, store.has_ingest_schema):
            self.status["pg"] = "connected (central ingest has stored nothing yet)"
            return
        heads = await loop.run_in_executor(self.db, store.heads)
        for table, seq in sorted(heads.items()):
            have = self.tiles[table].seq if table in self.tiles else 0
            if seq > have:
                rows = await loop.run_in_executor(self.db, store.entries_after, table, have)
                for entry, asset, received in rows:
                    self.take(table, entry, asset, max(received, self.tile(table).seen_ms))
        witness = await loop.run_in_executor(self.db, store.witness_alarms)
        refusals = await loop.run_in_executor(self.db, store.open_refusals)
        self.central_alarms = witness + refusals
        self.acks = await loop.run_in_executor(self.db, store.acks)

    async def _nats(self) -> None:
        import nats
        from nats.js import api

        async def on_entry(msg: Any) -> None:
            table = table_of_subject(msg.subject)
            if table is None:
                return
            try:
                entry = decode_entry(msg.data)
            except MessageError:
                return  # central ingest refuses and records it; the page shows the refusal
            self.take_live(table, entry, msg.headers or {})

        while True:
            try:
                self._nc = nc = await nats.connect(
                    servers=self.servers, connect_timeout=5, allow_reconnect=True,
                    max_reconnect_attempts=-1, **self.connect_options,
                )  # fmt: skip
                js = nc.jetstream()
                await ensure_stream(js)  # as ingest does: the page may start before any table
                await js.subscribe(
                    STREAM_SUBJECTS, stream=STREAM, cb=on_entry, ordered_consumer=True,
                    deliver_policy=api.DeliverPolicy.NEW,
                )  # fmt: skip
                self.status["nats"] = "connected"
                await self._watch_pools(js)
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.status["nats"] = f"problem: {type(exc).__name__}: {exc}"[:200]
                log.warning("floor: NATS: %s", exc)
                if self._nc is not None:
                    with contextlib.suppress(Exception):
                        await self._nc.close()
                    self._nc = None
                await asyncio.sleep(2.0)

    async def _watch_pools(self, js: Any) -> None:
        """The pools' values as the link controllers publish them (waits for the bucket)."""
        while True:
            try:
                kv = await js.key_value(KV_BUCKET)
                break
            except Exception:
                await asyncio.sleep(2.0)
        watcher = await kv.watchall()
        async for e in watcher:
            if e is None or e.value is None:
                continue
            try:
                value = json.loads(e.value)
            except ValueError:
                continue
            if isinstance(value, dict):
                value["received"] = self.clock()
                self.pools[str(e.key)] = {**self.pools.get(str(e.key), {}), **value}

    async def _verify_loop(self) -> None:
        loop = asyncio.get_running_loop()
        journals = [(p.id, p.journal) for p in self.cfg.pools if p.journal is not None]
        while journals:
            for pid, path in journals:
                assert path is not None
                self.pool_checks[pid] = await loop.run_in_executor(None, verify_pool, path)
            await asyncio.sleep(VERIFY_S)


def verify_pool(path: Path) -> dict[str, Any]:
    """`tablectl link verify` of a pool's journal: ok or its problems, and the pool's meters
    (display, overflow, reserve) as its journal replays them."""
    from controller.journal.audit import verify
    from controller.link.service import PoolReplayer

    made: list[PoolReplayer] = []

    def factory(recorded: Any) -> PoolReplayer:
        r = PoolReplayer(recorded)
        made.append(r)
        return r

    at = wall_ms()
    if not path.is_file():
        return {"ok": False, "entries": 0, "problems": [f"{path}: no such journal"], "at": at}
    report = verify(path, factory)
    out: dict[str, Any] = {
        "ok": report.ok, "entries": report.entries, "problems": list(report.problems)[:5],
        "at": at,
    }  # fmt: skip
    if made:
        out["meters"] = made[-1].pool.meter_report()
    return out
