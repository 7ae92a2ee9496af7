"""The page's supervisor PINs (issue 12, Security: "wrong PINs limited, journaled, and the limits
survive a restart"): the page's sign-in and the supervisor console count a supervisor's wrong PINs
in one book (`controller.supervisor.lockout.shared_book`), rebuilt from the journal when the service
starts again. A restart here is what a restart of the service does: the page and the owner
stopped, a new owner and a new page on the same journal file.

Real parts: a real owner and round machine on a real journal, the Tornado server on its own
thread and a real HTTP client with a cookie jar (tests/test_web_server.py's), the console on a
real UNIX socket started by its wiring attachment.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from journal_support import journal_entries
from test_web_server import Browser, _NoDevices

from controller.config import SIMULATED_TABLE, TableConfig, load_config
from controller.console.server import request_line, send_request
from controller.service.owner import Owner
from controller.service.wiring import ConsoleAttachment
from controller.supervisor.lockout import LOCKOUT_AFTER, REASON_LOCKED, REASON_WRONG
from controller.web.server import WebServer
from controller.web.web_config import WebSection
from fsm.round.machine import RoundMachine

PIN = "1234"  # the training supervisor "trainer" of controller/data/simulated-table.toml
WRONG = "0000"


@dataclass
class Table:
    """One running service: the owner, its page, its console."""

    config: TableConfig
    db: Path
    owner: Owner
    page: WebServer
    console: ConsoleAttachment

    def sign_in(self, pin: str, supervisor: str = "trainer") -> tuple[int, dict[str, Any]]:
        b = Browser(self.page.url)
        b.get("/")
        return b.post("/api/login", {"supervisor": supervisor, "pin": pin})

    def console_open(self, pin: str) -> dict[str, Any]:
        line = request_line("open", [], "trainer", pin)
        return send_request(self.console.path, line, 60.0)

    def stop(self) -> None:
        self.console.stop()
        self.page.stop()
        self.owner.stop()


def _start(tmp: Path) -> Table:
    config = load_config(SIMULATED_TABLE)
    game = config.game

    def make_machine(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    db = tmp / "pins.db"
    owner = Owner(db, make_machine, _NoDevices(), software_hash=lambda: "0" * 64)
    owner.start()
    page = WebServer(owner, db, config.supervisors, WebSection(enabled=True), port=0)
    page.start()
    console = ConsoleAttachment(config, tmp / "c.sock")
    console.start(owner)
    return Table(config, db, owner, page, console)


@pytest.fixture()
def tables(tmp_path: Path) -> Iterator[list[Table]]:
    """The running services (the last one is the live one); all stopped at the end."""
    made = [_start(tmp_path)]
    try:
        yield made
    finally:
        for table in made:
            table.stop()  # stopping twice is harmless


def _restart(tables: list[Table]) -> Table:
    old = tables[-1]
    old.stop()
    tables.append(_start(old.db.parent))
    return tables[-1]


def _refusals(db: Path) -> list[dict[str, Any]]:
    return [d for _, t, d in journal_entries(db) if t == "console_refused"]


def test_wrong_pins_at_the_page_short_of_a_lock_still_count_after_a_restart(
    tables: list[Table],
) -> None:
    table = tables[-1]
    for _ in range(LOCKOUT_AFTER - 1):
        status, reply = table.sign_in(WRONG)
        assert status == 403 and "not accepted" in reply["error"]
    table = _restart(tables)
    assert table.page.page.gate.replayed >= LOCKOUT_AFTER - 1  # rebuilt from the journal
    status, _ = table.sign_in(WRONG)  # the fifth wrong PIN: the id is locked
    assert status == 403
    assert _refusals(table.db)[-1]["reason"] == REASON_LOCKED
    status, reply = table.sign_in(PIN)
    assert status == 403 and "locked" in reply["error"]


def test_a_lock_made_at_the_page_survives_a_restart(tables: list[Table]) -> None:
    table = tables[-1]
    for _ in range(LOCKOUT_AFTER):
        assert table.sign_in(WRONG)[0] == 403
    table = _restart(tables)
    status, reply = table.sign_in(PIN)
    assert status == 403 and "locked" in reply["error"]
    reply = table.console_open(PIN)  # the console too: the same lock
    assert reply["ok"] is False and "locked" in str(reply["error"])
    assert table.sign_in("2468", supervisor="floor")[0] == 200  # another id is not locked


def test_the_page_and_the_console_share_one_limit_per_supervisor(tables: list[Table]) -> None:
    """Five wrong PINs in all, three at the console and two at the page, lock the id at both:
    a guesser gains no attempts by switching channel. Every one is journaled."""
    table = tables[-1]
    for _ in range(3):
        assert table.console_open(WRONG)["ok"] is False
    for _ in range(LOCKOUT_AFTER - 3):
        assert table.sign_in(WRONG)[0] == 403
    refused = _refusals(table.db)
    assert [r["reason"] for r in refused] == [REASON_WRONG] * (LOCKOUT_AFTER - 1) + [REASON_LOCKED]
    assert [r["request"] for r in refused] == ["open"] * 3 + ["web sign-in"] * (LOCKOUT_AFTER - 3)
    status, reply = table.sign_in(PIN)
    assert status == 403 and "locked" in reply["error"]
    reply = table.console_open(PIN)
    assert reply["ok"] is False and "locked" in str(reply["error"])
    assert table.owner.public.state == "Closed"


def test_a_right_pin_at_the_console_clears_the_count_the_page_made(tables: list[Table]) -> None:
    table = tables[-1]
    for _ in range(LOCKOUT_AFTER - 1):
        assert table.sign_in(WRONG)[0] == 403
    assert table.console_open(PIN)["ok"] is True  # journaled via=console: the count is cleared
    table = _restart(tables)
    assert table.sign_in(WRONG)[0] == 403
    assert _refusals(table.db)[-1]["reason"] == REASON_WRONG  # one, not the fifth
    assert table.sign_in(PIN)[0] == 200
