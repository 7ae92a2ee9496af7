"""What a table's authenticated entry may claim (controller/link/plausible.py, docs/link.md "The
rules the pool applies"): a contribution only at its own round's lock-out, one to six wagers,
wagered = wagers x the wager amount, one a round; a hit only with its round's resolution. A
real table's whole journal passes; each forged claim is refused with its reason.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from link_support import JACKPOT
from test_central import _plain_journal

from controller.journal.format import Entry
from controller.link.plausible import COUNT_CONFIRMED, Watch
from fsm.round.phases.betting import PHASE, count_confirmed


def contribution(seq: int, rid: int, wagers: int, cents: int, etype: str = "chips_confirmed",
                 mrid: int | None = None) -> Entry:  # fmt: skip
    e = {"type": "meter_movement", "level": "progressive", "kind": "contribution",
         "round_id": rid if mrid is None else mrid, "wagers": wagers,
         "wagered_cents": cents}  # fmt: skip
    return Entry(seq, seq, rid, etype, {"effects": [e]}, "p", "h")


def pay(seq: int, rid: int, position: int, source: str = "chip_tray", *more: Any) -> Entry:
    p = {"type": "pay", "position": position, "level": "progressive", "line": "flush",
         "cents": 300, "from": source}  # fmt: skip
    return Entry(seq, seq, rid, "panel_next", {"effects": [*more, p]}, "p", "h")


def outcome(position: int) -> dict[str, Any]:
    return {"type": "outcome", "position": position, "line": "flush"}


def test_the_lock_out_entries_are_the_betting_phases_count_confirmations() -> None:
    triggers = {t.trigger for t in PHASE.transitions if count_confirmed in t.before}
    assert triggers == set(COUNT_CONFIRMED)


def test_a_real_tables_whole_journal_is_plausible(tmp_path: Path) -> None:
    watch = Watch()
    for entry in _plain_journal(tmp_path, rounds=4):
        assert watch.check(entry, 100) is None, entry.type


def test_each_forged_claim_is_refused_with_its_reason() -> None:
    w = Watch()
    assert w.check(contribution(1, 1, 3, 300), 100) is None
    cases = [
        (contribution(2, 2, 100_000, 10_000_000), "100000 wagers (1 to 6"),
        (contribution(2, 2, 0, 0), "0 wagers"),
        (contribution(2, 2, 3, 600), "600 cents wagered for 3 wagers"),
        (contribution(2, 2, 3, 300, "hit_validated"), "a contribution in a hit_validated entry"),
        (contribution(2, 2, 3, 300, mrid=7), "a contribution for round 7 in an entry of round 2"),
        (contribution(2, 1, 3, 300), "a second contribution to progressive for round 1"),
        (pay(2, 1, 4, "chip_tray"), "at position 4 without its outcome"),
        (pay(2, 1, 4, "meter", outcome(4)), "paid from the meter at position 4 never pending"),
        (pay(2, 5, 1, "chip_tray", outcome(1)), "round 5, which took no progressive wager"),
    ]
    for entry, why in cases:
        found = w.check(entry, 100)
        assert found is not None and why in found, (why, found)
    # the watch is unchanged by what it refused: the real next entries still pass
    assert w.check(pay(2, 1, 2, "chip_tray", outcome(2)), 100) is None
    assert w.check(contribution(3, 2, 6, 600), 100) is None
    four = [outcome(p) for p in (1, 2, 3, 4, 5, 6, 7)]
    e = pay(4, 2, 1, "chip_tray", *four)
    for p in range(2, 8):
        e = replace(e, data={"effects": [*e.data["effects"], {**e.data["effects"][-1],
                                                             "position": p}]})  # fmt: skip
    found = w.check(e, 100)
    assert found is not None and "7 progressive hits in round 2, which took 6 wagers" in found
    assert JACKPOT  # the pool's jackpot line is a line like any other here
