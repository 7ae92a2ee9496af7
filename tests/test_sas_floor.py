"""The gaming-machine side of the floor link without a host: the journal-derived exception queue,
answers and commands of the responder, the round machine's refusal of progressive wagers while a
link the progressive depends on is down (NJ 13:69E-1.39B(d)), and the ``[sas]`` configuration."""

from __future__ import annotations

import time
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from journal_support import journal_entries
from round_support import Table, of_type, rejection
from sas_support import hit_config, make_owner, post

from controller.config import load_config, parse_config
from controller.floor.exceptions import FloorFold
from controller.floor.responder import Responder
from controller.floor.sas_config import SasSection, parse_sas
from controller.journal.format import Entry
from controller.journal.tail import Committed
from controller.service.owner import PublicSnapshot
from drivers.sas import codec
from drivers.sas.sas_link import Poll
from fsm.round.config import GameConfig
from fsm.round.effects import (
    Acceptors,
    ConfigChangedEffect,
    Effect,
    Fault,
    FaultClearedEffect,
    HitPending,
    HitVoidedEffect,
    LinkedWager,
    Pay,
    Rejected,
)
from fsm.round.events import FloorCommand

H = bytes.fromhex


# --------------------------------------------------------------------------- exception queue
def entry(fold: FloorFold, seq: int, etype: str, *effects: Effect, **data: Any) -> FloorFold:
    """``fold`` after a committed ``etype`` entry with ``data`` and ``effects``."""
    journaled = {**data, "effects": [e.to_json() for e in effects]}
    return fold.apply(Committed(Entry(seq, 0, 1, etype, journaled, "", "")))


def codes(fold: FloorFold) -> list[int]:
    return [q.code for q in fold.queue]


def fault(code: str = "SHOE_JAM") -> Fault:
    return Fault(code=code, device="shoe", detail="", interrupted="Open_Dealing")


def hit(position: int = 1) -> HitPending:
    return HitPending(position=position, level="progressive", line="royal_flush")


def pay(**extra: Any) -> Pay:
    fields: dict[str, Any] = {"position": 1, "level": "progressive", "line": "royal_flush"}
    return Pay(**fields, cents=100_000, from_="meter", **extra)


def test_each_committed_fact_raises_its_exception() -> None:
    f = FloorFold()
    f = entry(f, 1, "power_up")
    f = entry(f, 2, "config_changed", ConfigChangedEffect(changes=(), supervisor="s1"))
    f = entry(f, 3, "fault_raised", fault())
    f = entry(f, 4, "fault_raised", fault())  # already out of service: tilt only
    f = entry(f, 5, "fault_cleared", FaultClearedEffect(supervisor="s1", outcome="resumed"))
    f = entry(f, 6, "progressive_outcome", hit())
    f = entry(f, 7, "hit_validated", pay(supervisor="s1"))
    f = entry(f, 8, "deadline", fault("SHOE_TIMEOUT"))  # the machine's own
    assert codes(f) == [0x17, 0x3C, 0x20, 0x86, 0x20, 0x51, 0x54, 0x52, 0x20, 0x86]
    assert f.power_ups == 1


def test_a_handpay_is_reset_by_the_validation_or_the_void_whoever_makes_it() -> None:
    """52 follows the facts of the effects: a hit validated by the panel's key (panel_next) is
    reset like one validated at the console; a void is reset once, and the pay of the corrected
    line it names is a win (54), not a second reset."""
    f = entry(FloorFold(), 1, "panel_next", pay(supervisor="panel-key", via="panel"))
    assert codes(f) == [0x54, 0x52]
    voided = HitVoidedEffect(
        position=1, level="progressive", line="royal_flush", supervisor="s1", reason="misread"
    )
    f = entry(FloorFold(), 2, "hit_voided", voided, pay(voided_line="royal_flush"))
    assert codes(f) == [0x52, 0x54]
    tray = Pay(position=2, level="progressive", line="flush", cents=5000, from_="chip_tray")
    assert codes(entry(FloorFold(), 3, "panel_next", tray)) == [0x54]


def test_a_rejected_event_raises_nothing() -> None:
    refused = Rejected(event="fault_raised", reason="x", cause="invalid")
    assert codes(entry(FloorFold(), 1, "fault_raised", refused, fault())) == []


def test_acknowledged_exception_leaves_the_queue_by_its_journal_entry() -> None:
    f = entry(FloorFold(), 1, "power_up")
    f = entry(f, 2, "progressive_outcome", hit())
    f = entry(f, 3, "floor_command", command="exception_acked", code=0x17, source_seq=1)
    assert codes(f) == [0x51]
    # an acknowledgement of something not queued changes nothing
    f = entry(f, 4, "floor_command", command="exception_acked", code=0x52, source_seq=2)
    assert codes(f) == [0x51]


def test_queue_keeps_at_least_20_and_overflow_gives_70_once() -> None:
    f = FloorFold(capacity=20)
    for seq in range(1, 26):
        f = entry(f, seq, "power_up")
    assert len(f.queue) == 21
    assert codes(f)[:20] == [0x17] * 20 and codes(f)[20] == 0x70
    assert f.overflowed == 5


def test_queue_is_the_same_after_a_restart_because_it_is_a_fold_of_the_journal() -> None:
    entries: list[tuple[int, str, tuple[Effect, ...]]] = [
        (1, "power_up", ()),
        (2, "progressive_outcome", (hit(),)),
    ]
    a = FloorFold()
    for seq, t, effects in entries:
        a = entry(a, seq, t, *effects)
    b = FloorFold()
    for seq, t, effects in entries:  # a new process folds the same committed entries
        b = entry(b, seq, t, *effects)
    assert a == b and codes(a) == [0x17, 0x51]


def linked_wager(playable: bool, linked: bool = True) -> LinkedWager:
    return LinkedWager(pool="P1", level="progressive", playable=playable, linked=linked)


def test_the_linked_wager_unplayable_raises_53_and_playable_again_nothing() -> None:
    """NY 5321.18(c), NJ 13:69E-1.39B(d),(e) over SAS (docs/sas.md): 53 "no progressive
    information" each time the linked wager becomes unplayable; nothing when it is playable
    again (SAS has no such code); 3C when the table is linked or unlinked (its options)."""
    f = FloorFold()
    f = entry(f, 1, "link_state", linked_wager(True))  # first linked, reachable
    f = entry(f, 2, "link_state", linked_wager(False))  # the link controller lost
    f = entry(f, 3, "link_state", linked_wager(True))  # confirmed again
    f = entry(f, 4, "link_state", linked_wager(False))
    f = entry(f, 5, "link_state", linked_wager(True, linked=False))  # unlinked
    f = entry(f, 6, "link_state", linked_wager(False))  # linked again, out of reach
    assert codes(f) == [0x3C, 0x53, 0x53, 0x3C, 0x3C, 0x53]
    # a link_state that changes nothing has no linked_wager effect and raises nothing
    assert codes(entry(f, 7, "link_state", Acceptors(armed=False))) == codes(f)


# --------------------------------------------------------------------------- responder
def snap(**view: Any) -> PublicSnapshot:
    meters = {"progressive": {"wagered_cents": 123456, "progressive_in": 321, "wins": 4,
                              "tray_paid_cents": 2000, "meter_paid_cents": 500, "paid_cents": 2500,
                              "display_cents": 100000, "last_hits": ()}}  # fmt: skip
    return PublicSnapshot(
        5, 0, "Open_Betting", 1, 1, MappingProxyType(view), MappingProxyType(meters)
    )


def responder(**sas: Any) -> Responder:
    problems: list[str] = []
    section = parse_sas(sas, problems)
    assert problems == []
    return Responder(section, GameConfig(), "TBL0001")


def poll(frame: bytes) -> Poll:
    spec = codec.POLLS[frame[1]]
    data = b"" if spec.kind == "R" else frame[2:-2] if spec.kind == "S" else frame[3:-2]
    return Poll(frame[0], frame[1], data, frame)


def test_0f_and_52_answers_are_the_reference_frames_for_the_reference_meters() -> None:
    r = responder(sas_version="603")
    got = r.respond(poll(H("01 0F")), snap(), FloorFold(), 0.0).frame
    assert got == H(
        "01 0F 00 00 00 00 00 12 34 56 00 00 20 00 00 00 00 00 00 00 05 00 00 00 03 21 D0 A9"
    )
    got = r.respond(poll(H("01 52 00 01 69 3B")), snap(), FloorFold(), 0.0).frame
    assert got == H("01 52 00 01 00 12 34 56 00 00 20 00 00 00 05 00 00 00 03 21 39 51")
    assert r.respond(poll(H("01 54")), snap(), FloorFold(), 0).frame == H(
        "01 54 0A 36 30 33 54 42 4C 30 30 30 31 F3 51"
    )
    assert r.respond(poll(H("01 55")), snap(), FloorFold(), 0).frame == H("01 55 00 01 6C B7")


def test_bad_bcd_and_bad_game_number_get_nack() -> None:
    r = responder()
    for game in ("00 02", "1A 00"):
        frame = codec.s_poll(1, 0x52, H(game))
        assert r.respond(poll(frame), snap(), FloorFold(), 0).frame == b"\x81"
    too_many = codec.m_poll(1, 0x2F, H("00 00") + bytes(range(11)))
    assert r.respond(poll(too_many), snap(), FloorFold(), 0).frame == b"\x81"


def test_a_poll_not_enabled_is_not_answered() -> None:
    r = responder(enabled_polls=["1A"])
    assert r.respond(poll(H("01 0F")), snap(), FloorFold(), 0).frame is None
    assert r.respond(poll(H("01 1A")), snap(), FloorFold(), 0).frame is not None


def test_7f_sets_the_clock_only_when_the_configuration_allows() -> None:
    frame = codec.s_poll(1, 0x7F, codec.date_time_bytes(11, 29, 2025, 12, 34, 56))
    refused = responder().respond(poll(frame), snap(), FloorFold(), 1000.0)
    assert refused.frame == b"\x01" and refused.command is not None
    assert refused.command.applied is False and refused.command.clock_offset_ms == 0
    allowed = responder(clock_setting_allowed=True).respond(
        poll(frame), snap(), FloorFold(), 1000.0
    )
    assert allowed.command is not None and allowed.command.applied is True
    assert allowed.command.clock == "2025-11-29T12:34:56"
    bad = codec.s_poll(1, 0x7F, H("13 29 20 25 12 34 56"))
    assert responder().respond(poll(bad), snap(), FloorFold(), 0).frame == b"\x81"


def test_broadcast_7f_is_never_answered_but_journaled() -> None:
    frame = codec.s_poll(0, 0x7F, codec.date_time_bytes(11, 29, 2025, 12, 34, 56))
    reply = responder(clock_setting_allowed=True).broadcast(poll(frame), 0.0)
    assert reply.frame is None and reply.command is not None and reply.command.applied


def test_01_02_and_09_are_floor_commands_acknowledged() -> None:
    r = responder()
    shut = r.respond(poll(codec.s_poll(1, 0x01)), snap(), FloorFold(), 0)
    assert shut.frame == b"\x01" and shut.command == FloorCommand(command="refuse_progressive")
    up = r.respond(poll(codec.s_poll(1, 0x02)), snap(), FloorFold(), 0)
    assert up.command == FloorCommand(command="accept_progressive")
    off = r.respond(poll(codec.s_poll(1, 0x09, H("00 01 00"))), snap(), FloorFold(), 0)
    assert off.frame == b"\x01" and off.command == FloorCommand(command="disable_game", game=1)


def test_1b_returns_the_pending_hit_at_the_meter() -> None:
    view = {
        "round": {
            "pending": [
                {"position": 2, "level": "progressive", "line": "natural-royal-flush-and-pair"}
            ]
        }
    }
    frame = responder().respond(poll(H("01 1B")), snap(**view), FloorFold(), 0).frame
    assert frame is not None and frame[2:9] == H("00 01 00 00 10 00 00")
    empty = responder().respond(poll(H("01 1B")), snap(), FloorFold(), 0).frame
    assert empty == codec.handpay_answer(1, 0, 0, 0, 0, 0)


def test_1b_of_a_linked_hit_is_the_amount_the_pool_locked_issue_22() -> None:
    """A linked hit is the pool's to decide at its meter (docs/link.md): 1B answers 0 until the
    pool's lock is journaled, then exactly the locked amount (the audit saw 10,002 cents, the
    table's own meter, while the pool had locked 250,000)."""
    jackpot = "natural-royal-flush-and-pair"
    lines = [jackpot, "natural-royal-flush", "royal-flush"]
    hit = {"position": 2, "level": "progressive", "line": jackpot, "lines": lines}
    waiting = snap(round={"pending": [hit]})
    frame = responder().respond(poll(H("01 1B")), waiting, FloorFold(), 0).frame
    assert frame is not None and frame[2:9] == H("00 01 00 00 00 00 00")
    locked = snap(round={"pending": [{**hit, "locked_cents": 250_000, "lock_order": 1}]})
    frame = responder().respond(poll(H("01 1B")), locked, FloorFold(), 0).frame
    assert frame is not None and frame[2:9] == H("00 01 00 00 25 00 00")


def test_a_linked_hit_locked_from_the_chip_tray_is_a_handpay_reset_when_validated() -> None:
    """The pool locked a fixed amount the chip tray pays ((k)(5)): the pending hit (51) is
    reset (52) when the supervisor validates it, like one paid from the meter."""
    tray = Pay(position=2, level="progressive", line="four-of-a-kind", cents=2000,
               from_="chip_tray", supervisor="s1", via="console")  # fmt: skip
    assert codes(entry(FloorFold(), 3, "hit_validated", tray)) == [0x54, 0x52]


# --------------------------------------------------------------------------- the round
def test_link_down_makes_progressive_wagers_unplayable_when_the_progressive_depends_on_it() -> None:
    """NJ 13:69E-1.39B(d): acceptors not armed, a chip refused, until the link returns."""
    t = Table()
    t.open()
    effects = t.ev("floor_link", up=False, blocks_progressive=True)
    assert {"type": "acceptors", "armed": False} in effects
    assert "floor link is down" in (rejection(t.ev("chip_detected", position=1)) or "")
    effects = t.ev("floor_link", up=True, blocks_progressive=True)
    assert {"type": "acceptors", "armed": True} in effects
    assert rejection(t.ev("chip_detected", position=1)) is None


def test_link_down_without_dependency_changes_nothing_but_is_journaled() -> None:
    t = Table()
    t.open()
    effects = t.ev("floor_link", up=False, blocks_progressive=False)
    assert rejection(effects) is None and of_type(effects, "acceptors") == []
    assert rejection(t.ev("chip_detected", position=1)) is None


def test_floor_shut_down_refuses_progressive_wagers_until_start_up() -> None:
    t = Table()
    t.open()
    assert {"type": "acceptors", "armed": False} in t.ev(
        "floor_command", command="refuse_progressive"
    )
    assert "shut down" in (rejection(t.ev("chip_detected", position=1)) or "")
    t.ev("floor_command", command="accept_progressive")
    assert rejection(t.ev("chip_detected", position=1)) is None
    assert "command" in (rejection(t.ev("floor_command", command="launch")) or "")


def test_floor_state_survives_a_restore() -> None:
    t = Table()
    t.open()
    t.ev("floor_command", command="refuse_progressive")
    from fsm.round.machine import RoundMachine

    m = RoundMachine.restore(t.cfg, t.m.snapshot())
    assert {"type": "acceptors", "armed": False} in m.outputs()


def test_link_lost_for_5s_is_journaled_and_blocks_progressive_then_returns(tmp_path: Path) -> None:
    """The floor link counted down after 5 s without polls, journaled on change; with the
    progressive depending on it the acceptors are disarmed (NJ 13:69E-1.39B(d))."""
    from sas_support import general_poll, host

    from controller.floor.service import pty_floor_link

    cfg = load_config(hit_config(tmp_path, progressive_depends_on_link=True))
    db = tmp_path / "journal.db"
    owner = make_owner(cfg, db)
    owner.start()
    floor = pty_floor_link(cfg.sas, cfg.game, owner, db, tmp_path / "sas")
    floor.start()
    try:
        post(owner, "table_opened", supervisor="trainer")
        post(owner, "shuffle_complete", count=53)
        deadline = time.monotonic() + 15
        while (
            time.monotonic() < deadline
            and owner.public.view.get("floor", {}).get("link_blocks") is not True
        ):
            time.sleep(0.1)
        links = [d for _, t, d in journal_entries(db) if t == "floor_link"]
        assert links == [{"up": False, "blocks_progressive": True, "effects": links[0]["effects"]}]
        assert {"type": "acceptors", "armed": False} in links[0]["effects"]
        sm = host(tmp_path / "sas")
        try:
            general_poll(sm)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and owner.public.view["floor"]["link_blocks"]:
                time.sleep(0.05)
        finally:
            sm.port.close()
        links = [d for _, t, d in journal_entries(db) if t == "floor_link"]
        assert [d["up"] for d in links] == [False, True]
        assert {"type": "acceptors", "armed": True} in links[1]["effects"]
    finally:
        floor.stop()
        owner.stop()


# --------------------------------------------------------------------------- configuration
def test_sas_section_keys_are_validated_with_their_names() -> None:
    problems: list[str] = []
    parse_sas(
        {"transport": "usb", "sas_version": "6.2", "game_id": "P",
         "enabled_polls": ["1A", "EE", "x"], "inter_byte_gap": 5, "meters": {"00": "nothing"},
         "exception_queue": 5, "colour": 1},
        problems,
    )  # fmt: skip
    text = "\n".join(problems)
    for key in ("sas.transport", "sas.sas_version", "sas.game_id", "sas.enabled_polls[1]",
                "sas.enabled_polls[2]", "sas.inter_byte_gap", "sas.meters.00",
                "sas.exception_queue", "sas.colour: unknown key"):  # fmt: skip
        assert key in text, key


def test_the_table_file_carries_sas_and_a_stream_may_be_tcp() -> None:
    problems: list[str] = []
    s = parse_sas({"transport": "stream", "port": "socket://127.0.0.1:7000"}, problems)
    assert problems == [] and s.gap_s == 0.05
    assert SasSection().gap_s == 0.005  # the UART's 5 ms rule
    with pytest.raises(Exception, match=r"sas\.port"):
        parse_config_with({"port": "COM1"})


def parse_config_with(sas: dict[str, Any]) -> Any:
    import tomllib

    from controller.config import SIMULATED_TABLE

    data = tomllib.loads(SIMULATED_TABLE.read_text())
    data["sas"] = sas
    return parse_config(data)


def test_host_commands_are_journaled_as_floor_commands(tmp_path: Path) -> None:
    """01 / 02 refuse and accept progressive wagers (acceptors disarmed and armed, journaled);
    a broadcast 7F is never answered and, clock setting not allowed, journaled unapplied; 09."""
    from controller.floor.service import pty_floor_link
    from drivers.sas.host import HostPort

    cfg = load_config(hit_config(tmp_path))
    db = tmp_path / "journal.db"
    owner = make_owner(cfg, db)
    owner.start()
    floor = pty_floor_link(cfg.sas, cfg.game, owner, db, tmp_path / "sas")
    floor.start()
    host = HostPort(str(tmp_path / "sas"))
    try:
        post(owner, "table_opened", supervisor="trainer")
        post(owner, "shuffle_complete", count=53)

        def exchange(frame: bytes) -> bytes:
            host.send(frame)
            got = host.read_answer(0.5)
            host.send(b"\x80")  # acknowledges (another address)
            return got

        assert exchange(codec.s_poll(1, 0x01)) == b"\x01"
        clock = codec.date_time_bytes(11, 29, 2025, 12, 34, 56)
        assert exchange(codec.s_poll(0, 0x7F, clock)) == b""
        assert exchange(codec.s_poll(1, 0x09, H("00 01 00"))) == b"\x01"
        assert exchange(codec.s_poll(1, 0x02)) == b"\x01"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            cmds = [d for _, t, d in journal_entries(db) if t == "floor_command"]
            if len(cmds) >= 4:
                break
            time.sleep(0.05)
        assert [d["command"] for d in cmds] == [
            "refuse_progressive",
            "set_clock",
            "disable_game",
            "accept_progressive",
        ]
        assert {"type": "acceptors", "armed": False} in cmds[0]["effects"]
        assert cmds[1]["applied"] is False and cmds[1]["clock"] == "2025-11-29T12:34:56"
        assert {"type": "acceptors", "armed": True} in cmds[3]["effects"]
    finally:
        host.close()
        floor.stop()
        owner.stop()
