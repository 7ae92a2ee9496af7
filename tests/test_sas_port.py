"""The floor link's transports on real ptys: termios flags set after pyserial, parity marks
through the UART transport, the byte-stream transport, and a port that disappears reopened with
the shoe's capped backoff."""

from __future__ import annotations

import os
import select
import termios
import time
import tty
from pathlib import Path

import serial

from drivers.sas import codec
from drivers.sas.port import SasPort, StreamTransport, UartTransport
from drivers.sas.sas_link import PollReceived, SasEvent, SasLink
from drivers.sas.wakeup import encode_marked
from drivers.serial.port import PortConfig, next_backoff


def answer_1a(link: SasLink, events: list[SasEvent], now: float) -> None:
    for ev in events:
        if isinstance(ev, PollReceived):
            link.answer(ev.poll, codec.meters_answer(link.address, 0x1A, [0]), now)


def read(fd: int, n: int, timeout: float = 3.0) -> bytes:
    out = b""
    end = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < end:
        if select.select([fd], [], [], 0.05)[0]:
            out += os.read(fd, 64)
    return out


def test_pyserial_clears_parmrk_and_the_uart_transport_sets_it_after_opening() -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    try:
        plain = serial.Serial(path, 19200)
        assert not termios.tcgetattr(plain.fileno())[0] & termios.PARMRK
        plain.close()
        uart = UartTransport(path)
        uart.open()
        iflag = termios.tcgetattr(uart._serial.fileno())[0]
        assert iflag & termios.INPCK and iflag & termios.PARMRK
        uart.close()
    finally:
        os.close(master)
        os.close(slave)


def test_uart_transport_reads_what_the_kernel_marks_and_needs_the_wakeup_bit() -> None:
    """With PARMRK set by the transport the kernel's line discipline doubles a literal FF (a pty
    cannot make a parity error, so the FF 00 b mark itself is covered by the decoder's tests);
    on the UART a poll without the wakeup bit is not a poll."""
    master, slave = os.openpty()
    tty.setraw(slave)
    uart = UartTransport(os.ttyname(slave), tick=0.05)
    uart.open()
    try:
        os.write(master, b"\xff\x01")
        raw = b""
        deadline = time.monotonic() + 2
        while len(raw) < 3 and time.monotonic() < deadline:
            raw += uart.read(0.05)
        assert raw == b"\xff\xff\x01"
        link = SasLink(1)
        link.start(0.0)
        uart.deliver(link, raw, 1.0)
        uart.deliver(link, b"\x01\x1a", 1.001)  # bytes without the wakeup bit
        assert link.take_events() == [] and link.stats.garbage_bytes == 4
        uart.deliver(link, encode_marked([(0x01, True), (0x1A, False)]), 1.1)
        assert isinstance(link.take_events()[0], PollReceived)
    finally:
        uart.close()
        os.close(master)
        os.close(slave)


def test_port_that_disappears_is_reopened_with_capped_backoff(tmp_path: Path) -> None:
    link_path = tmp_path / "sas"
    port = SasPort(
        StreamTransport(str(link_path)),
        SasLink(1),
        answer_1a,
        backoff_initial=0.05,
        backoff_max=0.2,
    )
    port.start()
    try:
        time.sleep(0.5)
        assert not port.is_open and port.open_failures >= 3  # not there yet: retried, capped
        master, slave = os.openpty()
        tty.setraw(slave)
        link_path.symlink_to(os.ttyname(slave))
        deadline = time.monotonic() + 3
        while not port.is_open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert port.is_open and port.opens == 1
        os.write(master, codec.r_poll(1, 0x1A))
        assert read(master, 8) == codec.meters_answer(1, 0x1A, [0])
        os.close(master)  # the adapter is pulled: reads fail, the port is closed and retried
        os.close(slave)
        link_path.unlink()
        deadline = time.monotonic() + 3
        while port.is_open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not port.is_open
    finally:
        port.stop()
    cfg = PortConfig("x", backoff_initial=0.05, backoff_max=0.2)
    assert next_backoff(0.15, cfg) == 0.2  # the shoe's rule: doubling, capped


def test_a_pty_nobody_reads_never_blocks_the_port_thread() -> None:
    """Chirps with no host connected fill the pty; the stale input is dropped, never waited on."""
    from drivers.sas.port import PtyTransport
    from drivers.sas.sas_link import Tx

    pty = PtyTransport()
    try:
        start = time.monotonic()
        for _ in range(1000):  # far more than a pty holds
            pty.write(Tx(b"\x01" * 1000, wakeup=True))
        assert time.monotonic() - start < 10.0
        assert pty.stale_flushes >= 1
    finally:
        pty.dispose()
