"""The serial and SAS parsers never act on a frame whose CRC fails (issue 12, "Security"): every
single-bit and every two-bit damage of a frame the CRC covers is dropped — not delivered, not
acknowledged, not answered — and the intact frame, sent next, is acted on exactly once (so each
check can fail). Reference: docs/device-protocol.md (CRC-16 over the frame), reference/sas.md
(CRC-16 Kermit over address, command and data of an S-type or M-type long poll).
"""

from __future__ import annotations

import itertools

from test_serial_link import frames_of, started_pair

from drivers.sas import codec
from drivers.sas.sas_link import BadFrame, PollReceived, SasLink
from drivers.serial.frame import FrameParser
from drivers.serial.serial_link import ACK, Delivered

PAYLOAD = b"\x01\x02\x03\x04\x05\x06\x07"


def flips(frame: bytes, positions: range) -> list[bytes]:
    """Every single-bit damage of ``frame`` at the bytes ``positions``, and every two-bit damage
    within the CRC's bytes and the byte before them."""
    out = []
    bits = [(i, b) for i in positions for b in range(8)]
    for i, b in bits:
        damaged = bytearray(frame)
        damaged[i] ^= 1 << b
        out.append(bytes(damaged))
    tail = [(i, b) for i in range(len(frame) - 3, len(frame)) for b in range(8)]
    for (i, b), (j, c) in itertools.combinations(tail, 2):
        damaged = bytearray(frame)
        damaged[i] ^= 1 << b
        damaged[j] ^= 1 << c
        out.append(bytes(damaged))
    return out


def test_the_serial_link_never_delivers_or_acks_a_frame_whose_crc_fails() -> None:
    a, _ = started_pair()
    a.send(0x11, PAYLOAD, 0.0)
    wire = a.take_output()
    assert len(frames_of(wire)) == 1
    for damaged in flips(wire, range(1, len(wire))):  # every byte after the start of frame
        _, b = started_pair()
        b.receive(damaged, 0.0)
        b.poll(0.0)
        assert not [e for e in b.take_events() if isinstance(e, Delivered)], damaged.hex()
        assert ACK not in [f.type for f in frames_of(b.take_output())], damaged.hex()
        b.receive(wire, 0.01)  # the intact frame is acted on, once
        assert [e for e in b.take_events() if isinstance(e, Delivered)] == [
            Delivered(0x11, PAYLOAD, 1)
        ]


def test_the_frame_parser_counts_a_crc_failure_and_yields_nothing() -> None:
    a, _ = started_pair()
    a.send(0x11, PAYLOAD, 0.0)
    wire = a.take_output()
    for i in range(len(wire) - 2, len(wire)):  # the CRC's own bytes
        for bit in range(8):
            damaged = bytearray(wire)
            damaged[i] ^= 1 << bit
            parser = FrameParser()
            assert parser.feed(bytes(damaged)) + parser.flush() == []
            assert parser.crc_errors == 1


def test_the_sas_link_never_answers_a_long_poll_whose_crc_fails() -> None:
    for command, spec in sorted(codec.POLLS.items()):
        if spec.kind != "S" or not spec.size:
            continue
        data = bytes(range(1, spec.size + 1))
        frame = codec.s_poll(1, command, data)
        # the data and the CRC: damage there keeps the frame's shape, so only the CRC can tell
        for damaged in flips(frame, range(2, len(frame))):
            link = SasLink(1)
            link.start(0.0)
            link.receive(damaged, 1.0)
            events = link.take_events()
            assert not [e for e in events if isinstance(e, PollReceived)], (command, damaged)
            assert [e for e in events if isinstance(e, BadFrame)], (command, damaged)
            assert all(tx.data == b"\x81" for tx in link.take_output())  # a NACK at most
            link.receive(frame, 2.0)  # the intact poll is received
            received = [e for e in link.take_events() if isinstance(e, PollReceived)]
            assert [e.poll.command for e in received] == [command]
