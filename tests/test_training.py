"""Training on the simulated table (issue 11, Training): who is a person, faults injected at run
time, the practice deck's progressive hit on demand, the console's narration, and training
journals marked TRAINING on every report. Real parts: the simulated table on ptys (the shoe and
shuffler simulators behind the real adapters), real SQLite journals, the CLI as a process."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from controller.config import SIMULATED_TABLE, load_config
from controller.journal.audit import connect_read_only
from controller.journal.tail import read_committed
from controller.sim import actors
from controller.sim.actors import SUPERVISOR, People
from controller.sim.narrate import Narrator
from controller.sim.simulate import Service, build_service, load_sim_config, play
from controller.sim.training import TrainingError
from fsm.rules.drills import practice_hand

ROOT = Path(__file__).resolve().parent.parent
TRAINER = "trainer"  # the training login of controller/data/simulated-table.toml


def rows(db: Path, etype: str | None = None) -> list[tuple[int, int, str, dict[str, object]]]:
    conn = connect_read_only(db)
    try:
        sql = "SELECT seq, round_id, type, data FROM journal"
        got = conn.execute(sql + " ORDER BY seq").fetchall()
    except sqlite3.OperationalError:  # being created
        got = []
    finally:
        conn.close()
    out = [(s, r, t, json.loads(d)) for s, r, t, d in got]
    return [x for x in out if etype is None or x[2] == etype]


def fields(data: dict[str, object]) -> dict[str, object]:
    """An entry's event data without its effects."""
    return {k: v for k, v in data.items() if k != "effects"}


def effects(db: Path, kind: str) -> list[tuple[int, dict[str, object]]]:
    return [
        (rnd, e)
        for _, rnd, _, data in rows(db)
        for e in data.get("effects", [])  # type: ignore[attr-defined]
        if e.get("type") == kind
    ]


def wait_for(what: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


@contextmanager
def running(service: Service) -> Iterator[threading.Event]:
    """The scripted people playing on their own thread until the block ends."""
    stop = threading.Event()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(play(service, None, stop, None)))
    service.start()
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(30)
        service.close()
    assert result == [0]


def test_the_scripted_supervisor_signs_with_its_own_id_never_the_training_login(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ids.db"
    service = build_service(load_sim_config(None), db, 3)
    service.start()
    try:
        assert play(service, 2, threading.Event(), None) == 0
    finally:
        service.close()
    opened = rows(db, "table_opened")
    assert [r[3]["supervisor"] for r in opened] == [SUPERVISOR]
    assert SUPERVISOR != TRAINER
    assert not any(TRAINER in json.dumps(r[3]) for r in rows(db))


def test_a_fault_injected_at_run_time_waits_for_the_person_supervisor(tmp_path: Path) -> None:
    """With a person as supervisor the scripted one never clears the fault: the table stays in
    Fault (here 1.5 s, far past the scripted 0.4 s pace) until the person clears it."""
    db = tmp_path / "fault.db"
    service = build_service(load_sim_config(None), db, 4, people=People(["supervisor"]))
    with running(service):
        owner = service.owner
        time.sleep(0.5)
        assert owner.public.state == "Closed"  # nobody scripted opens the table for a person
        owner.post_tracked(actors_event("table_opened", supervisor=TRAINER)).wait(10)
        wait_for(lambda: owner.public.state == "Open_Betting")
        service.trainer.inject_fault("shoe-jam", by=TRAINER)
        wait_for(lambda: owner.public.state == "Fault")
        time.sleep(1.5)
        assert owner.public.state == "Fault"
        assert rows(db, "fault_cleared") == []
        receipt = owner.post_tracked(actors_event("fault_cleared", supervisor=TRAINER))
        assert receipt.wait(10)
        wait_for(lambda: owner.public.state not in ("Fault",))
    raised = [e for _, e in effects(db, "fault")]
    assert raised and raised[0]["code"] == "SHOE_JAM"
    injected = [fields(r[3]) for r in rows(db, "training") if r[3]["action"] == "fault_injected"]
    assert injected == [{"action": "fault_injected", "fault": "shoe-jam", "by": TRAINER}]
    cleared = rows(db, "fault_cleared")
    assert [r[3]["supervisor"] for r in cleared] == [TRAINER]


def actors_event(kind: str, **data: object):  # type: ignore[no-untyped-def]
    from fsm.round.events import Event

    return Event(kind, dict(data))


def test_a_scripted_supervisor_clears_an_injected_wrong_deck_count_and_play_goes_on(
    tmp_path: Path,
) -> None:
    """NY 5324.41(n)(8): a deck that counts 52 is a fault; injected at run time it bites at the
    next shuffle, journaled as training before the fault it causes."""
    db = tmp_path / "count.db"
    service = build_service(load_sim_config(None), db, 6)
    service.start()
    try:
        service.trainer.inject_fault("shuffler-count=52")
        assert play(service, 2, threading.Event(), None) == 0
    finally:
        service.close()
    order = [(r[2], r[3].get("action")) for r in rows(db) if r[2] in ("training", "fault_raised")]
    kinds = [e["code"] for _, e in effects(db, "fault")]
    assert "DECK_COUNT_52" in kinds
    assert order[0] == ("training", "fault_injected")
    assert [r[3]["supervisor"] for r in rows(db, "fault_cleared")] == [SUPERVISOR]


def test_runtime_fault_injection_refuses_an_unknown_kind_naming_the_kinds(tmp_path: Path) -> None:
    service = build_service(load_sim_config(None), tmp_path / "bad.db", 1)
    try:
        with pytest.raises(TrainingError, match="shoe-jam"):
            service.trainer.inject_fault("shoe-fire")
        with pytest.raises(TrainingError, match="other than 53"):
            service.trainer.inject_fault("shuffler-count=53")
    finally:
        service.close()


def _practice_round(db: Path, config_path: Path | None, line: str, position: int) -> Service:
    config = load_sim_config(config_path)
    service = build_service(config, db, 8)
    service.start()
    try:
        service.trainer.practice_hit(position, line)
        assert play(service, 1, threading.Event(), None) == 0
    finally:
        service.close()
    return service


def _stack_of(db: Path, position: int) -> list[int]:
    ((_, order),) = [(r, e["order"]) for r, e in effects(db, "starting_position")][:1]
    dealt = rows(db, "dealt")[0][3]
    stacks = dealt["stacks"]
    return list(stacks[list(order).index(position)])  # type: ignore[index, arg-type, call-overload]


def test_practice_deck_deals_the_chosen_line_at_the_chosen_area_journaled_as_practice(
    tmp_path: Path,
) -> None:
    """The default card-reading shoe: the practice cards arrive in area 2's stack, the round
    machine finds the line from the hand (NY 5324.41(k)(4)) and pays it (a fixed four of a kind
    from the chip tray, (k)(5)); the journal says the deal was a practice deal, before the deal."""
    db = tmp_path / "practice.db"
    _practice_round(db, None, "four-of-a-kind", 2)
    assert sorted(_stack_of(db, 2)) == sorted(practice_hand("four-of-a-kind"))
    journal = rows(db)
    practice = [i for i, r in enumerate(journal) if r[2] == "training"]
    dealt = [i for i, r in enumerate(journal) if r[2] == "dealt"]
    assert len(practice) == 1 and practice[0] < dealt[0]
    assert fields(journal[practice[0]][3]) == {
        "action": "practice_deal",
        "position": 2,
        "line": "four-of-a-kind",
        "by": TRAINER,
    }
    assert (1, {"type": "outcome", "position": 2, "line": "four-of-a-kind"}) in effects(
        db, "outcome"
    )
    paid = [e for _, e in effects(db, "pay")]
    assert (2, "four-of-a-kind", "chip_tray") in [
        (p["position"], p["line"], p["from"]) for p in paid
    ]
    report = subprocess.run(
        [sys.executable, "-m", "controller.cli", "report", "hits", "--db", str(db), "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    document = json.loads(report.stdout)
    assert document["training"] is True
    marks = {(h["position"], h["line"]): h.get("practice", False) for h in document["hits"]}
    assert marks[(2, "four-of-a-kind")] is True
    assert not any(v for k, v in marks.items() if k != (2, "four-of-a-kind"))


def test_practice_deck_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _practice_round(a, None, "straight-flush", 6)
    _practice_round(b, None, "straight-flush", 6)
    assert rows(a, "dealt")[0][3]["stacks"] == rows(b, "dealt")[0][3]["stacks"]


def test_practice_deck_with_a_shoe_that_does_not_read_cards(tmp_path: Path) -> None:
    """Without a card-reading shoe the dealer enters the line the practice deck dealt."""
    text = Path(SIMULATED_TABLE).read_text("utf-8")
    text = text.replace("card_reading_shoe = true", "card_reading_shoe = false")
    config = tmp_path / "blind.toml"
    config.write_text(text, "utf-8")
    assert load_config(config).game.card_reading_shoe is False
    db = tmp_path / "blind.db"
    _practice_round(db, config, "royal-flush", 4)
    assert (1, {"type": "outcome", "position": 4, "line": "royal-flush"}) in effects(db, "outcome")
    assert [r[3]["position"] for r in rows(db, "training")] == [4]


def test_a_person_dealer_is_never_acted_for(tmp_path: Path) -> None:
    """The scripted players bet; "no more bets" waits for the person at the dealer's place."""
    db = tmp_path / "dealer.db"
    service = build_service(load_sim_config(None), db, 9, people=People(["dealer"]))
    with running(service):
        wait_for(lambda: service.owner.public.state == "Open_Betting")
        wait_for(lambda: bool(rows(db, "chip_detected")))
        time.sleep(1.5)
        assert service.owner.public.state == "Open_Betting"
        assert rows(db, "lockout_pressed") == []
        service.pins.press_lockout()  # the person presses "no more bets"
        wait_for(lambda: service.owner.public.state == "Open_LockedOut")
        time.sleep(1.0)
        assert service.owner.public.state == "Open_LockedOut"  # the count is the dealer's too


def test_person_players_get_the_betting_window_then_the_scripted_dealer_locks_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(actors, "BETTING_WINDOW_S", 2.0)
    db = tmp_path / "players.db"
    service = build_service(load_sim_config(None), db, 9, people=People(["players"]))
    with running(service):
        wait_for(lambda: service.owner.public.state == "Open_Betting")
        time.sleep(0.8)
        assert rows(db, "chip_detected") == [] and rows(db, "lockout_pressed") == []
        service.pins.drop_chip(5)  # a person's chip
        wait_for(lambda: bool(rows(db, "lockout_pressed")), timeout=30)
    chips = [r[3]["position"] for r in rows(db, "chip_detected")]
    assert chips == [5]


def test_people_changed_at_run_time_are_journaled_and_refuse_an_unknown_role(
    tmp_path: Path,
) -> None:
    db = tmp_path / "roles.db"
    service = build_service(load_sim_config(None), db, 2)
    service.start()
    try:
        status = service.trainer.set_people(["dealer", "supervisor"])
        assert status["people"] == ["dealer", "supervisor"] and status["training"] is True
        with pytest.raises(TrainingError, match="unknown role 'croupier'"):
            service.trainer.set_people(["croupier"])
        service.owner.wait_idle(5)
    finally:
        service.close()
    assert [r[3]["people"] for r in rows(db, "training")] == [["dealer", "supervisor"]]


def test_cli_people_refuses_an_unknown_role_before_touching_the_journal(tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "simulate", "--headless", "--rounds", "1",
         "--db", str(db), "--people", "dealer,croupier"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "unknown role 'croupier'" in done.stderr
    assert not db.exists()


def test_cli_headless_with_a_person_supervisor_never_validates_or_clears(tmp_path: Path) -> None:
    """``--people supervisor`` on a headless run: nobody scripted opens the table; the run
    neither acts for the person nor gives up (stopped here by SIGTERM)."""
    db = tmp_path / "person.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "simulate", "--headless", "--rounds", "1",
         "--db", str(db), "--people", "supervisor"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: db.exists() and bool(rows(db, "power_up")), timeout=60)
        time.sleep(1.5)
        assert proc.poll() is None
        assert [r[2] for r in rows(db)] == ["power_up"]
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def test_a_training_journal_is_marked_on_power_up_reports_and_verify(tmp_path: Path) -> None:
    db = tmp_path / "marked.db"
    service = build_service(load_sim_config(None), db, 5)
    service.start()
    try:
        assert play(service, 1, threading.Event(), None) == 0
    finally:
        service.close()
    first = rows(db)[0]
    assert first[2] == "power_up" and first[3]["training"] is True
    for kind in ("rounds", "shift", "meters", "hits"):
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "report", kind, "--db", str(db)],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("TRAINING journal"), (kind, done.stdout[:200])
    verify = subprocess.run(
        [sys.executable, "-m", "controller.cli", "journal", "verify", "--db", str(db)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "TRAINING journal" in verify.stdout


CARD = r"(?:[2-9TJQKA][cdhs]|JK)"
SEVEN = re.compile(rf"{CARD}(?: {CARD}){{6}}")


def test_narration_shows_cards_hands_and_winners_only_once_the_round_is_resolved(
    tmp_path: Path,
) -> None:
    """The console's line per event (`make run`): chips with the lights, "no more bets", the
    starting position; each seat's seven cards, its house-way setting and how it did against the
    banker only after the round's resolution (no card identity before, NJ 13:69F-31.10)."""
    db = tmp_path / "told.db"
    service = build_service(load_sim_config(None), db, 7)
    service.start()
    try:
        assert play(service, 1, threading.Event(), None) == 0
    finally:
        service.close()
    lines = Narrator().take(read_committed(db))
    assert all(line.startswith("TRAINING ") for line in lines)
    text = "\n".join(lines)
    assert "round 1: lights: attract 1, 2, 3, 4, 5, 6" in text
    assert "round 1: no more bets" in text and "round 1: starting position" in text
    complete = next(i for i, line in enumerate(lines) if "round complete" in line)
    first_cards = next(i for i, line in enumerate(lines) if SEVEN.search(line))
    settled = max(i for i, line in enumerate(lines) if "progressive:" in line)
    assert settled < first_cards < complete
    seats = [line for line in lines[first_cards:complete] if SEVEN.search(line)]
    assert len(seats) == 7  # the dealer and six areas, every seat dealt (NY (f)(3)(iii))
    assert any("dealer" in s for s in seats)
    assert all(re.search(r"-> \S.* / ", s) for s in seats)  # the setting, high / low
    assert any(re.search(r"-> (WINS|pushes|loses) \(", s) for s in seats)


def test_drill_cli_judges_an_answer_with_the_reason_and_exits_by_the_verdict() -> None:
    """``tablectl drill``: the page's drills at the terminal; exit 0 right, 1 wrong, 2 bad."""

    def drill(kind: str, answer: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "controller.cli", "drill", kind, "--number", "3", *extra],
            cwd=ROOT, input=answer, capture_output=True, text=True, check=False,
        )  # fmt: skip

    posed = json.loads(drill("house-way", "{}\n", "--json").stdout.splitlines()[0])
    from fsm.rules.cards import format_cards, parse_cards
    from fsm.rules.houseway import HouseWay

    setting = HouseWay.load("reference").set(parse_cards(posed["cards"]))
    right = drill("house-way", f"{format_cards(setting.high)} / {format_cards(setting.low)}\n")
    assert right.returncode == 0, right.stdout + right.stderr
    assert "correct" in right.stdout
    wrong = drill("house-way", f"{format_cards(setting.low)} {format_cards(setting.high[:3])} / "
                  f"{format_cards(setting.high[3:])}\n")  # fmt: skip
    assert wrong.returncode == 1 and "the house way (reference) sets" in wrong.stdout.lower()
    bad = drill("progressive", "lots\n")
    assert bad.returncode == 2 and "not an amount in dollars" in bad.stderr


def test_trainer_commands_at_the_terminal_deal_a_hit_that_waits_for_the_person(
    tmp_path: Path,
) -> None:
    """``make run``'s stdin: ``hit royal-flush 3``, then (the table open) ``people supervisor``;
    the narration shows the practice deal and the hit, and nobody scripted validates it (NY
    5324.41(k)(3)(iii))."""
    db = tmp_path / "typed.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "simulate", "--db", str(db), "--pace", "0.02"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[str] = []
    asked = False
    watchdog = threading.Timer(150, proc.kill)  # a hang fails the test instead of the run
    watchdog.start()
    try:
        proc.stdin.write("hit royal-flush 3\nfault shoe-fire\n")
        proc.stdin.flush()
        for line in proc.stdout:
            lines.append(line)
            if "shuffler counted" in line and not asked:  # the scripted supervisor opened it
                asked = True
                proc.stdin.write("people supervisor\n")
                proc.stdin.flush()
            if "HIT at area 3: royal-flush" in line:
                break
        time.sleep(1.0)
        assert rows(db, "hit_validated") == []
    finally:
        watchdog.cancel()
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    text = "".join(lines)
    assert "TRAINING trainer: dealer: scripted, players: scripted, supervisor: person" in text
    assert "practice hit armed: royal-flush at area 3" in text
    assert "TRAINING trainer: refused: fault: 'shoe-fire' is not KIND[=VALUE]" in text
    assert "practice deck: royal-flush dealt to area 3" in text, text[-3000:] + err[-2000:]
    assert "HIT at area 3: royal-flush" in text
