"""The console's limits (issue 12, "Security"): several clients at once, each with its own
deadline, and a connection cap, so an idle or slow client delays nobody; wrong PINs limited,
journaled, and the limits survive a restart of the service (rebuilt from the journal).

Real UNIX sockets, a real owner and round machine, a real journal (tests/test_console.py's rig).
No timed assertion beyond a generous bound: speed is for bench/.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_console import PIN, Rig, make_rig, refusals

from controller.console.server import MAX_CLIENTS, ConsoleServer
from controller.supervisor.gate import JOURNALED_REFUSALS_PER_MINUTE
from controller.supervisor.lockout import (
    LOCKOUT_AFTER,
    LOCKOUT_S,
    REASON_LOCKED,
    REASON_WRONG,
    journal_history,
)

#: The generous bound: a request is answered well within this while others idle (the old
#: console took 5 s per idle connection ahead of it: 100 s behind twenty).
GENEROUS_S = 10.0


@pytest.fixture()
def rig(tmp_path: Path) -> Iterator[Rig]:
    for made in make_rig(tmp_path, timeout_s=3.0):
        first = made.server
        yield made
        if made.server is not first:  # a restarted console: stop it before the rig's own
            made.server.stop()


def idle_connection(rig: Rig) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(str(rig.sock))
    return s


def reply_of(s: socket.socket) -> dict[str, object]:
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    value = json.loads(buf)
    assert isinstance(value, dict)
    return value


def test_twenty_idle_connections_do_not_delay_a_real_request(rig: Rig) -> None:
    idle = [idle_connection(rig) for _ in range(20)]
    try:
        time.sleep(0.2)  # let the console accept them all
        started = time.monotonic()
        reply = rig.ask("status", sup=None)
        took = time.monotonic() - started
        assert reply["ok"] is True
        assert took < GENEROUS_S, took
        # the cap: 21 connections, MAX_CLIENTS at once; the oldest idle ones made room
        assert rig.server.evicted == 21 - MAX_CLIENTS
        for s in idle[: 21 - MAX_CLIENTS]:
            answer = reply_of(s)
            assert answer["ok"] is False and str(answer["error"]).startswith("busy:")
        for s in idle[21 - MAX_CLIENTS :]:  # the others end at their own deadline
            answer = reply_of(s)
            assert str(answer["error"]).startswith("timeout: no complete request line")
    finally:
        for s in idle:
            s.close()


def test_a_client_trickling_bytes_is_cut_at_its_deadline_and_delays_nobody(rig: Rig) -> None:
    slow = idle_connection(rig)
    try:
        for byte in b'{"request": ':  # one byte at a time, never a whole line
            slow.send(bytes([byte]))
            time.sleep(0.05)
            assert rig.ask("status", sup=None)["ok"] is True  # answered meanwhile
        answer = reply_of(slow)  # the deadline runs from the accept, not from the last byte
        assert str(answer["error"]).startswith("timeout: no complete request line within 3 s")
    finally:
        slow.close()


def restart_console(rig: Rig) -> ConsoleServer:
    """Stop the console and start a new one on the same journal, as a restart of the service
    does (ConsoleAttachment passes the journal's history the same way)."""
    rig.server.stop()
    server = ConsoleServer(
        rig.owner,
        rig.config.supervisors,
        rig.sock,
        clock=lambda: rig.clock[0],
        history=journal_history(rig.db),
    )
    server.start()
    rig.server = server
    return server


def test_a_lock_survives_a_restart_of_the_console(rig: Rig) -> None:
    for _ in range(LOCKOUT_AFTER):
        assert rig.ask("open", pin="0000")["ok"] is False
    assert refusals(rig)[-1]["reason"] == REASON_LOCKED
    server = restart_console(rig)
    assert server.replayed >= LOCKOUT_AFTER
    reply = rig.ask("open")  # the right PIN, still locked after the restart
    assert reply["ok"] is False and "locked" in str(reply["error"])
    assert rig.owner.public.state == "Closed"
    rig.clock[0] += LOCKOUT_S + 1
    assert rig.ask("open")["ok"] is True


def test_wrong_pins_short_of_a_lock_still_count_after_a_restart(rig: Rig) -> None:
    for _ in range(LOCKOUT_AFTER - 2):
        assert rig.ask("open", pin="0000")["ok"] is False
    restart_console(rig)
    assert rig.ask("open", pin="0000")["ok"] is False
    assert rig.ask("open", pin="0000")["ok"] is False  # the fifth: locked
    assert refusals(rig)[-1]["reason"] == REASON_LOCKED
    assert rig.ask("open")["ok"] is False


def test_a_right_pin_clears_the_count_and_the_restart_knows_it(rig: Rig) -> None:
    for _ in range(LOCKOUT_AFTER - 1):
        assert rig.ask("open", pin="0000")["ok"] is False
    assert rig.ask("open")["ok"] is True  # journaled with via=console: the count is cleared
    restart_console(rig)
    assert rig.ask("close", pin="0000")["ok"] is False
    assert refusals(rig)[-1]["reason"] == REASON_WRONG  # one, not the fifth


def test_every_wrong_pin_of_a_configured_supervisor_is_journaled_past_the_rate_bound(
    rig: Rig,
) -> None:
    for i in range(JOURNALED_REFUSALS_PER_MINUTE):  # unknown ids fill the bound
        assert rig.ask("open", sup=f"nobody{i}", pin="1111")["ok"] is False
    assert rig.ask("open", sup="nobody", pin="1111")["ok"] is False  # counted, not journaled
    before = len(refusals(rig))
    assert rig.ask("open", pin="0000")["ok"] is False
    after = refusals(rig)
    assert len(after) == before + 1
    assert after[-1]["supervisor"] == "trainer" and after[-1]["reason"] == REASON_WRONG
    assert "0000" not in json.dumps(after) and PIN["trainer"] not in json.dumps(after)
