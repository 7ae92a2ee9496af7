"""A linked progressive pool's rules (NY 5321.18(b), NJ 13:69E-1.39A-B): the pool's meters grown
from the linked tables' contributions at the pool's own rate, the reversal of a voided round's
contribution, hits locked one at a time in the order they were recorded (the first from the
meter at that moment, the next from the value the reset left), tables identified by asset number,
a table's stream refused once its chain is broken, a hit voided at the table put back on the meter
(or, voided before it was locked, never locked), and a supervisor's corrected line (NY
5324.41(k)(3)(ii)) locked as a hit of its own.

The link controller (controller/link/service.py) steps a `Pool` with each of its journal's entry
types and journals the effects; its verify replays them through the same code. Pure: no clock,
no I/O, no randomness; money in integer cents (meters in sub-units, fsm/round/meters.py).
Must never decide whether a hand wins (the table does) or read a table's journal itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fsm.round.config import ProgressiveLevel
from fsm.round.meters import UNIT, Contribution, LevelMeters
from fsm.rules.progressive import ProgressiveTable

JSON = Any


@dataclass(frozen=True)
class PoolParams:
    """The pool's parameters (the link controller's configuration, journaled at creation and
    never changed while the link operates, NY 5321.18(b)(4))."""

    pool: str
    level: ProgressiveLevel
    wager_cents: int
    paytable: str
    #: table id -> asset number: the tables allowed on the pool (NY 5321.18(b): identifies each)
    tables: Mapping[str, int]
    #: the pool's reading of NY 5324.41(k)(4)(i) for a $5 wager's share of the meter
    #: (``times-five``, or ``not-multiplied`` on a regulator's written ruling); every table of the
    #: pool must read it the same way (`terms_refusal`)
    five_dollar_meter_share: str = "times-five"

    def to_json(self) -> dict[str, JSON]:
        lvl = self.level
        return {
            "pool": self.pool,
            "level": {
                "name": lvl.name,
                "initial_cents": lvl.initial_cents,
                "reset_cents": lvl.reset_cents,
                "rate_bp": lvl.rate_bp,
                "hidden_rate_bp": lvl.hidden_rate_bp,
                "limit_cents": lvl.limit_cents,
            },
            "wager_cents": self.wager_cents,
            "paytable": self.paytable,
            "tables": dict(sorted(self.tables.items())),
            "five_dollar_meter_share": self.five_dollar_meter_share,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, JSON]) -> PoolParams:
        lvl = dict(d["level"])
        return cls(
            str(d["pool"]),
            ProgressiveLevel(
                str(lvl["name"]),
                int(lvl["initial_cents"]),
                int(lvl["reset_cents"]),
                int(lvl["rate_bp"]),
                int(lvl.get("hidden_rate_bp", 0)),
                int(lvl.get("limit_cents", 0)),
            ),
            int(d["wager_cents"]),
            str(d["paytable"]),
            {str(k): int(v) for k, v in dict(d["tables"]).items()},
            str(d.get("five_dollar_meter_share", "times-five")),
        )

    def terms(self) -> dict[str, JSON]:
        """What every table of the pool must agree on (`terms_refusal`)."""
        lvl = self.level
        return {
            "wager_cents": self.wager_cents,
            "paytable": self.paytable,
            "five_dollar_meter_share": self.five_dollar_meter_share,
            "level": {
                "name": lvl.name,
                "reset_cents": lvl.reset_cents,
                "rate_bp": lvl.rate_bp,
                "hidden_rate_bp": lvl.hidden_rate_bp,
                "limit_cents": lvl.limit_cents,
            },
        }

    def terms_refusal(self, terms: object) -> str | None:
        """Why a table whose configuration says ``terms`` cannot play this pool, or None: every
        table of a pool offers the same wager, on the same pay table and level (rate, hidden
        rate, reset, limit), and reads the $5 share of the meter the same way; a table that
        does not is refused when it links, with the first difference named."""
        if not isinstance(terms, Mapping):
            return "the table did not say its wager, pay table, level and $5 reading"
        want = self.terms()
        for key, value in want.items():
            got = terms.get(key)
            if isinstance(value, dict):
                got_level = got if isinstance(got, Mapping) else {}
                for k, v in value.items():
                    if got_level.get(k) != v:
                        return (
                            f"level.{k}: the table's {got_level.get(k)!r}, the pool's {v!r} (every "
                            f"table of pool {self.pool} must agree)"
                        )
            elif got != value:
                return (
                    f"{key}: the table's {got!r}, the pool's {value!r} (every table of pool "
                    f"{self.pool} must agree)"
                )
        return None


@dataclass
class TableState:
    """What the pool holds of one table: the head of its chain, its refusal, and the
    contributions of its round in play (the only round a void can reverse)."""

    asset: int
    seq: int = 0
    hash: str = ""
    refused: str | None = None
    round_id: int | None = None
    open: list[dict[str, JSON]] = field(default_factory=list)
    #: the table's journal has named this pool (a link_state entry): contributions count from
    #: there on, never those it made before it was linked
    joined: bool = False

    def to_json(self) -> dict[str, JSON]:
        return {
            "joined": self.joined,
            "asset": self.asset,
            "seq": self.seq,
            "hash": self.hash,
            "refused": self.refused,
            "round_id": self.round_id,
            "open": [dict(c) for c in self.open],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, JSON]) -> TableState:
        return cls(
            int(d["asset"]),
            int(d["seq"]),
            str(d["hash"]),
            d.get("refused"),
            d.get("round_id"),
            [dict(c) for c in d.get("open", [])],
            bool(d.get("joined", False)),
        )


class PoolError(ValueError):
    """A request the pool refuses; the text says why (journaled or answered, never a crash)."""


class Pool:
    """The pool's whole state; ``step(type, data)`` answers an entry's effects."""

    def __init__(self, params: PoolParams, paytable: ProgressiveTable) -> None:
        self.params = params
        self.paytable = paytable
        self.meters = LevelMeters.new(params.level)
        self.tables: dict[str, TableState] = {}
        self.hits = 0
        self.locked: dict[str, dict[str, JSON]] = {}
        #: hits voided at the table before the pool locked them: a late request is refused
        self.voided: dict[str, dict[str, JSON]] = {}

    # --- snapshot ------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, JSON]:
        return {
            "params": self.params.to_json(),
            "meters": self.meters.to_json(),
            "tables": {k: t.to_json() for k, t in sorted(self.tables.items())},
            "hits": self.hits,
            "locked": {k: dict(v) for k, v in sorted(self.locked.items())},
            **(
                {"voided": {k: dict(v) for k, v in sorted(self.voided.items())}}
                if self.voided
                else {}
            ),
        }

    def load(self, snap: Mapping[str, JSON]) -> None:
        self.meters = LevelMeters.from_json(dict(snap["meters"]))
        self.tables = {k: TableState.from_json(v) for k, v in dict(snap["tables"]).items()}
        self.hits = int(snap["hits"])
        self.locked = {k: dict(v) for k, v in dict(snap["locked"]).items()}
        self.voided = {k: dict(v) for k, v in dict(snap.get("voided") or {}).items()}

    def meter_report(self) -> dict[str, dict[str, JSON]]:
        return {self.params.level.name: self.meters.report()}

    @property
    def display_cents(self) -> int:
        return self.meters.display_cents

    # --- identity ------------------------------------------------------------------------------
    def identify(self, table: str, asset: object) -> str | None:
        """Why ``table`` with ``asset`` is not a table of this pool (None: it is)."""
        want = self.params.tables.get(table)
        if want is None:
            return f"table {table} is not linked to pool {self.params.pool}"
        if asset != want:
            return f"table {table}: asset number {asset!r} is not the pool's record ({want})"
        return None

    def held_seq(self, table: str) -> int:
        t = self.tables.get(table)
        return 0 if t is None else t.seq

    # --- stepping ------------------------------------------------------------------------------
    def step(self, etype: str, data: Mapping[str, JSON]) -> list[dict[str, JSON]]:
        if etype == "consumed":
            return self._consumed(data)
        if etype == "hit_locked":
            return self._lock(data)
        if etype == "chain_refused":
            return self._refuse(data)
        if etype == "terms_refused":
            return [
                {"type": "table_terms_refused", "table": data["table"], "reason": data["reason"]}
            ]
        return []  # link_power_up, parameter_change_refused: informational

    def _table(self, table: str) -> TableState:
        t = self.tables.get(table)
        if t is None:
            t = TableState(int(self.params.tables.get(table, 0)))
            self.tables[table] = t
        return t

    def _consumed(self, data: Mapping[str, JSON]) -> list[dict[str, JSON]]:
        """One batch of the stream: per table, the new head and the movements it carried."""
        effects: list[dict[str, JSON]] = []
        for part in data["tables"]:
            effects.extend(self._consumed_table(part))
        return effects

    def _consumed_table(self, data: Mapping[str, JSON]) -> list[dict[str, JSON]]:
        table = str(data["table"])
        t = self._table(table)
        effects: list[dict[str, JSON]] = []
        level = self.params.level
        if data.get("joined"):
            t.joined = True
        for mv in data.get("movements", []):
            rid = int(mv["round_id"])
            if mv["kind"] == "contribution":
                wagers, cents = int(mv["wagers"]), int(mv["wagered_cents"])
                if wagers <= 0 or cents % wagers:
                    raise PoolError(f"table {table} seq {mv['seq']}: wagers {wagers}, {cents}")
                if t.round_id != rid:
                    t.round_id, t.open = rid, []
                c = self.meters.contribute(level, wagers, cents // wagers)
                t.open.append(c.to_json())
                effects.append(
                    {
                        "type": "pool_contribution",
                        "table": table,
                        "seq": int(mv["seq"]),
                        "round_id": rid,
                        "wagers": wagers,
                        "wagered_cents": cents,
                        "units": c.display + c.overflow + c.reserve,
                    }
                )
            elif mv["kind"] == "hit_voided":
                effects.extend(self._unlock(table, rid, mv))
            elif mv["kind"] == "reversal" and t.round_id == rid and t.open:
                c = Contribution.from_json(t.open.pop(0))
                self.meters.reverse(c)
                effects.append(
                    {
                        "type": "pool_reversal",
                        "table": table,
                        "seq": int(mv["seq"]),
                        "round_id": rid,
                        "units": c.display + c.overflow + c.reserve,
                    }
                )
        if data.get("left"):  # (the controller names it only of a table that had joined)
            t.joined = False
            effects.append(
                {
                    "type": "table_left",
                    "table": table,
                    "seq": int(data["left"]),
                    "display_cents": self.meters.display_cents,
                    "reason": "the table left the pool: its contributions stay on the pool's "
                    "meter, and it takes none of them (docs/link.md)",
                }
            )
        t.seq, t.hash = int(data["last_seq"]), str(data["last_hash"])
        return effects

    def _unlock(self, table: str, rid: int, mv: Mapping[str, JSON]) -> list[dict[str, JSON]]:
        """The table's ``hit_voided`` of the linked level, as its stream carried it."""
        why = f"hit voided at the table by {mv.get('supervisor')}: {mv.get('reason')}"
        line = mv.get("line")
        where = {"seq": int(mv["seq"])}
        return self._void(table, rid, int(mv["position"]), line and str(line), why, where)

    def _void(
        self,
        table: str,
        rid: int,
        pos: int,
        line: str | None,
        why: str,
        where: Mapping[str, JSON],
    ) -> list[dict[str, JSON]]:
        """A supervisor at the table voided a hit. Locked: the pool paid nothing, so the locked
        amount goes back on the display meter as a recorded correction (NJ 13:69D-1.52(f));
        the reset that followed the lock stays. Not locked yet (the void outran its lock
        request): recorded, so that request is refused when it comes. Once only: the table's
        stream and a corrected line's lock request may both name the same void. ``where``
        names the table's entry (``seq``) or the request (``request_seq``)."""
        key, lock = self.lock_of(table, rid, pos, line)
        if lock is None:
            if line is None or key in self.voided:
                return []
            self.voided[key] = {"line": line, **where}
            return [
                {
                    "type": "pool_hit_voided",
                    "table": table,
                    **where,
                    "round_id": rid,
                    "position": pos,
                    "line": line,
                    "reason": f"{why} (before the pool locked it: it will not be)"[:200],
                }
            ]
        if lock.get("voided"):
            return []
        lock["voided"] = True
        if lock.get("from") == "chip_tray":  # decided, never taken off the meter: nothing back
            return [
                {
                    "type": "pool_hit_voided",
                    "table": table,
                    **where,
                    "round_id": rid,
                    "position": pos,
                    "line": line,
                    "reason": f"{why} (locked as a fixed amount from the chip tray)"[:200],
                }
            ]
        cents = int(lock["cents"])
        self.meters.correct("display", cents)
        return [
            {
                "type": "pool_correction",
                "table": table,
                **where,
                "round_id": rid,
                "position": pos,
                "line": line,
                "cents": cents,
                "reason": why[:200],
            }
        ]

    def _refuse(self, data: Mapping[str, JSON]) -> list[dict[str, JSON]]:
        table = str(data["table"])
        t = self._table(table)
        t.refused = str(data["reason"])
        return [{"type": "table_refused", "table": table, "seq": data["seq"], "reason": t.refused}]

    @staticmethod
    def hit_key(table: str, round_id: int, position: int, line: str | None) -> str:
        """The key of one hit: a position's corrected line (NY 5324.41(k)(3)(ii)) is a hit of
        its own, so the line is part of it."""
        return f"{table}:{round_id}:{position}:{line}"

    def lock_of(
        self, table: str, round_id: int, position: int, line: str | None
    ) -> tuple[str, dict[str, JSON] | None]:
        """The key of the hit and its lock, if the pool locked it."""
        key = self.hit_key(table, round_id, position, line)
        return key, self.locked.get(key)

    def _locks_at(
        self, table: str, round_id: int, position: int, *, above: str | None = None
    ) -> list[tuple[str, dict[str, JSON]]]:
        """The locks of one position of one round (line, lock), highest line first; ``above``:
        only those of a line above it in the pay table."""
        names = self.paytable.line_names
        prefix = self.hit_key(table, round_id, position, "")
        found = [(k[len(prefix) :], v) for k, v in self.locked.items() if k.startswith(prefix)]
        found = [(n, v) for n, v in found if n in names]
        if above is not None:
            found = [(n, v) for n, v in found if names.index(n) < names.index(above)]
        return sorted(found, key=lambda nv: names.index(nv[0]))

    def payout_cents(self, line: str, wager_cents: int, meter_cents: int) -> int:
        """What ``line`` pays at the pool's meter, by the pool's reading of (k)(4)(i)."""
        return self.paytable.payout_cents(
            line,
            wager_cents,
            meter_cents,
            five_times_meter=self.params.five_dollar_meter_share == "times-five",
        )

    def weigh(self, data: Mapping[str, JSON], meter_cents: int) -> tuple[str, int, bool]:
        """The hand's best line at the pool's meter now (NY 5324.41(g)(8): the hand type paying
        the most, so never below a fixed line the hand also makes; (k)(6): the meter at the
        time of payment), its payout, and whether it comes off the meter ((k)(5)). The lines
        are those the table sent (every line the hand makes at the linked level); a request
        that names none is weighed on its line and the lines that line implies."""
        line = str(data["line"])
        lines = data.get("lines") or self.paytable.implied(line)
        wager = int(data["wager_cents"])
        best = self.paytable.best_of(
            [str(n) for n in lines], wager, lambda n: self.payout_cents(n, wager, meter_cents)
        )
        assert best is not None, "the request's line is among its lines"
        paid, cents = best
        return paid, cents, self.paytable.deducted_from_meter(paid, wager, cents)

    def check_hit(self, data: Mapping[str, JSON]) -> None:
        """Refuse a hit request that cannot be locked (`PoolError` says why)."""
        table = str(data.get("table"))
        why = self.identify(table, data.get("asset"))
        if why:
            raise PoolError(why)
        t = self.tables.get(table)
        if t is not None and t.refused:
            raise PoolError(f"table {table}: its stream was refused: {t.refused}")
        line = self._check_request(data)
        names = self.paytable.line_names
        rid, pos = int(data["round"]), int(data["position"])
        key, lock = self.lock_of(table, rid, pos, line)
        corrected = any(  # a lower line locked there as the correction of this one
            held.get("corrects") is not None and names.index(n) > names.index(line)
            for n, held in self._locks_at(table, rid, pos)
        )
        if key in self.voided or (lock is not None and lock.get("voided")) or corrected:
            raise PoolError(
                f"table {table} round {data['round']} position {data['position']} {line}: the "
                "table voided this hit or corrected it to a lower line"
            )

    def _check_request(self, data: Mapping[str, JSON]) -> str:
        """The hit request's line, wager, round, position and corrected line are of this pool;
        its line."""
        names = self.paytable.line_names
        line = data.get("line")
        if not isinstance(line, str) or line not in names:
            raise PoolError(f"line: {line!r} is not a line of pay table {self.params.paytable}")
        if data.get("wager_cents") != self.params.wager_cents:
            raise PoolError(
                f"wager_cents: {data.get('wager_cents')!r}, the pool's wager is "
                f"{self.params.wager_cents}"
            )
        for key in ("round", "position"):
            if not isinstance(data.get(key), int) or isinstance(data.get(key), bool):
                raise PoolError(f"{key}: must be an integer")
        lines = data.get("lines")
        if lines is not None and (
            not isinstance(lines, list)
            or not lines
            or len(lines) > len(names)
            or any(not isinstance(n, str) or n not in names for n in lines)
            or line not in lines
        ):
            raise PoolError(
                f"lines: {str(lines)[:80]} must be the lines of pay table {self.params.paytable} "
                f"the hand makes, {line} among them"
            )
        corrects = data.get("corrects")
        if corrects is not None and (
            not isinstance(corrects, str)
            or corrects not in names
            or names.index(corrects) >= names.index(line)
        ):
            raise PoolError(
                f"corrects: {corrects!r} is not a line above {line} (a corrected line is the "
                "right, lower line, NY 5324.41(k)(3)(ii))"
            )
        return line

    def _lock(self, data: Mapping[str, JSON]) -> list[dict[str, JSON]]:
        """Lock one hit: pay it from the meter as it stands now (NY 5324.41(k)(6)), reset the
        level (overflow, reserve, then the house), record it with its order (NY
        5321.18(b)(3)(iii)). The next hit pays from what the reset left.

        A corrected line (``corrects``: the line a supervisor voided at that position, NY
        5324.41(k)(3)(ii)) first undoes the voided hit (`_void`: its lock back on the meter, or
        recorded as never to be locked), then locks from the meter as it then stands; the
        table's void, when its stream brings it, finds that done."""
        table, rid, pos = str(data["table"]), int(data["round"]), int(data["position"])
        line = str(data["line"])
        effects: list[dict[str, JSON]] = []
        corrects = data.get("corrects")
        if corrects is not None:
            why = f"hit corrected at the table to {line} (its lock request)"
            where = {"request_seq": data.get("request_seq")}
            # every line above this one at the position is void (a line corrected twice too)
            for above, _ in self._locks_at(table, rid, pos, above=line):
                effects.extend(self._void(table, rid, pos, above, why, where))
            effects.extend(self._void(table, rid, pos, str(corrects), why, where))
        level = self.params.level
        m = self.meters
        meter_now = m.display_cents
        paid_line, cents, deducted = self.weigh(data, meter_now)
        short = fo = fr = fh = 0
        if deducted:
            house0 = m.house_funded
            m.pay_from_meter(cents)
            short = (m.house_funded - house0) // UNIT
            fo, fr, fh = m.reset(level)
        self.hits += 1
        source = "meter" if deducted else "chip_tray"
        record: dict[str, JSON] = {
            "type": "hit_locked",
            "table": table,
            "asset": data["asset"],
            "round_id": rid,
            "position": pos,
            "line": line,
            **({} if corrects is None else {"corrects": str(corrects)}),
            "paid_line": paid_line,
            "from": source,
            "cents": cents,
            "order": self.hits,
            "meter_cents": meter_now,
            "house_cents": short + fh // UNIT,
            "reset_to_cents": m.display_cents,
            "reset_from": {"overflow": fo, "reserve": fr, "house": fh},
        }
        if deducted:
            m.record_hit(
                {**{k: record[k] for k in ("table", "position", "line", "round_id", "order")},
                 "paid_line": paid_line, "cents": cents}
            )  # fmt: skip
        self.locked[self.hit_key(table, rid, pos, line)] = {
            "cents": cents,
            "order": self.hits,
            "meter_cents": meter_now,
            "paid_line": paid_line,
            "from": source,
            **({} if corrects is None else {"corrects": str(corrects)}),
        }
        return [*effects, record]
