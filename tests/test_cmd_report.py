"""``tablectl report rounds|shift|meters|hits`` as commands on a journal the machine wrote.

Checks the JSON contract (keys of ``progressive`` and of each meter level), the time window
arguments (ISO-8601 UTC or milliseconds), the human-readable output, and that a bad argument or
file gives a clear message and a non-zero exit without touching any file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from report_journals import standard_journal

from controller.journal.store import Journal

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TABLECTL, *args], capture_output=True, text=True, cwd=ROOT)


def report_json(*args: str) -> Any:
    done = tablectl("report", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cmdreport") / "journal.db"
    standard_journal(path)
    return path


def test_shift_json_has_the_progressive_contract_and_balances(db: Path) -> None:
    shift = report_json("shift", "--db", str(db))
    p = shift["progressive"]
    assert set(p) == {
        "wagers",
        "wagered_cents",
        "contributed_cents",
        "paid_from_meter_cents",
        "meter_start_cents",
        "meter_end_cents",
        "adjustments_cents",
        "house_funded_cents",  # shown, outside the meter's balance (paid in by the house)
        "paid_by_pool_cents",  # a linked level's hits the pool's meter paid (docs/link.md)
    }
    assert all(isinstance(v, int) and not isinstance(v, bool) for v in p.values())
    assert p["meter_end_cents"] == (
        p["meter_start_cents"]
        + p["contributed_cents"]
        - p["paid_from_meter_cents"]
        + p["adjustments_cents"]
    )
    with Journal.open(db) as j:
        state = j.last_state()
    assert state is not None
    stored = state.meters["progressive"]
    assert p["meter_end_cents"] == sum(
        int(stored[k]) for k in ("display_cents", "reserve_cents", "overflow_cents")
    )


def test_meters_json_lists_every_level_with_its_meters(db: Path) -> None:
    meters = report_json("meters", "--db", str(db))
    (level,) = meters["levels"]
    assert {
        "level",
        "progressive_in",
        "wagered_cents",
        "contributed_cents",
        "display_cents",
        "reserve_cents",
        "overflow_cents",
        "hits",
        "paid_cents",
    } <= set(level)
    assert level["level"] == "progressive"


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat().replace("+00:00", "Z")


def test_window_in_iso_and_in_ms_gives_the_same_shift(db: Path) -> None:
    with Journal.open(db) as j:
        stamps = [e.ts_ms for e in j.entries()]
    start, end = stamps[10] - stamps[10] % 1000, stamps[-1] + 1000 - stamps[-1] % 1000
    by_ms = report_json("shift", "--db", str(db), "--from", str(start), "--to", str(end))
    by_iso = report_json("shift", "--db", str(db), "--from", _iso(start), "--to", _iso(end))
    assert by_ms == {**by_iso, "from": by_ms["from"], "to": by_ms["to"]}
    assert by_ms["from"] == start and by_ms["to"] == end
    whole = report_json("shift", "--db", str(db))
    before = report_json("shift", "--db", str(db), "--to", str(start))
    assert before["progressive"]["meter_end_cents"] == by_ms["progressive"]["meter_start_cents"]
    assert (
        before["progressive"]["contributed_cents"] + by_ms["progressive"]["contributed_cents"]
        == whole["progressive"]["contributed_cents"]
    )


def test_rounds_and_hits_json(db: Path) -> None:
    rounds = report_json("rounds", "--db", str(db))["rounds"]
    assert [r["round"] for r in rounds][:6] == [1, 2, 3, 4, 5, 6]
    hits = report_json("hits", "--db", str(db), "--limit", "1")["hits"]
    assert len(hits) == 1
    assert {"table", "position", "level", "line", "cents", "time", "round", "validated_by"} <= set(
        hits[0]
    )


def test_text_reports_are_readable(db: Path) -> None:
    shift = tablectl("report", "shift", "--db", str(db))
    assert shift.returncode == 0
    assert "meter at start" in shift.stdout and "= meter at end" in shift.stdout
    hits = tablectl("report", "hits", "--db", str(db))
    assert "validated by bob" in hits.stdout
    rounds = tablectl("report", "rounds", "--db", str(db))
    assert "late chips ignored at [5]" in rounds.stdout
    assert " by rng (seat " in rounds.stdout  # recall says how the starting position was found
    meters = tablectl("report", "meters", "--db", str(db))
    assert meters.stdout.startswith("meters of table T9")


def test_bad_window_arguments_are_refused(db: Path) -> None:
    bad = tablectl("report", "shift", "--db", str(db), "--from", "last tuesday")
    assert bad.returncode == 2
    assert "--from: expected ISO-8601" in bad.stderr
    backwards = tablectl("report", "shift", "--db", str(db), "--from", "2000", "--to", "1000")
    assert backwards.returncode == 2
    assert "--to must be later than --from" in backwards.stderr
    meters = tablectl("report", "meters", "--db", str(db), "--from", "1000")
    assert meters.returncode == 2


def test_missing_or_garbage_journal_is_a_clean_error(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    done = tablectl("report", "shift", "--db", str(missing), "--json")
    assert done.returncode == 1
    assert "no such journal file" in done.stderr
    assert not missing.exists()
    garbage = tmp_path / "garbage.db"
    garbage.write_text("SQLite format 3 but not really\n" * 50)
    done = tablectl("report", "meters", "--db", str(garbage))
    assert done.returncode == 1
    assert "garbage.db" in done.stderr
    assert "Traceback" not in done.stderr
