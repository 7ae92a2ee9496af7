"""The link controller of one linked pool (``tablectl link serve``; docs/link.md).

Responsible, on one asyncio event loop, for:
- power-up self-check (NY 5321.18(b)): the software hash, the journal opened and vouched for by
  the same journal code as a table's (hash chain, state hash, anchor), the pool restored from its
  snapshot and its meters balanced to the sub-unit; a pool whose check fails does not run;
- the pool's parameters: recorded in the journal's genesis; a configuration that differs is
  refused (journaled ``parameter_change_refused``) and the recorded ones stay (NY 5321.18(b)(4));
- consuming every table's stream from a durable pull consumer, each entry checked against the
  table's chain (`controller.link.messages.check_next`), idempotent on (table, seq); one journal
  entry (``consumed``) per batch holds the new heads and the contributions, committed before the
  batch is acknowledged; a forged or gapped stream is journaled (``chain_refused``) with the table
  and seq, and that table's contributions are no longer taken;
- the pool's value in the key-value bucket (``LINK``, key = the pool), after every commit;
- hits by request/reply, one at a time in arrival order (the recorded order): the pool's pure
  rules (`fsm.round.pool.Pool`) weigh every line the hand makes at the pool's meter at that
  moment and lock the best (the next from the reset value); ``hit_locked`` is committed before
  the reply carries the locked amount; a hit the table voided is undone once (its lock back on
  the meter, or, not locked yet, its request refused) and a supervisor's corrected line is
  locked as a hit of its own;
- confirmations: whether it holds a table's stream up to the seq the table names, and whether
  the table's terms (wager, pay table, level, $5 reading) are the pool's (else refused, with the
  reason, journaled ``terms_refused``).

Must never hold a table's game rule (the table decides hands and wins), write a table's journal,
or answer a hit before its lock is committed.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import signal
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from controller.journal.anchor import load_key
from controller.journal.format import JSON, Entry
from controller.journal.lock import JournalInUse, JournalLock
from controller.journal.store import Journal
from controller.link.keys import Keyring
from controller.link.link_config import ControllerConfig
from controller.link.messages import (
    ASSET_HEADER,
    KV_BUCKET,
    MAC_HEADER,
    STREAM,
    STREAM_SUBJECTS,
    Head,
    MessageError,
    confirm_subject,
    decode_entry,
    effects_of,
    ensure_stream,
    hit_subject,
    movements,
    recomputed_hash,
    table_of_subject,
)
from controller.link.plausible import Watch
from controller.service import selfcheck
from fsm.round.pool import Pool, PoolError, PoolParams
from fsm.rules.progressive import ProgressiveTable

log = logging.getLogger(__name__)

NowMs = Callable[[], int]
#: A batch fetched but not acknowledged (the controller died while committing it) comes back
#: after this long (seconds); a batch is committed and acked in milliseconds.
ACK_WAIT_S = 5.0
#: How long a gap in a table's stream may wait for its redelivery before it is refused (s), and
#: how soon an entry past it is offered again.
GAP_GRACE_S = 4 * ACK_WAIT_S
GAP_RETRY_S = 0.5
#: the hashes of each table's last entries kept in memory to tell a resend from a fork; older
#: ones are read back from the pool's journal (each ``consumed`` part holds its entries' hashes)
HASH_WINDOW = 2048
#: refused messages journaled per table and minute; a flood beyond is logged, not journaled
#: (a forger must not fill the pool's journal)
REFUSALS_JOURNALED_PER_MINUTE = 100
#: How long a hit request waits for the pool to hold its table's stream through the request's
#: ``need_seq`` (the table's last entry with a contribution: this round's wagers are on the
#: meter the hit is weighed at, NY 5324.41(k)(6)) before it is locked at the meter held (s);
#: under the table's 2 s reply timeout.
HIT_HOLD_S = 1.5


def utc_now_ms() -> int:
    return time.time_ns() // 1_000_000


class SelfCheckFailed(Exception):
    """The link controller's power-up check failed; the message says why (it does not run)."""


def params_of(cfg: ControllerConfig) -> PoolParams:
    return PoolParams(
        cfg.pool,
        cfg.level,
        cfg.wager_cents,
        cfg.paytable,
        dict(cfg.tables),
        cfg.five_dollar_meter_share,
    )


class PoolJournal:
    """The pool and its journal: every change is a committed entry first (owner of both)."""

    def __init__(self, cfg: ControllerConfig, now_ms: NowMs = utc_now_ms) -> None:

        self.now_ms = now_ms
        self.software = selfcheck.software_hash()
        wanted = params_of(cfg)
        key = None if cfg.key_file is None else load_key(cfg.key_file)
        try:  # one link controller per pool journal (a second one is refused, touching nothing)
            self.lock = JournalLock.acquire(cfg.journal)
        except JournalInUse as exc:
            raise SelfCheckFailed(f"pool {cfg.pool}: {exc}: one link controller per pool") from None
        try:
            self._open(cfg, wanted, key)
        except BaseException:
            self.lock.release()
            raise

    def _open(self, cfg: ControllerConfig, wanted: PoolParams, key: bytes | None) -> None:
        now_ms = self.now_ms
        self.journal = Journal.open(
            cfg.journal,
            table_id=cfg.pool,
            created_ms=now_ms(),
            config=wanted.to_json(),
            anchor=cfg.anchor,
            key=key,
        )
        recorded = self.journal.recorded_config
        params = wanted if recorded is None else PoolParams.from_json(recorded)
        self.pool = Pool(params, ProgressiveTable.load(params.paytable))
        stored = self.journal.last_state()
        if stored is not None:
            self.pool.load(stored.snapshot)
        if self.pool.meters.balance_error():
            raise SelfCheckFailed(
                f"pool {cfg.pool}: meters do not balance ({self.pool.meters.balance_error()} "
                "sub-units): refusing to run (tablectl link verify)"
            )
        self.append(
            "link_power_up",
            {"software_hash": self.software, "restored_seq": 0 if stored is None else stored.seq},
        )
        if params != wanted:
            changes = {
                k: {"recorded": v, "configured": wanted.to_json()[k]}
                for k, v in params.to_json().items()
                if wanted.to_json()[k] != v
            }
            log.error("pool %s: parameter change refused while the link operates", cfg.pool)
            self.append("parameter_change_refused", {"changes": changes})

    def append(self, etype: str, data: Mapping[str, JSON]) -> tuple[Entry, list[dict[str, JSON]]]:
        effects = self.pool.step(etype, data)
        entry = self.journal.append(
            self.now_ms(),
            None,
            etype,
            {**data, "effects": effects},
            snapshot=self.pool.snapshot(),
            meters=self.pool.meter_report(),
        )
        return entry, effects

    def close(self) -> None:
        self.journal.close()
        self.lock.release()


class LinkController:
    """The link controller's service: `run` until ``stop`` is set."""

    def __init__(self, cfg: ControllerConfig, now_ms: NowMs = utc_now_ms) -> None:
        self.cfg = cfg
        self.keys = Keyring(cfg.keys)
        self.state = PoolJournal(cfg, now_ms)
        self.pool = self.state.pool
        self.heads: dict[str, Head] = {
            k: Head(t.seq, t.hash) for k, t in self.pool.tables.items() if t.seq
        }
        self.refused_logged: set[str] = set()
        self._watches: dict[str, Watch] = {}
        self._hashes: dict[str, dict[int, str]] = {}  # table -> seq -> hash (recent window)
        self._entries_refused: set[tuple[str, int, str]] = set()
        self._refusals_per_minute: dict[str, tuple[float, int]] = {}
        self._watches_read = False
        #: (table, reason) of a table whose terms the pool refused, journaled once a run
        self.terms_logged: set[tuple[str, str]] = set()
        self._gaps: dict[str, tuple[int, float]] = {}  # table -> (seq held, first seen)
        #: hit requests in arrival order: (arrived, monotonic s; the message; its JSON object)
        self._hits: collections.deque[tuple[float, Any, dict[str, Any]]] = collections.deque()
        self._kv: Any = None
        self.consumed = 0
        self.ready = asyncio.Event()

    @property
    def pool_id(self) -> str:
        return self.cfg.pool

    # ------------------------------------------------------------------ serving
    async def run(self, stop: asyncio.Event) -> None:
        import nats

        nc: Any = None
        while nc is None and not stop.is_set():
            try:
                nc = await nats.connect(
                    **self.cfg.connection.options(),
                    name=f"link controller {self.pool_id}",
                    connect_timeout=2,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.25,
                )
            except Exception as exc:
                log.warning("link controller: cannot connect: %s", exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
        if nc is None:
            return
        try:
            await nc.subscribe(confirm_subject(self.pool_id), cb=self._on_confirm)
            await nc.subscribe(hit_subject(self.pool_id), cb=self._on_hit)
            js = nc.jetstream()
            sub = None
            while not stop.is_set():
                try:
                    if sub is None:
                        sub = await self._setup(js)
                        await self._publish_value()
                        self.ready.set()
                    await self._serve_hits()
                    await self._consume(sub)
                except Exception as exc:  # the server went away: retry once it is back
                    log.info("link controller: %s: %s", type(exc).__name__, exc)
                    sub = None if "consumer" in str(exc).lower() else sub
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), 0.25)
        finally:
            with contextlib.suppress(Exception):
                await nc.close()
            self.state.close()

    async def _setup(self, js: Any) -> Any:
        from nats.js import api

        await ensure_stream(js, self.cfg.replicas)
        try:
            self._kv = await js.key_value(KV_BUCKET)
        except Exception:
            self._kv = await js.create_key_value(
                bucket=KV_BUCKET, history=1, replicas=self.cfg.replicas
            )
        config = api.ConsumerConfig(
            ack_policy=api.AckPolicy.EXPLICIT,
            deliver_policy=api.DeliverPolicy.ALL,
            ack_wait=ACK_WAIT_S,
            max_ack_pending=-1,
        )
        return await js.pull_subscribe(
            STREAM_SUBJECTS, durable=f"link-{self.pool_id}", stream=STREAM, config=config
        )

    async def _publish_value(self) -> None:
        if self._kv is None:
            return
        p = self.pool
        value = {
            "pool": self.pool_id,
            "display_cents": p.display_cents,
            "reset_cents": p.params.level.reset_cents,
            "seq": self.state.journal.count(),
            "ts": self.state.now_ms(),
            "operating": True,
            "hits": p.hits,
            "tables": {k: t.seq for k, t in sorted(p.tables.items())},
        }
        await self._kv.put(self.pool_id, json.dumps(value, separators=(",", ":")).encode())

    # ------------------------------------------------------------------ the stream
    async def _consume(self, sub: Any) -> None:
        import nats.errors

        try:
            msgs = await sub.fetch(self.cfg.batch, timeout=0.05)
        except (TimeoutError, nats.errors.TimeoutError):  # nothing within the timeout (nats-py
            return  # raises a plain asyncio.TimeoutError when its deadline passed before the pull)
        parts: dict[str, dict[str, Any]] = {}
        heads = dict(self.heads)
        later: list[Any] = []
        watches: dict[str, Watch] = {}  # this batch's, committed with it
        for msg in msgs:
            if self._judge(msg, heads, parts, watches) == "later":
                later.append(msg)
        for table, part in parts.items():
            part["watch"] = watches[table].to_json()
        if parts:
            self.state.append("consumed", {"tables": [parts[k] for k in sorted(parts)]})
            self.heads = heads
            for table, part in parts.items():
                self._watches[table] = watches[table]
                window = self._hashes.setdefault(table, {})
                first = int(part["first_seq"])
                window.update({first + i: h for i, h in enumerate(part["hashes"])})
                if len(window) > HASH_WINDOW:  # the oldest are read back from the journal
                    for seq in sorted(window)[: len(window) - HASH_WINDOW]:
                        del window[seq]
        for msg in msgs:  # only once the batch is committed
            if any(msg is m for m in later):
                await msg.nak(delay=GAP_RETRY_S)
            else:
                await msg.ack()
        self.consumed += len(msgs)
        if parts:
            await self._publish_value()

    def _judge(
        self,
        msg: Any,
        heads: dict[str, Head],
        parts: dict[str, dict[str, Any]],
        watches: dict[str, Watch],
    ) -> str:
        """Check one message of the stream and take it into ``parts`` (``"take"``), drop it
        (``"drop"``: a duplicate, another pool's table, or refused and journaled) or keep it for
        a gap to fill (``"later"``). Only an entry with the table's MAC can move anything of
        the table: an entry without it is refused alone, and the table's own entries go on
        being taken (a forger cannot get the honest table refused)."""
        table = table_of_subject(msg.subject)
        if table is None or table not in self.pool.params.tables:
            return "drop"  # another pool's table (the stream is every table's)
        t = self.pool.tables.get(table)
        if t is not None and t.refused:
            return "drop"  # refused once, journaled then
        try:
            entry = decode_entry(msg.data)
        except MessageError as exc:
            self._refuse_entry(table, 0, f"not an entry: {exc}")
            return "drop"
        why = self.pool.identify(table, _asset(msg))
        if why is None:
            why = self.keys.check_entry(table, entry.seq, entry.hash, _header(msg, MAC_HEADER))
        if why is None:
            try:
                if recomputed_hash(entry) != entry.hash:
                    why = "the entry does not match its hash (altered after its MAC)"
            except ValueError as exc:
                why = str(exc)
        if why is not None:
            self._refuse_entry(table, entry.seq, why)
            return "drop"
        # the table's own entry (its MAC): its chain, a fork, its plausibility
        head = heads.get(table)
        held = 0 if head is None else head.seq
        if entry.seq <= held:
            known = self._held_hash(table, entry.seq, parts)
            if known is None or known == entry.hash:
                return "drop"  # the same entry again (a resend after a crash, a redelivery)
            self._fork(table, entry, known, f"another entry at seq {entry.seq}, held up to {held}")
            return "drop"
        if entry.seq > held + 1:
            if self._gap_may_fill(table, held):
                return "later"  # a redelivery of the missing seq comes after this one
            self._refuse(table, entry.seq, f"table {table} seq {entry.seq}: gap after seq {held}")
            return "drop"
        if head is not None and entry.prev_hash != head.hash:
            self._fork(table, entry, head.hash, f"seq {entry.seq} does not chain to seq {held}")
            return "drop"
        part = parts.get(table)
        was_joined = t is not None and t.joined
        if part is not None:
            was_joined = bool(part.get("joined", was_joined))
        joined, leaves = was_joined, False
        if entry.type == "link_state":
            named = entry.data.get("pool") == self.pool_id
            if named and entry.data.get("linked", True) is not False:
                joined = True  # from here on its contributions are the pool's
            elif was_joined:
                joined, leaves = False, True  # it left the pool
        watch = watches.get(table)
        if watch is None:
            watch = watches[table] = Watch.from_json(self._watch(table).to_json())
        implausible = watch.check(entry, self.pool.params.wager_cents if joined else None)
        if implausible is not None:
            self._refuse(table, entry.seq, f"table {table} {implausible}")
            return "drop"
        self._gaps.pop(table, None)
        heads[table] = Head(entry.seq, entry.hash)
        if part is None:
            part = parts[table] = {"table": table, "movements": [], "first_seq": entry.seq,
                                   "hashes": []}  # fmt: skip
        part["hashes"].append(entry.hash)
        part["last_seq"], part["last_hash"] = entry.seq, entry.hash
        if leaves:
            part["joined"], part["left"] = False, entry.seq
            return "take"
        if joined:
            part["joined"] = True  # from here on the table's contributions are the pool's
        else:
            return "take"  # made before (or after) the table was linked: not the pool's
        level = self.pool.params.level.name
        for e in effects_of(entry):  # a hit voided at the table (rare)
            if e.get("type") == "hit_voided" and e.get("level") == level:
                part["movements"].append(
                    {
                        "seq": entry.seq,
                        "round_id": entry.round_id,
                        "kind": "hit_voided",
                        "position": e.get("position"),
                        "line": e.get("line"),
                        "supervisor": e.get("supervisor"),
                        "reason": e.get("reason"),
                    }
                )
        for mv in movements(entry, level):
            part["movements"].append(
                {
                    "seq": entry.seq,
                    "round_id": mv["round_id"],
                    "kind": mv["kind"],
                    **(
                        {"wagers": mv["wagers"], "wagered_cents": mv["wagered_cents"]}
                        if mv["kind"] == "contribution"
                        else {}
                    ),
                }
            )
        return "take"

    def _watch(self, table: str) -> Watch:
        """The plausibility watch of ``table`` as last committed (every table's read back from
        the pool's journal in one pass, at the first entry after a start)."""
        if not self._watches_read:
            self._watches_read = True
            self._watches.update(self._last_watches())
        watch = self._watches.get(table)
        if watch is None:
            watch = self._watches[table] = Watch()
        return watch

    def _last_watches(self) -> dict[str, Watch]:
        """Each table's last committed watch, newest ``consumed`` entries first, until every
        table of the pool is found or the journal is read."""
        from controller.journal.audit import connect_read_only

        found: dict[str, Watch] = {}
        want = set(self.pool.params.tables)
        conn = connect_read_only(self.cfg.journal)
        try:
            rows = conn.execute(
                "SELECT data FROM journal WHERE type = 'consumed' ORDER BY seq DESC"
            )
            for (data,) in rows:
                for part in json.loads(data).get("tables", []):
                    table = part.get("table")
                    if table in want and table not in found and "watch" in part:
                        found[table] = Watch.from_json(part["watch"])
                if len(found) == len(want):
                    break
        finally:
            conn.close()
        return found

    def _held_hash(
        self, table: str, seq: int, parts: Mapping[str, Mapping[str, Any]]
    ) -> str | None:
        """The hash of ``table``'s entry at ``seq`` as the pool took it (this batch, the recent
        window, else the pool's journal: a fork is never hidden as a duplicate)."""
        part = parts.get(table)
        if part is not None and int(part["first_seq"]) <= seq:
            return str(part["hashes"][seq - int(part["first_seq"])])
        known = self._hashes.get(table, {}).get(seq)
        if known is not None:
            return known

        def holds(p: Mapping[str, Any]) -> bool:
            first = int(p.get("first_seq", 0) or 0)
            return first > 0 and first <= seq < first + len(p.get("hashes", []))

        found = self._journal_parts(table, holds)
        if found is None:
            return None  # taken before the pool kept each hash (an older journal)
        return str(found["hashes"][seq - int(found["first_seq"])])

    def _journal_parts(
        self, table: str, want: Callable[[Mapping[str, Any]], bool]
    ) -> Mapping[str, Any] | None:
        """The newest ``consumed`` part of ``table`` in the pool's journal that ``want``s."""
        from controller.journal.audit import connect_read_only

        conn = connect_read_only(self.cfg.journal)
        try:
            rows = conn.execute(
                "SELECT data FROM journal WHERE type = 'consumed' AND instr(data, ?) > 0"
                " ORDER BY seq DESC",
                (json.dumps(table),),
            )
            for (data,) in rows:
                for part in json.loads(data).get("tables", []):
                    if part.get("table") == table and want(part):
                        return dict(part)
        finally:
            conn.close()
        return None

    def _refuse_entry(self, table: str, seq: int, reason: str) -> None:
        """Journal one refused message (table, seq, reason) once; the table is not refused:
        the entry is not the table's, or not as it made it."""
        key = (table, seq, reason)
        if key in self._entries_refused:
            return
        if len(self._entries_refused) > 10_000:
            self._entries_refused.clear()
        self._entries_refused.add(key)
        start, count = self._refusals_per_minute.get(table, (time.monotonic(), 0))
        if time.monotonic() - start >= 60.0:
            start, count = time.monotonic(), 0
        self._refusals_per_minute[table] = (start, count + 1)
        if count >= REFUSALS_JOURNALED_PER_MINUTE:  # a flood: logged once, not journaled
            if count == REFUSALS_JOURNALED_PER_MINUTE:
                log.error("link controller: table %s: more than %d refused messages this "
                          "minute: the rest are not journaled", table, count)  # fmt: skip
            return
        log.warning("link controller: refused an entry of table %s seq %d: %s", table, seq, reason)
        self.state.append("entry_refused", {"table": table, "seq": seq, "reason": reason[:300]})

    def _fork(self, table: str, entry: Entry, held: str, detail: str) -> None:
        """The table's own key made another entry at a seq the pool holds, or one that does
        not chain: its history was rolled back or rewritten. An alarm at once, and the table
        is refused (its linked wager unplayable until the cause is found)."""
        log.error("link controller: ALARM: table %s fork at seq %d: %s", table, entry.seq, detail)
        self.state.append(
            "fork_alarm",
            {"table": table, "seq": entry.seq, "held_hash": held, "received_hash": entry.hash,
             "detail": detail},
        )  # fmt: skip
        self._refuse(table, entry.seq, f"table {table} seq {entry.seq}: fork: {detail}")

    def _gap_may_fill(self, table: str, held: int) -> bool:
        """An entry past a gap: the missing ones may still come (JetStream redelivers what a
        controller that died fetched without acking after ``ACK_WAIT_S``, after newer ones).
        True while the gap is younger than ``GAP_GRACE_S``; after that it is refused."""
        first = self._gaps.setdefault(table, (held, time.monotonic()))
        if first[0] != held:
            first = self._gaps[table] = (held, time.monotonic())
        return time.monotonic() - first[1] < GAP_GRACE_S

    def _refuse(self, table: str, seq: int, reason: str) -> None:
        """Refuse the table's stream (journaled once, naming the table and seq): its own
        authenticated entries broke its chain, forked or claimed what cannot be."""
        t = self.pool.tables.get(table)
        if table in self.refused_logged or (t is not None and t.refused):
            return
        self.refused_logged.add(table)
        log.error("link controller: refused: %s", reason)
        if table in self.pool.params.tables:
            self.state.append("chain_refused", {"table": table, "seq": seq, "reason": reason})

    # ------------------------------------------------------------------ requests
    async def _on_confirm(self, msg: Any) -> None:
        try:
            req = json.loads(msg.data)
            table = str(req["table"])
            need = int(req.get("need_seq", 0))
        except (ValueError, KeyError, TypeError):
            await msg.respond(b'{"ok":false,"operating":true,"reason":"bad request"}')
            return
        why = self.pool.identify(table, req.get("asset"))
        t = self.pool.tables.get(table)
        if why is None and t is not None and t.refused:
            why = f"the table's stream was refused: {t.refused}"
        if why is None:
            why = self._terms_refusal(table, req.get("terms"))
        held = self.heads.get(table, Head(0, "")).seq
        reply = {
            "ok": why is None and held >= need,
            "held_seq": held,
            "operating": True,
            "reason": why or (None if held >= need else f"holds seq {held}, not yet {need}"),
        }
        if t is not None and t.refused:  # told: the table makes its linked wager unplayable
            reply["refused"] = t.refused
        await msg.respond(json.dumps(reply).encode())

    def _terms_refusal(self, table: str, terms: object) -> str | None:
        """Why the table's wager, pay table, level or $5 reading is not the pool's (journaled
        ``terms_refused`` once per table and reason a run), or None."""
        why = self.pool.params.terms_refusal(terms)
        if why is None:
            return None
        why = f"table {table}: {why}"[:200]
        if (table, why) not in self.terms_logged:
            self.terms_logged.add((table, why))
            log.error("link controller: refused: %s", why)
            self.state.append("terms_refused", {"table": table, "reason": why})
        return why

    async def _on_hit(self, msg: Any) -> None:
        """Queue a hit request made with its table's key; refuse any other at once (a table's
        NATS user may publish here, but only the table's key makes a request of that table)."""
        try:
            req = json.loads(msg.data)
            table = str(req["table"]) if isinstance(req, dict) else ""
        except (ValueError, KeyError, TypeError):
            req, table = None, ""
        why = "not a JSON object with a table" if not table else None
        if why is None:
            why = self.keys.check_request(table, hit_subject(self.pool_id), req)
        if why is not None:
            log.warning("link controller: hit request of table %r refused: %s", table, why)
            if table in self.pool.params.tables:
                self.state.append(
                    "request_refused",
                    {"table": table, "subject": msg.subject, "reason": why[:300]},
                )
            with contextlib.suppress(Exception):
                await msg.respond(json.dumps({"ok": False, "reason": why}).encode())
            return
        if isinstance(req, dict):  # always, once it names a table
            self._hits.append((time.monotonic(), msg, req))

    def _stream_behind(self, req: Mapping[str, Any], arrived: float) -> bool:
        """Whether a hit request still waits for its table's stream: the pool holds less of it
        than the request's ``need_seq`` and the request has waited under `HIT_HOLD_S`."""
        need = req.get("need_seq")
        if not isinstance(need, int) or isinstance(need, bool):
            return False
        held = self.heads.get(str(req["table"]), Head(0, "")).seq
        return held < need and time.monotonic() - arrived < HIT_HOLD_S

    async def _serve_hits(self) -> None:
        """Every hit request queued so far, one at a time, in the order they arrived; the first
        one waits (and those behind it) while its table's stream is behind its ``need_seq``."""
        served = False
        while self._hits:
            arrived, msg, req = self._hits[0]
            if self._stream_behind(req, arrived):
                break  # consume first: the round's own wagers count on the meter (k)(6)
            self._hits.popleft()
            try:
                self.pool.check_hit(req)
                _, done = self.pool.lock_of(
                    str(req["table"]), int(req["round"]), int(req["position"]), str(req["line"])
                )
                if done is None:
                    data = {
                        k: req[k]
                        for k in ("table", "asset", "round", "position", "line", "wager_cents")
                    }
                    if req.get("corrects") is not None:  # a supervisor's corrected line
                        data["corrects"] = req["corrects"]
                    if req.get("lines") is not None:  # every line the hand makes (g)(8)
                        data["lines"] = req["lines"]
                    data["request_seq"] = req.get("seq")
                    data["need_seq"] = req.get("need_seq")  # and what the pool held of it:
                    data["held_seq"] = self.heads.get(str(req["table"]), Head(0, "")).seq
                    _, effects = self.state.append("hit_locked", data)
                    done = next(e for e in effects if e["type"] == "hit_locked")
                    served = True
                done = {
                    **{k: done[k] for k in ("cents", "order", "meter_cents")},
                    "paid_line": done.get("paid_line", req["line"]),
                    "from": done.get("from", "meter"),
                }
                reply = {
                    "ok": True,
                    **done,
                    "line": req["line"],
                    "pool_seq": self.state.journal.count(),
                }
            except (PoolError, ValueError, KeyError, TypeError) as exc:
                reply = {"ok": False, "reason": str(exc)[:200]}
            with contextlib.suppress(Exception):
                await msg.respond(json.dumps(reply).encode())
        if served:
            await self._publish_value()


def _asset(msg: Any) -> int | None:

    text = _header(msg, ASSET_HEADER)
    return int(text) if isinstance(text, str) and text.isdigit() else None


def _header(msg: Any, name: str) -> str | None:
    value = (msg.headers or {}).get(name)
    return value if isinstance(value, str) else None


class PoolReplayer:
    """`controller.journal.audit` replay of a pool's journal through the pool's rules."""

    def __init__(self, recorded: Mapping[str, JSON] | None) -> None:
        if recorded is None:
            raise ValueError("the journal records no pool parameters")
        params = PoolParams.from_json(recorded)
        self.pool = Pool(params, ProgressiveTable.load(params.paytable))

    def step(self, entry: Entry) -> list[JSON]:
        data = {k: v for k, v in entry.data.items() if k != "effects"}
        return list(self.pool.step(entry.type, data))

    def snapshot(self) -> dict[str, JSON]:
        return self.pool.snapshot()

    def meters(self) -> dict[str, JSON]:
        return dict(self.pool.meter_report())


def serve(cfg: ControllerConfig, stop_after: Callable[[], bool] | None = None) -> int:
    """Run the link controller until SIGTERM / SIGINT (the CLI's entry)."""

    async def main() -> None:
        controller = LinkController(cfg)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await controller.run(stop)

    asyncio.run(main())
    return 0


class ControllerThread:
    """The link controller on a thread of its own event loop, for a simulated run and the
    benchmarks (``tablectl link serve`` is its own process in production). `kill` stops it
    without a word to anyone, as a power cut would (its journal commits are all it keeps)."""

    def __init__(self, cfg: ControllerConfig) -> None:

        self.cfg = cfg
        self.controller: LinkController | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def start(self, timeout: float = 15.0, *, wait: bool = True) -> None:
        """Start the thread; with ``wait``, until the controller serves (NATS reached)."""

        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="link-controller", daemon=True)
        self._thread.start()
        if not wait:
            return
        if not self._ready.wait(timeout):
            raise TimeoutError("the link controller did not start")
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                self.controller = LinkController(self.cfg)
            except BaseException as exc:
                self.error = exc
                self._ready.set()
                return
            task = asyncio.create_task(self.controller.run(self._stop))
            await self.controller.ready.wait()
            self._ready.set()
            await task

        try:
            asyncio.run(main())
        except BaseException as exc:
            self.error = exc
            self._ready.set()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(15)
        self._thread = None
        self._loop = None

    kill = stop
