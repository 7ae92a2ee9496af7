"""A linked progressive across tables (NY 5321.18(b), NJ 13:69E-1.39B): the pool's meter grows
from every table's contributions, at the pool's configured rate, and is paid from by the hits the
link controller locks; its journal, and every table's, account for it to the cent. Real
nats-server, the link controller in its own process, real journals.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import (
    JACKPOT,
    LinkController,
    LinkedTable,
    NatsServer,
    controller_toml,
    wait_for,
)

from controller.journal.audit import connect_read_only, verify
from controller.link.service import PoolReplayer
from fsm.round.meters import UNIT

TABLES = {"T1": 70001, "T2": 70002, "T3": 70003}


def journal(db: Path) -> list[tuple[int, str, dict]]:  # type: ignore[type-arg]
    conn = connect_read_only(db)
    try:
        rows = conn.execute("SELECT seq, type, data FROM journal ORDER BY seq").fetchall()
    finally:
        conn.close()
    return [(seq, t, json.loads(d)) for seq, t, d in rows]


def effects(db: Path, etype: str) -> list[dict]:  # type: ignore[type-arg]
    return [e for _, _, d in journal(db) for e in d.get("effects", []) if e["type"] == etype]


def start_linked(
    tmp_path: Path, nats: NatsServer, controllers: list, tables: list  # type: ignore[type-arg]
) -> tuple[LinkController, list[LinkedTable]]:
    ctl = LinkController(controller_toml(tmp_path / "link.toml", nats.url, TABLES))
    ctl.start()
    controllers.append(ctl)
    made = [LinkedTable(tmp_path, tid, asset, nats.url) for tid, asset in TABLES.items()]
    for t in made:
        t.start()
        tables.append(t)
    for t in made:
        wait_for(lambda t=t: not t.link_down(), 15, what=f"{t.config.table.id} confirmed")
        t.open()
    return ctl, made


def test_pool_meter_equals_contributions_less_payouts_in_every_journal(
    tmp_path: Path, nats: NatsServer, controllers: list, tables: list  # type: ignore[type-arg]
) -> None:
    """NY 5321.18(b): the controller calculates the jackpot from the configured rate and keeps
    the meters current; the pool's meter = initial + contributions - payouts + the reset's
    funding, the same to the cent in the controller's journal and in the tables' journals."""
    ctl, made = start_linked(tmp_path, nats, controllers, tables)
    rounds = 3
    for n in range(rounds):
        for i, t in enumerate(made):
            positions = (1, 2, 3)[: i + 1]
            lines: dict[int, str | None] = dict.fromkeys(positions)
            if n == 1 and i == 0:
                lines[1] = JACKPOT
            t.play(positions, lines)
    # every table's contributions reached the pool: its KV value names each table's head
    pool_db = tmp_path / "pool.db"
    for t in made:
        wait_for(
            lambda t=t: (t.link.pool or {}).get("tables", {}).get(t.config.table.id, 0)
            >= t.link.status.need_seq,
            10,
            what="the pool holds every contribution",
        )
    ctl.stop()
    contributed = 0
    paid = 0
    for t in made:
        for mv in effects(t.db, "meter_movement"):
            if mv["kind"] == "contribution":
                contributed += mv["wagered_cents"] * (2100 + 500) * UNIT // 10_000
        paid += sum(p["cents"] for p in effects(t.db, "pay") if p["from"] == "meter")
    pool_contributions = sum(e["units"] for e in effects(pool_db, "pool_contribution"))
    locks = effects(pool_db, "hit_locked")
    assert pool_contributions == contributed
    assert sum(h["cents"] for h in locks) == paid
    assert paid > 0 and len(locks) == 1
    state = json.loads(
        connect_read_only(pool_db).execute("SELECT snapshot FROM state").fetchone()[0]
    )
    m = state["meters"]
    held = m["display"] + m["overflow"] + m["reserve"]
    assert held == 100_000 * UNIT + contributed - paid * UNIT + m["house_funded"]
    report = verify(pool_db, PoolReplayer)
    assert report.ok, report.problems
    for t in made:
        assert verify(t.db).ok
