"""Reports rebuilt from a journal written by the real round machine (controller/journal/reports.py).

The journal comes from `report_journals.standard_journal`: the real RoundMachine and Journal driven
the way the owner thread drives them. Expected figures are worked out here from the configuration
and the regulations (NY 5324.41(k)(5) contributions, (k)(6) the meter at the time of payment), never
copied from the report code; the shift's identity is checked to the cent against the meters the
machine stored, for the whole journal and for windows cut at every entry.
"""

from __future__ import annotations

import calendar
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_journals import TableDriver, standard_journal

from controller.journal.reports import (
    JournalReader,
    ReportError,
    hits_report,
    meters_report,
    parse_time,
    rounds_report,
    shift_report,
)
from controller.journal.store import Journal
from fsm.round import GameConfig

CONFIG = GameConfig(table_id="T9")
LEVEL = CONFIG.levels[0]
WAGER = CONFIG.progressive_wager_cents
# (k)(5): each $1 wager puts rate_bp (display) + hidden_rate_bp (reserve) basis points on the meter
VISIBLE_PER_WAGER = WAGER * LEVEL.rate_bp // 10_000  # 21 cents
HIDDEN_PER_WAGER = WAGER * LEVEL.hidden_rate_bp // 10_000  # 5 cents
WAGERS_PER_ROUND = [3, 1, 2, 6, 1, 3]  # standard_journal: five played rounds, then the voided one


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TableDriver]:
    path = tmp_path_factory.mktemp("reports") / "journal.db"
    driver = standard_journal(path)
    return path, driver


@pytest.fixture()
def reader(journal: tuple[Path, TableDriver]) -> Iterator[JournalReader]:
    with JournalReader(journal[0]) as r:
        yield r


def stored_meter_cents(path: Path) -> int:
    with Journal.open(path) as j:
        state = j.last_state()
    assert state is not None
    v = state.meters[LEVEL.name]
    return int(v["display_cents"]) + int(v["overflow_cents"]) + int(v["reserve_cents"])


def test_shift_identity_holds_to_the_cent_over_the_whole_journal_k5(
    journal: tuple[Path, TableDriver], reader: JournalReader
) -> None:
    """NY 5324.41(k)(5): meter end = start + contributions - payouts deducted + adjustments."""
    path, _ = journal
    p = shift_report(reader)["progressive"]
    assert isinstance(p, dict)
    assert p["meter_start_cents"] == LEVEL.initial_cents
    assert p["meter_end_cents"] == stored_meter_cents(path)
    assert (
        p["meter_end_cents"]
        == p["meter_start_cents"]
        + p["contributed_cents"]
        - p["paid_from_meter_cents"]
        + p["adjustments_cents"]
    )
    wagers = sum(WAGERS_PER_ROUND)
    assert p["wagers"] == wagers
    assert p["wagered_cents"] == wagers * WAGER
    assert p["contributed_cents"] == wagers * (VISIBLE_PER_WAGER + HIDDEN_PER_WAGER)


def test_meter_hit_is_paid_at_the_meter_at_payment_time_k6(reader: JournalReader) -> None:
    """NY 5324.41(k)(4),(6): a natural royal flush pays 10% of the meter when it is paid."""
    display_before = LEVEL.initial_cents + VISIBLE_PER_WAGER * sum(WAGERS_PER_ROUND[:3])
    expected = display_before * 10 // 100
    report = shift_report(reader)
    p = report["progressive"]
    assert isinstance(p, dict)
    assert p["paid_from_meter_cents"] == expected
    meter_hits = [h for h in report["hits"] if h["from"] == "meter"]
    assert [(h["position"], h["line"], h["cents"]) for h in meter_hits] == [
        (6, "natural-royal-flush", expected)
    ]


def test_adjustments_are_house_funded_reset_plus_correction_minus_voided_contributions(
    reader: JournalReader,
) -> None:
    """The reset after the meter payout is funded from the reserve first, then the house; the
    supervised correction (+$2.50) and the reversal of the voided round's contributions count as
    adjustments."""
    contributed_before_hit = sum(WAGERS_PER_ROUND[:3])
    display = LEVEL.initial_cents + VISIBLE_PER_WAGER * contributed_before_hit
    display -= display * 10 // 100
    reserve = HIDDEN_PER_WAGER * contributed_before_hit
    house = LEVEL.reset_cents - display - reserve
    voided = WAGERS_PER_ROUND[-1] * (VISIBLE_PER_WAGER + HIDDEN_PER_WAGER)
    p = shift_report(reader)["progressive"]
    assert isinstance(p, dict)
    assert p["adjustments_cents"] == house + 250 - voided


def _timestamps(path: Path) -> list[int]:
    with Journal.open(path) as j:
        return [e.ts_ms for e in j.entries()]


def test_shift_windows_chain_edge_to_edge_for_every_cut(
    journal: tuple[Path, TableDriver], reader: JournalReader
) -> None:
    """Cutting the journal anywhere: the first window's end meter is the second's start meter,
    each window's identity holds, and the flows of the two windows add up to the whole."""
    path, _ = journal
    whole = shift_report(reader)["progressive"]
    assert isinstance(whole, dict)
    keys = ("wagers", "contributed_cents", "paid_from_meter_cents", "adjustments_cents")
    for cut in sorted(set(_timestamps(path)))[1::3]:
        a = shift_report(reader, None, cut)["progressive"]
        b = shift_report(reader, cut, None)["progressive"]
        assert isinstance(a, dict) and isinstance(b, dict)
        assert a["meter_end_cents"] == b["meter_start_cents"], cut
        for w in (a, b):
            assert w["meter_end_cents"] == (
                w["meter_start_cents"]
                + w["contributed_cents"]
                - w["paid_from_meter_cents"]
                + w["adjustments_cents"]
            )
        for key in keys:
            assert a[key] + b[key] == whole[key], (cut, key)


def test_shift_counts_rounds_voids_and_faults(reader: JournalReader) -> None:
    report = shift_report(reader)
    assert report["rounds"] == 5
    assert report["voided_rounds"] == 1
    assert report["faults"] == 1
    assert report["problems"] == []


def test_shift_reports_stored_meters_the_movements_do_not_explain(tmp_path: Path) -> None:
    """A stored meter changed outside the machine (no journaled movement) is listed."""
    path = tmp_path / "j.db"
    d = TableDriver(path)
    d.open_table()
    d.play_round([1, 2], {})
    d.close()
    conn = sqlite3.connect(path)
    row = conn.execute("SELECT \"values\" FROM meters WHERE level = 'progressive'").fetchone()
    conn.execute(
        "UPDATE meters SET \"values\" = ? WHERE level = 'progressive'",
        (row[0].replace('"display_cents":100042', '"display_cents":100542'),),
    )
    conn.commit()
    conn.close()
    with JournalReader(path) as r:
        problems = shift_report(r)["problems"]
    assert problems == [
        "level progressive: initial amount plus journaled movements give $1,000.52, the stored "
        "meters hold $1,005.52"
    ]


def test_meters_report_is_the_stored_meters(
    journal: tuple[Path, TableDriver], reader: JournalReader
) -> None:
    path, _ = journal
    report = meters_report(reader)
    (level,) = report["levels"]
    assert set(level) >= {
        "level",
        "progressive_in",
        "wagered_cents",
        "contributed_cents",
        "display_cents",
        "reserve_cents",
        "overflow_cents",
        "hits",
        "paid_cents",
    }
    wagers = sum(WAGERS_PER_ROUND)
    assert level["progressive_in"] == wagers
    assert level["contributed_cents"] == wagers * (VISIBLE_PER_WAGER + HIDDEN_PER_WAGER)
    assert level["hits"] == 1  # one payout deducted from the meter
    assert level["display_cents"] + level["reserve_cents"] + level[
        "overflow_cents"
    ] == stored_meter_cents(path)
    # paid: the meter hit plus the fixed amounts of (k)(4) for a $1 wager (flush $3, straight $2,
    # four of a kind $20), from the chip tray
    meter_hit = (LEVEL.initial_cents + VISIBLE_PER_WAGER * 6) * 10 // 100
    assert level["paid_cents"] == meter_hit + 300 + 200 + 2000


def test_hits_report_names_who_validated_each_hit_k3(reader: JournalReader) -> None:
    """NY 5324.41(k)(3)(iii): a payout deducted from the meter waits for a supervisor; the report
    names who validated it. Fixed amounts from the chip tray need no validation."""
    hits = hits_report(reader)
    assert [(h["round"], h["position"], h["line"], h["validated_by"]) for h in hits] == [
        (1, 2, "flush", None),
        (3, 1, "straight", None),
        (3, 6, "natural-royal-flush", "bob"),
        (4, 3, "four-of-a-kind", None),
    ]
    assert all(h["table"] == "T9" and isinstance(h["time"], int) for h in hits)
    assert [h["line"] for h in hits_report(reader, limit=2)] == [
        "natural-royal-flush",
        "four-of-a-kind",
    ]


def test_game_recall_rebuilds_each_round(
    journal: tuple[Path, TableDriver], reader: JournalReader
) -> None:
    """Game recall: positions with wagers, the starting position drawn, outcomes, hits, the late
    chip refused after the lock-out (k)(2), faults and the void with its refunds."""
    _, driver = journal
    rounds = {r["round"]: r for r in rounds_report(reader)}
    assert [rounds[i]["positions"] for i in range(1, 7)] == [
        [1, 2, 3],
        [4],
        [1, 6],
        [1, 2, 3, 4, 5, 6],
        [5],
        [2, 3, 5],
    ]
    drawn = [e["data"]["value"] for e in _entries(driver) if e["type"] == "rng_drawn"]
    starts = [rounds[i]["starting_position"]["number"] for i in range(1, 7)]
    assert starts == drawn
    assert rounds[2]["late_chips"] == [5]
    assert rounds[3]["outcomes"] == [
        {"position": 1, "line": "straight"},
        {"position": 6, "line": "natural-royal-flush"},
    ]
    statuses = [(h["position"], h["status"]) for h in rounds[3]["hits"]]
    assert statuses == [(1, "paid"), (6, "paid")]
    void = rounds[6]
    assert void["void"] and "Open_Dealing" in str(void["void"])
    assert not void["completed"]
    assert [(r["position"], r["cents"]) for r in void["refunds"]] == [
        (2, WAGER),
        (3, WAGER),
        (5, WAGER),
    ]
    assert void["faults"][0]["code"] == "SHOE_JAM"
    assert all(rounds[i]["completed"] for i in range(1, 6))


def _entries(driver: TableDriver) -> list[dict[str, Any]]:
    with Journal.open(driver.journal.path) as j:
        return [e.to_json() for e in j.entries()]


def test_rounds_window_selects_rounds_by_time(
    journal: tuple[Path, TableDriver], reader: JournalReader
) -> None:
    all_rounds = rounds_report(reader)
    third = all_rounds[2]
    picked = rounds_report(reader, third["started"], third["ended"])
    assert third["round"] in [r["round"] for r in picked]
    assert all_rounds[0]["round"] not in [r["round"] for r in picked]


def test_parse_time_accepts_iso_utc_and_milliseconds() -> None:
    two_pm = calendar.timegm((2026, 11, 29, 14, 0, 0)) * 1000
    assert parse_time("1790000000000", "--from") == 1_790_000_000_000
    assert parse_time("2026-11-29T14:00:00Z", "--from") == two_pm
    assert parse_time("2026-11-29T15:00:00+01:00", "--to") == two_pm
    assert parse_time("2026-11-29T14:00:00.250", "--to") == two_pm + 250
    with pytest.raises(ValueError, match="--from: expected ISO-8601"):
        parse_time("yesterday", "--from")


def test_reader_refuses_missing_and_foreign_files_without_creating(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    with pytest.raises(ReportError, match="no such journal file"):
        JournalReader(missing)
    assert not missing.exists()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ReportError, match=r"garbage\.db"):
        JournalReader(garbage)
    assert garbage.read_bytes() == b"not a database at all" * 100


def test_wagers_are_priced_at_the_amount_in_force_when_made_k1(tmp_path: Path) -> None:
    """NY 5324.41(k)(1),(k)(5): a table changed in maintenance from $1 to $5 wagers (rate raised
    to the 27% a $5 wager needs): earlier wagers count $1 and 26 cents, later ones $5 and 160."""
    path = tmp_path / "j.db"
    d = TableDriver(path)
    d.open_table()
    d.play_round([1, 2], {})
    d.close_table()
    d.send("maintenance_entered", supervisor="ana")
    effects = d.send(
        "config_changed",
        supervisor="ana",
        changes={"progressive_wager_cents": 500, "levels[0].rate_bp": 2700},
    )
    assert [e["type"] for e in effects] == ["config_changed"]
    d.send("maintenance_exited", supervisor="ana")
    d.open_table()
    d.play_round([3], {})
    d.close()
    with JournalReader(path) as r:
        report = shift_report(r)
    p = report["progressive"]
    assert report["problems"] == []
    assert p["wagers"] == 3
    assert p["wagered_cents"] == 2 * 100 + 1 * 500
    assert p["contributed_cents"] == 2 * (2100 + 500) * 100 // 10_000 + (2700 + 500) * 500 // 10_000
    (level,) = report["levels"]
    assert level["wagered_cents"] == 700


def test_chips_of_a_round_voided_before_the_lockout_never_count(tmp_path: Path) -> None:
    """Chips lit in Betting, then a fault cleared with a void: refunded, never contributed; the
    next round's single wager is the only one counted."""
    path = tmp_path / "j.db"
    d = TableDriver(path)
    d.open_table()
    d.send("chip_detected", position=1)
    d.send("chip_detected", position=2)
    d.send("fault_raised", code="LINK_TIMEOUT", device="shoe", detail="silent")
    d.send("fault_cleared", supervisor="ana", void=True)
    d.after_round()
    d.play_round([3], {})
    d.close()
    with JournalReader(path) as r:
        report = shift_report(r)
        rounds = rounds_report(r)
    assert report["progressive"]["wagers"] == 1
    assert report["voided_rounds"] == 1
    voided = [x for x in rounds if x["void"]]
    assert [(f["position"], f["cents"]) for f in voided[0]["refunds"]] == [(1, 100), (2, 100)]


def test_house_funded_payouts_are_shown_and_the_shift_still_reconciles_k4i_k5(
    tmp_path: Path,
) -> None:
    """A $5 table: 100% of the meter times five ((k)(4)(i)) takes the whole meter, the house
    pays the other four meters and then the reset; the natural royal flush paid next, at the
    reset meter, is worth the royal flush's $500, more than half that meter ((g)(8)). The shift
    still balances to the cent and shows what the house funded."""
    path = tmp_path / "five.db"
    config = GameConfig.from_mapping(
        {
            "table_id": "T9",
            "progressive_wager_cents": 500,
            "levels": [
                {
                    "name": "progressive",
                    "initial_cents": 80_000,
                    "reset_cents": 80_000,
                    "rate_bp": 2700,
                }
            ],
        },
        "game",
    )
    d = TableDriver(path, config)
    d.open_table()
    d.play_round([1, 2], {1: "natural-royal-flush-and-pair", 2: "natural-royal-flush"})
    d.close()
    meter = 80_000 + 2 * 500 * 2700 // 10_000  # 80,270 after two $5 contributions
    with JournalReader(path) as reader:
        report = shift_report(reader)
        hits = hits_report(reader)
        recall = rounds_report(reader)
    first, second = (h for h in report["hits"] if h["from"] == "meter")
    assert (first["position"], first["cents"], first["house_cents"]) == (1, 5 * meter, 4 * meter)
    # reset to 80,000 (the house funds all of it: no reserve), then half of it is $400 < $500
    assert (second["line"], second["cents"], second["house_cents"]) == ("royal-flush", 50_000, 0)
    p = report["progressive"]
    assert isinstance(p, dict)
    assert p["paid_from_meter_cents"] == meter + 50_000
    resets = 80_000 + 50_000  # after each hit the display is topped up from nothing
    assert p["house_funded_cents"] == 4 * meter + resets
    assert (
        p["meter_end_cents"]
        == p["meter_start_cents"]
        + p["contributed_cents"]
        - p["paid_from_meter_cents"]
        + p["adjustments_cents"]
    )
    assert p["meter_end_cents"] == stored_meter_cents(path)
    assert report["problems"] == []
    assert [h["house_cents"] for h in hits] == [4 * meter, 0]
    paid = [h for h in recall[0]["hits"] if h["status"] == "paid"]
    assert [h["house_cents"] for h in paid] == [4 * meter, 0]
