"""Voiding a hit of the linked level (docs/link.md): the supervisor's corrected line (NY
5324.41(k)(3)(ii)) is the pool's money, so the link controller locks it (its order recorded, NY
5321.18(b)(3)(iii)) after putting the voided lock back (NJ 13:69D-1.52(f)), and a supervisor
validates it ((k)(3)(iii)); a void that reaches the controller before the lock request it raced
makes the controller refuse that request. The pool's meter is its contributions less what the
tables paid, to the cent, in the controller's journal and the table's. Real nats-server, the
link controller, the real table stack and journals.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from link_support import (
    JACKPOT,
    SUP,
    InProcessController,
    LinkedTable,
    NatsServer,
    controller_toml,
    effects,
    journal,
    table_key,
    wait_for,
)

from controller.journal.audit import connect_read_only, verify
from controller.link.keys import load_table_key
from controller.link.messages import hit_subject
from controller.link.service import PoolReplayer
from fsm.round.meters import UNIT

NATURAL = "natural-royal-flush"  # 10% of the meter; the jackpot line is 100%
TABLES = {"T1": 70001}
RESET = 100_000


def start(
    tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any]
) -> tuple[InProcessController, LinkedTable]:
    ctl = InProcessController(controller_toml(tmp_path / "link.toml", nats.url, TABLES))
    ctl.start()
    controllers.append(ctl)
    t = LinkedTable(tmp_path, "T1", TABLES["T1"], nats.url)
    t.start()
    tables.append(t)
    wait_for(lambda: not t.link_down(), 15, what="T1 confirmed")
    t.open()
    t.play((1, 2, 3, 4, 5, 6))  # the pool grows above its reset value
    return ctl, t


def holds(t: LinkedTable, seq: int) -> bool:
    """The pool's value the table sees says the controller holds its stream up to ``seq``."""
    return bool((t.link.pool or {}).get("tables", {}).get("T1", 0) >= seq)


def contribution_seq(t: LinkedTable) -> int:
    """The seq of the table's last entry carrying a contribution (its journal, committed)."""
    return max(
        s
        for s, _, d in journal(t.db)
        for e in d.get("effects", [])
        if e["type"] == "meter_movement" and e["kind"] == "contribution"
    )


def void_seq(t: LinkedTable) -> int:
    return max(s for s, typ, _ in journal(t.db) if typ == "hit_voided")


def pending(t: LinkedTable) -> list[dict[str, Any]]:
    return list((t.view.get("round") or {}).get("pending", ()))


def check_books(tmp_path: Path, t: LinkedTable) -> int:
    """The pool's meter = initial + contributions - what the tables paid from it + the house's
    funding of resets, to the sub-unit; every lock not voided is a payment at the table; both
    journals verify (the pool's replayed through its rules). Returns the cents the table paid."""
    pool_db = tmp_path / "pool.db"
    contributed = sum(
        mv["wagered_cents"] * (2100 + 500) * UNIT // 10_000
        for mv in effects(t.db, "meter_movement")
        if mv["kind"] == "contribution"
    )
    assert sum(e["units"] for e in effects(pool_db, "pool_contribution")) == contributed
    paid = int(sum(p["cents"] for p in effects(t.db, "pay") if p["from"] == "meter"))
    locked = sum(h["cents"] for h in effects(pool_db, "hit_locked"))
    corrected = sum(c["cents"] for c in effects(pool_db, "pool_correction"))
    assert locked - corrected == paid
    conn = connect_read_only(pool_db)
    try:
        m = json.loads(conn.execute("SELECT snapshot FROM state").fetchone()[0])["meters"]
    finally:
        conn.close()
    held = m["display"] + m["overflow"] + m["reserve"]
    assert held == RESET * UNIT + contributed - paid * UNIT + m["house_funded"]
    report = verify(pool_db, PoolReplayer)
    assert report.ok, report.problems
    assert verify(t.db).ok
    return paid


async def _ask(url: str, body: dict[str, Any]) -> dict[str, Any]:
    import nats

    nc = await nats.connect(url)
    try:
        msg = await nc.request(hit_subject("POOL1"), json.dumps(body).encode(), timeout=5)
        reply: dict[str, Any] = json.loads(msg.data)
        return reply
    finally:
        await nc.close()


def stale_request(round_id: int, line: str, where: Path) -> dict[str, Any]:
    """The request the table's link client sends for the hit at position 1 (as a view one
    publication old still shows it), MAC'd with T1's key (its key file in ``where``)."""
    body = {"table": "T1", "asset": TABLES["T1"], "round": round_id, "position": 1,
            "level": "progressive", "line": line, "wager_cents": 100, "seq": 1}  # fmt: skip
    return load_table_key(table_key(where, "T1"), "T1").sign(hit_subject("POOL1"), body)


def test_a_corrected_line_of_a_locked_linked_hit_is_locked_by_the_controller_k3ii(
    tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any]
) -> None:
    """NY 5324.41(k)(3)(ii): the pool locked the jackpot line (100% of its meter); the
    supervisor voids it and names the right, lower line (10% of the meter). The voided lock goes
    back on the pool's meter (once, whichever of the table's stream and the corrected line's
    request reaches the controller first), the controller locks the corrected line from the
    meter as it then stands, in the recorded order, and the table pays that amount once a
    supervisor validates it; its own meter of the level is not touched."""
    ctl, t = start(tmp_path, nats, controllers, tables)
    t.bet(1)
    t.to_settlement()
    need = contribution_seq(t)
    wait_for(lambda: holds(t, need), what="the pool holds the round's contribution")
    t.settle({1: JACKPOT})
    wait_for(lambda: "locked_cents" in pending(t)[0], what="the jackpot's lock")
    jackpot = int(pending(t)[0]["locked_cents"])
    own = t.owner.public.meters["progressive"]["display_cents"]
    round_id = int(t.owner.public.round_id)
    effects_ = t.ev("hit_voided", position=1, supervisor=SUP, reason="no pair", line=NATURAL)
    assert not [e for e in effects_ if e.TYPE == "pay"]  # not paid from the table's meter
    assert pending(t)[0]["corrects"] == JACKPOT and t.state == "Open_JackpotPending"
    t.validate_hits()  # waits for the controller's lock of the corrected line
    wait_for(lambda: t.state in ("Open_Betting", "Open_Shuffling"), what="round end")
    wait_for(lambda: holds(t, void_seq(t)), what="the controller holds the table's void")
    refused = asyncio.run(_ask(nats.url, stale_request(round_id, JACKPOT, tmp_path)))
    assert refused["ok"] is False and "voided" in refused["reason"]
    ctl.stop()

    pool_db = tmp_path / "pool.db"
    first, second = effects(pool_db, "hit_locked")
    assert (first["line"], first["cents"], first["order"]) == (JACKPOT, jackpot, 1)
    assert (second["line"], second["corrects"], second["order"]) == (NATURAL, JACKPOT, 2)
    (correction,) = effects(pool_db, "pool_correction")
    assert correction["cents"] == jackpot
    # the corrected line paid 10% of the meter with the voided lock back on it
    assert second["meter_cents"] == RESET + jackpot
    assert second["cents"] == (RESET + jackpot) // 10
    locks = [(d["line"], d["cents"]) for _, typ, d in journal(t.db) if typ == "link_hit_locked"]
    assert locks == [(JACKPOT, jackpot), (NATURAL, second["cents"])]
    (pay,) = [p for p in effects(t.db, "pay") if p["from"] == "meter"]
    assert (pay["line"], pay["cents"], pay["voided_line"]) == (NATURAL, second["cents"], JACKPOT)
    assert pay["supervisor"] == SUP
    assert t.owner.public.meters["progressive"]["display_cents"] == own
    assert check_books(tmp_path, t) == second["cents"]


def test_a_void_that_reaches_the_controller_before_its_lock_request_refuses_it(
    tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any]
) -> None:
    """A hit voided at the table while its lock request was still on its way (here: the
    controller away while the supervisor voids it): the controller consumes the table's void
    before any lock, records it (``pool_hit_voided``, the table's seq named), and refuses the
    request when it comes, so the pool never pays a hit no one will be paid; its meter is
    untouched."""
    ctl, t = start(tmp_path, nats, controllers, tables)
    t.bet(1)
    t.to_settlement()
    need = contribution_seq(t)
    wait_for(lambda: holds(t, need), what="the pool holds the round's contribution")
    ctl.stop()  # the lock requests go unanswered
    t.settle({1: JACKPOT})
    round_id = int(t.owner.public.round_id)
    t.ev("hit_voided", position=1, supervisor=SUP, reason="misread")
    wait_for(lambda: t.state in ("Open_Betting", "Open_Shuffling"), what="round end")
    seq = void_seq(t)
    ctl.start()
    wait_for(lambda: holds(t, seq), 20, what="the controller consumed the table's void")
    refused = asyncio.run(_ask(nats.url, stale_request(round_id, JACKPOT, tmp_path)))
    assert refused["ok"] is False and "voided" in refused["reason"]
    ctl.stop()

    pool_db = tmp_path / "pool.db"
    (noted,) = effects(pool_db, "pool_hit_voided")
    assert (noted["seq"], noted["round_id"], noted["line"]) == (seq, round_id, JACKPOT)
    assert effects(pool_db, "hit_locked") == [] and effects(pool_db, "pool_correction") == []
    assert check_books(tmp_path, t) == 0


def test_a_corrected_line_of_an_unlocked_linked_hit_refuses_the_voided_lines_lock(
    tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any]
) -> None:
    """The supervisor corrects the line before the pool locked the hit (the controller away):
    once it is back, the controller records the voided line as never to be locked and locks
    the corrected line from its meter as it stands (10%); the voided line's request is
    refused."""
    ctl, t = start(tmp_path, nats, controllers, tables)
    t.bet(1)
    t.to_settlement()
    need = contribution_seq(t)
    wait_for(lambda: holds(t, need), what="the pool holds the round's contribution")
    meter = int(t.link.pool["display_cents"])
    ctl.stop()
    t.settle({1: JACKPOT})
    round_id = int(t.owner.public.round_id)
    t.ev("hit_voided", position=1, supervisor=SUP, reason="no pair", line=NATURAL)
    ctl.start()
    t.validate_hits(20)
    wait_for(lambda: t.state in ("Open_Betting", "Open_Shuffling"), what="round end")
    wait_for(lambda: holds(t, void_seq(t)), what="the controller holds the table's void")
    refused = asyncio.run(_ask(nats.url, stale_request(round_id, JACKPOT, tmp_path)))
    assert refused["ok"] is False and "voided" in refused["reason"]
    ctl.stop()

    pool_db = tmp_path / "pool.db"
    (noted,) = effects(pool_db, "pool_hit_voided")
    assert noted["line"] == JACKPOT
    (locked,) = effects(pool_db, "hit_locked")
    assert (locked["line"], locked["meter_cents"], locked["cents"]) == (NATURAL, meter, meter // 10)
    assert effects(pool_db, "pool_correction") == []
    assert check_books(tmp_path, t) == meter // 10
