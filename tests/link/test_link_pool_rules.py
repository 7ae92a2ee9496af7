"""The pool's rules (fsm/round/pool.py), pure: contributions at the pool's rate, hits locked in
order (the first from the meter, the next from the reset value: NY 5321.18(b)(3)(iii), NY
5324.41(k)(6)), a voided locked hit put back as a recorded correction (NJ 13:69D-1.52(f)), a
void that outran its lock request recorded so the request is refused, a supervisor's corrected
line (NY 5324.41(k)(3)(ii)) locked as a hit of its own after the voided one is undone, every
sub-unit accounted for, the state restored from its snapshot."""

from __future__ import annotations

import pytest

from fsm.round.config import ProgressiveLevel
from fsm.round.meters import UNIT
from fsm.round.pool import Pool, PoolError, PoolParams
from fsm.rules.progressive import ProgressiveTable

JACKPOT = "natural-royal-flush-and-pair"  # 100% of the meter
NATURAL = "natural-royal-flush"  # 10% of the meter


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
    (correction,) = p.step("consumed", voided("T1", 9, 1, 2))
    assert correction["type"] == "pool_correction" and correction["cents"] == locked["cents"]
    assert p.display_cents == before + locked["cents"]
    assert p.step("consumed", voided("T1", 9, 1, 2)) == []  # once only
    assert p.meters.balance_error() == 0
    with pytest.raises(PoolError, match="voided"):  # a retry of its request is not paid again
        p.check_hit(hit("T1", 1, 1, 2))


def voided(table: str, seq: int, round_id: int, position: int, line: str = JACKPOT) -> dict:  # type: ignore[type-arg]
    """A batch of ``table``'s stream carrying its hit_voided of the linked level."""
    mv = {"seq": seq, "round_id": round_id, "kind": "hit_voided", "position": position,
          "line": line, "supervisor": "s", "reason": "misread"}  # fmt: skip
    return {"tables": [{"table": table, "last_seq": seq, "last_hash": "h", "movements": [mv]}]}


def test_a_void_that_outruns_its_lock_request_is_recorded_and_the_request_refused() -> None:
    """The table's void reached the controller before the lock request it raced: nothing was
    locked, so nothing is corrected; the void is recorded (journaled as an effect of the batch)
    and the request, when it comes, is refused: the pool never pays a voided hit."""
    p = pool()
    contribute(p, "T1", 5, 1, 3)
    meter = p.display_cents
    (noted,) = p.step("consumed", voided("T1", 9, 1, 2))
    assert noted["type"] == "pool_hit_voided" and (noted["seq"], noted["line"]) == (9, JACKPOT)
    assert p.display_cents == meter and p.hits == 0
    with pytest.raises(PoolError, match="voided"):
        p.check_hit(hit("T1", 1, 1, 2))
    p.check_hit(hit("T1", 1, 1, 3))  # another position's hit is not touched
    p.check_hit(hit("T1", 1, 2, 2))  # nor the next round's at that position
    assert p.step("consumed", voided("T1", 9, 1, 2)) == []  # once only
    again = pool()
    again.load(p.snapshot())
    with pytest.raises(PoolError, match="voided"):  # a restarted controller still refuses it
        again.check_hit(hit("T1", 1, 1, 2))


def test_a_corrected_line_undoes_the_voided_lock_then_locks_from_the_meter_k3ii() -> None:
    """NY 5324.41(k)(3)(ii): the supervisor voids the hit and names the right, lower line. The
    pool puts the voided lock's amount back (pool_correction), then locks the corrected line
    from the meter as it then stands (10% of it), a hit of its own in the recorded order
    (NY 5321.18(b)(3)(iii)); the table's void arriving later in its stream changes nothing."""
    p = pool()
    contribute(p, "T1", 5, 1, 6)
    meter = p.display_cents
    (first,) = p.step("hit_locked", hit("T1", 1, 1, 2))
    assert first["cents"] == meter and p.display_cents == 100_000  # reset
    corrected = {**hit("T1", 1, 1, 2), "line": NATURAL, "corrects": JACKPOT, "request_seq": 30}
    p.check_hit(corrected)
    correction, second = p.step("hit_locked", corrected)
    assert (correction["type"], correction["cents"]) == ("pool_correction", meter)
    assert correction["request_seq"] == 30 and correction["line"] == JACKPOT
    assert (second["line"], second["corrects"], second["order"]) == (NATURAL, JACKPOT, 2)
    assert second["meter_cents"] == 100_000 + meter
    assert second["cents"] == (100_000 + meter) // 10
    assert p.display_cents == 100_000 + meter - second["cents"]
    assert p.step("consumed", voided("T1", 31, 1, 2)) == []  # the stream's void: done already
    assert p.display_cents == 100_000 + meter - second["cents"]
    with pytest.raises(PoolError, match="voided"):  # the voided line's late request
        p.check_hit(hit("T1", 1, 1, 2))
    assert p.meters.balance_error() == 0


def test_a_corrected_line_whose_voided_hit_was_never_locked_refuses_that_lock() -> None:
    """The corrected line's request outran the voided hit's: the voided one is recorded as
    never to be locked, the corrected one locked from the meter as it stands."""
    p = pool()
    contribute(p, "T1", 5, 1, 6)
    meter = p.display_cents
    corrected = {**hit("T1", 1, 1, 2), "line": NATURAL, "corrects": JACKPOT}
    noted, locked = p.step("hit_locked", corrected)
    assert (noted["type"], noted["line"]) == ("pool_hit_voided", JACKPOT)
    assert (locked["cents"], locked["order"]) == (meter // 10, 1)
    with pytest.raises(PoolError, match="voided"):
        p.check_hit(hit("T1", 1, 1, 2))
    assert p.step("consumed", voided("T1", 31, 1, 2)) == []
    assert p.meters.balance_error() == 0


def test_a_line_corrected_twice_undoes_every_line_above_it_at_the_position() -> None:
    """A supervisor corrects a line, then corrects the correction before the pool saw it: the
    last corrected line's lock puts back every lock above it at the position (the first hit's),
    records the unlocked one as voided, and locks from the meter with all of that undone; the
    lines above are refused from then on, whatever the stream brings later."""
    p = pool()
    contribute(p, "T1", 5, 1, 6)
    meter = p.display_cents
    p.step("hit_locked", hit("T1", 1, 1, 2))  # the jackpot, 100% of the meter
    last = {**hit("T1", 1, 1, 2), "line": "five-aces", "corrects": "five-aces-and-pair"}
    p.check_hit(last)
    correction, noted, locked = p.step("hit_locked", last)
    assert (correction["type"], correction["line"], correction["cents"]) == (
        "pool_correction", JACKPOT, meter)  # fmt: skip
    assert (noted["type"], noted["line"]) == ("pool_hit_voided", "five-aces-and-pair")
    assert locked["cents"] == (100_000 + meter) // 10
    for line in (JACKPOT, "five-aces-and-pair", NATURAL):  # every line above five aces
        with pytest.raises(PoolError, match="voided"):
            p.check_hit({**hit("T1", 1, 1, 2), "line": line})
    p.check_hit(last)  # its own retry is answered with its lock
    assert p.step("consumed", voided("T1", 40, 1, 2)) == []
    assert p.step("consumed", voided("T1", 41, 1, 2, "five-aces-and-pair")) == []
    assert p.meters.balance_error() == 0
    again = pool()
    again.load(p.snapshot())
    assert again.snapshot() == p.snapshot()


def test_a_corrected_line_must_be_below_the_line_it_corrects() -> None:
    p = pool()
    with pytest.raises(PoolError, match="corrects"):
        p.check_hit({**hit("T1", 1, 1, 2), "line": JACKPOT, "corrects": NATURAL})
    with pytest.raises(PoolError, match="corrects"):
        p.check_hit({**hit("T1", 1, 1, 2), "line": NATURAL, "corrects": "royal-mess"})


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
