"""The SAS codec against the frames of reference/sas.md, byte for byte, and CRC-16/KERMIT against
an independent implementation (crccheck)."""

from __future__ import annotations

import pytest
from crccheck.crc import CrcKermit
from hypothesis import given
from hypothesis import strategies as st

from drivers.sas import codec

H = bytes.fromhex


def test_kermit_check_value_is_0x2189() -> None:
    assert codec.crc16_kermit(b"123456789") == codec.KERMIT_CHECK == 0x2189


@given(st.binary(max_size=300))
def test_crc_agrees_with_crccheck_kermit(data: bytes) -> None:
    assert codec.crc16_kermit(data) == CrcKermit.calc(data)


@given(st.binary(min_size=1, max_size=100))
def test_crc_over_a_frame_with_its_crc_is_zero(data: bytes) -> None:
    assert codec.crc16_kermit(codec.with_crc(data)) == 0


@pytest.mark.parametrize(
    ("body", "crc"),
    [
        ("01 52 00 01", "69 3B"),
        ("01 80 01 01 00 00 12 34 56", "BD CB"),
        ("00 7F 11 29 20 25 12 34 56", "0D E4"),
        ("01 2F 04 00 00 00 05", "81 5D"),
        ("01 6F 06 00 00 00 00 05 00", "3B 09"),
    ],
)
def test_crc_of_the_reference_frames(body: str, crc: str) -> None:
    assert codec.with_crc(H(body))[-2:] == H(crc)


def test_game_meters_request_is_what_both_host_libraries_send() -> None:
    assert codec.s_poll(1, 0x52, codec.bcd(1, 2)) == H("01 52 00 01 69 3B")


def test_broadcast_clock_request() -> None:
    frame = codec.s_poll(0, 0x7F, codec.date_time_bytes(11, 29, 2025, 12, 34, 56))
    assert frame == H("00 7F 11 29 20 25 12 34 56 0D E4")


def test_1a_answer_zero_credits() -> None:
    assert codec.meters_answer(1, 0x1A, [0]) == H("01 1A 00 00 00 00 C3 FC")


def test_0f_answer() -> None:
    frame = codec.meters_answer(1, 0x0F, [0, 123456, 2000, 0, 500, 321])
    assert frame == H(
        "01 0F 00 00 00 00 00 12 34 56 00 00 20 00 00 00 00 00 00 00 05 00 00 00 03 21 D0 A9"
    )


def test_54_answer_version_and_serial() -> None:
    assert codec.version_answer(1, "603", "TBL0001") == H(
        "01 54 0A 36 30 33 54 42 4C 30 30 30 31 F3 51"
    )


def test_55_answer_game_1() -> None:
    assert codec.game_number_answer(1, 0x55, 1) == H("01 55 00 01 6C B7")


def test_52_answer_game_1() -> None:
    assert codec.game_meters_answer(1, 1, 123456, 2000, 500, 321) == H(
        "01 52 00 01 00 12 34 56 00 00 20 00 00 00 05 00 00 00 03 21 39 51"
    )


def test_7e_answer() -> None:
    assert codec.date_time_answer(1, 11, 29, 2025, 12, 34, 56) == H(
        "01 7E 11 29 20 25 12 34 56 4F 28"
    )


def test_2f_request_and_answer() -> None:
    assert codec.m_poll(1, 0x2F, H("98 76 0C 05 1B 0D")) == H("01 2F 06 98 76 0C 05 1B 0D 06 5E")
    frame = codec.selected_meters_answer(
        1, 9876, [(0x0C, 1234), (0x05, 5678), (0x1B, 9012), (0x0D, 6789)]
    )
    assert frame == H(
        "01 2F 17 98 76 0C 00 00 12 34 05 00 00 56 78 1B 00 00 90 12 0D 00 00 00 67 89 D2 53"
    )


def test_poll_lengths_frame_every_reference_request() -> None:
    for frame in (
        "01 52 00 01 69 3B",
        "01 2F 06 98 76 0C 05 1B 0D 06 5E",
        "00 7F 11 29 20 25 12 34 56 0D E4",
    ):
        raw = H(frame)
        assert codec.expected_length(raw) == len(raw)
    assert codec.expected_length(H("01 1A")) == 2
    assert codec.expected_length(H("01 EE")) == -1


@given(st.integers(min_value=0, max_value=99_999_999))
def test_bcd_round_trip(value: int) -> None:
    assert codec.from_bcd(codec.bcd(value, 4)) == value


def test_bad_bcd_is_refused_by_name() -> None:
    with pytest.raises(codec.BcdError, match="0x1A"):
        codec.from_bcd(H("00 1A"))


def test_bad_date_is_refused() -> None:
    with pytest.raises(ValueError):
        codec.parse_date_time(H("13 29 20 25 12 34 56"))
    assert codec.parse_date_time(H("11 29 20 25 12 34 56")) == (11, 29, 2025, 12, 34, 56)
