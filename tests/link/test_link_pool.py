"""A linked progressive across tables (NY 5321.18(b), NJ 13:69E-1.39B): the pool's meter grows
from every table's contributions, at the pool's configured rate, and is paid from by the hits the
link controller locks; its journal, and every table's, account for it to the cent. Real
nats-server, the link controller (its own process where it is killed), real journals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from link_support import (
    JACKPOT,
    InProcessController,
    LinkController,
    LinkedTable,
    NatsServer,
    controller_toml,
    effects,
    journal,
    wait_for,
)

from controller.journal.audit import connect_read_only, verify
from controller.link.service import PoolReplayer
from fsm.round.meters import UNIT

TABLES = {"T1": 70001, "T2": 70002, "T3": 70003}


def start_linked(
    tmp_path: Path,
    nats: NatsServer,
    controllers: list,  # type: ignore[type-arg]
    tables: list,  # type: ignore[type-arg]
    process: bool = False,
) -> tuple[Any, list[LinkedTable]]:
    """The controller (its own process when the test kills it) and three linked tables."""
    make = LinkController if process else InProcessController
    ctl = make(controller_toml(tmp_path / "link.toml", nats.url, TABLES))
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
    tmp_path: Path,
    nats: NatsServer,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
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
            lambda t=t: (
                (t.link.pool or {}).get("tables", {}).get(t.config.table.id, 0)
                >= t.link.status.need_seq
            ),
            10,
            what="the pool holds every contribution",
        )
    # what the table's display shows of the linked level is the pool's value, not its own meter
    from controller.link.table_link import PoolOverlay
    from controller.web.view import frame

    for t in made:
        overlay = PoolOverlay(t.owner, lambda t=t: t.link)
        shown = overlay.public.meters["progressive"]
        assert shown["display_cents"] == t.link.pool["display_cents"]
        page = frame(overlay.public, [], None, mode="pit")  # the table's page
        assert page["link"]["pool"] == "POOL1" and page["link"]["down"] is False
        assert page["meters"][0]["display_cents"] == t.link.pool["display_cents"]
        assert t.owner.public.meters["progressive"]["display_cents"] != shown["display_cents"]
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


def held(reader: LinkedTable, t: LinkedTable) -> bool:
    """The pool's value ``reader`` shows holds ``t``'s stream up to its last contribution."""
    tables = (reader.link.pool or {}).get("tables", {})
    return bool(tables.get(t.config.table.id, 0) >= t.link.status.need_seq)


def chip_refused(t: LinkedTable, position: int) -> str | None:
    from fsm.round.events import Event

    receipt = t.owner.post_tracked(Event("chip_detected", {"position": position}))
    assert receipt.wait(10)
    rejected = [e for e in receipt.effects if e.TYPE == "rejected"]
    return None if not rejected else str(rejected[0].to_json()["cause"])


def test_link_controller_then_nats_lost_mid_round_linked_wager_unplayable_nothing_lost(
    tmp_path: Path,
    nats: NatsServer,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """NY 5321.18(c), NJ 13:69E-1.39B(d),(e),(h): when the controller is inoperable or a table
    loses communication with it, the linked wager is unplayable (acceptors not armed, journaled,
    in the published snapshot) while the base game goes on; nothing contributed is lost, and play
    resumes once the controller confirms it holds every contribution."""
    ctl, made = start_linked(tmp_path, nats, controllers, tables, process=True)
    for t in made:
        t.play((1, 2))
    for t in made:  # mid-round: chips are lit
        t.bet(3)
    ctl.kill()
    for t in made:
        wait_for(t.link_down, 10, what=f"{t.config.table.id} to see the controller lost")
        assert t.devices.armed is False
        assert chip_refused(t, 4) == "not_armed"
        t.to_settlement()  # the round in play goes on; its contribution waits in the stream
        t.settle({3: None})
    nats.kill()
    for t in made:  # the base game goes on without the linked wager
        wait_for(lambda t=t: t.state in ("Open_Betting", "Open_Shuffling"), what="round end")
        t.bet()
        assert chip_refused(t, 1) == "not_armed"
        t.to_settlement()
        t.settle({})
        wait_for(lambda t=t: t.state in ("Open_Betting", "Open_Shuffling"), what="round end")
    downs = [d for _, typ, d in journal(made[0].db) if typ == "link_state" and not d["up"]]
    assert downs and "no confirmation" in downs[-1]["detail"]
    nats.start()
    ctl.start()
    for t in made:
        wait_for(
            lambda t=t: not t.link_down(),
            30,
            what=f"{t.config.table.id} resumed ({t.link.status}; {ctl.log.read_text()[-600:]})",
        )
        t.bet()
        assert t.devices.armed is True
        assert chip_refused(t, 1) is None
    ups = [d for _, typ, d in journal(made[0].db) if typ == "link_state" and d["up"]]
    assert ups[-1]["confirmed_seq"] >= made[0].link.status.need_seq
    ctl.stop()
    contributed = sum(
        mv["wagered_cents"] * 2600
        for t in made
        for mv in effects(t.db, "meter_movement")
        if mv["kind"] == "contribution"
    )
    assert sum(e["units"] for e in effects(tmp_path / "pool.db", "pool_contribution")) == (
        contributed
    )


def test_two_hits_at_two_tables_paid_in_recorded_order_second_from_reset(
    tmp_path: Path,
    nats: NatsServer,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """NY 5321.18(b)(3)(iii): near-simultaneous wins are recorded in order; the first is paid
    from the meter at that moment (NY 5324.41(k)(6)), the next from the value the reset left."""
    _ctl, made = start_linked(tmp_path, nats, controllers, tables)
    made[2].play((1, 2, 3, 4, 5, 6))  # grow the pool above its reset value
    a, b = made[0], made[1]
    for t in (a, b):
        t.bet(1)
        t.to_settlement()
    for t in made:
        wait_for(lambda t=t: held(a, t), what="the pool holds every contribution")
    meter = a.link.pool["display_cents"]
    assert meter > 100_000
    from fsm.round.events import Event

    # both hits within one polling window of the controller
    ra = a.owner.post_tracked(Event("progressive_outcome", {"position": 1, "line": JACKPOT}))
    rb = b.owner.post_tracked(Event("progressive_outcome", {"position": 1, "line": JACKPOT}))
    assert ra.wait(10) and rb.wait(10)
    for t in (a, b):
        t.validate_hits()
    locks = effects(tmp_path / "pool.db", "hit_locked")
    assert [h["order"] for h in locks] == [1, 2]
    first, second = locks
    assert first["meter_cents"] == meter and first["cents"] == meter
    assert second["meter_cents"] == 100_000 and second["cents"] == 100_000
    for t in (a, b):
        (locked,) = [d for _, typ, d in journal(t.db) if typ == "link_hit_locked"]
        mine = next(h for h in locks if h["table"] == t.config.table.id)
        assert (locked["order"], locked["cents"]) == (mine["order"], mine["cents"])
        (pay,) = [p for p in effects(t.db, "pay") if p["from"] == "meter"]
        assert pay["cents"] == mine["cents"]
    seqs = {h["table"]: n for n, (_, typ, h) in enumerate(journal(tmp_path / "pool.db"))
            if typ == "hit_locked"}  # fmt: skip
    assert sorted(seqs, key=seqs.__getitem__) == [h["table"] for h in locks]


def test_contributions_made_before_a_table_was_linked_are_not_the_pools(
    tmp_path: Path,
    nats: NatsServer,
    controllers: list,
    tables: list,  # type: ignore[type-arg]
) -> None:
    """The pool grows only from wagers made while the table was linked: a table's history from
    before (its own progressive) is shipped and chain-checked, never counted."""
    ctl = InProcessController(controller_toml(tmp_path / "link.toml", nats.url, {"T1": 70001}))
    ctl.start()
    controllers.append(ctl)
    t = LinkedTable(tmp_path, "T1", 70001, nats.url)
    t.owner.start()  # not linked yet: no link attachment
    t.open()
    t.play((1, 2))
    t.owner.stop()
    t = LinkedTable(tmp_path, "T1", 70001, nats.url)
    t.start()
    tables.append(t)
    wait_for(lambda: not t.link_down(), 15, what="T1 confirmed")
    t.play((3,))
    wait_for(lambda: held(t, t), what="the pool holds the linked round")
    ctl.stop()
    (linked_seq,) = [s for s, typ, _ in journal(t.db) if typ == "link_state"][:1]
    after = [
        mv["wagered_cents"] * 2600
        for s, _, d in journal(t.db)
        if s > linked_seq
        for mv in d.get("effects", [])
        if mv["type"] == "meter_movement" and mv["kind"] == "contribution"
    ]
    pool = [e["units"] for e in effects(tmp_path / "pool.db", "pool_contribution")]
    assert pool == after and len(after) == 1
    assert len(effects(t.db, "meter_movement")) > 1  # the unlinked round did contribute locally
