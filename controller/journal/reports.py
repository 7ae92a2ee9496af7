"""Reports read from a table's journal: game recall (rounds), shift, meters and hits.

Responsible for adding up what the journaled effects say, read-only through the journal's own
format module (a read-only SQLite connection, `schema_problems`, `decode_object`) and the round's
effect records (``fsm.round.effects.parse_effect``): each round from its effects (the wagers that
stand, the starting position, outcomes, hits paid or voided with who validated them and how,
faults, refunds, the void, the round's summary); a shift's progressive reconciliation from the
``meter_movement`` effects, where for each level meter = display + reserve + overflow and
``end = start + contributed - paid_from_meter + adjustments`` to the cent, each adjustment listed
with its reason and supervisor; the current meters as stored beside the journal, checked against
the movements; the last hits with who validated them.

Must never write, create or repair a journal file, never decide a game rule or infer a fact from
an entry's type (outcomes, amounts, causes and names come from the machine's effects as
journaled; a resolved round's cards from its journaled ``dealt`` data, mapped by the journaled
delivery order), and never use floats for money.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.journal.audit import connect_read_only, schema_problems
from controller.journal.format import (
    JSON,
    Entry,
    JournalError,
    decode_object,
)
from fsm.round.effects import (
    Bank,
    Effect,
    Fault,
    FaultClearedEffect,
    HitPending,
    HitVoidedEffect,
    LinkedWager,
    MeterMovement,
    Outcome,
    Pay,
    Refund,
    Rejected,
    RoundSummary,
    RoundVoided,
    SideWagerRefund,
    SideWagerSettled,
    StartingPosition,
    Wagers,
    parse_effect,
)
from fsm.round.meters import UNIT as SUB_UNITS
from fsm.round.records import RecordError
from fsm.rules.cards import CardError, format_card, parse_card

METER_PARTS = ("display_cents", "overflow_cents", "reserve_cents")
#: The first line of every report of a training journal (a power_up recorded ``training``).
TRAINING_BANNER = (
    "TRAINING journal: a simulated training table (tablectl simulate), not a live table's record"
)
#: On every report of a journal played by `tablectl run --unapproved-bench` (issue 28 item 2).
BENCH_BANNER = (
    "UNAPPROVED SOFTWARE: played on a lab bench (tablectl run --unapproved-bench) by software no "
    "approved manifest vouches for; not a live table's record"
)


class ReportError(Exception):
    """The journal cannot be reported on (missing, not a journal, unreadable); says why."""


# ------------------------------------------------------------------------------------- time
#: The latest time a report window may name: 9999-12-31T23:59:59.999Z (a datetime's last year).
MAX_TIME_MS = 253_402_300_799_999


def parse_time(text: str, what: str) -> int:
    """UTC milliseconds from an integer (ms since the epoch) or an ISO-8601 time (a time
    without a zone is taken as UTC), 0..`MAX_TIME_MS`. ValueError naming ``what`` otherwise."""
    value = text.strip()
    if value.lstrip("-").isascii() and value.lstrip("-").isdigit():
        if len(value) > 20:
            raise ValueError(f"{what}: must be at most {MAX_TIME_MS} (year 9999), got {text!r}")
        ms = int(value)
        if ms < 0:
            raise ValueError(f"{what}: must not be negative, got {text!r}")
        if ms > MAX_TIME_MS:
            raise ValueError(f"{what}: must be at most {MAX_TIME_MS} (year 9999), got {text!r}")
        return ms
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{what}: expected ISO-8601 UTC (e.g. 2026-11-29T14:00:00Z) or milliseconds since "
            f"the epoch, got {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    ms = _exact_ms(moment)  # exact, for any zone: no float, no platform time_t
    if not 0 <= ms <= MAX_TIME_MS:
        raise ValueError(f"{what}: must be between 1970 and 9999 (UTC), got {text!r}")
    return ms


def _exact_ms(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def format_time(ms: int | None) -> str:
    if ms is None:
        return "-"
    if not 0 <= ms <= MAX_TIME_MS:  # a stored time no calendar can show
        return f"{ms} ms"
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def dollars(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{rest:02d}"


# ------------------------------------------------------------------------------------- reading
class JournalReader:
    """A read-only view of one journal file (never creates or writes it)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise ReportError(f"{self.path}: no such journal file")
        if not self.path.is_file():
            raise ReportError(f"{self.path}: not a regular file")
        try:
            self._conn = connect_read_only(self.path)
            problems = schema_problems(self._conn)
        except (sqlite3.Error, JournalError) as exc:
            raise ReportError(f"{self.path}: not a readable journal: {exc}") from None
        if problems:
            self._conn.close()
            raise ReportError(f"{self.path}: {problems[0]}")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> JournalReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def meta(self) -> dict[str, str]:
        return dict(self._conn.execute("SELECT key, value FROM meta").fetchall())

    @property
    def training(self) -> bool:
        """True for a training journal: one of its power_up entries records ``training``."""
        return self._power_up_says("training")

    @property
    def unapproved_bench(self) -> bool:
        """True when a power_up entry records ``unapproved_bench`` (a lab bench's play)."""
        return self._power_up_says("unapproved_bench")

    def _power_up_says(self, flag: str) -> bool:
        try:
            rows = self._conn.execute("SELECT data FROM journal WHERE type = 'power_up'")
            for (data,) in rows:
                try:
                    if decode_object(data, "power_up").get(flag) is True:
                        return True
                except ValueError:
                    continue
        except sqlite3.Error as exc:
            raise ReportError(f"{self.path}: cannot read: {exc}") from None
        return False

    def entries(self) -> Iterator[Entry]:
        return self.entries_of(())

    def entries_of(self, types: Sequence[str]) -> Iterator[Entry]:
        """The entries of ``types`` in order (chosen by SQLite, the others never decoded); every
        entry when ``types`` is empty."""
        where = f" WHERE type IN ({', '.join('?' * len(types))})" if types else ""
        try:
            cursor = self._conn.execute(
                "SELECT seq, ts_ms, round_id, type, data, prev_hash, hash FROM journal"
                f"{where} ORDER BY seq",
                tuple(types),
            )
            for seq, ts, rnd, type_, data, prev, digest in cursor:
                try:
                    obj = decode_object(data, f"seq {seq}: data")
                except ValueError as exc:
                    raise ReportError(f"{self.path}: {exc} (run tablectl journal verify)") from None
                yield Entry(seq, ts, rnd, type_, obj, prev, digest)
        except sqlite3.Error as exc:
            raise ReportError(f"{self.path}: cannot read: {exc}") from None

    def stored_meters(self) -> dict[str, dict[str, JSON]]:
        try:
            rows = self._conn.execute('SELECT level, "values" FROM meters ORDER BY level')
            return {level: decode_object(v, f"meters[{level}]") for level, v in rows}
        except (sqlite3.Error, ValueError) as exc:
            raise ReportError(f"{self.path}: cannot read the stored meters: {exc}") from None

    def stored_seq(self) -> int | None:
        """The seq the stored state and meters reflect (the owner stores them once a round: a
        journal read while its table plays, or after a cut, may hold entries after it)."""
        try:
            row = self._conn.execute("SELECT seq FROM state WHERE id = 1").fetchone()
            return None if row is None else int(row[0])
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise ReportError(f"{self.path}: cannot read the stored state: {exc}") from None

    def stored_head(self) -> tuple[int, str] | None:
        """The seq and hash of the entry the stored state and meters reflect."""
        try:
            row = self._conn.execute("SELECT seq, hash FROM state WHERE id = 1").fetchone()
            return None if row is None else (int(row[0]), str(row[1]))
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise ReportError(f"{self.path}: cannot read the stored state: {exc}") from None

    def stored_snapshot(self) -> dict[str, JSON] | None:
        try:
            row = self._conn.execute("SELECT snapshot FROM state WHERE id = 1").fetchone()
            return None if row is None else decode_object(row[0], "state.snapshot")
        except (sqlite3.Error, ValueError) as exc:
            raise ReportError(f"{self.path}: cannot read the stored state: {exc}") from None


def effects_of(entry: Entry) -> list[Effect]:
    """The entry's journaled effects as records; ReportError names a malformed one."""
    raw = entry.data.get("effects", [])
    if not isinstance(raw, list):
        raise ReportError(f"seq {entry.seq}: effects: not a list (run tablectl journal verify)")
    out: list[Effect] = []
    for i, e in enumerate(raw):
        try:
            out.append(parse_effect(e, f"seq {entry.seq}: effects[{i}]"))
        except RecordError as exc:
            raise ReportError(f"{exc} (run tablectl journal verify)") from None
    return out


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _in_window(ts: int, start: int | None, end: int | None) -> bool:
    return (start is None or ts >= start) and (end is None or ts < end)


def _refused(effects: list[Effect]) -> bool:
    return any(isinstance(e, Rejected) for e in effects)


# ------------------------------------------------------------------------------------- rounds
@dataclass
class RoundRecall:
    """One round as the journal tells it (game recall)."""

    round_id: int
    started_ms: int
    ended_ms: int | None = None
    completed: bool = False
    voided: str | None = None
    positions: list[int] = field(default_factory=list)
    late_chips: list[int] = field(default_factory=list)
    bank: int | None = None
    starting_position: dict[str, JSON] | None = None
    side_wagers: list[dict[str, JSON]] = field(default_factory=list)
    outcomes: list[dict[str, JSON]] = field(default_factory=list)
    hits: list[dict[str, JSON]] = field(default_factory=list)
    refunds: list[dict[str, JSON]] = field(default_factory=list)
    faults: list[dict[str, JSON]] = field(default_factory=list)
    rejected: list[dict[str, JSON]] = field(default_factory=list)
    entries: list[int] = field(default_factory=list)
    summary: dict[str, JSON] | None = None
    order: list[int] = field(default_factory=list)  # the journaled delivery order of the stacks
    dealt: list[dict[str, JSON]] = field(default_factory=list)  # accepted dealt data, in order

    def to_json(self) -> dict[str, JSON]:
        return {
            "round": self.round_id,
            "started": self.started_ms,
            "ended": self.ended_ms,
            "completed": self.completed,
            "void": self.voided,
            "positions": sorted(self.positions),
            "late_chips": self.late_chips,
            "bank": self.bank,
            "starting_position": self.starting_position,
            "side_wagers": self.side_wagers,
            "outcomes": self.outcomes,
            "hits": self.hits,
            "refunds": self.refunds,
            "faults": self.faults,
            "rejected": self.rejected,
            "summary": self.summary,
            "cards": self.cards(),
            "seqs": [self.entries[0], self.entries[-1]] if self.entries else [],
        }

    def cards(self) -> dict[str, str] | None:
        """A resolved round's cards in card notation, by seat ("dealer", "1".."6"), from the
        journaled dealt data (a card-reading shoe) mapped by the journaled delivery order; None
        while the round is unresolved or no card was read."""
        if self.summary is None or not self.dealt:
            return None
        seats: dict[int, list[str]] = {}
        for dealt in self.dealt:
            hands = dealt.get("hands")
            stacks = dealt.get("stacks")
            if isinstance(hands, dict):
                pairs = [(0 if str(k) == "dealer" else _int_key(k), v) for k, v in hands.items()]
            elif isinstance(stacks, list) and len(stacks) == len(self.order):
                pairs = list(zip(self.order, stacks, strict=True))
            else:
                continue
            for seat, cards in pairs:
                if seat is None or not isinstance(cards, list):
                    return None
                seats.setdefault(seat, []).extend(_notation(c) for c in cards)
        if not seats:
            return None
        return {
            ("dealer" if seat == 0 else str(seat)): " ".join(cards)
            for seat, cards in sorted(seats.items())
        }


def _int_key(key: object) -> int | None:
    text = str(key)
    return int(text) if text.isdigit() else None


def _notation(card: object) -> str:
    try:
        if isinstance(card, str):
            return format_card(parse_card(card))
        if isinstance(card, int) and not isinstance(card, bool):
            return format_card(card)
    except CardError:
        pass
    return "??"


def _round_of(entry: Entry) -> int | None:
    """The round the owner filed the entry under (the machine's entry round)."""
    return entry.round_id if entry.round_id else None


def _apply_to_round(r: RoundRecall, entry: Entry) -> None:
    effects = effects_of(entry)
    r.entries.append(entry.seq)
    if entry.type == "dealt" and not _refused(effects):
        r.dealt.append({k: v for k, v in entry.data.items() if k in ("hands", "stacks")})
    for e in effects:
        if isinstance(e, Rejected):
            r.rejected.append(
                {"seq": entry.seq, "event": e.event, "reason": e.reason, "cause": e.cause}
            )
            if e.event == "chip_detected" and e.cause == "late" and e.position is not None:
                r.late_chips.append(e.position)
        elif isinstance(e, Wagers):
            r.positions = list(e.positions)
        elif isinstance(e, Outcome):
            r.outcomes.append({"position": e.position, "line": e.line})
        elif isinstance(e, Fault):
            r.faults.append(
                {
                    "seq": entry.seq,
                    "ts": entry.ts_ms,
                    "code": e.code,
                    "device": e.device,
                    "detail": e.detail,
                }
            )
        elif isinstance(e, FaultClearedEffect):
            r.faults.append(
                {
                    "seq": entry.seq,
                    "ts": entry.ts_ms,
                    "cleared_by": e.supervisor,
                    "via": e.via,
                    "outcome": e.outcome,
                }
            )
        elif isinstance(e, StartingPosition):
            r.starting_position = {"by": e.by, "number": e.number, "seat": e.seat}
            r.order = list(e.order)
        elif isinstance(e, Bank):
            r.bank = e.position
        elif isinstance(e, SideWagerSettled):
            r.side_wagers.extend(x.fields_json() for x in e.results)
        elif isinstance(e, SideWagerRefund):  # a void returned it (NY 5324.41(j)(3))
            r.side_wagers.append(
                {
                    "position": e.position,
                    "number": e.number,
                    "cents": e.cents,
                    "refund_cents": e.cents,
                }
            )
        elif isinstance(e, HitPending):
            r.hits.append(
                {"position": e.position, "level": e.level, "line": e.line, "status": "pending"}
            )
        elif isinstance(e, Pay):
            r.hits = [h for h in r.hits if not _pending_at(h, e.position)]
            r.hits.append(
                {
                    "position": e.position,
                    "level": e.level,
                    "line": e.line,
                    "cents": e.cents,
                    "from": e.from_,
                    "house_cents": e.house_cents or 0,
                    "status": "paid",
                    "validated_by": e.supervisor,
                    "validated_via": e.via,
                    **({"voided_line": e.voided_line} if e.voided_line else {}),
                }
            )
        elif isinstance(e, HitVoidedEffect):
            r.hits = [h for h in r.hits if not _pending_at(h, e.position)]
            r.hits.append(
                {
                    "position": e.position,
                    "level": e.level,
                    "line": e.line,
                    "status": "voided",
                    "voided_by": e.supervisor,
                    "via": e.via,
                    "reason": e.reason,
                    **({"corrected_line": e.corrected_line} if e.corrected_line else {}),
                }
            )
        elif isinstance(e, Refund):
            r.refunds.append({"position": e.position, "cents": e.cents, "reason": e.reason})
        elif isinstance(e, RoundVoided):
            r.voided = e.reason or "voided"
            r.ended_ms = entry.ts_ms
        elif isinstance(e, RoundSummary):
            r.summary = e.fields_json()
            r.completed = e.outcome == "completed"
            r.ended_ms = entry.ts_ms


def _pending_at(hit: Mapping[str, JSON], position: int) -> bool:
    return hit.get("status") == "pending" and hit.get("position") == position


def rounds_report(
    reader: JournalReader, start: int | None = None, end: int | None = None
) -> list[dict[str, JSON]]:
    """Game recall: every round with an entry in the window, in order."""
    rounds: dict[int, RoundRecall] = {}
    for entry in reader.entries():
        rid = _round_of(entry)
        if rid is None:
            continue
        r = rounds.get(rid)
        if r is None:
            r = rounds[rid] = RoundRecall(rid, entry.ts_ms)
        _apply_to_round(r, entry)
    out = []
    for rid in sorted(rounds):
        r = rounds[rid]
        last = r.ended_ms if r.ended_ms is not None else r.started_ms
        if (end is None or r.started_ms < end) and (start is None or last >= start):
            out.append(r.to_json())
    return out


# ------------------------------------------------------------------------------------- movements
@dataclass
class LevelFlow:
    """One level's movements in a window, in cents."""

    wagers: int = 0
    wagered_cents: int = 0
    contributed_cents: int = 0
    paid_from_meter_cents: int = 0
    adjustments_cents: int = 0
    # what the house paid in: the part of a payout the meter could not cover (the meter paid
    # what it held) and the reset's shortfall; not part of the meter's reconciliation
    house_funded_cents: int = 0
    # a linked level's hits paid from the pool's meter (the link controller's locks): the
    # table's own meter moves for none of them, so they are not part of its reconciliation
    paid_by_pool_cents: int = 0

    def add(self, movement: MeterMovement) -> None:
        # the machine journals the change of each meter's whole cents, so the deltas add up
        # exactly to the meters shown
        self.house_funded_cents += movement.house_cents
        delta = movement.meter_delta_cents
        if movement.kind == "contribution":
            self.contributed_cents += delta
        elif movement.kind == "payout":
            self.paid_from_meter_cents -= delta
        else:  # reset (house-funded part), reversal of a voided round, supervised correction
            self.adjustments_cents += delta


def initial_meters(reader: JournalReader) -> dict[str, int]:
    """Each level's meter (display + overflow + reserve, cents) when the level was created: its
    initial amount, as the stored snapshot keeps it (levels are never removed or renamed), else
    as the recorded game configuration gives it."""
    out: dict[str, int] = {}
    snap = reader.stored_snapshot() or {}
    meters = snap.get("meters")
    if isinstance(meters, dict):
        for name, values in meters.items():
            if isinstance(values, dict) and "initial" in values:
                out[str(name)] = _int(values.get("initial")) // SUB_UNITS
    config = snap.get("config")
    levels = config.get("levels") if isinstance(config, dict) else None
    if isinstance(levels, list):
        for lvl in levels:
            if isinstance(lvl, dict) and isinstance(lvl.get("name"), str):
                out.setdefault(str(lvl["name"]), _int(lvl.get("initial_cents")))
    return out


def shift_report(
    reader: JournalReader, start: int | None = None, end: int | None = None
) -> dict[str, JSON]:
    """The shift: rounds, voids, faults, hits and the progressive reconciliation in the window
    ``start <= ts < end`` (UTC ms; None = open).

    The meter at each edge is every level's initial amount plus every journaled movement before
    the edge; the flows are the movements inside the window, classified by kind, so that per level
    and in total ``meter_end = meter_start + contributed - paid_from_meter + adjustments``. At the
    journal's end the movements must give the stored meters exactly: any difference is listed in
    ``problems`` (the effects would not account for the meters).
    """
    start_meter = dict(initial_meters(reader))
    flows: dict[str, LevelFlow] = {name: LevelFlow() for name in start_meter}
    running = dict(start_meter)
    table_wagers = table_wagered = 0
    rounds_done = voids = faults = 0
    hits: list[dict[str, JSON]] = []
    adjustments: list[dict[str, JSON]] = []
    first_ts: int | None = None
    last_ts: int | None = None
    linked: str | None = None  # the level linked to a pool at this point of the journal
    for entry in reader.entries():
        effects = effects_of(entry)
        before = start is not None and entry.ts_ms < start
        inside = not before and (end is None or entry.ts_ms < end)
        if inside:
            first_ts = entry.ts_ms if first_ts is None else first_ts
            last_ts = entry.ts_ms
        contributions = [
            e for e in effects if isinstance(e, MeterMovement) and e.kind == "contribution"
        ]
        if inside and contributions:
            # every level's contribution carries the same wagers: the table counts them once
            table_wagers += max(_int(m.wagers) for m in contributions)
            table_wagered += max(_int(m.wagered_cents) for m in contributions)
            for m in contributions:
                f = flows.setdefault(m.level, LevelFlow())
                f.wagers += _int(m.wagers)
                f.wagered_cents += _int(m.wagered_cents)
        for e in effects:
            if isinstance(e, MeterMovement):
                running[e.level] = running.get(e.level, 0) + e.meter_delta_cents
                if before:
                    start_meter[e.level] = start_meter.get(e.level, 0) + e.meter_delta_cents
                elif inside:
                    flows.setdefault(e.level, LevelFlow()).add(e)
                    if e.kind not in ("contribution", "payout"):
                        adjustments.append(_adjustment(entry, e))
            elif isinstance(e, LinkedWager):
                linked = e.level if e.linked else None
            elif not inside:
                continue
            elif isinstance(e, RoundSummary) and e.outcome == "completed":
                rounds_done += 1
            elif isinstance(e, RoundVoided):
                voids += 1
            elif isinstance(e, Fault):
                faults += 1
            elif isinstance(e, Pay):
                if e.from_ == "meter" and e.level == linked:  # the pool's meter paid it
                    flows.setdefault(e.level, LevelFlow()).paid_by_pool_cents += e.cents
                hits.append(
                    {
                        "position": e.position,
                        "level": e.level,
                        "line": e.line,
                        "cents": e.cents,
                        "from": e.from_,
                        "house_cents": e.house_cents or 0,
                        "round": entry.round_id,
                        "time": entry.ts_ms,
                        "validated_by": e.supervisor,
                        "validated_via": e.via,
                    }
                )
    per_level: list[dict[str, JSON]] = []
    for name in sorted(set(start_meter) | set(flows)):
        f = flows.get(name, LevelFlow())
        s = start_meter.get(name, 0)
        per_level.append(
            {
                "level": name,
                "wagers": f.wagers,
                "wagered_cents": f.wagered_cents,
                "contributed_cents": f.contributed_cents,
                "paid_from_meter_cents": f.paid_from_meter_cents,
                "meter_start_cents": s,
                "meter_end_cents": s
                + f.contributed_cents
                - f.paid_from_meter_cents
                + f.adjustments_cents,
                "adjustments_cents": f.adjustments_cents,
                "house_funded_cents": f.house_funded_cents,
                "paid_by_pool_cents": f.paid_by_pool_cents,
            }
        )
    total: dict[str, JSON] = {
        key: sum(_int(lvl[key]) for lvl in per_level)
        for key in (
            "contributed_cents",
            "paid_from_meter_cents",
            "meter_start_cents",
            "meter_end_cents",
            "adjustments_cents",
            "house_funded_cents",
            "paid_by_pool_cents",
        )
    }
    total["wagers"] = table_wagers
    total["wagered_cents"] = table_wagered
    return {
        "table": reader.meta().get("table_id", ""),
        "from": start,
        "to": end,
        "first_entry": first_ts,
        "last_entry": last_ts,
        "rounds": rounds_done,
        "voided_rounds": voids,
        "faults": faults,
        "hits": hits,
        "adjustments": adjustments,
        "progressive": total,
        "levels": per_level,
        "problems": _reconcile_with_stored(reader, running),
    }


def _adjustment(entry: Entry, m: MeterMovement) -> dict[str, JSON]:
    """One adjustment of a meter (a correction, a void's reversal, the reset after a hit) with
    the reason and supervisor its movement carries (NJ 13:69D-1.52(f))."""
    return {
        "seq": entry.seq,
        "time": entry.ts_ms,
        "round": m.round_id,
        "level": m.level,
        "kind": m.kind,
        "cents": m.meter_delta_cents,
        "house_cents": m.house_cents,
        "meter": m.meter,
        "reason": m.reason,
        "supervisor": m.supervisor,
    }


def _reconcile_with_stored(reader: JournalReader, running: Mapping[str, int]) -> list[str]:
    problems: list[str] = []
    stored = reader.stored_meters()
    for level in sorted(set(stored) | set(running)):
        values = stored.get(level)
        if values is None:
            problems.append(f"level {level}: movements journaled but no stored meters")
            continue
        held = sum(_int(values.get(k)) for k in METER_PARTS)
        derived = running.get(level, 0)
        if held != derived:
            problems.append(
                f"level {level}: initial amount plus journaled movements give {dollars(derived)}, "
                f"the stored meters hold {dollars(held)}"
            )
    return problems


# ------------------------------------------------------------------------------------- meters
def meters_report(reader: JournalReader) -> dict[str, JSON]:
    """The current meters of every level, as stored beside the journal (at the last round's
    end, or the last entry outside a round; ``as_of_seq`` when entries follow it); ``carry``:
    the stored head (seq, hash, key id) and every level's complete meters (the stored
    snapshot's, in sub-units), which `tablectl journal carry --from-report` takes over once
    supervisors have signed the report."""
    stored = reader.stored_meters()
    levels: list[dict[str, JSON]] = []
    for name in sorted(stored):
        v = stored[name]
        levels.append(
            {
                "level": name,
                "progressive_in": _int(v.get("progressive_in")),
                "wagered_cents": _int(v.get("wagered_cents")),
                "contributed_cents": _int(v.get("contributed_cents"))
                + _int(v.get("reserve_contributed_cents")),
                "display_cents": _int(v.get("display_cents")),
                "reserve_cents": _int(v.get("reserve_cents")),
                "overflow_cents": _int(v.get("overflow_cents")),
                "hits": _int(v.get("hits")),
                "wins": _int(v.get("wins")),
                "paid_cents": _int(v.get("paid_cents")),
                "meter_paid_cents": _int(v.get("meter_paid_cents")),
                "house_funded_cents": _int(v.get("house_funded_cents")),
                "corrections_cents": _int(v.get("corrections_cents")),
            }
        )
    snap = reader.stored_snapshot() or {}
    # the stored meters must be what the journaled movements add up to
    running = dict(initial_meters(reader))
    as_of = reader.stored_seq()
    last = 0
    for entry in reader.entries():
        last = entry.seq
        if as_of is not None and entry.seq > as_of:
            continue  # after the stored meters: not in them yet
        for e in effects_of(entry):
            if isinstance(e, MeterMovement):
                running[e.level] = running.get(e.level, 0) + e.meter_delta_cents
    report: dict[str, JSON] = {
        "table": reader.meta().get("table_id", ""),
        "state": snap.get("state"),
        "round": snap.get("round_id"),
        "levels": levels,
        "problems": _reconcile_with_stored(reader, running),
    }
    if as_of is not None and as_of < last:
        report["as_of_seq"] = as_of
    head = reader.stored_head()
    complete = snap.get("meters")  # the snapshot's meters: sub-units, every counter
    if head is not None and isinstance(complete, dict) and complete:
        # what a signed report lets a fresh journal carry over (tablectl journal carry
        # --from-report): every level's complete meters, to the sub-unit, at this head
        report["carry"] = {
            "seq": head[0],
            "hash": head[1],
            "key_id": reader.meta().get("key_id", ""),
            "meters": complete,
        }
    return report


# ------------------------------------------------------------------------------------- hits
def hits_report(
    reader: JournalReader,
    start: int | None = None,
    end: int | None = None,
    limit: int = 25,
) -> list[dict[str, JSON]]:
    """The last ``limit`` progressive hits paid in the window, newest last: table, position,
    level, line, amount, time, round, and the supervisor who validated it (None for a fixed
    amount paid without validation); ``practice`` marks a hit the training practice deck dealt
    (a ``training`` entry, action ``practice_deal``, for that round and position)."""
    table = reader.meta().get("table_id", "")
    hits: list[dict[str, JSON]] = []
    practice: set[tuple[int, int]] = set()
    for entry in reader.entries():
        if entry.type == "training" and entry.data.get("action") == "practice_deal":
            practice.add((_int(entry.round_id), _int(entry.data.get("position"))))
        if not _in_window(entry.ts_ms, start, end):
            continue
        for e in effects_of(entry):
            if not isinstance(e, Pay):
                continue
            hits.append(
                {
                    "table": table,
                    "position": e.position,
                    "level": e.level,
                    "line": e.line,
                    "cents": e.cents,
                    "from": e.from_,
                    "house_cents": e.house_cents or 0,
                    "time": entry.ts_ms,
                    "round": entry.round_id,
                    "seq": entry.seq,
                    "validated_by": e.supervisor,
                    "validated_via": e.via,
                }
                | ({"practice": True} if (entry.round_id, e.position) in practice else {})
            )
    return hits[-limit:] if limit > 0 else hits


# ------------------------------------------------------------------------------------- text
def rounds_text(rounds: list[dict[str, JSON]]) -> list[str]:
    complete = sum(1 for r in rounds if r["completed"] and not r["void"])
    voided = sum(1 for r in rounds if r["void"])
    # journal verify counts completed rounds: the header says which of these those are
    lines = [
        f"{len(rounds)} rounds: {complete} complete, {voided} voided, "
        f"{len(rounds) - complete - voided} in progress"
    ]
    for r in rounds:
        status = (
            "void: " + str(r["void"])
            if r["void"]
            else ("complete" if r["completed"] else "in progress")
        )
        sp = r["starting_position"]
        if not isinstance(sp, dict):
            sp_text = "-"
        elif sp.get("by") == "three_card":  # NY 5324.41(n)(4): no number drawn or counted
            sp_text = f"first stack to area {sp['seat']}"
        else:
            sp_text = f"start {sp['number']} by {sp.get('by') or '?'} (seat {sp['seat']})"
        lines.append(
            f"round {r['round']}  {format_time(_int(r['started']))}  {status}  "
            f"wagers at {r['positions'] or 'none'}  {sp_text}"
            + (f"  bank {r['bank']}" if r["bank"] else "")
        )
        for o in r["outcomes"]:
            lines.append(f"    position {o['position']}: {o['line'] or 'lost'}")
        for h in r["hits"]:
            amount = f" {dollars(_int(h.get('cents')))}" if "cents" in h else ""
            via = f" ({h['validated_via']})" if h.get("validated_via") else ""
            who = f" validated by {h['validated_by']}{via}" if h.get("validated_by") else ""
            lines.append(
                f"    hit {h.get('status')}: position {h.get('position')} {h.get('line') or ''}"
                f"{amount}{who}"
            )
        for f in r["faults"]:
            if "code" in f:
                lines.append(f"    fault {f['code']} ({f['device']}): {f['detail']}")
            else:
                lines.append(f"    fault cleared by {f['cleared_by']}")
        if r["late_chips"]:
            lines.append(f"    late chips ignored at {r['late_chips']}")
        cards = r.get("cards")
        if isinstance(cards, dict):
            for seat, text in cards.items():
                lines.append(f"    cards {seat}: {text}")
    return lines


def shift_text(report: Mapping[str, JSON]) -> list[str]:
    p = report["progressive"]
    assert isinstance(p, dict)
    lines = [
        f"shift of table {report['table']}  {_window(report)}",
        f"rounds {report['rounds']}, voided {report['voided_rounds']}, faults {report['faults']}",
        f"progressive wagers {p['wagers']} ({dollars(p['wagered_cents'])})",
        f"meter at start     {dollars(p['meter_start_cents']):>16}",
        f"  + contributed    {dollars(p['contributed_cents']):>16}",
        f"  - paid from meter{dollars(p['paid_from_meter_cents']):>16}",
        f"  + adjustments    {dollars(p['adjustments_cents']):>16}",
        f"  = meter at end   {dollars(p['meter_end_cents']):>16}",
        f"house funded       {dollars(_int(p.get('house_funded_cents'))):>16}",
    ]
    if _int(p.get("paid_by_pool_cents")):
        lines.append(f"paid by the pool   {dollars(_int(p.get('paid_by_pool_cents'))):>16}")
    for lvl in report["levels"]:
        lines.append(
            f"  level {lvl['level']}: {dollars(lvl['meter_start_cents'])} + "
            f"{dollars(lvl['contributed_cents'])} - {dollars(lvl['paid_from_meter_cents'])} + "
            f"{dollars(lvl['adjustments_cents'])} = {dollars(lvl['meter_end_cents'])}"
        )
    for h in report["hits"]:
        house = _int(h.get("house_cents"))
        lines.append(
            f"  hit position {h['position']} {h['line']} {dollars(_int(h['cents']))}"
            + (f" ({dollars(house)} funded by the house)" if house else "")
        )
    for a in report["adjustments"]:
        who = f" by {a['supervisor']}" if a.get("supervisor") else ""
        lines.append(
            f"  adjustment {a['kind']} {a['level']} {dollars(_int(a['cents']))}{who}: "
            f"{a.get('reason') or '-'}"
        )
    for problem in report["problems"]:
        lines.append(f"PROBLEM: {problem}")
    return lines


def _window(report: Mapping[str, JSON]) -> str:
    """The shift's time range: the --from/--to asked for, else the journal's first and last
    entries' times (a range never printed empty)."""
    start, end = report.get("from"), report.get("to")
    first, last = report.get("first_entry"), report.get("last_entry")
    shown_start = format_time(_int(start)) if start is not None else None
    shown_end = format_time(_int(end)) if end is not None else None
    if shown_start is None:
        shown_start = f"{format_time(_int(first))} (first entry)" if first is not None else "-"
    if shown_end is None:
        shown_end = f"{format_time(_int(last))} (last entry)" if last is not None else "-"
    if first is None and last is None and start is None and end is None:
        return "(no entries)"
    return f"{shown_start} .. {shown_end}"


def meters_text(report: Mapping[str, JSON]) -> list[str]:
    lines = [
        f"meters of table {report['table']} (state {report['state']}, round {report['round']})"
    ]
    for lvl in report["levels"]:
        lines.append(
            f"  {lvl['level']}: display {dollars(lvl['display_cents'])}, reserve "
            f"{dollars(lvl['reserve_cents'])}, overflow {dollars(lvl['overflow_cents'])}; "
            f"{lvl['progressive_in']} wagers ({dollars(lvl['wagered_cents'])}), contributed "
            f"{dollars(lvl['contributed_cents'])}; {lvl['wins']} wins paid "
            f"{dollars(lvl['paid_cents'])}, {lvl['hits']} of them from the meter "
            f"({dollars(lvl['meter_paid_cents'])}), the others from the chip tray"
        )
    for problem in report.get("problems") or []:
        lines.append(f"PROBLEM: {problem}")
    return lines


def hits_text(hits: list[dict[str, JSON]]) -> list[str]:
    lines = [f"{len(hits)} hits"]
    for h in hits:
        who = h["validated_by"] or "-"
        lines.append(
            f"  {format_time(_int(h['time']))}  table {h['table']}  round {h['round']}  "
            f"position {h['position']}  {h['level']}  {h['line']}  {dollars(_int(h['cents']))}  "
            f"validated by {who}"
            + ("  PRACTICE (training practice deck)" if h.get("practice") else "")
        )
    return lines


def as_json(value: Any) -> Any:
    """Reports are already JSON-able; kept as one place to adapt them."""
    return value
