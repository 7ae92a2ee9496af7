"""Floor-wide reporting (docs/link.md "Central ingest and the floor's reports"): every table's
journal stream consumed into PostgreSQL, and the floor's shift, meters and hits read back from it.

Responsible for
- ``Ingest``: a durable JetStream pull consumer (``central``) over ``table.*.journal``; each entry
  checked on arrival (`controller.link.messages.check_next`) against the last one held of its
  table, inserted with its table's head in one PostgreSQL transaction, and ack'd only after the
  commit (at-least-once delivery made exactly-once by the ``(table_id, seq)`` primary key and
  the chain check); a forged entry (its hash, a ``prev_hash`` that is not the last hash held, a
  different hash at a held seq) refused for good, a gapped one refused until the gap fills
  (nak'd, redelivered, taken once its predecessor is held); every refusal recorded in
  ``refused`` with the table, seq and reason and printed, never inserted;
- the witness (issue 23): the centre keeps each table's witnessed head (``heads``), and a table
  it knows whose next shipped entry contradicts it raises an alarm at once, recorded in
  ``alarms`` and printed: ``rollback`` (another entry at a held seq: the table went back to an
  older state and re-used seqs), ``wipe`` (another seq 1: the table started a new journal) or
  ``fork`` (the entry after the head does not chain to it: its history was rewritten);
- the floor's reports: the fold functions of `controller.journal.reports` (shift, hits) run over
  each table's stored entries through `StoredReader`, table by table, and the floor's total.

Must never write to a table's journal or to the stream, insert an entry whose chain does not
follow, or use floats for money. The schema is created by ``Ingest`` (``CREATE TABLE IF NOT
EXISTS``); the reports only read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.journal.format import JSON, Entry
from controller.journal.reports import (
    METER_PARTS,
    JournalReader,
    ReportError,
    hits_report,
    shift_report,
)
from controller.link.keys import Keyring
from controller.link.link_config import TOKEN
from controller.link.messages import (
    ASSET_HEADER,
    MAC_HEADER,
    STREAM,
    STREAM_SUBJECTS,
    Head,
    MessageError,
    check_next,
    decode_entry,
    effects_of,
    recomputed_hash,
    table_of_subject,
)
from controller.link.messages import ensure_stream as messages_ensure_stream
from controller.link.plausible import Watch

DURABLE = "central"
#: A message not ack'd within this time is redelivered (an ingest killed between commit and ack).
ACK_WAIT_S = 5.0
#: A gapped entry is redelivered after this delay, until its predecessor is held.
GAP_RETRY_S = 0.5

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    table_id    text        NOT NULL,
    seq         bigint      NOT NULL CHECK (seq >= 1),
    ts_ms       bigint      NOT NULL,
    round_id    bigint,
    type        text        NOT NULL,
    data        jsonb       NOT NULL,
    prev_hash   text        NOT NULL,
    state_hash  text        NOT NULL,
    hash        text        NOT NULL,
    mac         text        NOT NULL,
    asset       bigint,
    body        text        NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);
CREATE TABLE IF NOT EXISTS heads (
    table_id text   PRIMARY KEY,
    seq      bigint NOT NULL,
    hash     text   NOT NULL
);
CREATE TABLE IF NOT EXISTS alarms (
    id            bigserial   PRIMARY KEY,
    table_id      text        NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('rollback', 'wipe', 'fork')),
    seq           bigint      NOT NULL,
    held_seq      bigint      NOT NULL,
    held_hash     text        NOT NULL,
    received_hash text        NOT NULL,
    detail        text        NOT NULL,
    raised_at     timestamptz NOT NULL DEFAULT now(),
    cleared_at    timestamptz,
    UNIQUE (table_id, kind, seq, received_hash)
);
CREATE TABLE IF NOT EXISTS refused (
    id          bigserial   PRIMARY KEY,
    table_id    text        NOT NULL,
    seq         bigint      NOT NULL,
    hash        text        NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('forged', 'gap', 'malformed')),
    reason      text        NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    filled_at   timestamptz,
    UNIQUE (table_id, seq, hash, kind)
);
-- issue 22: an entry without its table's MAC is 'unauthenticated', one whose claims cannot be
-- true 'implausible' (the kinds widened in place: a database made before keeps its rows)
ALTER TABLE refused DROP CONSTRAINT IF EXISTS refused_kind_check;
ALTER TABLE refused ADD CONSTRAINT refused_kind_check
    CHECK (kind IN ('forged', 'gap', 'malformed', 'unauthenticated', 'implausible'));
ALTER TABLE entries ADD COLUMN IF NOT EXISTS link_mac text;
"""


class CentralError(Exception):
    """PostgreSQL or NATS cannot be used; the text says which and why."""


def connect_pg(dsn: str) -> Any:
    """An autocommit psycopg connection (each write in an explicit transaction)."""
    try:
        import psycopg
    except ImportError:
        hint = "pip install 'paigow-table-controller[central]'"
        raise CentralError(f"psycopg is not installed: {hint}") from None

    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise CentralError(f"PostgreSQL {dsn!r}: {exc}".strip()) from None


@dataclass
class IngestStats:
    taken: int = 0
    duplicates: int = 0
    refused: int = 0
    alarms: int = 0


def _asset(msg: Any) -> int | None:
    raw = _header(msg, ASSET_HEADER)
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


def _header(msg: Any, name: str) -> str | None:
    value = (msg.headers or {}).get(name)
    return value if isinstance(value, str) else None


class Ingest:
    """Every table's stream into PostgreSQL (one consumer; several may share the durable)."""

    def __init__(
        self,
        servers: list[str],
        dsn: str,
        *,
        batch: int = 200,
        connect_options: Mapping[str, Any] | None = None,
        say: Callable[[str], None] | None = None,
        keys: Path | Keyring,
    ) -> None:
        self.keys = keys if isinstance(keys, Keyring) else Keyring(keys)
        self.watches: dict[str, Watch] = {}
        self.servers = servers
        self.dsn = dsn
        self.batch = batch
        self.connect_options = dict(connect_options or {})
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self.stats = IngestStats()
        self.heads: dict[str, Head] = {}
        self._open_gaps: set[str] = set()
        self._alarmed: set[str] = set()  # tables with an alarm not yet cleared: one per incident
        self._pg: Any = None
        self._out: set[str] = set()  # what is unreachable now (said once)

    # ------------------------------------------------------------------ PostgreSQL
    def open_pg(self) -> None:
        self._pg = connect_pg(self.dsn)
        with self._pg.transaction():
            self._pg.execute(SCHEMA)
        rows = self._pg.execute("SELECT table_id, seq, hash FROM heads").fetchall()
        self.heads = {t: Head(int(s), h) for t, s, h in rows}
        gaps = self._pg.execute(
            "SELECT DISTINCT table_id FROM refused WHERE kind = 'gap' AND filled_at IS NULL"
        ).fetchall()
        self._open_gaps = {t for (t,) in gaps}
        alarmed = self._pg.execute(
            "SELECT DISTINCT table_id FROM alarms WHERE cleared_at IS NULL"
        ).fetchall()
        self._alarmed = {t for (t,) in alarmed}

    def _insert(
        self, table: str, entry: Entry, asset: int | None, body: bytes, link_mac: str | None
    ) -> None:
        with self._pg.transaction():
            self._pg.execute(
                "INSERT INTO entries (table_id, seq, ts_ms, round_id, type, data, prev_hash,"
                " state_hash, hash, mac, asset, body, link_mac)"
                " VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, %s)",
                (
                    table, entry.seq, entry.ts_ms, entry.round_id, entry.type,
                    json.dumps(entry.data), entry.prev_hash, entry.state_hash, entry.hash,
                    entry.mac, asset, body.decode("utf-8"), link_mac,
                ),
            )  # fmt: skip
            self._pg.execute(
                "INSERT INTO heads (table_id, seq, hash) VALUES (%s, %s, %s)"
                " ON CONFLICT (table_id) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash"
                " WHERE heads.seq = EXCLUDED.seq - 1",
                (table, entry.seq, entry.hash),
            )
            if table in self._open_gaps:
                self._pg.execute(
                    "UPDATE refused SET filled_at = now() WHERE table_id = %s AND kind = 'gap'"
                    " AND filled_at IS NULL AND seq <= %s",
                    (table, entry.seq),
                )
        self.heads[table] = Head(entry.seq, entry.hash)

    def _refuse(self, table: str, seq: int, digest: str, kind: str, reason: str) -> None:
        with self._pg.transaction():
            cur = self._pg.execute(
                "INSERT INTO refused (table_id, seq, hash, kind, reason)"
                " VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (table_id, seq, hash, kind) DO UPDATE SET filled_at = NULL"
                " WHERE refused.filled_at IS NOT NULL RETURNING id",
                (table, seq, digest, kind, reason),
            )
            new = cur.fetchone() is not None
        if kind == "gap":
            self._open_gaps.add(table)
        if new:  # each refusal printed and counted once, however often it is redelivered
            self.stats.refused += 1
            self.say(f"central ingest: refused {reason}")

    def _alarm(self, table: str, kind: str, entry: Entry, held: str, detail: str) -> None:
        """The witness's alarm: recorded and printed at once, once per incident (the entries
        that follow the first contradicting one contradict it too: no new alarm for the table
        until someone clears it, ``cleared_at``)."""
        if table in self._alarmed:
            return
        head = self.heads.get(table)
        with self._pg.transaction():
            cur = self._pg.execute(
                "INSERT INTO alarms (table_id, kind, seq, held_seq, held_hash, received_hash,"
                " detail) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (table_id, kind, seq, received_hash) DO NOTHING RETURNING id",
                (
                    table, kind, entry.seq, 0 if head is None else head.seq, held, entry.hash,
                    detail,
                ),
            )  # fmt: skip
            new = cur.fetchone() is not None
        self._alarmed.add(table)
        if new:
            self.stats.alarms += 1
            self.say(f"central ALARM: table {table}: {kind}: {detail}")

    def _watch(self, table: str) -> Watch:
        """The plausibility watch of ``table``: at first use, the entries stored of its last
        two rounds are read into it (what the rules need of the round in play)."""
        watch = self.watches.get(table)
        if watch is None:
            watch = self.watches[table] = Watch()
            rows = self._pg.execute(
                "SELECT body FROM entries WHERE table_id = %s AND round_id >= (SELECT"
                " coalesce(max(round_id), 0) - 1 FROM entries WHERE table_id = %s) ORDER BY seq",
                (table, table),
            ).fetchall()
            for (body,) in rows:
                with contextlib.suppress(MessageError):
                    watch.check(decode_entry(body.encode("utf-8")))
        return watch

    def held_hash(self, table: str, seq: int) -> str | None:
        row = self._pg.execute(
            "SELECT hash FROM entries WHERE table_id = %s AND seq = %s", (table, seq)
        ).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ one message
    async def handle(self, msg: Any) -> bool:
        """Check, store and settle one message; True when it moved anything on (not a gap's
        redelivery)."""
        subject_table = table_of_subject(msg.subject)
        table = subject_table if subject_table and TOKEN.match(subject_table) else msg.subject
        try:
            entry = decode_entry(msg.data)
        except MessageError as exc:
            before = self.stats.refused
            self._refuse(table, 0, "", "malformed", f"table {table}: {exc}")
            await msg.term()
            return self.stats.refused > before
        if table != subject_table:
            self._refuse(table, entry.seq, entry.hash, "malformed", f"subject {msg.subject}")
            await msg.term()
            return True
        where = f"table {table} seq {entry.seq}"
        link_mac = _header(msg, MAC_HEADER)
        if _asset(msg) is None:
            self._refuse(table, entry.seq, entry.hash, "malformed", f"{where}: no asset number")
            await msg.term()
            return True
        why = self.keys.check_entry(table, entry.seq, entry.hash, link_mac)
        if why is not None:  # not the table's: refused alone, the table's own entries go on
            self._refuse(table, entry.seq, entry.hash, "unauthenticated", f"{where}: {why}")
            await msg.term()
            return True
        head = self.heads.get(table)
        action, why = check_next(table, head, entry)
        if action == "take":
            implausible = self._watch(table).check(entry)
            if implausible is not None:
                self._refuse(
                    table, entry.seq, entry.hash, "implausible", f"table {table} {implausible}"
                )
                await msg.term()
                return True
            self._insert(table, entry, _asset(msg), msg.data, link_mac)
            await msg.ack()  # after the commit: a crash in between only causes a redelivery
            self.stats.taken += 1
            return True
        if action == "duplicate":
            held = self.held_hash(table, entry.seq)
            if held == entry.hash:
                await msg.ack()
                self.stats.duplicates += 1
                return True
            why = (
                f"table {table} seq {entry.seq}: a different hash at a held seq"
                f" (held {held}, received {entry.hash})"
            )
            head_seq = 0 if head is None else head.seq
            if entry.seq == 1:
                self._alarm(
                    table, "wipe", entry, held or "",
                    f"a new seq 1 (witnessed head seq {head_seq}): the table started a new "
                    "journal; its history up to the head is held here",
                )  # fmt: skip
            else:
                self._alarm(
                    table, "rollback", entry, held or "",
                    f"another entry at seq {entry.seq} (witnessed head seq {head_seq}): the "
                    "table went back to an older state and re-used its seqs",
                )  # fmt: skip
            self._refuse(table, entry.seq, entry.hash, "forged", why)
            await msg.term()
            return True
        held_seq = 0 if head is None else head.seq
        try:
            intact = recomputed_hash(entry) == entry.hash
        except ValueError:
            intact = False
        if intact and entry.seq > held_seq + 1:  # a gap: wait for its predecessor
            before = self.stats.refused
            self._refuse(table, entry.seq, entry.hash, "gap", why or "gap")
            await msg.nak(delay=GAP_RETRY_S)
            return self.stats.refused > before
        if intact and head is not None and entry.seq == held_seq + 1:
            self._alarm(
                table, "fork", entry, head.hash,
                f"seq {entry.seq} does not chain to the witnessed head seq {head.seq}: the "
                "table's history was rewritten",
            )  # fmt: skip
        self._refuse(table, entry.seq, entry.hash, "forged", why or "refused")
        await msg.term()
        return True

    # ------------------------------------------------------------------ the loop
    def run(self, *, once: bool = False, until_idle: float | None = None) -> IngestStats:
        """Consume until stopped (KeyboardInterrupt / SIGTERM end it); ``once``: until a fetch
        finds nothing new; ``until_idle``: until nothing moved on for that many seconds."""
        self.open_pg()
        try:
            asyncio.run(self._run(once, until_idle))
        finally:
            self._pg.close()
        return self.stats

    async def _run(self, once: bool, until_idle: float | None) -> None:
        import nats
        import nats.errors

        async def reconnected() -> None:
            self._back("NATS")

        async def error(exc: Exception) -> None:  # nats-py's default prints a traceback
            self._outage("NATS", f"{type(exc).__name__}: {exc}")

        try:
            nc = await nats.connect(
                servers=self.servers,
                connect_timeout=5,
                allow_reconnect=True,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.5,
                reconnected_cb=reconnected,
                error_cb=error,
                **self.connect_options,
            )
        except Exception as exc:
            raise CentralError(f"NATS {self.servers}: {type(exc).__name__}: {exc}") from None
        try:
            sub = None
            last_progress = time.monotonic()
            while True:
                try:
                    if sub is None:
                        sub = await self._subscribe(nc.jetstream())
                        self._back("NATS")
                    msgs = await sub.fetch(self.batch, timeout=1.0)
                except (TimeoutError, nats.errors.TimeoutError):  # nothing within the timeout
                    msgs = []
                except Exception as exc:  # the server is away: one line, then again
                    self._outage("NATS", f"{type(exc).__name__}: {exc}")
                    sub = None if "consumer" in str(exc).lower() or sub is None else sub
                    await asyncio.sleep(0.5)
                    msgs = []
                moved = False
                for msg in msgs:
                    try:
                        moved = await self.handle(msg) or moved
                    except Exception as exc:  # PostgreSQL away: unacked, so redelivered later
                        if not self._pg_error(exc):
                            raise
                        self._outage("PostgreSQL", f"{type(exc).__name__}: {exc}")
                        await asyncio.sleep(0.5)
                        self._reopen_pg()
                        break
                if moved:
                    last_progress = time.monotonic()
                elif once and sub is not None:
                    break
                if until_idle is not None and time.monotonic() - last_progress >= until_idle:
                    break
        finally:
            with contextlib.suppress(Exception):
                await nc.flush(timeout=1)
            with contextlib.suppress(Exception):
                await nc.close()

    def _outage(self, what: str, detail: str) -> None:
        """An outage said once, in one line (no traceback), until it ends."""
        if what not in self._out:
            self._out.add(what)
            first = detail.strip().splitlines()[0] if detail.strip() else "unreachable"
            self.say(f"central ingest: {what} unreachable: {first[:200]}; retrying")

    def _back(self, what: str) -> None:
        if what in self._out:
            self._out.discard(what)
            self.say(f"central ingest: {what} reachable again")

    @staticmethod
    def _pg_error(exc: Exception) -> bool:
        try:
            import psycopg
        except ImportError:  # pragma: no cover - ingest needs it
            return False
        return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)

    def _reopen_pg(self) -> None:
        with contextlib.suppress(Exception):
            self._pg.close()
        try:
            self._pg = connect_pg(self.dsn)
        except CentralError:
            return  # still away: the next message tries again
        self._back("PostgreSQL")

    async def _subscribe(self, js: Any) -> Any:
        from nats.js import api

        await ensure_stream(js)
        config = api.ConsumerConfig(
            ack_policy=api.AckPolicy.EXPLICIT,
            deliver_policy=api.DeliverPolicy.ALL,
            ack_wait=ACK_WAIT_S,
            max_ack_pending=-1,
        )
        return await js.pull_subscribe(
            STREAM_SUBJECTS, durable=DURABLE, stream=STREAM, config=config
        )


async def ensure_stream(js: Any) -> None:
    """The stream as the shippers make it, when no table has shipped yet."""
    await messages_ensure_stream(js)


# ---------------------------------------------------------------------------------- reports
class StoredReader(JournalReader):
    """One table's entries as PostgreSQL holds them, read the way `controller.journal.reports`
    reads a journal file, so its fold functions run unchanged. The stream carries entries only:
    no stored snapshot (so a level's initial amount is unknown and its meter is the sum of its
    movements since the level was made) and no stored meters (those given here are the sums of
    the journaled movements, so the fold's reconciliation against them holds by construction;
    each table's own ``tablectl report`` checks its stored meters)."""

    def __init__(self, conn: Any, table_id: str) -> None:  # no file: never JournalReader's
        self._pg = conn
        self.table_id = table_id

    def close(self) -> None:
        pass

    def meta(self) -> dict[str, str]:
        return {"table_id": self.table_id}

    def entries(self) -> Iterator[Entry]:
        rows = self._pg.execute(
            "SELECT body FROM entries WHERE table_id = %s ORDER BY seq", (self.table_id,)
        )
        for (body,) in rows.fetchall():
            try:
                yield decode_entry(body.encode("utf-8"))
            except MessageError as exc:  # pragma: no cover - ingest stored only checked bodies
                raise ReportError(f"table {self.table_id}: {exc}") from None

    def stored_meters(self) -> dict[str, dict[str, JSON]]:
        sums: dict[str, dict[str, JSON]] = {}
        for entry in self.entries():
            for e in effects_of(entry):
                if e.get("type") != "meter_movement" or not isinstance(e.get("level"), str):
                    continue
                level = sums.setdefault(str(e["level"]), dict.fromkeys(METER_PARTS, 0))
                for part in METER_PARTS:
                    value = e.get(part, 0)
                    level[part] = int(level[part]) + (value if isinstance(value, int) else 0)
        return sums

    def stored_snapshot(self) -> dict[str, JSON] | None:
        return None


def floor_tables(conn: Any) -> list[str]:
    rows = conn.execute("SELECT table_id FROM heads ORDER BY table_id").fetchall()
    return [str(t) for (t,) in rows]


def open_refusals(conn: Any) -> list[dict[str, JSON]]:
    rows = conn.execute(
        "SELECT table_id, seq, kind, reason FROM refused WHERE filled_at IS NULL ORDER BY id"
    ).fetchall()
    return [{"table": t, "seq": int(s), "kind": k, "reason": r} for t, s, k, r in rows]


def _heads(conn: Any) -> dict[str, dict[str, JSON]]:
    rows = conn.execute(
        "SELECT h.table_id, h.seq, h.hash, e.ts_ms, e.asset FROM heads h"
        " JOIN entries e ON e.table_id = h.table_id AND e.seq = h.seq"
    ).fetchall()
    return {
        t: {"seq": int(s), "hash": h, "last_entry": int(ts), "asset": a} for t, s, h, ts, a in rows
    }


SUMMED = (
    "wagers", "wagered_cents", "contributed_cents", "paid_from_meter_cents",
    "meter_start_cents", "meter_end_cents", "adjustments_cents", "paid_by_pool_cents",
    "house_funded_cents",
)  # fmt: skip


def floor_shift(conn: Any, start: int | None = None, end: int | None = None) -> dict[str, JSON]:
    """`shift_report` of every table from its stored entries, and the floor's total: rounds,
    voids, faults, hits and the progressive flows summed, and per level name across tables."""
    tables: list[dict[str, JSON]] = []
    refusals = open_refusals(conn)
    for table_id in floor_tables(conn):
        report = shift_report(StoredReader(conn, table_id), start, end)
        report["problems"] = [str(r["reason"]) for r in refusals if r["table"] == table_id]
        tables.append(report)
    levels: dict[str, dict[str, int]] = {}
    for t in tables:
        for lvl in t["levels"]:
            into = levels.setdefault(str(lvl["level"]), dict.fromkeys(SUMMED, 0))
            for key in SUMMED:
                into[key] += int(lvl[key])
    total: dict[str, JSON] = {
        key: sum(int(t[key]) for t in tables) for key in ("rounds", "voided_rounds", "faults")
    }
    total["hits"] = sum(len(t["hits"]) for t in tables)
    total["progressive"] = {key: sum(int(t["progressive"][key]) for t in tables) for key in SUMMED}
    total["levels"] = [{"level": name, **v} for name, v in sorted(levels.items())]
    return {"from": start, "to": end, "tables": tables, "total": total, "refused": refusals}


def floor_meters(conn: Any) -> dict[str, JSON]:
    """Each table's meters as its stream accounts for them (the whole stream folded by
    `shift_report`: every level's movements since it was made), its head, and the total."""
    heads = _heads(conn)
    shift = floor_shift(conn)
    tables: list[dict[str, JSON]] = []
    for report in shift["tables"]:
        tid = str(report["table"])
        tables.append(
            {
                "table": tid,
                **heads.get(tid, {}),
                "rounds": report["rounds"],
                "levels": [
                    {
                        "level": lvl["level"],
                        "wagers": lvl["wagers"],
                        "wagered_cents": lvl["wagered_cents"],
                        "contributed_cents": lvl["contributed_cents"],
                        "paid_from_meter_cents": lvl["paid_from_meter_cents"],
                        "adjustments_cents": lvl["adjustments_cents"],
                        "moved_cents": lvl["meter_end_cents"],
                    }
                    for lvl in report["levels"]
                ],
                "problems": report["problems"],
            }
        )
    total = shift["total"]
    return {
        "tables": tables,
        "total": {
            "levels": [
                {k: v for k, v in lvl.items() if k not in ("meter_start_cents",)}
                for lvl in total["levels"]
            ]
        },
        "refused": shift["refused"],
    }


def floor_hits(
    conn: Any, start: int | None = None, end: int | None = None, limit: int = 25
) -> dict[str, JSON]:
    """`hits_report` of every table, and the floor's last ``limit`` hits in time order."""
    per: dict[str, list[dict[str, JSON]]] = {}
    for table_id in floor_tables(conn):
        per[table_id] = hits_report(StoredReader(conn, table_id), start, end, limit=0)
    merged = sorted(
        (h for hits in per.values() for h in hits),
        key=lambda h: (int(h["time"]), str(h["table"]), int(h["seq"])),
    )
    floor = merged[-limit:] if limit > 0 else merged
    return {
        "tables": {t: (h[-limit:] if limit > 0 else h) for t, h in per.items()},
        "total": {"hits": len(merged), "cents": sum(int(h["cents"]) for h in merged)},
        "floor": floor,
    }
