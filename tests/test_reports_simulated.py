"""Reports and journal commands on a journal produced by ``tablectl simulate --headless``.

The whole service (owner thread, round machine, journal, simulated shoe and shuffler on the device
adapter, mock pins) plays 40 rounds with injected faults (a shoe jam, a short deck); the shift's
progressive reconciliation (NY 5324.41(k)(5)) must hold to the cent for the whole journal and for
every cut, agree with the meters stored beside the journal, and ``journal verify`` (which replays
every entry through the round machine) must pass.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal.reports import JournalReader, rounds_report, shift_report
from controller.journal.store import Journal

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]
ROUNDS = 40


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("sim") / "journal.db"
    done = subprocess.run(
        [
            *TABLECTL,
            "simulate",
            "--headless",
            "--rounds",
            str(ROUNDS),
            "--seed",
            "5",
            "--faults",
            "shoe-jam@3,shuffler-count=52@6",
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return db


def _identity(p: dict[str, int]) -> bool:
    return p["meter_end_cents"] == (
        p["meter_start_cents"]
        + p["contributed_cents"]
        - p["paid_from_meter_cents"]
        + p["adjustments_cents"]
    )


def test_simulated_journal_verifies_with_replay(sim_db: Path) -> None:
    done = subprocess.run(
        [*TABLECTL, "journal", "verify", "--db", str(sim_db), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    report = json.loads(done.stdout)
    assert report["problems"] == []
    assert done.returncode == 0
    assert report["rounds"] == ROUNDS


def test_simulated_shift_reconciles_to_the_cent_k5(sim_db: Path) -> None:
    with Journal.open(sim_db) as j:
        state = j.last_state()
        stamps = sorted({e.ts_ms for e in j.entries()})
    assert state is not None
    with JournalReader(sim_db) as reader:
        whole = shift_report(reader)
        p = whole["progressive"]
        assert whole["problems"] == []
        assert whole["rounds"] == ROUNDS
        assert _identity(p)
        stored = sum(
            int(v["display_cents"]) + int(v["reserve_cents"]) + int(v["overflow_cents"])
            for v in state.meters.values()
        )
        assert p["meter_end_cents"] == stored
        # every wager puts at least 21% of a $1 wager on the meter (k)(5)
        assert p["contributed_cents"] >= p["wagers"] * 21
        for cut in stamps[:: max(1, len(stamps) // 25)]:
            a = shift_report(reader, None, cut)["progressive"]
            b = shift_report(reader, cut, None)["progressive"]
            assert _identity(a) and _identity(b)
            assert a["meter_end_cents"] == b["meter_start_cents"]
            assert a["contributed_cents"] + b["contributed_cents"] == p["contributed_cents"]
            assert a["wagers"] + b["wagers"] == p["wagers"]


def test_simulated_faults_appear_in_game_recall(sim_db: Path) -> None:
    with JournalReader(sim_db) as reader:
        rounds = rounds_report(reader)
        shift = shift_report(reader)
    faulted = [r for r in rounds if r["faults"]]
    assert faulted, "the injected faults must be recalled with their rounds"
    codes = {f["code"] for r in faulted for f in r["faults"] if "code" in f}
    assert shift["faults"] == sum(1 for r in rounds for f in r["faults"] if "code" in f)
    assert {"SHOE_JAM", "DECK_COUNT_52"} <= codes  # the two faults injected by --faults
    voided = [r for r in rounds if r["void"]]
    assert shift["voided_rounds"] == len(voided) >= 1  # a jam while dealing voids the round
    completed = [r for r in rounds if r["completed"]]
    assert len(completed) == ROUNDS
    for r in completed:
        assert r["starting_position"] is not None
        assert 1 <= r["starting_position"]["number"] <= 7


def _report(db: Path, *args: str) -> str:
    done = subprocess.run(
        [*TABLECTL, "report", *args, "--db", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_meters_report_counts_every_win_the_hits_report_lists_ny_5320_8(sim_db: Path) -> None:
    """``report meters`` said "0 hits" where ``report hits`` listed ten (it counted only the
    hits paid from the meter): it now names the wins, and which of them the meter paid."""
    listed = json.loads(_report(sim_db, "hits", "--json", "--limit", "100000"))["hits"]
    meters = json.loads(_report(sim_db, "meters", "--json"))["levels"]
    assert listed and sum(lvl["wins"] for lvl in meters) == len(listed)
    line = next(t for t in _report(sim_db, "meters").splitlines() if "wins paid" in t)
    level = meters[0]
    assert f"{level['wins']} wins paid" in line
    assert f"{level['hits']} of them from the meter" in line


def test_the_rounds_report_says_which_rounds_verify_counts(sim_db: Path) -> None:
    """``report rounds`` counted 22 where ``journal verify`` said 21: verify counts completed
    rounds, the report every round begun; its header now splits them."""
    rounds = json.loads(_report(sim_db, "rounds", "--json"))["rounds"]
    complete = sum(1 for r in rounds if r["completed"] and not r["void"])
    header = _report(sim_db, "rounds").splitlines()[1]
    assert header.startswith(f"{len(rounds)} rounds: {complete} complete, ")
    verify = subprocess.run(
        [*TABLECTL, "journal", "verify", "--db", str(sim_db)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert f"{complete} rounds" in verify.stdout.splitlines()[0]


def test_the_shift_header_never_shows_an_empty_time_range(sim_db: Path) -> None:
    header = _report(sim_db, "shift").splitlines()[1]
    assert " - .. -" not in header
    assert header.count("(first entry)") == 1 and header.count("(last entry)") == 1
    assert "Z (first entry) .. 20" in header
