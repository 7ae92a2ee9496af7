"""``tablectl run`` serves SAS on the configured port: here a byte stream (a pty) the test holds
the other end of, polled as the host would."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import tty
from pathlib import Path

from controller.config import SIMULATED_TABLE
from drivers.sas import codec

ROOT = Path(__file__).resolve().parent.parent


def test_run_answers_polls_on_the_configured_sas_port(tmp_path: Path) -> None:
    fds = [fd for _ in range(3) for fd in os.openpty()]
    for fd in fds[1::2]:
        tty.setraw(fd)
    shoe, shuffler, sas = (os.ttyname(fd) for fd in fds[1::2])
    host = fds[4]  # the master of the SAS pty: the host's end
    text = SIMULATED_TABLE.read_text()
    text = text.replace('"/dev/paigow-shoe"', json.dumps(shoe))
    text = text.replace('"/dev/paigow-shuffler"', json.dumps(shuffler))
    text = text.replace('"/tmp/paigow-simulated.db"', json.dumps(str(tmp_path / "journal.db")))
    text = text.replace('port = "/dev/ttyAMA0"', f'port = {json.dumps(sas)}\ntransport = "stream"')
    config = tmp_path / "table.toml"
    config.write_text(text)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "run",
            "--config",
            str(config),
            "--pin-factory",
            "mock",
            "--unapproved-bench",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert "running" in proc.stdout.readline()
        answer = b""
        deadline = time.monotonic() + 20
        want = codec.game_number_answer(1, 0x55, 1)
        while answer[-len(want) :] != want and time.monotonic() < deadline:
            os.write(host, codec.r_poll(1, 0x55))
            if select.select([host], [], [], 0.5)[0]:
                answer += os.read(host, 64)
        assert answer.endswith(want), answer.hex(" ")
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
        for fd in fds:
            os.close(fd)
    assert proc.returncode == 0, err
