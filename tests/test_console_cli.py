"""``tablectl console`` as a subprocess against a running console (real socket, real owner and
journal), the request parser under hypothesis, the owner's receipts, and the simulated table's
console (``tablectl simulate`` with a trainer acting as supervisor).

Exit codes: 0 done, 1 refused (PIN or the table's rule), 2 bad usage, 3 unreachable. The PIN is
read from stdin (``--pin-stdin``) and never printed. A journal written through the console still
verifies (hash chain and replay) with its ``console_refused`` entries.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_console import PIN, Rig, make_rig, short_socket_dir

from controller.console.server import parse_line, request_line, send_request
from controller.service.owner import Owner
from controller.sim.simulate import TrainerHold, console_socket_path
from controller.supervisor.requests import REQUESTS, RequestError, build_event
from fsm.round.effects import Display, Effect
from fsm.round.events import Event

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]


@pytest.fixture()
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from make_rig(tmp_path)


def console(rig: Rig, *args: str, pin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TABLECTL, "console", "--socket", str(rig.sock), *args],
        input=None if pin is None else pin + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


# ------------------------------------------------------------------------------ the CLI
def test_cli_takes_a_supervisor_step_with_the_pin_from_stdin(rig: Rig) -> None:
    done = console(rig, "--supervisor", "trainer", "--pin-stdin", "open", pin=PIN["trainer"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: entry ") and "table now Open_Shuffling" in done.stdout
    assert PIN["trainer"] not in done.stdout + done.stderr
    assert rig.owner.public.state == "Open_Shuffling"
    seq = int(done.stdout.split()[2].rstrip(","))
    kind, data = rig.entry(seq)
    assert (kind, data["supervisor"]) == ("table_opened", "trainer")


def test_cli_status_needs_no_pin_and_json_prints_the_raw_reply(rig: Rig) -> None:
    done = console(rig, "--json", "status")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["ok"] is True and reply["state"] == "Closed" and reply["seq"] >= 1


def test_cli_exit_1_when_refused(rig: Rig) -> None:
    wrong = console(rig, "--supervisor", "trainer", "--pin-stdin", "open", pin="4321")
    assert wrong.returncode == 1
    assert "refused: supervisor id or PIN not accepted" in wrong.stdout
    assert "4321" not in wrong.stdout + wrong.stderr
    by_rule = console(
        rig, "--supervisor", "floor", "--pin-stdin", "light-test", pin=PIN["floor"]
    )  # only in maintenance
    assert by_rule.returncode == 1
    assert (
        "refused: refused by the table" in by_rule.stdout and "journaled as entry" in by_rule.stdout
    )
    assert rig.owner.public.state == "Closed"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--supervisor", "trainer", "validate-hit", "9"], "POSITION: a position is 1..6"),
        (["--supervisor", "trainer", "maintenance"], "maintenance: takes 1 argument, got 0"),
        (["open"], "open: --supervisor ID is required"),
        (["status", "now"], "status takes no arguments"),
        (["--supervisor", "trainer", "fly"], "invalid choice: 'fly'"),
        (["--supervisor", "trainer", "--pin-stdin", "open"], "no PIN given"),
    ],
)
def test_cli_exit_2_for_bad_usage_before_asking_the_pin(
    rig: Rig, args: list[str], message: str
) -> None:
    before = rig.owner.public.seq
    done = console(rig, *args, pin="")
    assert done.returncode == 2
    assert message in done.stderr
    assert rig.owner.public.seq == before


def test_cli_exit_3_when_the_console_cannot_be_reached(tmp_path: Path) -> None:
    done = subprocess.run(
        [*TABLECTL, "console", "--socket", str(tmp_path / "none.sock"), "status"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 3
    assert "cannot reach the table" in done.stderr


def test_a_journal_written_through_the_console_verifies(rig: Rig) -> None:
    """The hash chain and the replay hold with console entries and journaled refusals."""
    assert rig.ask("maintenance", "enter")["ok"]
    assert rig.ask("meter-correct", "progressive", "reserve", "700", "audit")["ok"]
    assert not rig.ask("light-test", pin="0000")["ok"]
    assert rig.ask("config-change", "levels[0].hidden_rate_bp=400")["ok"]
    assert rig.ask("maintenance", "exit")["ok"]
    rig.owner.stop()
    done = subprocess.run(
        [*TABLECTL, "journal", "verify", "--db", str(rig.db), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    report = json.loads(done.stdout)
    assert report["problems"] == [] and done.returncode == 0


# ------------------------------------------------------------------------------ the parser
@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_give_a_request_or_a_request_error(line: bytes) -> None:
    try:
        request = parse_line(line)
    except RequestError as exc:
        assert str(exc)
    else:
        assert request.name in REQUESTS


_args = st.lists(
    st.one_of(
        st.text(max_size=12),
        st.sampled_from(
            [
                "1",
                "6",
                "0",
                "7",
                "-5",
                "+5",
                "1,3",
                "none",
                "--void",
                "enter",
                "exit",
                "display",
                "reserve",
                "a=1",
                "levels[0].rate_bp=2400",
                "=",
                "x=",
                "12.5",
                "NaN",
                "1e400",
            ]
        ),
    ),
    max_size=6,
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(REQUESTS)), _args, st.text(max_size=8))
def test_any_arguments_give_an_event_or_a_specific_error(
    name: str, args: list[str], pin: str
) -> None:
    line = json.dumps({"request": name, "args": args, "supervisor": "trainer", "pin": pin})
    request = parse_line(line.encode())
    if name == "status":
        return
    try:
        event = build_event(request.name, request.args, "trainer")
    except RequestError as exc:
        assert str(exc)
        return
    assert event.data["supervisor"] == "trainer"
    json.dumps(dict(event.data), allow_nan=False)  # a JSON object the owner accepts


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.dictionaries(
        st.sampled_from(["request", "args", "supervisor", "pin", "x"]),
        st.one_of(st.none(), st.integers(), st.text(max_size=10), st.lists(st.text(max_size=5))),
        max_size=5,
    )
)
def test_the_serving_thread_survives_any_json_request(rig: Rig, data: dict[str, object]) -> None:
    reply = rig.server.answer(json.dumps(data).encode())
    assert isinstance(reply["ok"], bool)
    assert reply["ok"] or reply["error"]
    assert "1234" not in json.dumps(reply) or "1234" in json.dumps(data)  # no PIN echoed


# ----------------------------------------------------------------------------- the owner's receipts
class _Machine:
    state = "Closed"
    round_id = 0
    entry_round_id = 0

    def step(self, event: Event, now_ms: int) -> list[Effect]:
        return [Display("-")]

    def snapshot(self) -> dict[str, object]:
        return {}

    def public_view(self) -> dict[str, object]:
        return {}

    def outputs(self) -> list[Effect]:
        return []

    def meters(self) -> dict[str, dict[str, object]]:
        return {}

    def next_deadline_ms(self) -> int | None:
        return None


class _Devices:
    def apply(self, effect: Effect) -> None:
        pass

    def safe_state(self, glyph: str = " ") -> None:
        pass

    def close(self) -> None:
        pass


def test_receipt_holds_the_committed_entry_and_a_stopped_owner_refuses(tmp_path: Path) -> None:
    owner = Owner(
        tmp_path / "j.db",
        lambda snapshot: _Machine(),
        _Devices(),
        software_hash=lambda: "0" * 64,
    )
    owner.start()
    receipt = owner.post_tracked(Event("anything", {"n": 1}))
    assert receipt.wait(30)
    assert receipt.seq == 2 and receipt.effects == ({"type": "display", "glyph": "-"},)
    assert receipt.public is not None and receipt.public.seq == 2
    owner.stop()
    late = owner.post_tracked(Event("anything", {}))
    assert late.done and late.seq is None and "stopping" in str(late.error)


# ------------------------------------------------------------------------------ simulation
def test_trainer_hold_keeps_the_scripted_people_off_a_table_the_trainer_closed() -> None:
    hold = TrainerHold()

    class Snap:
        state = "Closed"

    assert not hold(Snap())  # type: ignore[arg-type]
    hold.on_request("close", [])
    assert hold(Snap())  # type: ignore[arg-type]
    Snap.state = "Maintenance"
    assert hold(Snap())  # type: ignore[arg-type]
    Snap.state = "Open_Betting"
    assert not hold(Snap())  # type: ignore[arg-type]
    hold.on_request("open", [])
    Snap.state = "Closed"
    assert not hold(Snap())  # type: ignore[arg-type]


def test_simulation_socket_is_beside_the_journal_or_in_a_temp_dir(tmp_path: Path) -> None:
    assert console_socket_path(Path("/tmp/j.db")) == Path("/tmp/j.db.console.sock")
    deep = Path("/tmp/" + "d" * 120 + "/j.db")
    path = console_socket_path(deep)
    assert path.name == "console.sock" and len(str(path)) < 100
    path.parent.rmdir()


def test_a_trainer_takes_the_simulated_table_into_maintenance(tmp_path: Path) -> None:
    """`tablectl simulate` (not headless) serves the console; after the trainer closes the table
    the scripted supervisor leaves it to the trainer (maintenance, tests, reopening). The
    trainees are the players (``--people players``): the scripted dealer holds Betting open
    for them with no wager lit, where a close is accepted. (With every role scripted at pace 0
    the scripted players light a wager the moment Betting opens; a loaded CI machine once
    refused 400 closes in a row.)"""
    sock = short_socket_dir() / "c.sock"
    db = tmp_path / "sim.db"
    argv = ["simulate", "--db", str(db), "--pace", "0", "--people", "players"]
    proc = subprocess.Popen(
        [*TABLECTL, *argv, "--console-socket", str(sock)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def ask(request: str, *args: str) -> dict[str, object]:
        line = request_line(request, args, "trainer" if request != "status" else None, "1234")
        return send_request(sock, line, 30)

    try:
        give_up = time.monotonic() + 60
        while not sock.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < give_up, "no console socket"
            time.sleep(0.05)
        refusals: list[object] = []
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up:  # only from Shuffling or Betting with no wager lit
            reply = ask("close")
            if reply["ok"]:
                break
            refusals.append(reply.get("effects"))  # the round's reason, in words
            time.sleep(0.05)
        assert reply["ok"], f"the trainer never found the table closable: {refusals[-3:]}"
        time.sleep(0.5)  # the scripted supervisor would reopen a closed table at once
        assert ask("status")["state"] == "Closed"
        assert ask("maintenance", "enter")["state"] == "Maintenance"
        assert ask("light-test")["ok"] is True
        time.sleep(0.5)
        assert ask("status")["state"] == "Maintenance"
        assert ask("maintenance", "exit")["state"] == "Closed"
        assert ask("open")["ok"] is True
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "supervisor console: tablectl console --socket" in out.splitlines()[0]
    assert not sock.exists()
    sock.parent.rmdir()


def test_the_table_service_serves_the_console_from_its_config(tmp_path: Path) -> None:
    """`tablectl run` (MockFactory pins, ptys as the serial ports) serves ``[console] socket``."""
    from test_cmd_run import write_config

    fds: list[int] = []
    names: list[str] = []
    for _ in range(2):
        master, slave = os.openpty()
        fds += [master, slave]
        names.append(os.ttyname(slave))
    sock = short_socket_dir() / "c.sock"
    config = write_config(tmp_path, names[0], names[1])
    config.write_text(config.read_text() + f"\n[console]\nsocket = {json.dumps(str(sock))}\n")
    proc = subprocess.Popen(
        [*TABLECTL, "run", "--config", str(config), "--pin-factory", "mock", "--unapproved-bench"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        give_up = time.monotonic() + 60
        while not sock.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < give_up, "no console socket"
            time.sleep(0.05)
        line = request_line("maintenance", ["enter"], "floor", PIN["floor"])
        reply = send_request(sock, line, 30)
        assert reply["ok"] is True and reply["state"] == "Maintenance"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        for fd in fds:
            os.close(fd)
    assert proc.returncode == 0, err
    assert f"supervisor console {sock}" in out
    assert not sock.exists()
    sock.parent.rmdir()
