"""The SAS link layer (gaming-machine side) driven without I/O: framing by wakeup bit and by
context, NACK on bad CRC, implied ACK, chirp, link down, and garbage that never changes state."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.sas import codec
from drivers.sas.sas_link import (
    Acked,
    BadFrame,
    Broadcast,
    LinkDown,
    LinkTiming,
    LinkUp,
    PollReceived,
    SasLink,
    Tx,
)
from drivers.sas.wakeup import ParmrkDecoder, encode_marked

H = bytes.fromhex


def answering(link: SasLink, now: float, reply: bytes = b"\x01\x1a") -> list[object]:
    """Answer every PollReceived with ``reply``; return the events."""
    events = link.take_events()
    for ev in events:
        if isinstance(ev, PollReceived):
            link.answer(ev.poll, reply, now)
    return list(events)


def out(link: SasLink) -> list[Tx]:
    return link.take_output()


def test_long_poll_on_a_byte_stream_is_framed_by_context() -> None:
    link = SasLink(1, LinkTiming(inter_byte_gap=0.05))
    link.start(0.0)
    link.receive(H("80 01 1A"), 1.0)  # sas-comm-py's 0x80 first: a general poll to address 0
    events = answering(link, 1.0)
    polls = [e for e in events if isinstance(e, PollReceived)]
    assert [p.poll.command for p in polls] == [0x1A]
    assert out(link) == [Tx(b"\x01\x1a")]


def test_s_type_poll_waits_for_its_crc_and_a_bad_crc_gets_nack() -> None:
    link = SasLink(1)
    link.start(0.0)
    frame = bytearray(codec.s_poll(1, 0x52, codec.bcd(1, 2)))
    link.receive(frame[:3], 1.0)
    assert link.take_events() == []
    link.receive(frame[3:], 1.001)
    assert isinstance(link.take_events()[0], PollReceived)
    frame[-1] ^= 0xFF
    link.receive(bytes(frame), 2.0)
    events = link.take_events()
    assert isinstance(events[0], BadFrame)
    assert out(link) == [Tx(b"\x81")]


def test_unknown_poll_and_address_zero_are_never_answered() -> None:
    link = SasLink(1)
    link.start(0.0)
    link.receive(H("01 EE 55 66"), 1.0)
    assert link.take_events() == [] and out(link) == []
    link.receive(codec.s_poll(0, 0x7F, codec.date_time_bytes(11, 29, 2025, 12, 34, 56)), 2.0)
    events = link.take_events()
    assert len(events) == 1 and isinstance(events[0], Broadcast)
    assert out(link) == []


def test_implied_ack_a_repeated_poll_resends_the_same_answer() -> None:
    link = SasLink(1)
    link.start(0.0)
    link.receive(b"\x81", 1.0)
    answering(link, 1.0, b"\x51")
    assert out(link) == [Tx(b"\x51")]
    link.receive(b"\x81", 1.1)  # the host repeats: it did not get it
    assert [type(e).__name__ for e in link.take_events()] == ["Resent"]
    assert out(link) == [Tx(b"\x51")]
    link.receive(b"\x80", 1.2)  # any other valid message acknowledges it
    events = link.take_events()
    assert events == [Acked(events[0].poll, b"\x51")]  # type: ignore[union-attr]


def test_wakeup_bit_starts_a_message_on_the_uart() -> None:
    link = SasLink(1)
    link.start(0.0)
    link.receive_marked([(0x01, True), (0x1F, False)], 1.0)
    assert isinstance(link.take_events()[0], PollReceived)
    # a byte without the wakeup bit and no message begun is ignored
    link.receive_marked([(0x01, False), (0x1F, False)], 2.0)
    assert link.take_events() == []


def test_gap_inside_a_message_drops_it() -> None:
    link = SasLink(1, LinkTiming(inter_byte_gap=0.005))
    link.start(0.0)
    frame = codec.s_poll(1, 0x52, codec.bcd(1, 2))
    link.receive(frame[:2], 1.0)
    link.receive(frame[2:], 1.02)
    assert link.take_events() == []
    assert link.stats.dropped_gap == 1


def test_chirp_after_five_seconds_without_a_valid_poll_and_link_down() -> None:
    link = SasLink(7)
    link.start(0.0)
    link.poll(4.9)
    assert out(link) == [] and link.take_events() == []
    link.poll(5.0)
    assert out(link) == [Tx(b"\x07", wakeup=True)]
    assert isinstance(link.take_events()[0], LinkDown)
    link.poll(5.1)
    assert out(link) == []  # every 200 ms
    link.poll(5.2)
    assert out(link) == [Tx(b"\x07", wakeup=True)]
    link.receive(b"\x87", 6.0)
    events = link.take_events()
    assert isinstance(events[0], LinkUp) and isinstance(events[1], PollReceived)
    link.poll(6.3)
    assert out(link) == []


def test_parity_marks_decode_wakeup_and_literal_ff() -> None:
    dec = ParmrkDecoder()
    assert dec.feed(H("FF 00 01 1A FF FF 05")) == [
        (1, True),
        (0x1A, False),
        (0xFF, False),
        (5, False),
    ]
    # a mark split across reads
    assert dec.feed(H("FF")) == []
    assert dec.feed(H("00")) == []
    assert dec.feed(H("81")) == [(0x81, True)]


@given(st.lists(st.tuples(st.integers(0, 255), st.booleans()), max_size=50), st.integers(1, 7))
def test_parity_mark_encoding_round_trips_in_any_chunks(
    items: list[tuple[int, bool]], cut: int
) -> None:
    raw = encode_marked(items)
    dec = ParmrkDecoder()
    got: list[tuple[int, bool]] = []
    for i in range(0, len(raw), cut):
        got += dec.feed(raw[i : i + cut])
    assert got == items


def _state(link: SasLink) -> tuple[object, ...]:
    return (link.up, link._last_poll, link._last_answer, link._awaiting)


def _mutations(rng: random.Random) -> bytes:
    base = bytearray(
        rng.choice(
            [
                codec.s_poll(1, 0x52, codec.bcd(1, 2)),
                codec.m_poll(1, 0x2F, H("00 01 00 05")),
                codec.s_poll(1, 0x7F, codec.date_time_bytes(11, 29, 2025, 12, 34, 56)),
                codec.s_poll(1, 0x01),
            ]
        )
    )
    i = rng.randrange(2, len(base))
    base[i] ^= 1 << rng.randrange(8)
    return bytes(base)


@settings(max_examples=300)
@given(st.binary(max_size=200), st.randoms())
def test_fuzz_garbage_never_raises_never_changes_state(data: bytes, rng: random.Random) -> None:
    """Random bytes that contain no valid message, and valid frames with a flipped bit after the
    command: no exception, no poll delivered, nothing but counters and NACKs changed."""
    link = SasLink(1)
    link.start(0.0)
    link.receive(b"\x81", 0.5)
    answering(link, 0.5, b"\x00")
    link.take_output()
    before = _state(link)
    t = 1.0
    mutated = _mutations(rng)
    for chunk in (data, mutated):
        # keep only bytes that cannot start a valid message: nothing with bit 7, no address 0/1
        clean = bytes(b for b in chunk if b not in (0, 1) and not b & 0x80)
        # the mutated frame whole too (never the random bytes: 01 01 00 00 80 ends with a valid
        # general poll to address 0, which rightly acknowledges the last answer)
        for piece in (clean, chunk if chunk is mutated else b""):
            link.receive(piece, t)
            t += 1.0  # a gap between pieces
            link.poll(t)
            events = [e for e in link.take_events() if not isinstance(e, BadFrame)]
            assert events == []
            for tx in link.take_output():
                assert tx.data == b"\x81"
    assert _state(link) == before


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_fuzz_random_bytes_never_raise(data: bytes) -> None:
    link = SasLink(1)
    link.start(0.0)
    for i in range(0, len(data), 7):
        link.receive(data[i : i + 7], 1.0 + i * 0.001)
        answering(link, 1.0, b"\x01")
        link.poll(1.0 + i * 0.001)
    link.receive_marked([(b, b % 3 == 0) for b in data], 3.0)
    answering(link, 3.0)
