"""Player banking on the simulated table, end to end (NY 5324.41(h)): the scripted players take
the bank through ``tablectl simulate --headless`` and the journal shows the rules of (h) kept.

- (h)(2) no player banks the first round after the table opens (the start of the game);
- (h)(3) the first offer starts with the player farthest to the dealer's right (betting area 1)
  and moves one seat counterclockwise each round until it returns to the dealer (a round with no
  offer); the bank goes to a player offered it; no player banks two consecutive rounds;
- (h)(8)(iii) / (h)(10)(iii) the bank's position, instead of the dealer's, counts as number one
  when the betting positions, including the dealer, are counted to the starting position;
- (h)(8)(i) / (h)(10)(i) with dice the bank shakes at least three times; a lid the bank lifts
  means covered and shaken again;
- `tablectl journal verify` replays it; `tablectl report rounds` names the bank of each round;
- a run SIGKILLed in banked rounds and started again ends with exactly N rounds and verifies.

Expected values come from the rule text: the seats around the table counterclockwise are the
dealer, then betting areas 1..6 (area 1 is farthest to the dealer's right, table-rules.md
"Starting position"; the same rotation (h)(3) uses for the offer, which "returns to the dealer"
after area 6).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_kill import _entries
from test_simulate import check_journal

from controller import cli
from controller.config import SIMULATED_TABLE
from controller.journal.audit import connect_read_only
from controller.sim.simulate import load_sim_config

Row = tuple[int, int | None, str, dict[str, Any]]

#: The seats in counterclockwise order around the table, from the rule text (not the code):
#: the dealer (seat 0), then betting area 1 (farthest to the dealer's right) ... area 6.
COUNTERCLOCKWISE = [0, 1, 2, 3, 4, 5, 6]
DEALER = 0
ROUNDS = 40
SEED = 7


def count_to(first: int, number: int) -> int:
    """The seat reached by counting ``number`` positions counterclockwise, every position
    including the dealer counted, with ``first`` (the bank's seat, or the dealer's) as one."""
    seat = first
    for _ in range(number - 1):
        seat = COUNTERCLOCKWISE[(COUNTERCLOCKWISE.index(seat) + 1) % len(COUNTERCLOCKWISE)]
    return seat


def test_counting_helper_matches_worked_examples_from_the_text() -> None:
    """Worked by hand from (h)(10)(iii) and table-rules.md, so the helper itself can be wrong."""
    assert count_to(DEALER, 1) == DEALER  # no bank: the dealer is number one
    assert count_to(DEALER, 2) == 1  # position 2 = betting area 1
    assert count_to(DEALER, 7) == 6  # position 7 = betting area 6
    assert count_to(3, 1) == 3  # area 3 banks: area 3 is number one
    assert count_to(3, 5) == DEALER  # 3, 4, 5, 6, dealer
    assert count_to(3, 6) == 1  # ..., dealer, area 1
    assert count_to(6, 2) == DEALER  # the dealer follows area 6
    assert count_to(1, 7) == DEALER


@dataclass
class RoundLog:
    """One round id as the journal tells it."""

    round_id: int
    bank: int | None = None  # after the last `bank` effect of the round
    offers: list[list[int]] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)
    starts: list[dict[str, Any]] = field(default_factory=list)
    rng: list[int] = field(default_factory=list)
    dice: list[int] = field(default_factory=list)
    completed: bool = False
    voided: bool = False
    rows: list[Row] = field(default_factory=list)


def rounds_of(rows: list[Row]) -> dict[int, RoundLog]:
    """Per round id: offers, bank, starting position, completion. An entry belongs to the
    round id it was journaled with (the shuffle that opens betting carries the new round)."""
    logs: dict[int, RoundLog] = {}
    for row in rows:
        _, rid, kind, data = row
        if kind == "round_completed":
            rid = int(data["round_id"])
        if not rid:
            continue
        log = logs.setdefault(rid, RoundLog(rid))
        log.rows.append(row)
        effects = data["effects"]
        if kind == "round_completed" and not _rejected(effects):
            log.completed = True
        if kind == "bank_accepted":
            assert not _rejected(effects), ("a bank_accepted was refused", row)
            log.accepted.append(int(data["position"]))
        if kind == "rng_drawn" and not _rejected(effects):
            log.rng.append(int(data["value"]))
        if kind == "dice_position_entered" and not _rejected(effects):
            log.dice.append(int(data["total"]))
        for e in effects:
            if e["type"] == "bank_offer":
                log.offers.append(list(e["order"]))
            elif e["type"] == "bank":
                log.bank = e["position"]
            elif e["type"] == "starting_position":
                log.starts.append(e)
            elif e["type"] == "round_voided":
                log.voided = True
                log.bank = None  # a voided round is not a round of play
    return logs


def _rejected(effects: list[dict[str, Any]]) -> bool:
    return any(e["type"] == "rejected" for e in effects)


def check_banking(rows: list[Row]) -> list[RoundLog]:
    """Every banking rule of (h) the journal can show; returns the completed rounds in order."""
    assert [r[2] for r in rows].count("table_opened") == 1  # one game: the table opened once
    logs = rounds_of(rows)
    played = [logs[rid] for rid in sorted(logs) if logs[rid].completed]
    done_before = 0  # rounds of play completed since the game started (table open or a void)
    previous_bank: int | None = None
    for log in (logs[rid] for rid in sorted(logs)):
        if not (log.completed or log.voided):
            continue
        if done_before == 0:  # (h)(2): the start of the game
            assert log.offers == [] and log.accepted == [] and log.bank is None, log.round_id
        else:
            turn = (done_before - 1) % 7  # the first offer: area 1, 2, ... 6, then the dealer
            if turn == 6:  # the offer has returned to the dealer: the house banks (h)(3)
                assert log.offers == [] and log.accepted == [], log.round_id
            else:
                first = turn + 1
                # every player from `first` on, counterclockwise; the dealer is no player
                ccw = [s for s in (count_to(first, n) for n in range(1, 8)) if s != DEALER]
                expected = [a for a in ccw if a != previous_bank]
                assert log.offers == [expected], (log.round_id, log.offers, expected)
                for area in log.accepted:  # only a player offered the bank accepts it
                    assert area in expected, (log.round_id, area)
        for start in log.starts:  # (h)(8)(iii), (h)(10)(iii)
            assert start["bank"] == log.bank or log.voided, (log.round_id, start)
            if start.get("by") == "three_card":  # (n)(4): the farthest left, nothing counted
                assert start["seat"] == max(start["order"]), (log.round_id, start)
                continue
            first = DEALER if start["bank"] is None else int(start["bank"])
            assert start["seat"] == count_to(first, int(start["number"])), (log.round_id, start)
            assert start["order"][0] == start["seat"]
        for value in log.rng:
            assert any(s["number"] == value for s in log.starts), (log.round_id, value)
        for total in log.dice:  # three dice: total t is position ((t - 1) mod 7) + 1
            assert any(s["number"] == (total - 1) % 7 + 1 for s in log.starts), log.round_id
        if log.completed:
            if log.bank is not None:  # (h)(3): never two consecutive rounds
                assert log.bank != previous_bank, (log.round_id, log.bank)
            previous_bank = log.bank
            done_before += 1
        elif log.voided:  # the void replaces the deck: the next round starts a game (h)(2)
            done_before, previous_bank = 0, None
    return played


def _run(db: Path, rounds: int, seed: int, config: Path | None = None) -> None:
    argv = ["simulate", "--headless", "--rounds", str(rounds), "--seed", str(seed)]
    argv += ["--db", str(db)] + (["--config", str(config)] if config else [])
    assert cli.main(argv) == 0


def test_simulated_players_bank_by_the_rules_h2_h3_h10(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tablectl simulate --headless --rounds 40` on the simulated table (player_banking =
    true): some rounds are banked by players, each bank_accepted is accepted, (h)(2) and (h)(3)
    hold, the RNG number is counted from the bank ((h)(10)(iii)), the journal verifies and the
    rounds report names each round's bank."""
    assert load_sim_config(None).game.player_banking
    db = tmp_path / "j.db"
    _run(db, ROUNDS, SEED)
    rows = check_journal(db, ROUNDS)
    played = check_banking(rows)
    banked = [log for log in played if log.bank is not None]
    assert len(banked) >= 5, [log.bank for log in played]
    assert len({log.bank for log in banked}) >= 3  # not always the same seat
    # a banked round counted from the bank lands somewhere other than the house count would
    assert any(s["seat"] != count_to(DEALER, s["number"]) for log in banked for s in log.starts)
    capsys.readouterr()
    assert cli.main(["journal", "verify", "--db", str(db)]) == 0
    assert "ok" in capsys.readouterr().out
    assert cli.main(["report", "rounds", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["rounds"]
    shown = {int(r["round"]): r["bank"] for r in report}
    expected = {log.round_id: log.bank for log in played}
    # the next round may have begun (shuffled, betting open) before the simulator stopped
    assert {rid: shown.get(rid, "missing") for rid in expected} == expected
    assert cli.main(["report", "rounds", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert f"round {banked[0].round_id} " in text and f"bank {banked[0].bank}" in text


def test_the_same_seed_makes_the_same_bank_decisions(tmp_path: Path) -> None:
    """The players' choices are seeded by the seed and the round id: two runs bank alike."""
    banks = []
    for name in ("a.db", "b.db"):
        db = tmp_path / name
        _run(db, 15, SEED)
        banks.append([log.bank for log in check_banking(check_journal(db, 15))])
    assert banks[0] == banks[1] and any(b is not None for b in banks[0])


def test_bank_shakes_the_dice_and_a_lifted_lid_means_a_reshake_h10_i(tmp_path: Path) -> None:
    """Dice start on a banking table: the total is counted from the bank ((h)(10)(iii)); when
    the bank lifts the lid the dealer has the shaker covered and shaken again, at least three
    times, before the total is entered ((h)(10)(i))."""
    text = SIMULATED_TABLE.read_text("utf-8")
    text = text.replace('start_mode = "rng"', 'start_mode = "dice"')
    text = text.replace('side_wager = { offered = true, odds = "6:1" }', "")
    config = tmp_path / "dice.toml"
    config.write_text(text, "utf-8")
    game = load_sim_config(config).game
    assert game.start_mode == "dice" and game.player_banking
    db = tmp_path / "j.db"
    _run(db, ROUNDS, SEED, config)
    rows = check_journal(db, ROUNDS, game)
    played = check_banking(rows)
    banked = {log.round_id for log in played if log.bank is not None}
    assert banked
    lifts = [r for r in rows if r[2] == "lid_lifted_by_bank"]
    assert lifts, "no lid lifted by the bank in this seeded run"
    for seq, rid, _, data in lifts:
        assert not _rejected(data["effects"]) and rid in banked, seq
        assert any(e.get("code") == "RESHAKE_REQUIRED" for e in data["effects"])
    for i, row in enumerate(rows):
        if row[2] == "dice_position_entered":
            shakes = 0  # shakes since the last lid lift (or since the count started)
            for prev in reversed(rows[:i]):
                if prev[2] != "shake_detected":
                    break
                shakes += 1
            assert shakes >= 3, row[0]


def test_three_card_bonus_table_the_bank_gets_its_stacks_h6_n4(tmp_path: Path) -> None:
    """With the three-card bonus the stacks go only to the positions the dealer enters as
    holding a pai gow wager (NY 5324.41(n)(4)-(5)); a player who banks plays one betting area
    ((h)(6)), so the dealer enters the bank's area and the bank's hand is dealt."""
    text = SIMULATED_TABLE.read_text("utf-8")
    text = text.replace('start_mode = "rng"', 'start_mode = "three_card"')
    text = text.replace("three_card_bonus = false", "three_card_bonus = true")
    text = text.replace('side_wager = { offered = true, odds = "6:1" }', "")
    config = tmp_path / "three.toml"
    config.write_text(text, "utf-8")
    game = load_sim_config(config).game
    assert game.three_card_bonus and game.player_banking
    db = tmp_path / "j.db"
    _run(db, 30, SEED, config)
    rows = check_journal(db, 30, game)
    played = check_banking(rows)
    banked = [log for log in played if log.bank is not None]
    assert banked
    for log in banked:
        entered = [r[3]["positions"] for r in log.rows if r[2] == "pai_gow_wagers"]
        assert entered and log.bank in entered[-1], (log.round_id, log.bank, entered)
        assert all(log.bank in s["order"] for s in log.starts), log.round_id


def _start(db: Path, rounds: int) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "controller.cli", "simulate", "--headless"]
    cmd += ["--rounds", str(rounds), "--seed", str(SEED), "--db", str(db)]
    root = Path(__file__).resolve().parent.parent
    return subprocess.Popen(
        cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ)
    )


def _accepted(db: Path) -> int:
    import sqlite3

    if not db.exists():
        return 0
    try:
        conn = connect_read_only(db)
        try:
            sql = "SELECT count(*) FROM journal WHERE type = 'bank_accepted'"
            return int(conn.execute(sql).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_sigkill_in_banked_rounds_still_ends_with_exactly_n_rounds(tmp_path: Path) -> None:
    """The kill test through banked rounds: each kill comes right after a player accepted the
    bank; the restarted run picks the round up from the committed state (the same bank), and
    the journal ends with exactly N rounds, verifies and keeps every rule of (h)."""
    db = tmp_path / "kill.db"
    rng = random.Random(20261129)
    kills = 0
    while kills < 5:
        before_entries, before_banks = _entries(db), _accepted(db)
        proc = _start(db, ROUNDS)
        while _accepted(db) <= before_banks and proc.poll() is None:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.01))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        kills += 1
        assert _entries(db) > before_entries
    final = _start(db, ROUNDS)
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err.decode(errors="replace")[-2000:]
    rows = check_journal(db, ROUNDS)
    played = check_banking(rows)
    assert kills == 5
    restarts = [r[0] for r in rows if r[2] == "power_up"][1:]
    assert len(restarts) == kills
    logs = rounds_of(rows)
    # at least one restart fell inside a round a player was banking
    inside = [
        rid
        for rid, log in logs.items()
        if log.accepted and any(log.rows[0][0] < seq < log.rows[-1][0] for seq in restarts)
    ]
    assert inside, restarts
    assert sum(log.bank is not None for log in played) >= 5
    assert Counter(r[2] for r in rows)["round_completed"] == ROUNDS
