"""The supervisor console end to end: real UNIX sockets, a real owner thread with the real round
machine and a real journal file, the real configuration's scrypt PIN hashes.

Every supervisor step taken through the console is journaled with the supervisor's id (NY
5324.41(k)(3)(iii): a payout deducted from the meter is validated by a supervisor; (k)(6): paid at
the meter's value at the time of payment; NJ 13:69E-1.39A: meter corrections are supervised and
recorded). A refused PIN is journaled, never the PIN. Bad input gets a specific error and the one
console thread keeps serving; a slow client holds the others at most for the connection timeout.
"""

from __future__ import annotations

import ast
import contextlib
import json
import socket
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from journal_support import journal_entries

from controller.config import SIMULATED_TABLE, TableConfig, parse_config
from controller.console import server as console_mod
from controller.console.server import MAX_REQUEST_BYTES, ConsoleServer, request_line, send_request
from controller.journal.audit import connect_read_only
from controller.service.owner import Owner
from controller.supervisor.gate import JOURNALED_REFUSALS_PER_MINUTE
from controller.supervisor.lockout import LOCKOUT_AFTER, LOCKOUT_S, REFUSAL_EVENT
from fsm.round.effects import Effect
from fsm.round.events import JSON, Event, FaultCleared, parse_event
from fsm.round.machine import RoundMachine

PIN = {"trainer": "1234", "floor": "2468"}  # training credentials of simulated-table.toml
REPLY_TIMEOUT_S = 30.0


def table_config(**game: Any) -> TableConfig:
    """The simulated table's configuration (its real hashed PINs), with game changes."""
    data = tomllib.loads(SIMULATED_TABLE.read_text())
    data["game"].update(game)
    return parse_config(data, "test")


class NullDevices:
    """The table's outputs: recorded, nothing driven (no hardware in these tests)."""

    def __init__(self) -> None:
        self.applied: list[Effect] = []

    def apply(self, effect: Effect) -> None:
        self.applied.append(effect)

    def safe_state(self, glyph: str = " ") -> None:
        pass

    def close(self) -> None:
        pass


class ThreadWatch:
    """Records which thread calls into the round machine (the console must never)."""

    def __init__(self) -> None:
        self.threads: set[str] = set()


class WatchedMachine:
    """A real RoundMachine; every attribute access notes the calling thread."""

    def __init__(self, machine: RoundMachine, watch: ThreadWatch) -> None:
        object.__setattr__(self, "_m", machine)
        object.__setattr__(self, "_w", watch)

    def __getattr__(self, name: str) -> Any:
        self._w.threads.add(threading.current_thread().name)
        return getattr(self._m, name)


@dataclass
class Rig:
    owner: Owner
    server: ConsoleServer
    db: Path
    sock: Path
    config: TableConfig
    watch: ThreadWatch
    clock: list[float]

    def ask(
        self, request: str, *args: str, sup: str | None = "trainer", pin: str | None = None
    ) -> dict[str, Any]:
        if request != "status" and pin is None and sup is not None:
            pin = PIN.get(sup, "0000")
        line = request_line(request, args, sup if request != "status" else None, pin)
        return send_request(self.sock, line, REPLY_TIMEOUT_S)

    def post(self, kind: str, **data: JSON) -> None:
        """An input from the table's devices or the dealer (not the console)."""
        receipt = self.owner.post_tracked(Event(kind, dict(data)))
        assert receipt.wait(REPLY_TIMEOUT_S) and receipt.seq is not None, receipt.error

    def entries(self) -> list[tuple[int, str, dict[str, Any]]]:
        return journal_entries(self.db)

    def entry(self, seq: int) -> tuple[str, dict[str, Any]]:
        found = [(k, d) for s, k, d in self.entries() if s == seq]
        assert found, f"no journal entry {seq}"
        return found[0]


def short_socket_dir() -> Path:
    """A directory whose socket path fits a UNIX socket (tmp_path can be too long)."""
    return Path(tempfile.mkdtemp(prefix="pgc-"))


@pytest.fixture()
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from make_rig(tmp_path)


def make_rig(tmp_path: Path, timeout_s: float = 5.0, **game: Any) -> Iterator[Rig]:
    game = {"card_reading_shoe": False, **game}
    config = table_config(**game)
    watch = ThreadWatch()

    def make_machine(snapshot: Any) -> Any:
        m = (
            RoundMachine(config.game)
            if snapshot is None
            else RoundMachine.restore(config.game, snapshot)
        )
        return WatchedMachine(m, watch)

    db = tmp_path / "journal.db"
    owner = Owner(
        db,
        make_machine,
        NullDevices(),
        draw=lambda: 3,
        software_hash=lambda: "0" * 64,
        table_id=config.table.id,
    )
    owner.start()
    sock_dir = short_socket_dir()
    sock = sock_dir / "console.sock"
    clock = [1000.0]
    server = ConsoleServer(
        owner, config.supervisors, sock, timeout_s=timeout_s, clock=lambda: clock[0]
    )
    server.start()
    try:
        yield Rig(owner, server, db, sock, config, watch, clock)
    finally:
        server.stop()
        owner.stop()
        sock_dir.rmdir()


def kinds(effects: list[dict[str, Any]]) -> list[str]:
    return [str(e.get("type")) for e in effects]


def meter(rig: Rig, key: str, level: str = "progressive") -> int:
    return int(rig.owner.public.meters[level][key])


def to_betting(rig: Rig) -> None:
    assert rig.ask("open")["ok"]
    rig.post("shuffle_complete", count=53)
    assert rig.owner.public.state == "Open_Betting"


# ------------------------------------------------------------------------------ each request
def test_open_and_close_are_journaled_with_the_supervisors_id(rig: Rig) -> None:
    reply = rig.ask("open")
    assert reply["ok"] is True and reply["state"] == "Open_Shuffling"
    assert "shuffle" in kinds(reply["effects"])
    kind, data = rig.entry(reply["seq"])
    assert kind == "table_opened" and data["supervisor"] == "trainer"
    assert data["via"] == "console"
    rig.post("shuffle_complete", count=53)
    reply = rig.ask("close", sup="floor")
    assert reply["ok"] is True and reply["state"] == "Closed"
    kind, data = rig.entry(reply["seq"])
    assert (kind, data["supervisor"]) == ("table_closed", "floor")


def test_status_reports_the_published_table_without_a_pin(rig: Rig) -> None:
    reply = rig.ask("status", sup=None)
    assert reply["ok"] is True and reply["state"] == "Closed"
    assert reply["seq"] == rig.owner.public.seq
    status = reply["status"]
    assert status["display"] == " " and status["fault"] is None
    assert status["meters"]["progressive"]["display_cents"] == 100000


def test_status_prints_the_journal_head_to_sign_and_verify_checks_it(rig: Rig) -> None:
    """Issue 23, the paper witness: the console status gives the head (seq and hash) a
    supervisor signs; ``journal verify --expect-head`` checks a journal still holds it."""
    from controller.journal.audit import verify

    head = rig.ask("status", sup=None)["status"]["head"]
    seq, digest = head.split(":")
    assert int(seq) == rig.owner.public.seq
    assert verify(rig.db, expect_head=(int(seq), digest)).ok
    assert not verify(rig.db, expect_head=(int(seq), "0" * 64)).ok


def test_meter_correction_in_maintenance_changes_the_meter_by_exactly_the_delta(
    rig: Rig,
) -> None:
    """NJ 13:69E-1.39A: a supervised, recorded correction; the reconciliation sees it."""
    assert rig.ask("maintenance", "enter")["state"] == "Maintenance"
    display, reserve = meter(rig, "display_cents"), meter(rig, "reserve_cents")
    reply = rig.ask("meter-correct", "progressive", "display", "-2537", "coin", "count", "error")
    assert reply["ok"] is True, reply
    assert meter(rig, "display_cents") == display - 2537
    assert meter(rig, "reserve_cents") == reserve
    kind, data = rig.entry(reply["seq"])
    assert kind == "meter_corrected"
    assert (data["supervisor"], data["delta_cents"], data["reason"]) == (
        "trainer",
        -2537,
        "coin count error",
    )
    moves = [e for e in data["effects"] if e["type"] == "meter_movement"]
    assert [(m["kind"], m["display_cents"]) for m in moves] == [("correction", -2537)]
    reply = rig.ask("meter-correct", "progressive", "reserve", "+1200", "float")
    assert reply["ok"] is True
    assert meter(rig, "reserve_cents") == reserve + 1200


def test_meter_correction_outside_maintenance_is_refused_with_the_machines_reason(
    rig: Rig,
) -> None:
    display = meter(rig, "display_cents")
    reply = rig.ask("meter-correct", "progressive", "display", "500", "test")
    assert reply["ok"] is False
    assert reply["error"].startswith("refused by the table: ")
    rejected = [e for e in reply["effects"] if e["type"] == "rejected"]
    assert rejected and rejected[0]["event"] == "meter_corrected"
    assert rejected[0]["reason"] in reply["error"]
    assert meter(rig, "display_cents") == display
    kind, data = rig.entry(reply["seq"])  # the refusal is journaled too
    assert kind == "meter_corrected" and data["supervisor"] == "trainer"


def test_meter_correction_below_zero_is_refused(rig: Rig) -> None:
    rig.ask("maintenance", "enter")
    display = meter(rig, "display_cents")
    reply = rig.ask("meter-correct", "progressive", "display", str(-(display + 1)), "too much")
    assert reply["ok"] is False and "refused by the table" in reply["error"]
    assert meter(rig, "display_cents") == display


def test_maintenance_tests_and_config_change_are_journaled(rig: Rig) -> None:
    assert rig.ask("maintenance", "enter")["ok"]
    reply = rig.ask("light-test")
    assert reply["ok"] is True
    lights = [e for e in reply["effects"] if e["type"] == "lights"]
    assert lights and set(lights[0]["states"]) == {"lit"}  # every acceptor light on first
    reply = rig.ask("display-test")
    glyphs = [e["glyph"] for e in reply["effects"] if e["type"] == "display"]
    assert glyphs[:7] == ["1", "2", "3", "4", "5", "6", "7"] and glyphs[-1] == " "
    assert rig.entry(reply["seq"])[1]["supervisor"] == "trainer"
    reply = rig.ask("config-change", "levels[0].rate_bp=2400", "side_wager.odds=5.5:1")
    assert reply["ok"] is True, reply
    changed = next(e for e in reply["effects"] if e["type"] == "config_changed")
    assert {(c["key"], c["old"], c["new"]) for c in changed["changes"]} == {
        ("levels[0].rate_bp", 2100, 2400),
        ("side_wager.odds", "6:1", "5.5:1"),
    }
    assert changed["supervisor"] == "trainer"
    reply = rig.ask("config-change", "levels[0].rate_bp=100")
    assert reply["ok"] is False and "refused by the table" in reply["error"]  # (k)(5) minimum
    reply = rig.ask("maintenance", "exit")
    assert reply["ok"] is True and reply["state"] == "Closed"


def test_config_change_outside_maintenance_is_refused(rig: Rig) -> None:
    reply = rig.ask("config-change", "levels[0].rate_bp=2400")
    assert reply["ok"] is False and "refused by the table" in reply["error"]


def test_resolve_chips_and_void_draw_k2(rig: Rig) -> None:
    """A chip-count mismatch after the lock-out (k)(2) waits for the supervisor's positions;
    the RNG draw may be voided by a supervisor before the side wagers are settled."""
    to_betting(rig)
    for position in (1, 2, 3):
        rig.post("chip_detected", position=position)
    rig.post("lockout_pressed")
    rig.post("chips_mismatch", counted=2)
    assert rig.owner.public.state == "Open_LockedOut"
    reply = rig.ask("resolve-chips", "1,3")
    assert reply["ok"] is True, reply
    assert reply["state"] == "Open_LockedOut"  # the dealer activates the RNG next (h)(8)(ii)
    kind, data = rig.entry(reply["seq"])
    assert (kind, data["positions"], data["supervisor"]) == ("chips_resolved", [1, 3], "trainer")
    rig.post("side_wagers", bets=[])  # none placed: no side wager rides on the number
    rig.post("rng_activated")
    assert rig.owner.public.state == "Open_SideWagers"  # drawn (3) and shown
    reply = rig.ask("void-draw", "shown", "before", "the", "shaker")
    assert reply["ok"] is True and reply["state"] == "Open_SideWagers"
    kind, data = rig.entry(reply["seq"])
    assert (kind, data["reason"]) == ("rng_void", "shown before the shaker")
    assert rig.entry(reply["seq"] + 1)[0] == "rng_drawn"  # drawn again


def test_validate_and_void_hits_in_payment_order_g7_k3_iii_k6(rig: Rig) -> None:
    """Winners are validated in the order they are paid: from the dealer's right (area 1),
    counter-clockwise (NY 5324.41(g)(7))."""
    to_betting(rig)
    for position in (1, 3):
        rig.post("chip_detected", position=position)
    rig.post("lockout_pressed")
    rig.post("side_wagers", bets=[])
    rig.post("chips_confirmed")
    rig.post("rng_activated")
    rig.post("side_wagers_settled")
    rig.post("dealt", remaining=4)
    rig.post("play_complete")
    rig.post("progressive_outcome", position=1, line="five-aces-and-pair")  # 100% of the meter
    rig.post("progressive_outcome", position=3, line="five-aces-and-pair")
    assert rig.owner.public.state == "Open_JackpotPending"
    pending = rig.ask("status", sup=None)["status"]["pending_hits"]
    order = [int(p["position"]) for p in pending]
    assert order == [1, 3]
    reply = rig.ask("validate-hit", str(order[1]))
    assert reply["ok"] is False and f"validate position {order[0]} first" in reply["error"]
    display = meter(rig, "display_cents")
    reply = rig.ask("validate-hit", str(order[0]))
    assert reply["ok"] is True, reply
    pays = [e for e in reply["effects"] if e["type"] == "pay"]
    assert pays and pays[0]["supervisor"] == "trainer" and pays[0]["from"] == "meter"
    assert pays[0]["position"] == order[0]
    assert pays[0]["cents"] == display  # the whole meter at the time of payment (k)(6)
    reply = rig.ask("void-hit", str(order[1]), "hand", "misread")
    assert reply["ok"] is True, reply
    kind, data = rig.entry(reply["seq"])
    assert (kind, data["position"], data["reason"]) == ("hit_voided", order[1], "hand misread")
    assert reply["state"] == "Open_Shuffling"  # round completed; one round per shuffle
    assert rig.entry(reply["seq"] + 1)[0] == "round_completed"


def test_void_hit_with_the_corrected_line_pays_it_k3ii(rig: Rig) -> None:
    """``void-hit POSITION --line LINE REASON``: the supervisor voids the hit entered and names
    the right, lower line, which is paid in their name (NY 5324.41(k)(3)(ii))."""
    to_betting(rig)
    rig.post("chip_detected", position=2)
    rig.post("lockout_pressed")
    rig.post("side_wagers", bets=[])
    rig.post("chips_confirmed")
    rig.post("rng_activated")
    rig.post("side_wagers_settled")
    rig.post("dealt", remaining=4)
    rig.post("play_complete")
    rig.post("progressive_outcome", position=2, line="royal-flush")
    assert rig.owner.public.state == "Open_JackpotPending"
    reply = rig.ask("void-hit", "2", "--line")
    assert reply["ok"] is False and "--line takes a LINE and a REASON" in reply["error"]
    reply = rig.ask("void-hit", "2", "--line", "straight-flush", "no", "royal")
    assert reply["ok"] is True, reply
    kind, data = rig.entry(reply["seq"])
    assert (kind, data["line"], data["reason"]) == ("hit_voided", "straight-flush", "no royal")
    voided = next(e for e in reply["effects"] if e["type"] == "hit_voided")
    assert voided["corrected_line"] == "straight-flush" and voided["line"] == "royal-flush"
    pay = next(e for e in reply["effects"] if e["type"] == "pay")
    assert (pay["line"], pay["cents"], pay["supervisor"]) == ("straight-flush", 2500, "trainer")
    assert pay["voided_line"] == "royal-flush"


def test_correct_hit_and_adjust_hit_from_the_console_k3ii(rig: Rig) -> None:
    """``correct-hit POSITION LINE REASON`` before payment (upward here: the whole meter at
    validation), ``adjust-hit ROUND POSITION LINE REASON`` after it (NY 5324.41(k)(3)(ii)), each
    journaled in the supervisor's name with the reason."""
    to_betting(rig)
    for kind, data in (
        ("chip_detected", {"position": 2}),
        ("chip_detected", {"position": 4}),
        ("lockout_pressed", {}),
        ("side_wagers", {"bets": []}),
        ("chips_confirmed", {}),
        ("rng_activated", {}),
        ("side_wagers_settled", {}),
        ("dealt", {"remaining": 4}),
        ("play_complete", {}),
        ("progressive_outcome", {"position": 2, "line": "royal-flush"}),
        ("progressive_outcome", {"position": 4, "line": None}),
    ):
        rig.post(kind, **data)
    reply = rig.ask("correct-hit", "2", "natural-royal-flush-and-pair", "a", "pair", "too")
    assert reply["ok"] is True, reply
    kind, data = rig.entry(reply["seq"])
    assert (kind, data["line"], data["reason"]) == (
        "hit_corrected",
        "natural-royal-flush-and-pair",
        "a pair too",
    )
    fixed = next(e for e in reply["effects"] if e["type"] == "hit_corrected")
    assert (fixed["line"], fixed["supervisor"]) == ("royal-flush", "trainer")
    rig.ask("validate-hit", "2")
    round_id = rig.owner.public.round_id
    reply = rig.ask("adjust-hit", str(round_id), "4", "flush", "missed", "a", "flush")
    assert reply["ok"] is True, reply
    pay = next(e for e in reply["effects"] if e["type"] == "pay")
    assert (pay["position"], pay["cents"], pay["from"]) == (4, 300, "chip_tray")
    assert rig.ask("correct-hit", "2", "Royal!", "x")["ok"] is False


def test_key_holder_names_the_supervisor_of_panel_validations_k3iii(rig: Rig) -> None:
    """``key-holder`` (PIN checked) with the key on: a hit validated with the panel's NEXT is
    journaled in that supervisor's name, not as ``panel-key`` (NY 5324.41(k)(3)(iii))."""
    to_betting(rig)
    rig.post("chip_detected", position=2)
    rig.post("lockout_pressed")
    rig.post("side_wagers", bets=[])
    rig.post("chips_confirmed")
    rig.post("rng_activated")
    rig.post("side_wagers_settled")
    rig.post("dealt", remaining=4)
    rig.post("play_complete")
    rig.post("progressive_outcome", position=2, line="straight-flush")
    reply = rig.ask("key-holder")
    assert reply["ok"] is False and "key switch is off" in reply["error"]
    rig.post("supervisor_key", on=True)
    reply = rig.ask("key-holder")
    assert reply["ok"] is True, reply
    kind, data = rig.entry(reply["seq"])
    assert (kind, data["supervisor"], data["via"]) == ("key_holder", "trainer", "console")
    rig.post("panel_next")
    kind, data = [(k, d) for _, k, d in rig.entries() if k == "panel_next"][-1]
    pays = [e for e in data["effects"] if e["type"] == "pay"]
    assert pays and (pays[0]["supervisor"], pays[0]["via"]) == ("trainer", "panel")


def test_clear_fault_resumes_or_voids_with_refunds(rig: Rig) -> None:
    to_betting(rig)
    rig.post("fault_raised", code="SHOE_JAM", device="shoe", detail="test")
    reply = rig.ask("clear-fault")
    assert reply["ok"] is True and reply["state"] == "Open_Betting"
    kind, data = rig.entry(reply["seq"])
    cleared = parse_event(Event(kind, {k: v for k, v in data.items() if k != "effects"}))
    assert isinstance(cleared, FaultCleared) and cleared.void is False  # the default: left out
    rig.post("chip_detected", position=4)
    rig.post("fault_raised", code="SHOE_JAM", device="shoe", detail="test")
    reply = rig.ask("clear-fault", "--void", sup="floor")
    assert reply["ok"] is True and reply["state"] == "Open_Shuffling"
    assert {"round_voided", "refund"} <= set(kinds(reply["effects"]))
    refund = next(e for e in reply["effects"] if e["type"] == "refund")
    assert (refund["position"], refund["cents"]) == (4, 100)
    kind, data = rig.entry(reply["seq"])
    assert (kind, data["supervisor"], data["void"]) == ("fault_cleared", "floor", True)
    reply = rig.ask("clear-fault")
    assert reply["ok"] is False and "refused by the table" in reply["error"]


# ------------------------------------------------------------------------------ authentication
def refusals(rig: Rig) -> list[dict[str, Any]]:
    return [d for _, k, d in rig.entries() if k == REFUSAL_EVENT]


def test_wrong_pin_is_refused_journaled_and_nothing_posted(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    before = rig.entries()
    reply = rig.ask("open", pin="97531")
    assert reply == {"ok": False, "error": "refused: supervisor id or PIN not accepted"}
    after = rig.entries()
    added = [(k, d) for s, k, d in after if s > before[-1][0]]
    assert [k for k, _ in added] == [REFUSAL_EVENT]
    data = added[0][1]
    assert (data["supervisor"], data["request"], data["reason"]) == ("trainer", "open", "wrong PIN")
    assert "pin" not in data
    assert rig.owner.public.state == "Closed"
    conn = connect_read_only(rig.db)
    try:
        texts = [t for (t,) in conn.execute("SELECT data FROM journal")]
    finally:
        conn.close()
    assert not any("97531" in t for t in texts)
    assert "97531" not in caplog.text


def test_unknown_supervisor_is_refused_and_journaled(rig: Rig) -> None:
    reply = rig.ask("open", sup="mallory", pin="1234")
    assert reply["ok"] is False and reply["error"].startswith("refused")
    assert [(d["supervisor"], d["reason"]) for d in refusals(rig)] == [
        ("mallory", "unknown supervisor")
    ]
    assert rig.owner.public.state == "Closed"


def test_another_supervisors_pin_is_refused(rig: Rig) -> None:
    reply = rig.ask("open", sup="trainer", pin=PIN["floor"])
    assert reply["ok"] is False
    assert rig.owner.public.state == "Closed"


def test_an_id_is_locked_after_repeated_wrong_pins(rig: Rig) -> None:
    for _ in range(LOCKOUT_AFTER):
        assert rig.ask("open", pin="0000")["ok"] is False
    reply = rig.ask("open")  # the right PIN, but locked
    assert reply["ok"] is False and "locked" in reply["error"]
    assert rig.owner.public.state == "Closed"
    assert rig.ask("open", sup="floor")["ok"] is True  # other supervisors are not locked
    rig.post("shuffle_complete", count=53)
    rig.clock[0] += LOCKOUT_S + 1
    assert rig.ask("close")["ok"] is True


def test_refusals_journaled_at_most_a_bounded_number_a_minute(rig: Rig) -> None:
    extra = 4
    for i in range(JOURNALED_REFUSALS_PER_MINUTE + extra):
        assert rig.ask("open", sup=f"nobody{i}", pin="1111")["ok"] is False
    assert len(refusals(rig)) == JOURNALED_REFUSALS_PER_MINUTE
    assert rig.server.refusals == JOURNALED_REFUSALS_PER_MINUTE + extra
    rig.clock[0] += 61
    rig.ask("open", sup="nobody", pin="1111")
    last = refusals(rig)[-1]
    assert last["unjournaled"] == extra


# ------------------------------------------------------------------------------ bad input
def raw(rig: Rig, data: bytes) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(REPLY_TIMEOUT_S)
        s.connect(str(rig.sock))
        with contextlib.suppress(OSError):  # the server may answer before reading it all
            s.sendall(data)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    reply: dict[str, Any] = json.loads(buf)
    return reply


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"not json\n", "request: not JSON"),
        (b"[1, 2]\n", "request: must be a JSON object, got list"),
        (b'{"request": "fly"}\n', "request: must be one of status, open"),
        (b'{"request": "open"}\n', "supervisor: required for open"),
        (b'{"request": "open", "supervisor": "trainer"}\n', "pin: required for open"),
        (b'{"request": "open", "supervisor": "Trainer!", "pin": "1"}\n', "supervisor: must be"),
        (b'{"request": "status", "colour": 1}\n', "'colour': unknown key"),
        (b'{"request": "open", "args": "x"}\n', "args: must be a list of strings"),
        (b'{"request": "status", "args": [1]}\n', "args[0]: must be a string"),
        (b"\xff\xfe\n", "request: not UTF-8 text (byte 0)"),
        (b"\n", "request: empty line"),
        (b'{"request": "status", "pin": NaN}\n', "request: not JSON (NaN is not allowed)"),
        (
            request_line("validate-hit", ["7"], "trainer", "1234"),
            "POSITION: a position is 1..6, got '7'",
        ),
        (
            request_line("maintenance", ["start"], "trainer", "1234"),
            "maintenance: 'enter' or 'exit', got 'start'",
        ),
        (
            request_line("meter-correct", ["progressive", "display", "12.50", "x"], "trainer", "1"),
            "DELTA_CENTS: whole cents without a decimal point",
        ),
        (
            request_line("meter-correct", ["progressive", "jackpot", "5", "x"], "trainer", "1"),
            "METER: one of display, reserve, overflow, got 'jackpot'",
        ),
        (request_line("open", ["now"], "trainer", "1"), "open: takes no arguments, got 1"),
        (
            request_line("resolve-chips", ["1,1"], "trainer", "1"),
            "POSITIONS[1]: position 1 appears twice",
        ),
        (
            request_line("config-change", ["rate"], "trainer", "1"),
            "changes[0]: expected KEY=VALUE, got 'rate'",
        ),
        (request_line("clear-fault", ["--all"], "trainer", "1"), "clear-fault: unknown option"),
        (b"{" * (MAX_REQUEST_BYTES + 10), f"request too long: at most {MAX_REQUEST_BYTES} bytes"),
        (b"[" * 3000 + b"\n", "request: "),
    ],
)
def test_malformed_requests_get_a_specific_error_and_the_console_keeps_serving(
    rig: Rig, line: bytes, expected: str
) -> None:
    before = rig.owner.public.seq
    reply = raw(rig, line)
    assert reply["ok"] is False and expected in reply["error"], reply
    assert rig.owner.public.seq == before  # nothing posted, nothing journaled
    assert rig.ask("status", sup=None)["ok"] is True
    assert rig.server.alive


def test_a_request_without_newline_is_taken_at_end_of_file(rig: Rig) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(REPLY_TIMEOUT_S)
        s.connect(str(rig.sock))
        s.sendall(b'{"request": "status"}')
        s.shutdown(socket.SHUT_WR)
        reply = json.loads(s.recv(65536))
    assert reply["ok"] is True and reply["state"] == "Closed"


def test_a_slow_client_holds_others_only_until_its_timeout(tmp_path: Path) -> None:
    for rig in make_rig(tmp_path, timeout_s=0.5):
        slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        slow.settimeout(REPLY_TIMEOUT_S)
        slow.connect(str(rig.sock))
        slow.sendall(b'{"request": "sta')  # and then nothing
        try:
            reply = rig.ask("status", sup=None)  # served once the slow one timed out
            assert reply["ok"] is True
            late = json.loads(slow.recv(65536))
            assert late["ok"] is False and late["error"].startswith("timeout: no complete")
        finally:
            slow.close()


# ------------------------------------------------------------------------------ architecture
def test_the_console_never_touches_the_machine_or_the_journal(rig: Rig) -> None:
    """Architecture: the console thread only posts events and reads the published snapshot."""
    rig.ask("status", sup=None)
    rig.ask("maintenance", "enter")
    rig.ask("light-test")
    rig.ask("meter-correct", "progressive", "display", "1", "x")
    rig.ask("maintenance", "exit", pin="0000")
    assert rig.watch.threads == {"owner"}
    tree = ast.parse(Path(console_mod.__file__).read_text())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    forbidden = {
        "sqlite3",
        "controller.journal.store",
        "controller.service.owner",
        "fsm.round.machine",
    }
    assert not imported & forbidden, imported & forbidden


def test_a_request_after_the_owner_stopped_is_answered_not_committed(rig: Rig) -> None:
    rig.owner.stop()
    reply = rig.ask("open")
    assert reply["ok"] is False and "not committed" in reply["error"]


# ------------------------------------------------------------------------------ configuration
def test_console_section_is_validated_naming_the_key() -> None:
    data = tomllib.loads(SIMULATED_TABLE.read_text())
    data["console"] = {"socket": "relative.sock", "colour": "red"}
    with pytest.raises(Exception) as info:
        parse_config(data, "t")
    text = str(info.value)
    assert "console.socket: must be an absolute path" in text
    assert "console.colour: unknown key" in text
    data["console"] = {"socket": "/run/x/console.sock", "enabled": False}
    config = parse_config(data, "t")
    assert config.console.socket == "/run/x/console.sock" and config.console.enabled is False
    assert table_config().console.socket == "/run/paigow/console.sock"


def test_start_refuses_to_replace_a_file_that_is_not_a_socket(tmp_path: Path) -> None:
    path = tmp_path / "console.sock"
    path.write_text("journal notes")
    server = ConsoleServer(object(), {}, path)  # type: ignore[arg-type]
    with pytest.raises(OSError, match="not a socket"):
        server.start()
    assert path.read_text() == "journal notes"


def test_socket_mode_is_0660(rig: Rig) -> None:
    assert rig.sock.stat().st_mode & 0o777 == 0o660


def test_stale_socket_is_replaced_and_removed_at_stop(tmp_path: Path) -> None:
    for rig in make_rig(tmp_path):
        rig.server.stop()
        assert not rig.sock.exists()
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(rig.sock))
        stale.close()
        server = ConsoleServer(rig.owner, rig.config.supervisors, rig.sock, clock=time.monotonic)
        server.start()
        try:
            assert send_request(rig.sock, request_line("status", [], None, None), 10)["ok"]
        finally:
            server.stop()
