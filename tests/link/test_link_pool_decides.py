"""The pool decides a linked hit at the pool's meter (issue 22, the audit's probes): the table
sends every line the hand makes at the linked level, the pool weighs them at its meter when it
locks (NY 5324.41(g)(8): the hand type paying the most, never below a fixed line it also makes;
(k)(6): the meter at the time of payment; (k)(5): what comes off the meter) and the table pays
exactly what was locked. A linked level has one meter, the pool's: the table grows none of its
own while linked, and unlinking starts its own level from its configured amounts. Every table of
a pool agrees on the wager, the pay table, the level and the $5 reading, or is refused.

Pure pool and round first, then end to end on a real nats-server with the link controller."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from link_support import (
    JACKPOT,
    InProcessController,
    LinkedTable,
    NatsServer,
    controller_toml,
    effects,
    journal,
    wait_for,
)

from controller.journal.audit import verify
from controller.link.service import PoolReplayer
from fsm.round.config import ProgressiveLevel
from fsm.round.events import Event
from fsm.round.meters import UNIT
from fsm.round.pool import Pool, PoolParams
from fsm.rules.progressive import ProgressiveTable

NATURAL = "natural-royal-flush"  # 10% of the meter
FIVE_ACES = "five-aces"  # 10% of the meter
ROYAL = "royal-flush"  # a fixed $100 for $1, off the meter ((k)(5): $50 and more)
QUADS = "four-of-a-kind"  # a fixed $20 for $1, from the chip tray ((k)(5): under $50)
PAYTABLE = ProgressiveTable.load("ny-5324-41-k4")


def pool(reset: int, initial: int | None = None) -> Pool:
    level = ProgressiveLevel("progressive", initial or reset, reset, 2100, 500)
    params = PoolParams("P1", level, 100, "ny-5324-41-k4", {"T1": 1})
    return Pool(params, PAYTABLE)


def request(round_id: int, line: str, lines: list[str] | None = None) -> dict[str, Any]:
    return {"table": "T1", "asset": 1, "round": round_id, "position": 2, "line": line,
            "wager_cents": 100, **({} if lines is None else {"lines": lines})}  # fmt: skip


# --- the pool's rules, pure


def test_a_natural_royal_after_a_jackpot_locks_the_royal_flush_line_g8() -> None:
    """The audit: with the pool reset to $500 after a 100% hit, a natural royal flush was locked
    at 10% of the meter ($50) where the royal-flush line the same hand makes pays $100. NY
    5324.41(g)(8): the hand is paid as the type yielding the most; the pool weighs it at its
    meter (k)(6) and locks the royal-flush line, which (k)(5) takes off the meter."""
    p = pool(50_000)
    p.step("hit_locked", request(1, JACKPOT))  # the 100% hit: the pool resets to $500
    assert p.display_cents == 50_000
    (locked,) = p.step("hit_locked", request(2, NATURAL, [NATURAL, ROYAL]))
    assert (locked["paid_line"], locked["cents"], locked["from"]) == (ROYAL, 10_000, "meter")
    assert locked["line"] == NATURAL and locked["meter_cents"] == 50_000
    assert p.display_cents == 50_000  # deducted, then reset to $500
    assert p.meters.balance_error() == 0


def test_a_request_naming_no_lines_is_weighed_on_the_lines_its_line_implies_g8() -> None:
    """A request without the hand's lines is still never paid below the fixed line its line
    implies (a natural royal flush is a royal flush)."""
    p = pool(50_000)
    (locked,) = p.step("hit_locked", request(1, NATURAL))
    assert (locked["paid_line"], locked["cents"]) == (ROYAL, 10_000)


def test_five_aces_at_a_low_pool_meter_is_four_of_a_kind_from_the_chip_tray_k5() -> None:
    """The audit: five aces at a $150 meter was locked at $15 where four of a kind pays $20. The
    pool locks four of a kind, a fixed $20 that (k)(5) pays from the chip tray: the pool's meter
    is neither deducted nor reset, and a void of that lock puts nothing back on it."""
    p = pool(15_000)
    (locked,) = p.step("hit_locked", request(1, FIVE_ACES, [FIVE_ACES, QUADS]))
    assert (locked["paid_line"], locked["cents"], locked["from"]) == (QUADS, 2_000, "chip_tray")
    assert p.display_cents == 15_000 and p.meters.deducted == 0
    voided = {"seq": 9, "round_id": 1, "kind": "hit_voided", "position": 2, "line": FIVE_ACES,
              "supervisor": "S", "reason": "misread"}  # fmt: skip
    part = {"table": "T1", "last_seq": 9, "last_hash": "h", "joined": True, "movements": [voided]}
    (undone,) = p.step("consumed", {"tables": [part]})
    assert undone["type"] == "pool_hit_voided" and p.display_cents == 15_000


def test_the_pool_refuses_lines_that_are_not_the_pay_tables_or_miss_the_hits_line() -> None:
    from fsm.round.pool import PoolError

    p = pool(50_000)
    for lines in (["no-such-line", NATURAL], [ROYAL], [], "royal-flush"):
        with pytest.raises(PoolError, match="lines"):
            p.check_hit(request(1, NATURAL, lines))  # type: ignore[arg-type]


def test_every_table_of_a_pool_agrees_on_wager_paytable_level_and_five_dollar_reading() -> None:
    """A table whose wager, pay table, level (rate, hidden rate, reset, limit) or $5 reading of
    NY 5324.41(k)(4)(i) is not the pool's is refused, the first difference named."""
    p = pool(100_000)
    terms = p.params.terms()
    assert p.params.terms_refusal(terms) is None
    assert "did not say" in str(p.params.terms_refusal(None))
    five = {**terms, "five_dollar_meter_share": "share-not-multiplied"}
    assert "five_dollar_meter_share" in str(p.params.terms_refusal(five))
    rate = {**terms, "level": {**terms["level"], "rate_bp": 2000}}
    assert "level.rate_bp: the table's 2000, the pool's 2100" in str(p.params.terms_refusal(rate))
    assert "wager_cents" in str(p.params.terms_refusal({**terms, "wager_cents": 500}))


def test_the_pool_pays_a_five_dollar_share_by_its_recorded_reading_k4i() -> None:
    """The pool multiplied every $5 share by five whatever reading the pool was given; now its
    recorded reading decides (``share-not-multiplied`` only on a written ruling)."""
    level = ProgressiveLevel("progressive", 100_000, 100_000, 2100, 500)
    params = PoolParams("P1", level, 500, "ny-5324-41-k4", {"T1": 1}, "share-not-multiplied")
    p = Pool(params, PAYTABLE)
    req = {**request(1, NATURAL, [NATURAL, ROYAL]), "wager_cents": 500}
    (locked,) = p.step("hit_locked", req)
    assert (locked["paid_line"], locked["cents"]) == (ROYAL, 50_000)  # not 10% x 5 = $500
    assert PoolParams.from_json(params.to_json()) == params


# --- the round, pure

JACKPOT_AREA = 2


def lower_own_meter(ev: Any, to_cents: int, now_cents: int = 100_000) -> None:
    """A supervised correction in Maintenance takes the table's own meter down to ``to_cents``
    (how the audit's table came to hold $150 of its own)."""
    ev("maintenance_entered", supervisor="trainer")
    ev("meter_corrected", level="progressive", meter="display", delta_cents=to_cents - now_cents,
       reason="the audit's probe: a low local meter", supervisor="trainer")  # fmt: skip
    ev("maintenance_exited", supervisor="trainer")


def round_machine(own: int | None = None, shoe: bool = False) -> Any:
    import tomllib

    from controller.config import SIMULATED_TABLE, parse_config
    from fsm.round.machine import RoundMachine

    data: dict[str, Any] = tomllib.loads(SIMULATED_TABLE.read_text())
    data["game"].update(card_reading_shoe=shoe, side_wager={"offered": False})
    m = RoundMachine(parse_config(data).game)
    clock = [1000]

    def ev(etype: str, **d: Any) -> list[Any]:
        clock[0] += 10
        out: list[Any] = list(m.step(Event(etype, d), clock[0]))
        for e in list(out):
            if e.TYPE == "post":
                inner = e.event  # type: ignore[attr-defined]
                out += ev(inner.type, **dict(inner.data))
            if e.TYPE == "draw_rng":
                out += ev("rng_drawn", value=3)
        refused = [e.to_json() for e in out if e.TYPE == "rejected"]
        assert not refused, refused
        return out

    if own is not None:
        lower_own_meter(ev, own)
    ev("table_opened", supervisor="trainer")
    ev("shuffle_complete", count=53)
    return m, ev


def play_to_outcome(ev: Any, line: str | None) -> list[Any]:
    ev("chip_detected", position=JACKPOT_AREA)
    ev("lockout_pressed")
    ev("chips_confirmed")
    ev("rng_activated")
    ev("dealt", remaining=4)
    ev("play_complete")
    return ev("progressive_outcome", position=JACKPOT_AREA, line=line)


def next_round(m: Any, ev: Any) -> None:
    if m.state == "Open_Shuffling":
        ev("shuffle_complete", count=53)


LINK = {"pool": "P1", "level": "progressive"}


def test_a_linked_five_aces_at_a_low_local_meter_waits_for_the_pools_lock_k6() -> None:
    """The audit: with the table's own meter at $150, a linked five aces was paid four of a kind
    from the chip tray and no lock was asked of the pool. The hit now waits for the pool, with
    every line the hand makes, and is paid the pool's line and amount."""
    m, ev = round_machine(own=15_000)
    ev("link_state", up=True, confirmed_seq=1, **LINK)
    out = play_to_outcome(ev, FIVE_ACES)
    assert not [e for e in out if e.TYPE == "pay"]  # nothing from the chip tray
    assert m.state == "Open_JackpotPending"
    (hit,) = m.snapshot()["round"]["pending"]
    assert hit["lines"] == [FIVE_ACES, QUADS]
    ev("link_hit_locked", position=JACKPOT_AREA, level="progressive", cents=10_025, order=3,
       pool="P1", line=FIVE_ACES, paid_line=FIVE_ACES, paid_from="meter")  # fmt: skip
    (pay,) = [e.to_json() for e in ev("hit_validated", position=JACKPOT_AREA, supervisor="S")
              if e.TYPE == "pay"]  # fmt: skip
    assert (pay["line"], pay["cents"], pay["from"]) == (FIVE_ACES, 10_025, "meter")
    assert m.meters()["progressive"]["display_cents"] == 15_000  # the pool's meter was paid


def test_a_card_reading_shoes_hand_sends_the_pool_every_line_its_cards_claim_g8() -> None:
    """With a card-reading shoe the hand's facts are its seven cards: the pending hit carries
    every line of the linked level they claim, and the table pays the pool's choice."""
    m, ev = round_machine(shoe=True)
    ev("link_state", up=True, confirmed_seq=1, **LINK)
    ev("chip_detected", position=JACKPOT_AREA)
    ev("lockout_pressed")
    ev("chips_confirmed")
    ev("rng_activated")
    hands = {
        "dealer": ["2c", "3d", "4h", "5s", "7c", "8d", "9h"],
        "1": ["2h", "2s", "5c", "8c", "Tc", "Jd", "Qs"],
        "2": ["Ah", "Kh", "Qh", "Jh", "Th", "2d", "3c"],  # a natural royal flush
        "3": ["3h", "4c", "6c", "9c", "Td", "Qd", "Ks"],
        "4": ["4d", "5d", "6d", "9d", "Jc", "Kd", "As"],
        "5": ["6h", "7h", "8h", "Ts", "Js", "Qc", "Kc"],
        "6": ["3s", "4s", "6s", "7s", "9s", "Ad", "Ac"],
    }
    ev("dealt", remaining=4, hands=hands)
    out = ev("play_complete")
    assert not [e for e in out if e.TYPE == "pay"] and m.state == "Open_JackpotPending"
    (hit,) = m.snapshot()["round"]["pending"]
    assert {NATURAL, ROYAL} <= set(hit["lines"])
    ev("link_hit_locked", position=JACKPOT_AREA, level="progressive", cents=10_000, order=1,
       pool="P1", line=hit["line"], paid_line=ROYAL, paid_from="meter")  # fmt: skip
    (pay,) = [e.to_json() for e in ev("hit_validated", position=JACKPOT_AREA, supervisor="S")
              if e.TYPE == "pay"]  # fmt: skip
    assert (pay["line"], pay["cents"], pay["from"]) == (ROYAL, 10_000, "meter")


def test_a_lock_of_four_of_a_kind_is_paid_from_the_chip_tray_as_locked_k5() -> None:
    m, ev = round_machine()
    ev("link_state", up=True, confirmed_seq=1, **LINK)
    play_to_outcome(ev, FIVE_ACES)
    royal = {"position": JACKPOT_AREA, "level": "progressive", "cents": 50_000, "order": 1,
             "pool": "P1", "line": FIVE_ACES, "paid_line": ROYAL}  # fmt: skip
    bad = m.step(Event("link_hit_locked", royal), 5000)
    assert [e for e in bad if e.TYPE == "rejected"]  # a line the hand does not make
    ev("link_hit_locked", position=JACKPOT_AREA, level="progressive", cents=2_000, order=1,
       pool="P1", line=FIVE_ACES, paid_line=QUADS, paid_from="chip_tray")  # fmt: skip
    (pay,) = [e.to_json() for e in ev("hit_validated", position=JACKPOT_AREA, supervisor="S")
              if e.TYPE == "pay"]  # fmt: skip
    assert (pay["line"], pay["cents"], pay["from"]) == (QUADS, 2_000, "chip_tray")


def test_a_linked_level_grows_no_meter_of_the_tables_own() -> None:
    """One meter, the pool's: a linked table's contributions are counted (wagers, what they
    cost) and go to the pool, never onto the table's own meter of that level."""
    m, ev = round_machine()
    ev("link_state", up=True, confirmed_seq=1, **LINK)
    play_to_outcome(ev, None)
    meters = m.meters()["progressive"]
    assert meters["display_cents"] == 100_000 and meters["reserve_cents"] == 0
    assert meters["progressive_in"] == 1 and meters["wagered_cents"] == 100


def test_unlinking_then_a_jackpot_pays_from_the_tables_own_configured_amounts() -> None:
    """The audit: after unlinking, a jackpot of 500,063 cents was paid from money already in
    the pool. Unlinking starts the table's own level from its configured amounts (a recorded
    correction when it held anything else), and its next jackpot pays from that."""
    m, ev = round_machine()
    ev("link_state", up=True, confirmed_seq=1, **LINK)
    for _ in range(3):
        play_to_outcome(ev, None)
        next_round(m, ev)
    ev("link_state", up=True, linked=False, **LINK)
    play_to_outcome(ev, JACKPOT)
    out = ev("hit_validated", position=JACKPOT_AREA, supervisor="S")
    (pay,) = [e.to_json() for e in out if e.TYPE == "pay"]
    # the configured $1,000 and the one contribution made since (21% of $1), nothing more
    assert pay["cents"] == 100_000 + 21 and pay["from"] == "meter"


def test_unlinking_restarts_the_level_from_its_configuration_as_a_recorded_correction() -> None:
    m, ev = round_machine()
    ev("link_state", up=True, confirmed_seq=1, **LINK)
    snap = m.snapshot()
    snap["meters"]["progressive"]["display"] += 12_345 * UNIT  # e.g. an older journal's growth
    snap["meters"]["progressive"]["reserve"] += 77 * UNIT
    snap["meters"]["progressive"]["corrections"] += 12_422 * UNIT
    from fsm.round.machine import RoundMachine

    m2 = RoundMachine.restore(m.config, snap)
    out = m2.step(
        Event("link_state", {"up": True, "linked": False, **LINK}),
        9000,
    )
    moves = [e.to_json() for e in out if e.TYPE == "meter_movement"]
    assert [(x["kind"], x["meter"], x["display_cents"] + x["reserve_cents"]) for x in moves] == [
        ("correction", "display", -12_345),
        ("correction", "reserve", -77),
    ]
    assert "unlinked from pool P1" in moves[0]["reason"]
    assert m2.meters()["progressive"]["display_cents"] == 100_000


# --- end to end: the real link controller on a real nats-server


def pool_toml(tmp_path: Path, url: str, reset: int) -> Path:
    path = controller_toml(tmp_path / "link.toml", url, {"T1": 71001})
    text = path.read_text().replace("initial_cents = 100000", f"initial_cents = {reset}")
    path.write_text(text.replace("reset_cents = 100000", f"reset_cents = {reset}"))
    return path


def start(tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any],
          reset: int, own: int | None = None) -> LinkedTable:  # fmt: skip
    ctl = InProcessController(pool_toml(tmp_path, nats.url, reset))
    ctl.start()
    controllers.append(ctl)
    t = LinkedTable(tmp_path, "T1", 71001, nats.url, game={
        "levels": [{"name": "progressive", "initial_cents": reset, "reset_cents": reset,
                    "rate_bp": 2100, "hidden_rate_bp": 500, "limit_cents": 0}]})  # fmt: skip
    t.start()
    tables.append(t)
    wait_for(lambda: not t.link_down(), 15, what="T1 confirmed")
    if own is not None:
        lower_own_meter(t.ev, own, reset)
    t.open()
    return t


def locks_and_pays(t: LinkedTable, pool_db: Path) -> tuple[list[Any], list[Any]]:
    return effects(pool_db, "hit_locked"), effects(t.db, "pay")


def test_e2e_natural_royal_after_a_jackpot_is_paid_the_royal_flush_line_of_the_pool_g8(
    tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any]
) -> None:
    """Probe 1 with the real link controller: pool reset $500; a jackpot, then a natural royal
    flush: the pool locks the royal-flush line at $100 (not 10% of $500 = $50), the table pays
    exactly that from the meter, its journal names the pool's line."""
    t = start(tmp_path, nats, controllers, tables, reset=50_000)
    t.play((2,), {2: JACKPOT})
    t.play((2,), {2: NATURAL})
    pool_db = tmp_path / "pool.db"
    locks, pays = locks_and_pays(t, pool_db)
    assert [(p["line"], p["cents"], p["from"]) for p in pays][1] == (ROYAL, 10_000, "meter")
    assert [(x["line"], x.get("paid_line"), x["cents"], x.get("from")) for x in locks][1] == (
        NATURAL, ROYAL, 10_000, "meter")  # fmt: skip
    second = [d for _, typ, d in journal(t.db) if typ == "link_hit_locked"][1]
    assert (second["paid_line"], second["paid_from"], second["cents"]) == (ROYAL, "meter", 10_000)
    assert verify(pool_db, PoolReplayer).ok and verify(t.db).ok


def test_e2e_a_table_whose_own_meter_is_low_gets_the_pools_amount_k6(
    tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any]
) -> None:
    """Probe 2: the table's own meter of the linked level is $150 (a supervised correction),
    the pool's $1,000 and more. A linked five aces asks the pool and is paid 10% of the
    pool's meter from it, never four of a kind from the chip tray."""
    t = start(tmp_path, nats, controllers, tables, reset=100_000, own=15_000)
    t.play((2,), {2: FIVE_ACES})
    locks, pays = locks_and_pays(t, tmp_path / "pool.db")
    (pay,) = pays
    assert pay["from"] == "meter", f"paid {pay['line']} from the chip tray, no lock asked"
    (lock,) = locks
    # (k)(6): the meter at payment holds this round's own $1 wager (21% of it), however late
    # the table's stream is: the pool locks once it holds the stream through the request's
    # need_seq (CI once locked before the contribution came: $1,000.00 flat)
    assert lock["meter_cents"] == 100_000 + 100 * 2100 // 10_000
    assert lock["paid_line"] == FIVE_ACES and lock["cents"] == lock["meter_cents"] // 10
    (asked,) = [d for _, typ, d in journal(tmp_path / "pool.db") if typ == "hit_locked"]
    assert asked["held_seq"] >= asked["need_seq"] > 0
    assert (pay["line"], pay["cents"], pay["from"]) == (FIVE_ACES, lock["cents"], "meter")
    assert t.owner.public.meters["progressive"]["display_cents"] == 15_000


def test_e2e_a_table_whose_terms_differ_is_refused_at_link_time_with_the_reason(
    tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any]
) -> None:
    ctl = InProcessController(pool_toml(tmp_path, nats.url, 100_000))
    ctl.start()
    controllers.append(ctl)
    t = LinkedTable(tmp_path, "T1", 71001, nats.url, game={
        "levels": [{"name": "progressive", "initial_cents": 100_000, "reset_cents": 100_000,
                    "rate_bp": 2200, "hidden_rate_bp": 400, "limit_cents": 0}]})  # fmt: skip
    t.start()
    tables.append(t)
    pool_db = tmp_path / "pool.db"
    wait_for(lambda: pool_db.exists() and bool(effects(pool_db, "table_terms_refused")), 15,
             what="the pool's refusal")  # fmt: skip
    (refused,) = effects(pool_db, "table_terms_refused")
    assert "level.rate_bp: the table's 2200, the pool's 2100" in refused["reason"]
    wait_for(lambda: bool(t.link.status.refusal), 10, what="the table told")
    assert t.link_down()
    assert "rate_bp" in str(t.link.status.refusal)


def test_e2e_a_table_leaving_takes_none_of_the_pools_money_and_its_level_restarts(
    tmp_path: Path, nats: NatsServer, controllers: list[Any], tables: list[Any]
) -> None:
    """A table leaves the pool (NJ 13:69D-1.52(f): a meter moves only by a recorded payout or
    correction): the pool journals ``table_left`` and keeps every contribution it made; the
    table's own level starts again from its configured amounts, and its contributions after it
    left are its own, never the pool's."""
    t = start(tmp_path, nats, controllers, tables, reset=100_000)
    for _ in range(3):
        t.play((1, 2, 3))
    pool_db = tmp_path / "pool.db"
    wait_for(lambda: len(effects(pool_db, "pool_contribution")) == 3, 10, what="contributions")
    before = effects(pool_db, "pool_contribution")
    t.ev("link_state", up=True, linked=False, pool="POOL1", level="progressive")
    t.play((1, 2))  # its own progressive now
    wait_for(lambda: bool(effects(pool_db, "table_left")), 10, what="the pool's record")
    (left,) = effects(pool_db, "table_left")
    assert left["table"] == "T1"
    assert left["display_cents"] == 100_000 + 9 * 21  # nine $1 wagers at 21%: still the pool's
    assert effects(pool_db, "pool_contribution") == before  # the own round's stays the table's
    own = t.owner.public.meters["progressive"]
    assert own["display_cents"] == 100_000 + 2 * 21  # configured $1,000 + 21% of two $1 wagers
    assert verify(pool_db, PoolReplayer).ok and verify(t.db).ok


def test_a_hit_waits_for_its_tables_stream_through_need_seq_but_not_for_ever_k6(
    tmp_path: Path, nats: NatsServer
) -> None:
    """The pool weighs a hit at its meter at payment (NY 5324.41(k)(6)), which counts the wagers
    the table made before it asked: a request whose ``need_seq`` the pool does not hold yet
    waits for the stream, at most `HIT_HOLD_S` (a table whose stream is down is still paid,
    at the meter held); a request without one, or whose stream is held, goes at once."""
    from controller.link.link_config import load_controller_config
    from controller.link.messages import Head
    from controller.link.service import HIT_HOLD_S, LinkController

    ctl = LinkController(load_controller_config(pool_toml(tmp_path, nats.url, 100_000)))
    try:
        now = time.monotonic()
        req = {"table": "T1", "need_seq": 12}
        assert ctl._stream_behind(req, now)  # holds nothing of T1 yet
        assert not ctl._stream_behind(req, now - HIT_HOLD_S - 0.01)  # waited long enough
        assert not ctl._stream_behind({"table": "T1"}, now)  # an older table's request
        assert not ctl._stream_behind({"table": "T1", "need_seq": True}, now)
        ctl.heads["T1"] = Head(11, "h")
        assert ctl._stream_behind(req, now)
        ctl.heads["T1"] = Head(12, "h")
        assert not ctl._stream_behind(req, now)
    finally:
        ctl.state.close()
