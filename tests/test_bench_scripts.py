"""The benchmarks' scripted inputs are legal for the code they measure: a benchmark that drives
the round machine with a round it rejects measures rejections (``make bench`` stopped at
``bench_round`` when the RNG began to need the dealer's activation, NY 5324.41(h)(8)(ii)). The
timings themselves are the benchmarks' business (`bench/`), never a test's."""

from __future__ import annotations

import importlib.util
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

from controller.journal.format import entry_hash
from fsm.round.config import GameConfig
from fsm.round.effects import Rejected
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_module(name: str) -> Any:
    """A module of ``bench/`` by its file: ``bench`` is not an installed package."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_round_s_scripted_rounds_are_accepted_event_by_event() -> None:
    _round_events = _bench_module("bench_round")._round_events
    machine = RoundMachine(GameConfig.from_mapping({}, "game"))
    now = 0
    for event in (
        Event("table_opened", {"supervisor": "s"}),
        Event("shuffle_complete", {"count": 53}),
    ):
        machine.step(event, now)
    for _ in range(3):
        for event in _round_events(machine.round_id):
            now += 1000
            effects = machine.step(event, now)
            assert not [e for e in effects if isinstance(e, Rejected)], (event, machine.state)
    assert machine.state == "Open_Betting"


def test_make_bench_names_each_missed_target_and_leaves_the_tree_clean() -> None:
    """``make bench`` exits 1 naming every figure that misses its README target, and writes
    under build/ (git-ignored) unless ``--record`` (``make bench-record``) is given."""
    spec = importlib.util.spec_from_file_location("bench_main", BENCH / "__main__.py")
    assert spec is not None and spec.loader is not None
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)
    assert main.SCRATCH.relative_to(BENCH.parent).parts[0] == "build"
    assert main.RECORDED == BENCH / "results.json"
    assert main.missed({"journal_syncs_per_round": 16.0, "five_card_vs_phevaluator": 0.3}) == []
    assert main.missed({"journal_syncs_per_round": 27.2, "link_tables_sustained": 999}) == [
        "link_tables_sustained = 999 (target >= 1000)",
        "journal_syncs_per_round = 27.2 (target <= 16)",
    ]
    readme = (BENCH.parent / "README.md").read_text()
    for key in ("cli_start_vs_bare_python", "journal_bytes_per_round", "service_ready_s"):
        assert f"`{key}`" in readme, key


def test_bench_storage_s_next_format_what_if_is_lossless_and_smaller(tmp_path: Path) -> None:
    """The operator guide's "Why 30 KB is not met" offers the hashes as blobs and the data
    zlib-compressed as a next journal format whose chain still covers what is stored: each
    layout's row must give back the entry whose hash it carries, and cost fewer bytes."""
    bench_storage = _bench_module("bench_storage")
    db = tmp_path / "journal.db"
    simulate = [sys.executable, "-m", "controller.cli", "simulate", "--headless"]
    subprocess.run(
        [*simulate, "--rounds", "4", "--seed", "29", "--db", str(db)],
        cwd=BENCH.parent,
        check=True,
        capture_output=True,
        timeout=300,
    )
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT seq, ts_ms, round_id, type, data, prev_hash, state_hash, hash, mac"
        " FROM journal ORDER BY seq"
    ).fetchall()
    conn.close()
    assert len(rows) > 20
    for row in rows:
        blobs = bench_storage._stored_as("blobs", row)
        packed = bench_storage._stored_as("blobs_zlib", row)
        assert all(isinstance(h, bytes) and len(h) == 32 for h in packed[5:8])
        data = zlib.decompress(packed[4]).decode("ascii")
        prev, state, digest = (h.hex() for h in packed[5:8])
        assert (data, prev, state, digest) == (row[4], *row[5:8])
        assert blobs[4] == row[4] and blobs[5:8] == packed[5:8]
        assert entry_hash(row[0], row[1], row[2], row[3], data, prev, state) == digest
    savings = bench_storage._layout_savings(db, 0, 512, 1)
    assert 0 < savings["blobs"] < savings["blobs_zlib"], savings
