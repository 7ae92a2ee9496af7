"""The floor page's PostgreSQL side: what central ingest stored, read back (tables' heads and
entries, the witness's alarms, open refusals), and the page's own two tables: the supervisors'
acknowledgements of alarms (who, when) and the sign-in refusals (never a PIN).

Responsible for every SQL statement of the floor page. One `FloorStore` is used by one thread
at a time (the page's database thread). Must never write central ingest's tables (``entries``,
``heads``, ``alarms``, ``refused``) or store a PIN; money stays integer cents.
"""

from __future__ import annotations

from typing import Any

from controller.journal.format import Entry
from controller.link.central import connect_pg
from controller.link.messages import MessageError, decode_entry
from controller.supervisor.lockout import REFUSAL_EVENT, REPLAY_MS, HistoryEntry, wall_ms
from fsm.round.events import Event

FLOOR_SCHEMA = """
CREATE TABLE IF NOT EXISTS floor_acks (
    alarm      text        PRIMARY KEY,
    kind       text        NOT NULL,
    table_id   text        NOT NULL,
    words      text        NOT NULL,
    supervisor text        NOT NULL,
    acked_at   timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS floor_signin_refused (
    id         bigserial   PRIMARY KEY,
    supervisor text        NOT NULL,
    request    text        NOT NULL,
    reason     text        NOT NULL,
    at_ms      bigint      NOT NULL
);
"""
#: At start a tile is rebuilt from its table's last this many stored entries.
TILE_HISTORY = 2000


class FloorStore:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._pg: Any = None

    def open(self) -> None:
        self._pg = connect_pg(self.dsn)
        with self._pg.transaction():
            self._pg.execute(FLOOR_SCHEMA)

    def close(self) -> None:
        if self._pg is not None:
            self._pg.close()
            self._pg = None

    @property
    def conn(self) -> Any:
        return self._pg

    def has_ingest_schema(self) -> bool:
        row = self._pg.execute("SELECT to_regclass('public.heads')").fetchone()
        return row is not None and row[0] is not None

    def heads(self) -> dict[str, int]:
        rows = self._pg.execute("SELECT table_id, seq FROM heads").fetchall()
        return {str(t): int(s) for t, s in rows}

    def entries_after(
        self, table: str, seq: int, limit: int = TILE_HISTORY
    ) -> list[tuple[Entry, int | None, int]]:
        """The table's stored entries after ``seq`` (the last ``limit`` of them), oldest first,
        each with its asset and when it was received (UTC ms)."""
        rows = self._pg.execute(
            "SELECT body, asset, (extract(epoch FROM received_at) * 1000)::bigint FROM entries"
            " WHERE table_id = %s AND seq > %s ORDER BY seq DESC LIMIT %s",
            (table, seq, limit),
        ).fetchall()
        out: list[tuple[Entry, int | None, int]] = []
        for body, asset, received in reversed(rows):
            try:
                out.append((decode_entry(str(body).encode("utf-8")), asset, int(received)))
            except MessageError:  # pragma: no cover - ingest stores checked bodies only
                continue
        return out

    def witness_alarms(self) -> list[dict[str, Any]]:
        rows = self._pg.execute(
            "SELECT id, table_id, kind, seq, detail, (extract(epoch FROM raised_at) * 1000)::bigint"
            " FROM alarms WHERE cleared_at IS NULL ORDER BY id"
        ).fetchall()
        return [
            {
                "key": f"witness:{i}", "kind": str(k), "table": str(t),
                "words": f"{t}: {k} seen by the witness at seq {s}: {d}", "since": int(at),
            }
            for i, t, k, s, d, at in rows
        ]  # fmt: skip

    def open_refusals(self) -> list[dict[str, Any]]:
        rows = self._pg.execute(
            "SELECT id, table_id, seq, kind, reason,"
            " (extract(epoch FROM received_at) * 1000)::bigint FROM refused"
            " WHERE filled_at IS NULL AND kind <> 'gap' ORDER BY id"
        ).fetchall()
        return [
            {
                "key": f"refused:{i}", "kind": "refused", "table": str(t),
                "words": f"{t}: entry seq {s} refused at the centre ({k}): {r}", "since": int(at),
            }
            for i, t, s, k, r, at in rows
        ]  # fmt: skip

    def acks(self) -> dict[str, dict[str, Any]]:
        rows = self._pg.execute(
            "SELECT alarm, supervisor, (extract(epoch FROM acked_at) * 1000)::bigint"
            " FROM floor_acks"
        ).fetchall()
        return {str(a): {"by": str(s), "at": int(at)} for a, s, at in rows}

    def acknowledge(self, alarm: dict[str, Any], supervisor: str) -> dict[str, Any]:
        """Store the acknowledgement (the first one of an alarm stands); who and when."""
        with self._pg.transaction():
            self._pg.execute(
                "INSERT INTO floor_acks (alarm, kind, table_id, words, supervisor)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (alarm) DO NOTHING",
                (alarm["key"], alarm["kind"], alarm["table"], alarm["words"], supervisor),
            )
            row = self._pg.execute(
                "SELECT supervisor, (extract(epoch FROM acked_at) * 1000)::bigint FROM floor_acks"
                " WHERE alarm = %s",
                (alarm["key"],),
            ).fetchone()
        return {"by": str(row[0]), "at": int(row[1])}

    # ------------------------------------------------------------------ the PIN gate's owner
    def post_tracked(self, event: Event) -> _Done:
        """`controller.supervisor.gate.PinGate` records a refused sign-in here (the floor has no
        journal of its own): the supervisor, the request, the reason, never the PIN."""
        d = event.data
        with self._pg.transaction():
            self._pg.execute(
                "INSERT INTO floor_signin_refused (supervisor, request, reason, at_ms)"
                " VALUES (%s, %s, %s, %s)",
                (str(d.get("supervisor")), str(d.get("request")), str(d.get("reason")), wall_ms()),
            )
        return _Done()

    def refusal_history(self) -> list[HistoryEntry]:
        """The sign-in refusals that still count towards a lock (`LockoutBook.replay`)."""
        rows = self._pg.execute(
            "SELECT at_ms, supervisor, reason FROM floor_signin_refused WHERE at_ms >= %s"
            " ORDER BY id",
            (wall_ms() - REPLAY_MS,),
        ).fetchall()
        return [(int(at), REFUSAL_EVENT, {"supervisor": s, "reason": r}) for at, s, r in rows]


class _Done:
    """A refusal stored (the gate waits for it as it waits for a table's commit)."""

    seq = 0

    def wait(self, timeout: float | None = None) -> bool:
        return True
