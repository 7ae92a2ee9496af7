"""Benchmarks of the serial link: parser throughput against the C CRC over the same bytes, and a
command's round trip through adapter, link, pty and simulator against a bare pty echo.

Figures are ratios against baselines measured in the same run (machines differ); absolute rates
are printed for information. Must never be imported by the service.
"""

from __future__ import annotations

import binascii
import os
import queue
import statistics
import time
import tty

from drivers.serial.frame import FrameParser, encode_frame
from drivers.serial.port import LinkPort, PortConfig
from drivers.serial.serial_link import LinkConfig
from drivers.serial.shuffler import ReferenceShuffler, ShufflerConfig
from drivers.sim.bench import SimulatedDevices
from fsm.round.events import Event


def _parser_figures() -> dict[str, float | int | str]:
    frames = b"".join(encode_frame(i & 0xFF, 0x92, bytes(range(54))) for i in range(20000))
    start = time.perf_counter()
    crc = binascii.crc_hqx(frames, 0xFFFF)
    crc_s = time.perf_counter() - start
    parser = FrameParser()
    start = time.perf_counter()
    count = 0
    for i in range(0, len(frames), 4096):
        count += len(parser.feed(frames[i : i + 4096]))
    parse_s = time.perf_counter() - start
    assert count == 20000 and crc >= 0
    return {
        "serial_parser_mb_per_s": round(len(frames) / parse_s / 1e6, 2),
        "serial_parser_vs_c_crc_ratio": round(parse_s / max(crc_s, 1e-9), 1),
        "serial_parser_vs_115200_baud_ratio": round((len(frames) / parse_s) / 11520, 1),
    }


def _pty_echo_rtt(n: int) -> float:
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        times = []
        for _ in range(n):
            start = time.perf_counter()
            os.write(master, b"x" * 16)
            os.read(slave, 64)
            os.write(slave, b"y" * 16)
            os.read(master, 64)
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        os.close(master)
        os.close(slave)


def _command_rtt(n: int) -> float:
    sim = SimulatedDevices()
    _shoe_path, shuffler_path = sim.start(seed=1)
    events: queue.Queue[Event] = queue.Queue()
    link = LinkConfig(ack_timeout=0.2, heartbeat_interval=1.0, silence_timeout=3.0)
    port = PortConfig(shuffler_path, read_tick=0.005, backoff_initial=0.01, backoff_max=0.1)
    shuffler = ReferenceShuffler(LinkPort("shuffler", port, link), events.put, ShufflerConfig())
    shuffler.start()
    try:
        deadline = time.monotonic() + 5
        while not shuffler.status()["connected"] and time.monotonic() < deadline:
            time.sleep(0.01)
        times = []
        for _ in range(n):
            start = time.perf_counter()
            shuffler.shuffle()
            while events.get(timeout=5).type != "shuffle_complete":
                pass
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        shuffler.stop()
        sim.stop()


def run() -> dict[str, float | int | str]:
    figures = _parser_figures()
    echo = _pty_echo_rtt(200)
    command = _command_rtt(30)
    figures["serial_shuffle_command_rtt_ms"] = round(command * 1000, 2)
    figures["serial_shuffle_command_vs_pty_echo_ratio"] = round(command / max(echo, 1e-9), 1)
    return figures
