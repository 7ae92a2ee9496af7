"""Card identities never leave the controller before the round resolves (table-rules.md,
"Automated dealing shoe and shuffler"; NJ 13:69F-31.10): `tablectl journal export` taken in the
middle of a round hides that round's cards, and shows them once the round is resolved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from report_journals import TableDriver

STACKS = [
    [0, 1, 2, 3, 4, 5, 6],
    [7, 8, 9, 10, 11, 12, 13],
    [14, 15, 16, 17, 18, 19, 20],
    [21, 22, 23, 24, 25, 26, 27],
    [28, 29, 30, 31, 32, 33, 34],
    [35, 36, 37, 38, 39, 40, 41],
    [42, 43, 44, 45, 46, 47, 48],
]


def export(db: Path, fmt: str = "jsonl") -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "journal",
            "export",
            "--db",
            str(db),
            "--format",
            fmt,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return proc.stdout


def dealt_entries(db: Path) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, export(db).splitlines()) if e["type"] == "dealt"]


def deal_with_cards(t: TableDriver, wagers: list[int]) -> None:
    for area in wagers:
        t.send("chip_detected", position=area)
    t.send("lockout_pressed")
    t.close_side_wagers()
    t.send("chips_confirmed")
    t.activate_rng()
    if t.config.side_wager_offered:
        t.send("side_wagers_settled")
    t.send("dealt", remaining=4, stacks=STACKS)


def test_cards_of_an_unresolved_round_are_hidden_in_the_export(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    t = TableDriver(db)
    t.open_table()
    deal_with_cards(t, [2])
    t.send("play_complete")
    t.send("progressive_outcome", position=2, line=None)
    t.after_round()
    deal_with_cards(t, [3])  # the next round is dealt and still in play
    t.close()

    first, second = dealt_entries(db)
    assert first["round"] < second["round"]
    assert first["data"]["stacks"] == STACKS
    assert "redacted" not in first
    assert second["data"]["stacks"] == "hidden until the round resolves"
    assert second["redacted"] is True
    csv_text = export(db, "csv")
    assert str(STACKS[0]).replace(" ", "") in csv_text.replace(" ", "")  # the finished round
    assert csv_text.count("hidden until the round resolves") == 1


def test_cards_are_shown_once_the_round_is_resolved(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    t = TableDriver(db)
    t.open_table()
    deal_with_cards(t, [1])
    t.send("play_complete")
    t.send("progressive_outcome", position=1, line=None)
    t.after_round()
    t.close()
    (entry,) = dealt_entries(db)
    assert entry["data"]["stacks"] == STACKS
