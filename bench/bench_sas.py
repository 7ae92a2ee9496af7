"""Benchmark of the floor link: the answer time of long polls over a pty while the simulated
table plays headless rounds (`tablectl simulate --headless --sas-link`), from the last request
byte written to the last answer byte read, against a bare pty echo measured in the same run.

Targets (issue 10): p99 at most 10 ms (aim 2 ms; the protocol's window is about 20 ms) and every
one of 10,000 polls answered within 20 ms. Must never be imported by the service.
"""

from __future__ import annotations

import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
import tty
from pathlib import Path

from drivers.sas import codec

POLLS = 10_000
ROOT = Path(__file__).resolve().parents[1]


def _requests() -> list[tuple[bytes, int]]:
    """Four different long polls (never the same twice in a row: each is a fresh answer) and
    the length of each answer."""
    return [
        (codec.r_poll(1, 0x0F), 2 + 24 + 2),
        (codec.r_poll(1, 0x1C), 2 + 32 + 2),
        (codec.s_poll(1, 0x52, codec.bcd(1, 2)), 2 + 18 + 2),
        (codec.m_poll(1, 0x2F, codec.bcd(0, 2) + bytes((0, 1, 2, 5, 6, 7))), 3 + 2 + 30 + 2),
    ]


def _read_exact(fd: int, n: int, timeout: float = 1.0) -> bytes:
    out = b""
    end = time.perf_counter() + timeout
    while len(out) < n:
        left = end - time.perf_counter()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"answer incomplete: {out.hex(' ')}")
        out += os.read(fd, n - len(out))
    return out


def _pty_echo(n: int) -> list[float]:
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        times = []
        for _ in range(n):
            os.write(slave, b"\x01\x0f")
            _read_exact(master, 2)
            start = time.perf_counter()
            os.write(master, bytes(28))
            _read_exact(slave, 28)
            times.append(time.perf_counter() - start)
        return times
    finally:
        os.close(master)
        os.close(slave)


def _rounds(db: Path) -> int:
    from controller.journal.audit import connect_read_only

    conn = connect_read_only(db)
    try:
        row = conn.execute("SELECT count(*) FROM journal WHERE type = 'round_completed'").fetchone()
    finally:
        conn.close()
    return int(row[0])


def run() -> dict[str, float | int | str]:
    with tempfile.TemporaryDirectory(prefix="bench-sas-") as tmp:
        db, link = Path(tmp) / "journal.db", Path(tmp) / "sas"
        cmd = [sys.executable, "-m", "controller.cli", "simulate", "--headless"]
        cmd += ["--rounds", "1000000", "--seed", "bench", "--db", str(db), "--sas-link", str(link)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert "SAS link:" in line, line
            fd = os.open(os.path.realpath(link), os.O_RDWR | os.O_NOCTTY)
            tty.setraw(fd)
            time.sleep(0.5)
            with_rounds_before = _rounds(db)
            requests = _requests()
            times: list[float] = []
            try:
                while select.select([fd], [], [], 0.05)[0]:  # chirps sent before we polled
                    os.read(fd, 4096)
                for i in range(POLLS):
                    request, length = requests[i % len(requests)]
                    os.write(fd, request)
                    start = time.perf_counter()  # the last request byte is in the pty
                    answer = _read_exact(fd, length)
                    times.append(time.perf_counter() - start)
                    assert answer[:2] == request[:2] and codec.crc_ok(answer), answer.hex(" ")
            finally:
                os.close(fd)
            rounds_during = _rounds(db) - with_rounds_before
        finally:
            proc.terminate()
            proc.wait(30)
    echo = _pty_echo(2000)
    times.sort()
    p99 = times[int(len(times) * 0.99) - 1]
    p50 = statistics.median(times)
    echo_p50 = statistics.median(echo)
    return {
        "sas_poll_count": len(times),
        "sas_poll_p50_ms": round(p50 * 1000, 3),
        "sas_poll_p99_ms": round(p99 * 1000, 3),
        "sas_poll_max_ms": round(times[-1] * 1000, 3),
        "sas_poll_within_20ms_share": round(sum(t <= 0.020 for t in times) / len(times), 5),
        "sas_poll_p50_vs_pty_echo_ratio": round(p50 / max(echo_p50, 1e-9), 1),
        "sas_rounds_played_while_polled": rounds_during,
    }
