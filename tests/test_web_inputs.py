"""A careless or hostile hand at the simulated table's inputs (POST /api/input): every malformed
entry is refused with its reason in words, nothing is journaled for it, no amount is rounded, and
the table plays on (DESIGN.md: bad input gets a clear, specific error, never a crash, never an
invented cent; NY 5324.41(j)(2)(i): the 1-7 side wagers as the dealer entered them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_web_server import Browser
from web_support import SimProcess, journal_rows

BAD_INPUTS: list[tuple[dict[str, Any], str]] = [
    ({"input": "chip", "position": True}, "area"),
    ({"input": "chip", "position": 1.5}, "area"),
    ({"input": "chip", "position": "1"}, "area"),
    ({"input": "chip", "position": 7}, "area"),
    ({"input": "outcome", "position": "abc", "line": "flush"}, "area"),
    ({"input": "dice", "total": "12"}, "dice total"),
    ({"input": "dice", "total": True}, "dice total"),
    ({"input": "side_wagers", "bets": "lots"}, "side wagers"),
    ({"input": "side_wagers", "bets": [{"position": 1, "number": 5}]}, "side wagers"),
    ({"input": "side_wagers", "bets": [{"position": 1, "number": 5, "cents": 150.7}]}, "cents"),
    ({"input": "side_wagers", "bets": [{"position": 1, "number": 5, "cents": "500"}]}, "cents"),
    ({"input": "side_wagers", "bets": [7]}, "side wagers"),
    ({"input": "pai_gow", "positions": "1,2"}, "pai gow"),
    ({"input": "pai_gow", "positions": [True]}, "pai gow"),
    ({"input": "launch_missiles"}, "unknown"),
]


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Any:
    proc = SimProcess(tmp_path_factory.mktemp("inputs"), "--no-script", "--seed", "3")
    yield proc
    proc.stop()


@pytest.mark.parametrize(("body", "words"), BAD_INPUTS, ids=lambda v: str(v)[:40])
def test_a_malformed_entry_is_refused_in_words_and_journals_nothing(
    sim: SimProcess, body: dict[str, Any], words: str
) -> None:
    browser = Browser(sim.url)
    browser.get("/")  # the page's xsrf cookie, as a browser has it
    before = journal_rows(Path(sim.db))
    status, reply = browser.post("/api/input", body)
    assert status == 400 and reply.get("ok") is False
    error = str(reply.get("error"))
    assert words in error and "Traceback" not in error and "int()" not in error, error
    assert journal_rows(Path(sim.db)) == before
    assert sim.proc.poll() is None  # the table plays on
