"""``tablectl parsheet`` (issue 13): the filing page in text, JSON and CSV, the seeded main game,
and ``tablectl config check`` refusing a jackpot rarer than 1 in 100,000,000
(NJ 13:69D-1.52(e))."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from controller.cli import main
from controller.cli.parsheet import simulate_main_game
from controller.config import SIMULATED_TABLE, hash_pin
from fsm.rules.progressive import DATA_DIR
from fsm.rules.ranking import RankingOptions

full_deck_group = pytest.mark.xdist_group("parsheet-full-deck")

PIN_HASH = hash_pin("4321", salt=b"test-salt-16byte")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["parsheet", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_gives_every_line_and_the_main_game_with_standard_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(
        capsys, "--pay-table", "three-card", "--pay-table", "side-1-7-5.5", "--rounds", "300",
        "--format", "json",
    )  # fmt: skip
    assert code == 0
    doc = json.loads(out)
    names = [s["wager"] for s in doc["sheets"]]
    assert names == ["three-card", "side-1-7"]  # no seven-card table: no full enumeration
    three = doc["sheets"][0]
    assert three["hands"] == 23_426 and sum(ln["count"] for ln in three["lines"]) == 23_426
    assert 0 < three["return"] < 1 and three["house_edge"] == pytest.approx(1 - three["return"])
    main_game = doc["main_game"]
    for key in ("win", "push", "lose", "copy", "house_edge"):
        assert set(main_game[key]) == {"estimate", "standard_error"}
    assert doc["meta"]["rounds"] == 300 and doc["meta"]["seed"] == 1


def test_csv_has_one_row_per_line_and_the_return(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--pay-table", "three-card", "--rounds", "0", "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:4] == ["table", "wager", "line", "count"]
    lines = [r[2] for r in rows[1:] if r[1] == "three-card"]
    assert lines[-1] == "return" and "straight-flush-no-joker" in lines


@full_deck_group
def test_text_filing_of_the_simulated_table_lists_the_nj_items(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """NJ 13:69D-1.52(e): initial and reset amounts, the rate of progression and the probability
    of each jackpot, for the configured progressive table."""
    code, out, _ = _run(capsys, "--config", str(SIMULATED_TABLE), "--rounds", "100")
    assert code == 0
    assert "154,143,080 seven-card hands" in out
    assert "initial $1,000.00, reset $1,000.00, rate of progression 21% + hidden 5%" in out
    assert "jackpot natural-royal-flush-and-pair: 1 in 583,875 hands" in out
    assert "break-even meter: $67,313.75" in out
    assert "RARER THAN" not in out


@full_deck_group
def test_a_jackpot_rarer_than_1_in_100_million_is_flagged_and_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table paying $5,000 for a royal flush and a pair pays a natural royal flush and a pair
    that way too while the meter is below $5,000: at the $1,000 reset its jackpot is never won.
    The filing flags it and ``tablectl config check`` refuses the table (NJ 13:69D-1.52(e))."""
    text = (DATA_DIR / "ny-5324-41-k4.toml").read_text()
    rare = tmp_path / "rare.toml"
    rare.write_text(text.replace("amount_cents = 20000", "amount_cents = 500000", 1))
    config = tmp_path / "table.toml"
    body = (
        '[table]\nid = "T7"\nasset_number = 77\n[game]\npaytable = "{path}"\n'
        '[journal]\npath = "{db}"\n[supervisors.ana]\nname = "Ana"\npin_hash = "{pin}"\n'
    )
    config.write_text(body.format(path=rare, db=tmp_path / "j.db", pin=PIN_HASH))
    code, out, _ = _run(capsys, "--config", str(config), "--rounds", "0")
    assert code == 0
    assert "jackpot natural-royal-flush-and-pair: none of the 154,143,080 hands" in out
    assert "RARER THAN 1 IN 100,000,000" in out
    assert main(["config", "check", str(config)]) == 1
    err = capsys.readouterr().err
    assert "jackpot 'natural-royal-flush-and-pair'" in err and "NJ 13:69D-1.52(e)" in err
    fair = tmp_path / "fair.toml"
    fair.write_text(
        body.format(path=DATA_DIR / "ny-5324-41-k4.toml", db=tmp_path / "j.db", pin=PIN_HASH)
    )
    assert main(["config", "check", str(fair)]) == 0


def test_main_game_is_repeatable_by_seed_and_near_the_published_figures() -> None:
    """table-rules.md: player wins about 28.6%, pushes 41.5%, loses 30.0%, house edge about
    2.7-2.9% (both sides on a typical house way, 5% commission): within four standard errors of
    4,000 seeded rounds."""
    opts = RankingOptions()
    one = simulate_main_game("reference", opts, 4_000, 7, False, "round-up-25").figures()
    two = simulate_main_game("reference", opts, 4_000, 7, False, "round-up-25").figures()
    assert one == two
    for name, published in (("win", 0.286), ("push", 0.415), ("lose", 0.300)):
        est, se = one[name]
        assert abs(est - published) < 4 * se, (name, est, se)
    edge, se = one["house_edge"]  # about 2.7-2.9% (table-rules.md)
    assert abs(edge - 0.028) < 4 * se and 0.005 < se < 0.02
    shares = sum(v[0] for k, v in one.items() if k.startswith("rule:"))
    assert shares == pytest.approx(1.0)


def test_unknown_pay_table_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--pay-table", "no-such-table")
    assert code == 2 and out == ""
    assert "--pay-table no-such-table" in err and "three-card" in err


@full_deck_group
def test_the_link_controllers_configuration_files_the_pool_nj_1_52e(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """NJ 13:69D-1.52(e) for a linked progressive: ``--config`` of the link controller files the
    pool (its level's initial and reset amounts and rates, its pay table and wager, the return at
    its meter, its tables), not a table's configuration."""
    link = tmp_path / "link.toml"
    link.write_text(
        '[link]\npool = "POOL1"\nservers = ["nats://127.0.0.1:4222"]\n'
        f'journal = "{tmp_path / "pool.db"}"\nkeys = "{tmp_path}"\n'
        '[pool]\nlevel = "progressive"\ninitial_cents = 50000\nreset_cents = 40000\n'
        'rate_bp = 2200\nhidden_rate_bp = 300\nwager_cents = 100\npaytable = "ny-5324-41-k4"\n'
        "[tables]\nT1 = 70001\nT2 = 70002\n"
    )
    code, out, err = _run(capsys, "--config", str(link), "--rounds", "0")
    assert code == 0, err
    assert "Linked pool POOL1" in out and "T1 (asset 70001), T2 (asset 70002)" in out
    assert "initial $500.00, reset $400.00, rate of progression 22% + hidden 3%" in out
    assert "return at meter $400.00 ($1 wager)" in out
    assert "== three-card" not in out  # the pool's progressive only
    assert not (tmp_path / "pool.db").exists()  # filing opens no journal
