"""CRC-16/CCITT-FALSE and the frame layout of docs/device-protocol.md; the parser fuzzed.

The parser must accept any byte input without raising, never accept a damaged frame, and still
find valid frames hidden in garbage (resynchronisation).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.serial.crc import CHECK, crc16_ccitt_false, crc16_ccitt_false_table
from drivers.serial.frame import MAX_PAYLOAD, SOF, Frame, FrameError, FrameParser, encode_frame


def test_crc16_ccitt_false_check_value_over_123456789() -> None:
    # The catalogue check value of CRC-16/CCITT-FALSE (a.k.a. CRC-16/IBM-3740) is 0x29B1.
    assert crc16_ccitt_false(b"123456789") == 0x29B1
    assert CHECK == 0x29B1


def test_crc16_table_definition_has_the_check_value_too() -> None:
    assert crc16_ccitt_false_table(b"123456789") == 0x29B1


@given(data=st.binary(max_size=300), start=st.integers(0, 0xFFFF))
def test_fast_crc16_equals_the_bitwise_definition(data: bytes, start: int) -> None:
    assert crc16_ccitt_false(data, start) == crc16_ccitt_false_table(data, start)


def test_crc16_running_value_equals_one_shot() -> None:
    assert crc16_ccitt_false(b"6789", crc16_ccitt_false(b"12345")) == 0x29B1


def test_crc16_of_empty_input_is_the_initial_value() -> None:
    assert crc16_ccitt_false(b"") == 0xFFFF


def test_frame_layout_has_documented_byte_offsets() -> None:
    wire = encode_frame(7, 0x12, b"\x01\x07\x07")
    assert wire[0] == SOF == 0xA5
    assert wire[1] == 3 and wire[2] == 3 ^ 0xFF
    assert wire[3] == 7 and wire[4] == 0x12
    assert wire[5:8] == b"\x01\x07\x07"
    crc = crc16_ccitt_false(wire[1:8])
    assert wire[8:] == bytes((crc >> 8, crc & 0xFF))
    assert len(wire) == 3 + 7


@given(
    seq=st.integers(0, 255),
    msg_type=st.integers(0, 255),
    payload=st.binary(max_size=MAX_PAYLOAD),
    cuts=st.lists(st.integers(0, 200), max_size=5),
)
def test_frame_round_trip_in_any_chunking(
    seq: int, msg_type: int, payload: bytes, cuts: list[int]
) -> None:
    wire = Frame(seq, msg_type, payload).encode()
    parser = FrameParser()
    frames: list[Frame] = []
    pos = 0
    for cut in sorted(c % (len(wire) + 1) for c in cuts):
        frames += parser.feed(wire[pos:cut] if cut > pos else b"")
        pos = max(pos, cut)
    frames += parser.feed(wire[pos:])
    assert frames == [Frame(seq, msg_type, payload)]
    assert not parser.pending


@pytest.mark.parametrize(
    ("seq", "msg_type", "payload", "field"),
    [(256, 0x10, b"", "seq"), (0, -1, b"", "type"), (0, 0x10, bytes(MAX_PAYLOAD + 1), "payload")],
)
def test_encode_rejects_out_of_range_fields_by_name(
    seq: int, msg_type: int, payload: bytes, field: str
) -> None:
    with pytest.raises(FrameError, match=field):
        encode_frame(seq, msg_type, payload)


def test_every_single_byte_corruption_is_rejected() -> None:
    wire = encode_frame(42, 0x92, bytes(range(0, 53, 3)))
    for pos in range(len(wire)):
        for flip in range(1, 256):
            damaged = bytearray(wire)
            damaged[pos] ^= flip
            parser = FrameParser()
            frames = parser.feed(bytes(damaged)) + parser.flush()
            assert frames == [], f"accepted a frame damaged at byte {pos} (xor 0x{flip:02X})"


def test_damaged_frame_is_reported_for_a_nak_and_the_next_frame_still_parses() -> None:
    bad = bytearray(encode_frame(5, 0x10, b"\x01"))
    bad[5] ^= 0x40
    good = encode_frame(6, 0x10, b"\x02")
    parser = FrameParser()
    assert parser.feed(bytes(bad) + good) == [Frame(6, 0x10, b"\x02")]
    assert [d.seq for d in parser.take_damaged()] == [5]
    assert parser.crc_errors == 1


@settings(max_examples=300)
@given(data=st.binary(max_size=600), chunk=st.integers(1, 64))
def test_parser_never_raises_on_any_bytes(data: bytes, chunk: int) -> None:
    parser = FrameParser()
    for i in range(0, len(data), chunk):
        for frame in parser.feed(data[i : i + chunk]):
            assert 0 <= len(frame.payload) <= MAX_PAYLOAD
    parser.flush()
    assert not parser.pending


@settings(max_examples=300)
@given(
    before=st.binary(max_size=300),
    after=st.binary(max_size=300),
    payload=st.binary(max_size=60),
    seq=st.integers(0, 255),
    chunk=st.integers(1, 64),
)
def test_valid_frame_hidden_in_garbage_is_found(
    before: bytes, after: bytes, payload: bytes, seq: int, chunk: int
) -> None:
    frame = Frame(seq, 0x91, payload)
    stream = before + frame.encode() + after
    parser = FrameParser()
    found: list[Frame] = []
    for i in range(0, len(stream), chunk):
        found += parser.feed(stream[i : i + chunk])
    found += parser.flush()  # the line went idle
    assert frame in found


def test_sof_bytes_in_garbage_do_not_swallow_the_following_frame() -> None:
    # A false start byte with a plausible length waits for more bytes; once the real frame has
    # arrived and the line is idle, the parser gives up on it and finds the real frame.
    garbage = bytes((SOF, 100, 100 ^ 0xFF, 1, 2))
    frame = Frame(9, 0x90, b"\x00\x01")
    parser = FrameParser()
    assert parser.feed(garbage + frame.encode()) == []
    assert parser.pending
    assert parser.flush() == [frame]
