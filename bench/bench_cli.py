"""Benchmark of starting the command line and the service (issue 29), against a bare interpreter
started the same way in the same run.

``cli_start_vs_bare_python``: the larger of ``tablectl --help`` and ``tablectl config check`` of
the example configuration, each the median of ``RUNS`` fresh processes, over the median of as
many ``python -c pass`` (runs interleaved, so a busy moment slows all three alike).
``service_ready_s``: ``tablectl run`` (MockFactory pins, real ptys as the shoe and the shuffler, a
new journal) from exec to its ``READY=1`` on a real notify socket, the median of
``SERVICE_RUNS``; its baseline, ``service_ready_baseline_s``, a bare interpreter that sends
``READY=1`` at once; ``service_ready_import_share``: the share of the ready time spent importing,
from one more start under ``-X importtime``. Writes nothing but temporary files (and the
tree's git-ignored ``__pycache__``).

Every command runs as an installed table runs it: from its compiled ``.pyc`` files (pip compiles
them at install). ``PYTHONDONTWRITEBYTECODE``, set in some shells, is taken out of the commands'
environment, so that the warm-up start writes them; with it every start compiled every module
again (about 40 ms of ``config check`` on this machine: a ratio of about 5 instead of 3.5).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.test_cmd_run import write_config  # noqa: E402  (the service's test configuration)

EXAMPLE = ROOT / "deploy" / "config.example.toml"
RUNS = 15
SERVICE_RUNS = 5

_BARE_READY = (
    "import os, socket\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
    "s.sendto(b'READY=1', os.environ['NOTIFY_SOCKET'])\n"
)


def _installed_env() -> dict[str, str]:
    """This environment as an installed table's: bytecode is compiled once and kept."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv, cwd=ROOT, env=_installed_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def _ready_time(argv: list[str], sock: socket.socket, env: dict[str, str]) -> tuple[float, str]:
    """Seconds from exec to the first ``READY=1``; the process is then stopped (SIGTERM)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        give_up = start + 120
        while True:
            sock.settimeout(max(0.1, give_up - time.perf_counter()))
            data = sock.recv(4096)
            if b"READY=1" in data.split(b"\n"):
                ready = time.perf_counter() - start
                break
            if time.perf_counter() > give_up:
                raise RuntimeError("no READY=1 within 120 s")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return ready, err


def _import_seconds(importtime: str) -> float:
    """The sum of the top-level imports' cumulative microseconds in ``-X importtime`` output."""
    total = 0
    for line in importtime.splitlines():
        found = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if found and not found.group(2).startswith(" "):
            total += int(found.group(1))
    return total / 1e6


def service_start() -> dict[str, float | int | str]:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fds: list[int] = []
        names: list[str] = []
        for _ in range(2):
            master, slave = os.openpty()
            fds += [master, slave]
            names.append(os.ttyname(slave))
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(str(tmp / "notify.sock"))
        env = {**_installed_env(), "NOTIFY_SOCKET": str(tmp / "notify.sock")}
        env.pop("WATCHDOG_USEC", None)
        try:
            config = write_config(tmp, *names)
            service = [sys.executable, "-m", "controller.cli", "run", "--config", str(config)]
            service += ["--pin-factory", "mock"]
            bare = [sys.executable, "-c", _BARE_READY]
            ready: list[float] = []
            baseline: list[float] = []
            for _ in range(SERVICE_RUNS):  # the journal is new the first time, then resumed
                ready.append(_ready_time(service, sock, env)[0])
                baseline.append(_ready_time(bare, sock, env)[0])
            traced, err = _ready_time([*service[:1], "-X", "importtime", *service[1:]], sock, env)
        finally:
            sock.close()
            for fd in fds:
                os.close(fd)
    return {
        "service_ready_s": round(statistics.median(ready), 3),
        "service_ready_baseline_s": round(statistics.median(baseline), 3),
        "service_ready_vs_bare_python": round(
            statistics.median(ready) / statistics.median(baseline), 1
        ),
        "service_ready_import_share": round(_import_seconds(err) / traced, 2),
    }


def run() -> dict[str, float | int | str]:
    py = sys.executable
    commands = {
        "bare": [py, "-c", "pass"],
        "help": [py, "-m", "controller.cli", "--help"],
        "config_check": [py, "-m", "controller.cli", "config", "check", str(EXAMPLE)],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm the page cache and write the .pyc files once
        _wall(argv)
    for _ in range(RUNS):
        for name, argv in commands.items():
            times[name].append(_wall(argv))
    median = {name: statistics.median(values) for name, values in times.items()}
    figures: dict[str, float | int | str] = {
        "cli_bare_python_ms": round(median["bare"] * 1000, 1),
        "cli_help_ms": round(median["help"] * 1000, 1),
        "cli_config_check_ms": round(median["config_check"] * 1000, 1),
        "cli_help_vs_bare_python": round(median["help"] / median["bare"], 2),
        "cli_config_check_vs_bare_python": round(median["config_check"] / median["bare"], 2),
        "cli_start_vs_bare_python": round(
            max(median["help"], median["config_check"]) / median["bare"], 2
        ),
    }
    figures.update(service_start())
    return figures


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
