"""Device adapters and their supporting pieces: configuration errors that name the key, the
backoff schedule, protocol decoding errors that name the byte, fault codes, the in-memory fakes,
and on real ptys: a device that acknowledges but never answers (RESPONSE_TIMEOUT), a device that
sends a malformed answer (PROTOCOL_ERROR), a device plugged in after start-up.
"""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from drivers.serial import faults, protocol
from drivers.serial.fakes import FakeShoe, FakeShuffler
from drivers.serial.port import LinkPort, PortConfig, next_backoff
from drivers.serial.serial_link import LinkConfig
from drivers.serial.shoe import ReferenceShoe, Shoe, ShoeConfig
from drivers.serial.shuffler import Shuffler, ShufflerConfig
from drivers.sim.deck import SimDeck
from drivers.sim.pty_device import PtyDevice
from drivers.sim.shoe_sim import ShoeSim
from fsm.round.events import Event

LINK = LinkConfig(
    ack_timeout=0.1, max_retries=3, heartbeat_interval=0.2, silence_timeout=1.0, idle_flush=0.02
)


def fast_port(path: str) -> PortConfig:
    return PortConfig(path, read_tick=0.01, backoff_initial=0.01, backoff_max=0.1)


def wait_for(q: queue.Queue[Event], pred: Callable[[Event], bool], limit: float = 10.0) -> Event:
    seen: list[Event] = []
    while True:
        try:
            event = q.get(timeout=limit)
        except queue.Empty:
            raise AssertionError(f"event not seen; got {seen}") from None
        seen.append(event)
        if pred(event):
            return event


def test_backoff_doubles_from_a_tenth_of_a_second_and_caps_at_five() -> None:
    cfg = PortConfig("/dev/paigow-shoe")
    delays = [cfg.backoff_initial]
    for _ in range(8):
        delays.append(next_backoff(delays[-1], cfg))
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]


def test_shoe_config_defaults_to_the_udev_name_and_errors_name_the_key() -> None:
    cfg = ShoeConfig.from_mapping({}, "serial.shoe")
    assert cfg.port.path == "/dev/paigow-shoe"
    assert ShufflerConfig.from_mapping({}, "serial.shuffler").port.path == "/dev/paigow-shuffler"
    with pytest.raises(ValueError, match=r"^serial\.shoe\.port\.baudrate: "):
        ShoeConfig.from_mapping({"port": {"baudrate": 12345}}, "serial.shoe")
    with pytest.raises(ValueError, match=r"^serial\.shoe\.colour: unknown key"):
        ShoeConfig.from_mapping({"colour": "red"}, "serial.shoe")
    with pytest.raises(ValueError, match=r"^serial\.shoe\.link\.max_retries: "):
        ShoeConfig.from_mapping({"link": {"max_retries": -1}}, "serial.shoe")
    with pytest.raises(ValueError, match=r"^serial\.shuffler\.shuffle_timeout: "):
        ShufflerConfig.from_mapping({"shuffle_timeout": 0}, "serial.shuffler")


def test_dispense_report_decoding_names_the_bad_byte() -> None:
    good = protocol.encode_dispense_rsp(protocol.DispenseReport(3, 1, 2, 51, ((0, 52),)))
    assert protocol.decode_dispense_rsp(good).hands == ((0, 52),)
    bad = bytearray(good)
    bad[6] = 60
    with pytest.raises(protocol.ProtocolError, match="byte 6 is card 60"):
        protocol.decode_dispense_rsp(bytes(bad))
    bad[6] = 0
    with pytest.raises(protocol.ProtocolError, match="twice"):
        protocol.decode_dispense_rsp(bytes(bad))
    with pytest.raises(protocol.ProtocolError, match="STATUS_RSP: payload of 2 bytes"):
        protocol.decode_status_rsp(b"\x01\x02")


def test_deck_count_codes_name_the_count_5324_41_b() -> None:
    assert faults.deck_count_code(52) == "DECK_COUNT_52"
    assert faults.is_fault_code("DECK_COUNT_52") and faults.is_fault_code("DECK_COUNT_0")
    assert not faults.is_fault_code("DECK_COUNT_53")  # the right count is no fault
    assert not faults.is_fault_code("DECK_COUNT_x")
    assert faults.is_fault_code(faults.SHOE_JAM) and faults.is_fault_code(faults.LINK_TIMEOUT)


def test_fakes_follow_the_same_contract_7_stacks_leave_4() -> None:
    posted: list[Event] = []
    fake_shuffler = FakeShuffler(posted.append, seed=1)
    shuffler: Shuffler = fake_shuffler
    shoe: Shoe = FakeShoe(posted.append, fake_shuffler)
    shuffler.shuffle()
    shoe.dispense(7, 7)
    assert [e.type for e in posted] == ["shuffle_complete", "dealt"]
    hands = posted[1].data["stacks"]
    assert len({c for h in hands for c in h}) == 49
    assert shoe.cards_remaining == 4
    fake = FakeShuffler(posted.append, seed=1)
    fake.count = 52
    fake.shuffle()
    assert posted[-1].data["code"] == "DECK_COUNT_52"
    with pytest.raises(ValueError, match=r"stacks and cards must be 1\.\.7"):
        shoe.dispense(8, 7)


def test_reference_shoe_refuses_a_bad_dispense_by_argument() -> None:
    shoe = ReferenceShoe(LinkPort("shoe", fast_port("/nonexistent/x"), LINK), lambda e: None)
    with pytest.raises(ValueError, match=r"stacks must be 1\.\.7, got 0"):
        shoe.dispense(0, 7)
    with pytest.raises(ValueError, match=r"cards must be 1\.\.7, got 9"):
        shoe.dispense(7, 9)


class _Mute:
    """A shoe that acknowledges every frame (the link does) but never answers a dispense."""

    def __init__(self) -> None:
        self.inner = ShoeSim(SimDeck())

    def handle(self, msg_type: int, payload: bytes) -> list[tuple[int, bytes]]:
        if msg_type == protocol.DISPENSE_REQ:
            return []
        return self.inner.handle(msg_type, payload)


class _Garbled:
    """A shoe whose status answer has the wrong length."""

    def handle(self, msg_type: int, payload: bytes) -> list[tuple[int, bytes]]:
        return [(protocol.STATUS_RSP, b"\x00\x01")]


def _run_shoe(
    logic: object, directory: Path
) -> tuple[queue.Queue[Event], ReferenceShoe, PtyDevice]:
    device = PtyDevice("shoe", os.path.join(directory, "paigow-shoe"), logic)  # type: ignore[arg-type]
    device.start()
    events: queue.Queue[Event] = queue.Queue()
    shoe = ReferenceShoe(
        LinkPort("shoe", fast_port(device.path), LINK),
        events.put,
        ShoeConfig(status_timeout=1.0, dispense_timeout=0.3),
    )
    shoe.start()
    return events, shoe, device


def test_acknowledged_command_without_answer_is_a_response_timeout(tmp_path: Path) -> None:
    events, shoe, device = _run_shoe(_Mute(), tmp_path)
    try:
        shoe.dispense(7, 7)
        fault = wait_for(events, lambda e: e.type == "fault_raised")
        assert fault.data["code"] == faults.RESPONSE_TIMEOUT
        assert "DISPENSE_REQ" in str(fault.data["detail"])
    finally:
        shoe.stop()
        device.stop()


class _Stunned:
    """A shoe whose link acknowledges every frame but whose logic answers nothing until woken."""

    def __init__(self) -> None:
        self.inner = ShoeSim(SimDeck())
        self.awake = False

    def handle(self, msg_type: int, payload: bytes) -> list[tuple[int, bytes]]:
        return self.inner.handle(msg_type, payload) if self.awake else []


def test_an_unanswered_command_stays_in_the_fault_set_until_the_device_answers_again(
    tmp_path: Path,
) -> None:
    """Issue 12: a fault clears only when its device reports healthy. RESPONSE_TIMEOUT is held
    (the supervisor cannot clear it) and the adapter's own status polls, unanswered, neither
    repeat it nor release it; the first answer of the device releases it."""
    logic = _Stunned()
    events, shoe, device = _run_shoe(logic, tmp_path)
    try:
        shoe.dispense(7, 7)
        fault = wait_for(events, lambda e: e.type == "fault_raised")
        assert fault.data["code"] == faults.RESPONSE_TIMEOUT and fault.data.get("held") is True
        time.sleep(2.5)  # two of the adapter's status polls (1 s each) time out unanswered
        later = list(events.queue)
        assert not [e for e in later if e.type == "device_recovered"], later
        assert not [e for e in later if e.type == "fault_raised"], later
        logic.awake = True
        back = wait_for(events, lambda e: e.type == "device_recovered")
        assert back.data == {"device": "shoe", "code": faults.RESPONSE_TIMEOUT}
    finally:
        shoe.stop()
        device.stop()


def test_malformed_answer_is_a_protocol_error_naming_the_message(tmp_path: Path) -> None:
    events, shoe, device = _run_shoe(_Garbled(), tmp_path)
    try:
        shoe.request_status()
        fault = wait_for(events, lambda e: e.type == "fault_raised")
        assert fault.data["code"] == faults.PROTOCOL_ERROR
        assert "STATUS_RSP" in str(fault.data["detail"])
    finally:
        shoe.stop()
        device.stop()


def test_device_plugged_in_after_start_is_found_by_the_backoff_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "paigow-shoe")
    events: queue.Queue[Event] = queue.Queue()
    port = LinkPort("shoe", fast_port(path), LINK)
    shoe = ReferenceShoe(port, events.put)
    shoe.start()
    device = PtyDevice("shoe", path, ShoeSim(SimDeck()))
    try:
        lost = wait_for(events, lambda e: e.type == "fault_raised")
        assert lost.data["code"] == faults.PORT_LOST and "No such file" in str(lost.data["detail"])
        device.start()
        wait_for(events, lambda e: e.type == "device_recovered")
        assert port.opens == 1 and port.open_failures >= 1
        faults_seen = [e for e in list(events.queue) if e.type == "fault_raised"]
        assert faults_seen == []  # reported once, not once per retry
    finally:
        shoe.stop()
        device.stop()


class _BrokenListener:
    """An adapter with a bug: every callback raises."""

    def __init__(self) -> None:
        self.calls = 0

    def on_link_event(self, event: object, now: float) -> None:
        self.calls += 1
        raise RuntimeError("adapter bug")

    def on_port_state(self, is_open: bool, detail: str, now: float) -> None:
        self.calls += 1
        raise RuntimeError("adapter bug")

    def on_tick(self, now: float) -> None:
        self.calls += 1
        raise RuntimeError("adapter bug")


def test_reader_thread_survives_a_listener_that_raises(tmp_path: Path) -> None:
    device = PtyDevice("shoe", str(tmp_path / "paigow-shoe"), ShoeSim(SimDeck()))
    device.start()
    port = LinkPort("shoe", fast_port(device.path), LINK)
    listener = _BrokenListener()
    port.set_listener(listener)
    port.start()
    try:
        for _ in range(2000):
            if port.listener_errors >= 20 and port.link.counters()["frames_rx"] >= 2:
                break
            time.sleep(0.005)
        assert port.listener_errors >= 20  # still ticking after many failures
        assert port.link.counters()["frames_rx"] >= 2  # and still talking to the device
        assert "adapter bug" in port.last_error
    finally:
        port.stop()
        device.stop()


def test_the_configuration_s_baud_rates_are_pyserial_s() -> None:
    """``drivers.serial.settings`` checks ``baudrate`` without importing pyserial (``tablectl
    config check``, issue 29): its list must stay pyserial's."""
    import serial

    from drivers.serial.settings import BAUDRATES

    assert tuple(serial.Serial.BAUDRATES) == BAUDRATES
