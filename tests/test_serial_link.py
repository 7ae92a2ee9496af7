"""The link layer without a port: ACK/NAK, retransmission, retry limit, heartbeat, silence,
duplicate suppression; and a property test over a lossy channel model (loss, corruption,
duplication, reordering): a damaged frame is never delivered, and every message is delivered
exactly once, in order, or its sender is told it failed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.serial.frame import Frame, FrameParser, encode_frame
from drivers.serial.serial_link import (
    ACK,
    NAK,
    PING,
    SYNC,
    SYNC_REPLY,
    Acked,
    Delivered,
    Link,
    LinkConfig,
    PeerAlive,
    PeerSilent,
    PeerSynced,
    SendFailed,
)

FAST = LinkConfig(
    ack_timeout=0.05, max_retries=3, heartbeat_interval=0.2, silence_timeout=0.6, idle_flush=0.02
)
QUIET = LinkConfig(ack_timeout=0.05, max_retries=3, heartbeat_interval=None, silence_timeout=None)


def frames_of(data: bytes) -> list[Frame]:
    parser = FrameParser()
    return parser.feed(data) + parser.flush()


def shuttle(a: Link, b: Link, now: float) -> None:
    """A perfect wire both ways until quiet."""
    for _ in range(20):
        ab, ba = a.take_output(), b.take_output()
        if not ab and not ba:
            return
        b.receive(ab, now)
        a.receive(ba, now)


def started_pair(now: float = 0.0) -> tuple[Link, Link]:
    a, b = Link(FAST, session=1), Link(QUIET, session=2)
    a.start(now)
    b.start(now)
    shuttle(a, b, now)
    a.take_events()
    b.take_events()
    return a, b


def test_link_opens_with_sync_and_peer_is_told() -> None:
    a = Link(FAST, session=0xDEADBEEF)
    a.start(0.0)
    frames = frames_of(a.take_output())
    assert [f.type for f in frames] == [SYNC]
    assert frames[0].payload[:4] == bytes.fromhex("DEADBEEF")
    assert frames[0].payload[6] == SYNC_REPLY
    b = Link(QUIET, session=2)
    b.receive(encode_frame(frames[0].seq, SYNC, frames[0].payload), 0.0)
    assert any(isinstance(e, PeerSynced) and e.session == 0xDEADBEEF for e in b.take_events())
    assert [f.type for f in frames_of(b.take_output())] == [ACK]


def test_message_is_acked_and_delivered_once() -> None:
    a, b = started_pair()
    handle = a.send(0x11, b"\x01", 0.0)
    shuttle(a, b, 0.0)
    assert b.take_events() == [Delivered(0x11, b"\x01", 1)]
    assert a.take_events() == [Acked(handle)]


def test_retransmitted_frame_is_delivered_once_and_acked_again() -> None:
    a, b = started_pair()
    a.send(0x11, b"\x05", 0.0)
    wire = a.take_output()
    b.receive(wire, 0.0)
    b.take_output()  # the ACK is lost
    a.poll(0.06)  # ack timeout: retransmission
    again = a.take_output()
    assert again == wire
    b.receive(again, 0.06)
    assert [f.type for f in frames_of(b.take_output())] == [ACK]
    assert b.take_events() == [Delivered(0x11, b"\x05", 1)]
    assert b.counters()["duplicates"] == 1


def test_retries_exhausted_fail_the_message() -> None:
    a, _b = started_pair()
    handle = a.send(0x12, b"\x01\x07\x07", 0.0)
    transmissions = len(frames_of(a.take_output()))
    t = 0.0
    failed: list[SendFailed] = []
    while not failed and t < 1.0:
        t += 0.01
        a.poll(t)
        transmissions += len([f for f in frames_of(a.take_output()) if f.type == 0x12])
        failed = [e for e in a.take_events() if isinstance(e, SendFailed)]
    assert failed == [SendFailed(handle, 0x12, "retries exhausted")]
    assert transmissions == 1 + FAST.max_retries


def test_nak_makes_the_sender_retransmit_before_its_timeout() -> None:
    a, b = started_pair()
    a.send(0x10, b"\x01", 0.0)
    wire = bytearray(a.take_output())
    wire[-1] ^= 0x01
    b.receive(bytes(wire), 0.0)
    reply = b.take_output()
    assert [f.type for f in frames_of(reply)] == [NAK]
    a.receive(reply, 0.03)  # before ack_timeout, after nak_holdoff
    assert [f.type for f in frames_of(a.take_output())] == [0x10]


def test_idle_link_sends_heartbeat_ping() -> None:
    a, _b = started_pair()
    a.poll(0.25)
    assert [f.type for f in frames_of(a.take_output())] == [PING]


def test_silent_peer_raises_peer_silent_then_alive_when_it_answers() -> None:
    a, b = started_pair()
    t = 0.0
    silent: list[PeerSilent] = []
    while not silent and t < 2.0:
        t += 0.01
        a.poll(t)
        a.take_output()  # nothing reaches the peer
        silent = [e for e in a.take_events() if isinstance(e, PeerSilent)]
    assert silent and a.peer_silent
    refused = a.send(0x11, b"\x01", t)
    assert SendFailed(refused, 0x11, "peer silent") in a.take_events()
    # The peer answers again: the link resynchronises with a new SYNC epoch.
    for _ in range(100):
        t += 0.01
        a.poll(t)
        b.receive(a.take_output(), t)
        a.receive(b.take_output(), t)
        if not a.peer_silent:
            break
    assert not a.peer_silent
    assert PeerAlive() in a.take_events()


def test_stale_seq_from_before_is_a_duplicate() -> None:
    a, b = started_pair()
    a.send(0x11, b"\x01", 0.0)
    first = a.take_output()
    shuttle_from = first
    b.receive(shuttle_from, 0.0)
    a.receive(b.take_output(), 0.0)
    a.send(0x11, b"\x02", 0.0)
    b.receive(a.take_output(), 0.0)
    b.take_events()
    b.receive(first, 0.1)  # a delayed copy of the first frame arrives late
    assert b.take_events() == []


def test_reserved_type_and_oversized_payload_are_refused() -> None:
    a = Link(FAST, session=1)
    with pytest.raises(ValueError, match="reserved"):
        a.send(PING, b"", 0.0)
    with pytest.raises(ValueError, match="MAX_PAYLOAD"):
        a.send(0x10, bytes(200), 0.0)


def test_link_config_errors_name_the_key() -> None:
    with pytest.raises(ValueError, match=r"^serial\.shoe\.link\.ack_timeout: "):
        LinkConfig.from_mapping({"ack_timeout": "fast"}, "serial.shoe.link")
    with pytest.raises(ValueError, match=r"^serial\.shoe\.link\.bogus: unknown key"):
        LinkConfig.from_mapping({"bogus": 1}, "serial.shoe.link")
    with pytest.raises(ValueError, match=r"^x\.silence_timeout: .* must exceed heartbeat"):
        LinkConfig.from_mapping({"heartbeat_interval": 1, "silence_timeout": 0.5}, "x")
    assert LinkConfig.from_mapping({"max_retries": 5}, "x").max_retries == 5


# -- lossy channel model -------------------------------------------------------------------------


@dataclass
class LossyChannel:
    """One direction of a bad wire: each chunk written may be lost, have one byte damaged, be
    duplicated, and be delayed by a random amount (so chunks overtake each other)."""

    rng: random.Random
    loss: float
    corrupt: float
    duplicate: float
    max_delay: float
    in_flight: list[tuple[float, int, bytes]] = field(default_factory=list)
    counter: int = 0

    def put(self, data: bytes, now: float) -> None:
        if not data:
            return
        copies = 2 if self.rng.random() < self.duplicate else 1
        for _ in range(copies):
            if self.rng.random() < self.loss:
                continue
            chunk = bytearray(data)
            if self.rng.random() < self.corrupt:
                chunk[self.rng.randrange(len(chunk))] ^= self.rng.randrange(1, 256)
            self.counter += 1
            due = now + 0.001 + self.rng.random() * self.max_delay
            self.in_flight.append((due, self.counter, bytes(chunk)))

    def take_due(self, now: float) -> list[bytes]:
        self.in_flight.sort()
        out = [c for due, _, c in self.in_flight if due <= now]
        self.in_flight = [x for x in self.in_flight if x[0] > now]
        return out


def _message(i: int, body: bytes) -> bytes:
    return i.to_bytes(2, "big") + body


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rng=st.randoms(use_true_random=False),
    loss=st.floats(0.0, 0.3),
    corrupt=st.floats(0.0, 0.3),
    duplicate=st.floats(0.0, 0.3),
    max_delay=st.floats(0.0, 0.08),
    a_bodies=st.lists(st.binary(max_size=40), max_size=15),
    b_bodies=st.lists(st.binary(max_size=40), max_size=15),
)
def test_lossy_channel_delivers_exactly_once_in_order_or_reports_failure(
    rng: random.Random,
    loss: float,
    corrupt: float,
    duplicate: float,
    max_delay: float,
    a_bodies: list[bytes],
    b_bodies: list[bytes],
) -> None:
    cfg_a = LinkConfig(
        ack_timeout=0.1, max_retries=4, heartbeat_interval=0.3, silence_timeout=1.0, idle_flush=0.02
    )
    cfg_b = LinkConfig(
        ack_timeout=0.1, max_retries=4, heartbeat_interval=None, silence_timeout=None
    )
    a, b = Link(cfg_a, session=11), Link(cfg_b, session=22)
    ab = LossyChannel(rng, loss, corrupt, duplicate, max_delay)
    ba = LossyChannel(rng, loss, corrupt, duplicate, max_delay)
    now = 0.0
    a.start(now)
    b.start(now)
    sent: dict[str, dict[int, bytes]] = {"a": {}, "b": {}}
    results: dict[str, dict[int, str]] = {"a": {}, "b": {}}
    delivered: dict[str, list[bytes]] = {"a": [], "b": []}
    pending = {"a": list(enumerate(a_bodies)), "b": list(enumerate(b_bodies))}
    links = {"a": a, "b": b}
    peer = {"a": "b", "b": "a"}
    for _step in range(3000):
        now += 0.01
        for name, link in links.items():
            if pending[name] and rng.random() < 0.3:
                i, body = pending[name].pop(0)
                handle = link.send(0x40, _message(i, body), now)
                sent[name][handle] = _message(i, body)
        for chunk in ab.take_due(now):
            b.receive(chunk, now)
        for chunk in ba.take_due(now):
            a.receive(chunk, now)
        for name, link in links.items():
            link.poll(now)
            for ev in link.take_events():
                if isinstance(ev, Delivered):
                    assert ev.type == 0x40, "a frame the peer never sent was delivered"
                    delivered[peer[name]].append(ev.payload)
                elif isinstance(ev, Acked):
                    assert ev.handle not in results[name]
                    results[name][ev.handle] = "acked"
                elif isinstance(ev, SendFailed):
                    assert ev.handle not in results[name]
                    results[name][ev.handle] = "failed"
        ab.put(a.take_output(), now)
        ba.put(b.take_output(), now)
        done = all(not pending[n] and len(results[n]) == len(sent[n]) for n in links)
        if done and not ab.in_flight and not ba.in_flight and b.idle:
            break
    for name in links:
        assert not pending[name]
        assert len(results[name]) == len(sent[name]), "a message was neither acked nor failed"
        order = list(sent[name].values())
        got = delivered[name]
        assert len(got) == len(set(got)), "a message was delivered twice"
        assert all(m in order for m in got), "a damaged or invented message was delivered"
        assert [order.index(m) for m in got] == sorted(order.index(m) for m in got)
        for handle, outcome in results[name].items():
            if outcome == "acked":
                assert sent[name][handle] in got, "acknowledged but never delivered"
            else:
                assert outcome == "failed"
        for handle, message in sent[name].items():
            assert message in got or results[name][handle] == "failed"


def test_clean_channel_delivers_everything() -> None:
    # The same harness without faults: nothing may fail (guards the property test's model).
    a, b = started_pair()
    handles = [a.send(0x40, bytes([i]), 0.0) for i in range(10)]
    t = 0.0
    got: list[bytes] = []
    acked: list[int] = []
    for _ in range(200):
        t += 0.01
        a.poll(t)
        b.poll(t)
        shuttle(a, b, t)
        got += [e.payload for e in b.take_events() if isinstance(e, Delivered)]
        acked += [e.handle for e in a.take_events() if isinstance(e, Acked)]
    assert got == [bytes([i]) for i in range(10)]
    assert acked == handles


def test_peer_restart_is_answered_with_our_own_sync_so_both_directions_resync() -> None:
    a, b = started_pair()
    for i in range(5):  # move both sequence counters on
        a.send(0x40, bytes([i]), 0.0)
        shuttle(a, b, 0.0)
        b.send(0x41, bytes([i]), 0.0)
        shuttle(a, b, 0.0)
    a.take_events()
    b.take_events()
    b2 = Link(QUIET, session=99)  # the device rebooted: its sequence restarts at 0
    b2.start(0.5)
    for step in range(50):  # its opening SYNC is lost until it gives up (port not yet open)
        b2.poll(0.5 + step * 0.01)
        b2.take_output()
    assert b2.idle
    a.reconnect(1.0)
    shuttle(a, b2, 1.0)  # a's SYNC asks for a reply; b2 answers with its own SYNC
    b2.send(0x41, b"after", 1.0)
    t = 1.0
    for _ in range(50):
        t += 0.01
        a.poll(t)
        b2.poll(t)
        shuttle(a, b2, t)
    got = [(e.type, e.payload) for e in a.take_events() if isinstance(e, Delivered)]
    assert got == [(0x41, b"after")]
