"""The pool's rules (fsm/round/pool.py), pure: contributions at the pool's rate, hits locked in
order (the first from the meter, the next from the reset value: NY 5321.18(b)(3)(iii), NY
5324.41(k)(6)), a voided locked hit put back as a recorded correction (NJ 13:69D-1.52(f)), every
sub-unit accounted for, the state restored from its snapshot."""

from __future__ import annotations

import pytest

from fsm.round.config import ProgressiveLevel
from fsm.round.meters import UNIT
from fsm.round.pool import Pool, PoolError, PoolParams
from fsm.rules.progressive import ProgressiveTable

JACKPOT = "natural-royal-flush-and-pair"


def pool() -> Pool:
    level = ProgressiveLevel("progressive", 100_000, 100_000, 2100, 500)
    params = PoolParams("P1", level, 100, "ny-5324-41-k4", {"T1": 1, "T2": 2})
    return Pool(params, ProgressiveTable.load("ny-5324-41-k4"))


def contribute(p: Pool, table: str, seq: int, round_id: int, wagers: int) -> None:
    mv = {"seq": seq, "round_id": round_id, "kind": "contribution", "wagers": wagers,
          "wagered_cents": 100 * wagers}  # fmt: skip
    part = {"table": table, "last_seq": seq, "last_hash": "h", "joined": True, "movements": [mv]}
    p.step("consumed", {"tables": [part]})


def hit(table: str, asset: int, round_id: int, position: int) -> dict[str, object]:
    return {"table": table, "asset": asset, "round": round_id, "position": position,
            "line": JACKPOT, "wager_cents": 100}  # fmt: skip


def test_hits_in_order_first_from_the_meter_next_from_the_reset_value() -> None:
    p = pool()
    contribute(p, "T1", 5, 1, 6)
    contribute(p, "T2", 7, 1, 4)
    assert p.meters.display == 100_000 * UNIT + 10 * 100 * 2100
    meter = p.display_cents
    (first,) = p.step("hit_locked", hit("T2", 2, 1, 3))
    (second,) = p.step("hit_locked", hit("T1", 1, 1, 1))
    assert (first["order"], first["meter_cents"], first["cents"]) == (1, meter, meter)
    assert (second["order"], second["meter_cents"], second["cents"]) == (2, 100_000, 100_000)
    assert p.meters.balance_error() == 0


def test_a_voided_locked_hit_goes_back_on_the_meter_as_a_correction() -> None:
    p = pool()
    contribute(p, "T1", 5, 1, 3)
    (locked,) = p.step("hit_locked", hit("T1", 1, 1, 2))
    before = p.display_cents
    mv = {"seq": 9, "round_id": 1, "kind": "hit_voided", "position": 2, "supervisor": "s",
          "reason": "misread"}  # fmt: skip
    part = {"table": "T1", "last_seq": 9, "last_hash": "h", "movements": [mv]}
    (correction,) = p.step("consumed", {"tables": [part]})
    assert correction["type"] == "pool_correction" and correction["cents"] == locked["cents"]
    assert p.display_cents == before + locked["cents"]
    assert p.step("consumed", {"tables": [part]}) == []  # once only
    assert p.meters.balance_error() == 0


def test_a_table_is_identified_by_its_asset_number_and_a_bad_hit_refused() -> None:
    p = pool()
    assert p.identify("T1", 1) is None
    assert "asset number 2" in (p.identify("T1", 2) or "")
    assert "not linked" in (p.identify("T9", 9) or "")
    with pytest.raises(PoolError, match="line"):
        p.check_hit({**hit("T1", 1, 1, 1), "line": "royal-mess"})
    with pytest.raises(PoolError, match="wager_cents"):
        p.check_hit({**hit("T1", 1, 1, 1), "wager_cents": 500})


def test_the_pool_restores_from_its_snapshot() -> None:
    p = pool()
    contribute(p, "T1", 5, 1, 3)
    p.step("hit_locked", hit("T1", 1, 1, 2))
    again = pool()
    again.load(p.snapshot())
    assert again.snapshot() == p.snapshot()
