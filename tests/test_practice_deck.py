"""When the practice deck deals its hit (issue 11, Training): a trainer's "deal a hit" pressed at
any moment of a round comes in a round dealt with the progressive wager at that area, never spent
on a round already past "no more bets" without one, nor lost to a round voided after its deal;
the trainer is told why it waits. Real parts: the simulated table on ptys behind the real
adapters, real journals (`controller.journal.store.Journal`), the simulated shoe's real deck file.

(The cause of the flaky browser test `test_training_page.py::test_person_supervisor_validates_a_
practice_royal_flush_at_the_page_with_a_pin`: under load the click landed after "no more bets" of
an early round in which the seeded player at area 3 had placed no progressive wager; the deal took
the request anyway, the royal flush sat in a hand with no wager, and the hit never came.)
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from controller.journal.audit import connect_read_only
from controller.journal.store import Journal
from controller.sim.practice import PracticeDeck, PracticeShoe
from controller.sim.simulate import build_service, load_sim_config, play
from controller.sim.simulated_table import PersistentDeck
from drivers.serial import protocol
from fsm.round.constants import AREAS
from fsm.round.events import Event
from fsm.rules.drills import practice_hand


def _rows(db: Path) -> list[tuple[int, str, dict[str, Any]]]:
    conn = connect_read_only(db)
    try:
        got = conn.execute("SELECT round_id, type, data FROM journal ORDER BY seq").fetchall()
    finally:
        conn.close()
    return [(r, t, json.loads(d)) for r, t, d in got]


def test_a_hit_asked_after_no_more_bets_comes_in_the_next_round_with_its_wager(
    tmp_path: Path,
) -> None:
    """NY 5324.41(k)(1): only a hand with a progressive wager can make a hit. Pressed in round 1
    after "no more bets" at an area whose player placed no wager, the hit is not spent on round
    1: the status says why it waits, the player places the wager in round 2 and the royal flush
    is dealt and found there."""
    db = tmp_path / "late.db"
    service = build_service(load_sim_config(None), db, 8)
    position = next(p for p in range(1, AREAS + 1) if p not in service.director.wagers_wanted(1))
    armed: list[int] = []
    seen: dict[str, Any] = {}

    def trainer_at_the_table(snap: Any) -> bool:  # play's hold: looks, never holds
        if not armed and snap.state == "Open_LockedOut":  # no more bets in round 1
            armed.append(snap.round_id)
            service.trainer.practice_hit(position, "royal-flush")
        if snap.round_id == 2 and snap.state == "Open_Betting" and "waiting" not in seen:
            seen["waiting"] = service.trainer.status()["practice"]
        return False

    service.start()
    try:
        assert play(service, 3, threading.Event(), None, hold=trainer_at_the_table) == 0
    finally:
        service.close()
    assert armed == [1]
    rows = _rows(db)
    dealt = [r for r, t, d in rows if t == "training" and d.get("action") == "practice_deal"]
    outcomes = [
        (r, e["position"], e["line"])
        for r, _t, d in rows
        for e in d.get("effects", [])
        if e.get("type") == "outcome"
    ]
    assert dealt == [2]
    assert (2, position, "royal-flush") in outcomes
    waiting = seen["waiting"]
    assert waiting["position"] == position and waiting["line"] == "royal-flush"
    assert f"round 1 was dealt with no progressive wager at area {position}" in waiting["waiting"]


def _journal_round(journal: Journal, round_id: int, wagered: list[int], ts: int) -> None:
    """The entries the dispense of ``round_id`` finds: its wagers and its starting position."""
    for kind, effect in (
        ("chip_detected", {"type": "wagers", "positions": wagered, "wager_cents": 100}),
        (
            "rng_drawn",
            {"type": "starting_position", "by": "rng", "number": 1, "seat": 1,
             "order": list(range(AREAS + 1)), "bank": None},
        ),
    ):  # fmt: skip
        journal.append(ts, round_id, kind, {"effects": [effect]}, {}, {})


def _voided(journal: Journal, round_id: int, ts: int) -> None:
    summary = {
        "type": "round_summary", "round_id": round_id, "outcome": "voided",
        "positions": [], "meters": [],
    }  # fmt: skip
    journal.append(ts, round_id, "fault_cleared", {"effects": [summary]}, {}, {})


def _shoe(tmp_path: Path, db: Path) -> tuple[PracticeShoe, PracticeDeck, list[Event]]:
    deck = PersistentDeck(tmp_path / "shoe.json")
    posted: list[Event] = []
    practice = PracticeDeck(("royal-flush", "four-of-a-kind"))
    return PracticeShoe(deck, practice, db, posted.append), practice, posted


def _dispense(shoe: PracticeShoe) -> protocol.DispenseReport:
    shoe.deck.load(list(range(53)), 1)
    ((kind, payload),) = shoe.handle(protocol.DISPENSE_REQ, protocol.encode_dispense_req(1, 7, 7))
    assert kind == protocol.DISPENSE_RSP
    return protocol.decode_dispense_rsp(payload)


def test_a_practice_hit_dealt_to_a_round_then_voided_is_armed_again(tmp_path: Path) -> None:
    """A round voided after its deal (a fault cleared with the round voided) pays no hit: the
    request it took is armed again, with the reason, and dealt at the next dispense that can
    pay it."""
    db = tmp_path / "void.db"
    journal = Journal.open(db, table_id="T")
    shoe, practice, posted = _shoe(tmp_path, db)
    try:
        practice.request(3, "royal-flush")
        _journal_round(journal, 1, [3], 1000)
        first = _dispense(shoe)
        assert practice.armed is None and [e.data["position"] for e in posted] == [3]
        assert first.hands is not None and sorted(first.hands[3]) == sorted(
            practice_hand("royal-flush")
        )
        _voided(journal, 1, 2000)
        _journal_round(journal, 2, [3], 3000)
        second = _dispense(shoe)
    finally:
        journal.close()
    assert len(posted) == 2 and posted[1].data["position"] == 3
    assert second.hands is not None and sorted(second.hands[3]) == sorted(
        practice_hand("royal-flush")
    )
    assert sorted(practice.dealt()) == [1, 2]


def test_a_voided_round_rearms_the_hit_and_the_status_says_so_until_it_is_dealt(
    tmp_path: Path,
) -> None:
    """The voided round's request armed again, and the next round has no wager at the area (it
    was bet before the request came back): kept, with the void named as why it waits."""
    db = tmp_path / "void-nowager.db"
    journal = Journal.open(db, table_id="T")
    shoe, practice, posted = _shoe(tmp_path, db)
    try:
        practice.request(5, "four-of-a-kind")
        _journal_round(journal, 1, [5], 1000)
        _dispense(shoe)
        _voided(journal, 1, 2000)
        _journal_round(journal, 2, [1, 2], 3000)
        _dispense(shoe)
    finally:
        journal.close()
    assert len(posted) == 1
    armed = practice.armed
    assert armed is not None and (armed.position, armed.line) == (5, "four-of-a-kind")
    assert practice.waiting is not None and "no progressive wager at area 5" in practice.waiting


def test_a_completed_practice_round_is_never_dealt_again(tmp_path: Path) -> None:
    db = tmp_path / "done.db"
    journal = Journal.open(db, table_id="T")
    shoe, practice, posted = _shoe(tmp_path, db)
    try:
        practice.request(2, "royal-flush")
        _journal_round(journal, 1, [2], 1000)
        _dispense(shoe)
        summary = {
            "type": "round_summary", "round_id": 1, "outcome": "completed",
            "positions": [], "meters": [],
        }  # fmt: skip
        journal.append(2000, 1, "round_completed", {"effects": [summary]}, {}, {})
        _journal_round(journal, 2, [2], 3000)
        _dispense(shoe)
    finally:
        journal.close()
    assert len(posted) == 1 and practice.armed is None and not practice.unsettled
