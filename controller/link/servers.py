"""A nats-server process for a simulated run and the benchmarks (``tablectl simulate --tables N
--linked`` without ``--nats``): Debian's ``nats-server -js`` on loopback, file storage in a
directory of the run (reference/test-servers.md). On the Pi and at the centre the servers are
the casino's NATS cluster (docs/link.md), never started by us.

Must never listen on anything but 127.0.0.1.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nats_server_binary() -> str | None:
    found = shutil.which("nats-server")
    if found is None and Path("/usr/sbin/nats-server").exists():
        found = "/usr/sbin/nats-server"
    return found


class NatsProcess:
    """``nats-server -js -a 127.0.0.1 -p PORT -sd DIR``; `kill` and `start` again on the same
    port and store (an outage that keeps the streams)."""

    def __init__(self, store: Path, port: int | None = None) -> None:
        binary = nats_server_binary()
        if binary is None:
            raise OSError("nats-server is not installed (apt-get install nats-server)")
        self.binary = binary
        self.store = Path(store)
        self.store.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        log = (self.store / "nats.log").open("ab")
        cmd = [self.binary, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.store)]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)
        self.kill()
        raise OSError(f"nats-server did not listen on port {self.port}")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None
