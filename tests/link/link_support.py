"""Support for the tests of many tables (their fixtures are in conftest.py): a nats-server
process with JetStream on loopback (Debian's ``nats-server``; skipped when missing, except under
CI=true), the link controller as its own process (``tablectl link serve``) or on a thread, and
linked tables: the real owner, round machine and journal with the real link attachment of the
wiring, driven the way the dealer and the supervisor drive a table (a device adapter that only
records what it was told stands in for the GPIO).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from journal_support import journal_entries

from controller.config import SIMULATED_TABLE, TableConfig, parse_config
from controller.journal.lock import owner_journal_options
from controller.service.owner import Owner
from controller.service.wiring import LinkAttachment
from fsm.round.effects import Effect
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

ROOT = Path(__file__).resolve().parents[2]
SUP = "trainer"
JACKPOT = "natural-royal-flush-and-pair"  # 100% of the meter (NY 5324.41(k)(4))


def nats_binary() -> str:
    found = shutil.which("nats-server") or (
        "/usr/sbin/nats-server" if Path("/usr/sbin/nats-server").exists() else None
    )
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nats-server is not installed (.ci/system-deps installs it)")
        pytest.skip("nats-server is not installed (make system-deps)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise TimeoutError(f"nothing listens on port {port}")


class NatsServer:
    """``nats-server -js -a 127.0.0.1 -p PORT -sd DIR`` (test-servers.md), restartable on the same
    port and store (a restart keeps the streams, as a real outage does)."""

    def __init__(self, workdir: Path, config: Path | None = None) -> None:
        self.binary = nats_binary()
        self.port = free_port()
        self.store = workdir / "nats-store"
        self.store.mkdir(parents=True, exist_ok=True)
        self.config = config
        self.log = workdir / "nats.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        scheme = "tls" if self.config is not None else "nats"
        return f"{scheme}://127.0.0.1:{self.port}"

    def start(self) -> None:
        cmd = [self.binary, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.store)]
        if self.config is not None:
            cmd += ["-c", str(self.config)]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        wait_port(self.port)

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    stop = kill


def keyring(directory: Path) -> Path:
    """The centre's keyring of the tables made in ``directory`` (the controller's and
    central's ``keys``)."""
    return directory / "link-keys"


def table_key(directory: Path, table_id: str) -> Path:
    """Table ``table_id``'s link key file, provisioned in the keyring of ``directory`` on first
    use (``tablectl link keys new``'s code)."""
    from controller.link.keys import provision

    path = directory / f"{table_id}.key"
    if not path.exists():
        provision(keyring(directory), table_id, path)
    return path


def controller_toml(
    path: Path, url: str, tables: dict[str, int], *, pool: str = "POOL1", extra: str = ""
) -> Path:
    table_lines = "\n".join(f"{k} = {v}" for k, v in tables.items())
    for table_id in tables:
        table_key(path.parent, table_id)
    path.write_text(
        f"""[link]
pool = "{pool}"
servers = ["{url}"]
journal = "{path.parent / "pool.db"}"
keys = "{keyring(path.parent)}"
{extra}
[pool]
level = "progressive"
initial_cents = 100000
reset_cents = 100000
rate_bp = 2100
hidden_rate_bp = 500
wager_cents = 100
paytable = "ny-5324-41-k4"

[tables]
{table_lines}
"""
    )
    return path


class LinkController:
    """``tablectl link serve --config PATH`` as its own process."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.log = config.with_suffix(".log")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "controller.cli", "link", "serve", "--config",
                 str(self.config)],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None


class InProcessController:
    """The link controller on a thread of the test's process (`ControllerThread`): the same
    service without a process start; for the tests that never kill it."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.log = config.with_suffix(".log")
        self.thread: Any = None

    def start(self) -> None:
        from controller.link.link_config import load_controller_config
        from controller.link.service import ControllerThread

        self.thread = ControllerThread(load_controller_config(self.config))
        self.thread.start(wait=False)

    def stop(self) -> None:
        if self.thread is not None:
            self.thread.stop()
            self.thread = None


class Recorder:
    """The device adapter of a table without hardware: keeps what it was told (acceptors)."""

    def __init__(self) -> None:
        self.armed: bool | None = None
        self.applied: list[Effect] = []

    def apply(self, effect: Effect) -> None:
        self.applied.append(effect)
        if effect.TYPE == "acceptors":
            self.armed = bool(effect.armed)  # type: ignore[attr-defined]

    def safe_state(self, glyph: str = " ") -> None:
        self.armed = False

    def close(self) -> None:
        pass


def table_config(
    tmp: Path,
    table_id: str,
    asset: int,
    url: str,
    timeout_s: float,
    link_extra: dict[str, Any] | None = None,
    game: dict[str, Any] | None = None,
) -> TableConfig:
    data: dict[str, Any] = tomllib.loads(SIMULATED_TABLE.read_text())
    data["table"].update(id=table_id, asset_number=asset)
    data["game"].update(card_reading_shoe=False, side_wager={"offered": False}, **(game or {}))
    data["journal"]["path"] = str(tmp / f"{table_id}.db")
    data["sas"]["enabled"] = False
    data["link"] = {
        "pool": "POOL1",
        "servers": [url],
        "timeout_s": timeout_s,
        "key_file": str(table_key(tmp, table_id)),
        **(link_extra or {}),
    }
    return parse_config(data, f"{table_id}.toml")


class LinkedTable:
    """One linked table: owner + machine + journal + the wiring's link attachment."""

    def __init__(
        self,
        tmp: Path,
        table_id: str,
        asset: int,
        url: str,
        timeout_s: float = 2.0,  # 1 s lost confirmations on a loaded 2-core machine
        link_extra: dict[str, Any] | None = None,
        game: dict[str, Any] | None = None,
    ) -> None:
        self.config = table_config(tmp, table_id, asset, url, timeout_s, link_extra, game)
        self.db = self.config.journal_path
        self.devices = Recorder()
        rules = self.config.game

        def make(snapshot: Any) -> RoundMachine:
            return (
                RoundMachine(rules) if snapshot is None else RoundMachine.restore(rules, snapshot)
            )

        self.owner = Owner(
            self.db, make, self.devices, draw=lambda: 3, **owner_journal_options(self.config)
        )
        self.attachment = LinkAttachment(self.config, self.db)

    def start(self) -> None:
        self.owner.start()
        self.attachment.start(self.owner)

    def stop(self) -> None:
        self.attachment.stop()
        self.owner.stop()

    @property
    def link(self) -> Any:
        return self.attachment.link

    def ev(self, etype: str, **data: Any) -> tuple[Effect, ...]:
        receipt = self.owner.post_tracked(Event(etype, data))
        assert receipt.wait(10), f"{etype} not processed"
        assert receipt.seq is not None, receipt.error
        refused = [e for e in receipt.effects if e.TYPE == "rejected"]
        assert not refused, f"{etype}: {refused[0].to_json()}"
        return receipt.effects

    @property
    def state(self) -> str:
        return str(self.owner.public.state)

    @property
    def view(self) -> Any:
        return self.owner.public.view

    def link_down(self) -> bool:
        link = self.view.get("link")
        return bool(link is None or link.get("down"))

    def open(self) -> None:
        self.ev("table_opened", supervisor=SUP)
        self.ev("shuffle_complete", count=53)

    def bet(self, *positions: int) -> None:
        if self.state == "Open_Shuffling":
            self.ev("shuffle_complete", count=53)
        for p in positions:
            self.ev("chip_detected", position=p)

    def to_settlement(self) -> None:
        self.ev("lockout_pressed")
        self.ev("chips_confirmed")
        self.ev("rng_activated")  # the dealer activates the RNG (NY 5324.41(h)(8)(ii))
        wait_for(lambda: self.state == "Open_Dealing", what="the RNG draw")
        self.ev("dealt", remaining=4)
        self.ev("play_complete")

    def settle(self, lines: dict[int, str | None]) -> None:
        for position, line in lines.items():
            self.ev("progressive_outcome", position=position, line=line)

    def validate_hits(self, timeout: float = 10.0) -> None:
        while self.state == "Open_JackpotPending":
            pending = self.view["round"]["pending"]
            wait_for(
                lambda: "locked_cents" in self.view["round"]["pending"][0],
                timeout,
                what="the link controller's lock of the hit",
            )
            self.ev("hit_validated", position=int(pending[0]["position"]), supervisor=SUP)

    def play(self, positions: tuple[int, ...], lines: dict[int, str | None] | None = None) -> None:
        self.bet(*positions)
        self.to_settlement()
        self.settle(lines or dict.fromkeys(positions))
        self.validate_hits()
        wait_for(lambda: self.state in ("Open_Betting", "Open_Shuffling"), what="round end")


def wait_for(check: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def journal(db: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """Every entry of the journal at ``db`` (read-only): (seq, type, data)."""
    return journal_entries(db)


def effects(db: Path, etype: str) -> list[dict[str, Any]]:
    """Every recorded effect of type ``etype`` in the journal at ``db``, in order."""
    return [e for _, _, d in journal(db) for e in d.get("effects", []) if e["type"] == etype]
