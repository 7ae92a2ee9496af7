"""The floor page's tiles: each table's shipped entries folded into what a pit supervisor reads
at a glance (docs/link.md "The floor's page"), and the alarms that follow from them.

Responsible for `Tile.apply` (one entry, in seq order, its effects as the table journaled them:
the state the last accepted event left the table in, the progressive wagers standing, the
level's meter from the last ``round_summary`` plus the movements since, pending hits with the
amount the pool locked, the fault, the linked wager's playability and the link's state) and for
`alarms_of` (pending hit, fault, link down or refused by the pool, stale). The shipped entries
carry no state name, so the state is the one the last accepted event and its effects put the
table in (``fault`` carries the state it interrupted). Pure: no I/O, no clock (times are given),
never a game rule, never a card (card fields are never read).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.journal.format import Entry
from controller.web.view import fault_words, line_words, money, state_words

#: Event types that, accepted, leave the table in a known state (effects may say more).
EVENT_STATE: dict[str, str] = {
    "table_opened": "Open_Shuffling",
    "table_closed": "Closed",
    "lockout_pressed": "Open_LockedOut",
    "chips_confirmed": "Open_StartingPosition_Rng",
    "rng_drawn": "Open_Dealing",
    "dice_position_entered": "Open_Dealing",
    "dealt": "Open_Play",
    "play_complete": "Open_Settlement",
    "maintenance_entered": "Maintenance",
    "maintenance_exited": "Closed",
}
#: How many of a pool's last hits a tile keeps (the pool's panel shows the floor's last ones).
LAST_HITS = 10


@dataclass
class Tile:
    """One table as the floor sees it."""

    table: str
    section: str
    seq: int = 0
    #: the hash of the entry at ``seq`` (the next one must chain to it)
    hash: str = ""
    ts_ms: int = 0
    #: server wall time (ms) the last entry reached the page (stale is measured from it)
    seen_ms: int = 0
    asset: int | None = None
    state: str = ""
    round_id: int | None = None
    wager_positions: tuple[int, ...] = ()
    wager_cents: int = 0
    level: str | None = None
    meter_cents: int | None = None
    pool: str | None = None
    playable: bool | None = None
    link_up: bool | None = None
    link_detail: str = ""
    link_seq: int = 0
    pending: list[dict[str, Any]] = field(default_factory=list)
    fault: dict[str, Any] | None = None
    fault_seq: int = 0
    training: bool = False
    hits: list[dict[str, Any]] = field(default_factory=list)
    #: whether the page was last sent this tile stale (a change of it is an update)
    shown_stale: bool = False

    # ---------------------------------------------------------------- the fold
    def apply(self, entry: Entry, seen_ms: int) -> bool:
        """Fold one entry (True when it moved the tile on: a later seq)."""
        if entry.seq <= self.seq:
            return False
        self.seq, self.hash, self.ts_ms, self.seen_ms = entry.seq, entry.hash, entry.ts_ms, seen_ms
        if entry.round_id is not None:
            self.round_id = entry.round_id
        data = entry.data
        effects = [e for e in (data.get("effects") or []) if isinstance(e, Mapping)]
        if any(e.get("type") == "rejected" for e in effects):
            return True  # refused: nothing changed at the table
        etype = entry.type
        if etype == "power_up":
            self.training = bool(data.get("training"))
        if etype in EVENT_STATE:
            self.state = EVENT_STATE[etype]
        if etype == "link_state":
            self.link_up = bool(data.get("up"))
            self.link_detail = str(data.get("detail") or "")
            self.link_seq = entry.seq
            if data.get("pool"):
                self.pool = str(data["pool"])
        if etype == "link_hit_locked":
            self._locked(entry)
        for e in effects:
            self._effect(e, entry)
        return True

    def _locked(self, entry: Entry) -> None:
        d = entry.data
        cents = d.get("cents")
        for p in self.pending:
            if p["position"] == d.get("position"):
                p["cents"] = cents
        self.hits.append(
            {
                "table": self.table, "pool": str(d.get("pool") or self.pool or ""),
                "position": d.get("position"), "cents": cents, "order": d.get("order"),
                "line": d.get("line"), "ts": entry.ts_ms, "seq": entry.seq,
            }
        )  # fmt: skip
        del self.hits[:-LAST_HITS]

    def _effect(self, e: Mapping[str, Any], entry: Entry) -> None:
        kind = e.get("type")
        if kind == "acceptors" and e.get("armed"):
            self.state = "Open_Betting"
        elif kind == "shuffle":
            self.state = "Open_Shuffling"
        elif kind == "draw_rng":
            self.state = "Open_StartingPosition_Rng"
        elif kind == "dispense":
            self.state = "Open_Dealing"
        elif kind == "fault":
            self.state = "Fault"
            code = str(e.get("code") or "")
            self.fault = {
                "code": code, "device": str(e.get("device") or ""),
                "detail": str(e.get("detail") or ""),
                "interrupted": str(e.get("interrupted") or ""), "words": fault_words(code),
            }  # fmt: skip
            self.fault_seq = entry.seq
        elif kind == "fault_cleared":
            if self.fault is not None and e.get("outcome") == "resumed":
                self.state = self.fault["interrupted"] or self.state
            self.fault = None
        elif kind == "wagers":
            self.wager_positions = tuple(int(p) for p in e.get("positions") or ())
            self.wager_cents = int(e.get("wager_cents") or 0) * len(self.wager_positions)
        elif kind == "hit_pending":
            self.state = "Open_JackpotPending"
            self.pending = [p for p in self.pending if p["position"] != e.get("position")]
            self.pending.append(
                {
                    "position": e.get("position"), "level": e.get("level"),
                    "line": e.get("line"), "cents": None, "round": entry.round_id,
                    "seq": entry.seq,
                }
            )  # fmt: skip
        elif kind in ("pay", "hit_voided"):
            self.pending = [p for p in self.pending if p["position"] != e.get("position")]
        elif kind == "round_summary":
            self.wager_positions, self.wager_cents, self.pending = (), 0, []
            meters = e.get("meters") or []
            if meters:
                self.level = str(meters[0].get("level"))
                self.meter_cents = int(meters[0].get("display_after_cents") or 0)
        elif kind == "meter_movement" and self.meter_cents is not None:
            if self.level is None or e.get("level") == self.level:
                self.meter_cents += int(e.get("display_cents") or 0)
        elif kind == "linked_wager":
            self.pool = str(e.get("pool") or "") or None
            self.playable = bool(e.get("playable")) if e.get("linked", True) else None

    # ---------------------------------------------------------------- what the page shows
    def stale(self, now_ms: int, stale_s: float) -> bool:
        return self.seq > 0 and now_ms - self.seen_ms > stale_s * 1000

    def to_json(self, now_ms: int, stale_s: float) -> dict[str, Any]:
        stale = self.stale(now_ms, stale_s)
        if self.link_up is None and self.pool is None:
            link = "not linked"
        elif self.link_up is False:
            link = "link down" + (f": {self.link_detail}" if self.link_detail else "")
        elif self.playable is False:
            link = "linked wager unplayable"
        else:
            link = "linked, playable"
        return {
            "table": self.table,
            "section": self.section,
            "seq": self.seq,
            "ts": self.ts_ms,
            "seen": self.seen_ms,
            "asset": self.asset,
            "state": self.state or "unknown",
            "words": state_words(self.state) if self.seq else "nothing shipped yet",
            "round": self.round_id,
            "wagers": list(self.wager_positions),
            "wager_cents": self.wager_cents,
            "wager_words": (
                f"{len(self.wager_positions)} wager(s), {money(self.wager_cents)}"
                if self.wager_positions
                else "no wagers"
            ),
            "level": self.level,
            "meter_cents": self.meter_cents,
            "pool": self.pool,
            "playable": self.playable,
            "link_up": self.link_up,
            "link": link,
            "pending": [
                {
                    **p,
                    "words": f"area {p['position']}: {line_words(p['line'])}, "
                    + ("amount not locked yet" if p["cents"] is None else money(p["cents"])),
                }
                for p in self.pending
            ],
            "fault": self.fault,
            "training": self.training,
            "stale": stale,
        }


def alarms_of(tile: Tile, now_ms: int, stale_s: float) -> list[dict[str, Any]]:
    """The alarms a tile raises now, each with a key that names its incident (an
    acknowledgement holds for that incident only)."""
    out: list[dict[str, Any]] = []
    t = tile.table
    for p in tile.pending:
        amount = "amount not locked yet" if p["cents"] is None else money(p["cents"])
        out.append(
            {
                "key": f"hit:{t}:{p['round']}:{p['position']}",
                "kind": "hit", "table": t, "cents": p["cents"],
                "words": f"{t}: jackpot pending validation, area {p['position']}, "
                f"{line_words(p['line'])}, {amount}",
                "since": tile.ts_ms,
            }
        )  # fmt: skip
    if tile.fault is not None:
        f = tile.fault
        detail = f" ({f['detail']})" if f["detail"] else ""
        out.append(
            {
                "key": f"fault:{t}:{tile.fault_seq}", "kind": "fault", "table": t,
                "words": f"{t}: fault {f['code']}: {f['words']}{detail}", "since": tile.ts_ms,
            }
        )  # fmt: skip
    if tile.link_up is False:
        why = tile.link_detail or "the link controller is out of reach"
        out.append(
            {
                "key": f"link:{t}:{tile.link_seq}", "kind": "link", "table": t,
                "words": f"{t}: linked wager unplayable: {why}", "since": tile.ts_ms,
            }
        )  # fmt: skip
    if tile.stale(now_ms, stale_s) and tile.state != "Closed":
        out.append(
            {
                "key": f"offline:{t}:{tile.seq}", "kind": "offline", "table": t,
                "words": f"{t}: offline: nothing shipped within {stale_s:g} s"
                f" (last entry seq {tile.seq})",
                "since": tile.seen_ms,
            }
        )  # fmt: skip
    return out
