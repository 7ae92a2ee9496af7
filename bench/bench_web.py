"""Benchmark of the table's page, against baselines measured in the same run.

``page_update_p99_ms``: from the owner's publication to the frame's arrival at each of 20
websocket clients (tornado's ``websocket_connect``, real sockets, in a child process as browsers
are; both sides read CLOCK_MONOTONIC),
over a stream of committed events (``light_test`` in maintenance, each a journal commit); the
publication's instant is taken by a thread waiting on ``Owner.wait_published`` as the feed does.
Baseline: the owner's own post -> publication time of the same events (a commit with fsync),
``page_update_vs_commit_p99_ratio``.

``service_rss_mib``: the resident memory of a running ``tablectl simulate`` process (scripted
people playing, the page serving) with 20 websocket clients connected; baseline: the same table
``--headless --linger`` (no page), ``service_rss_vs_headless_ratio``. Writes only temporary
files.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from controller.config import SIMULATED_TABLE, load_config
from controller.service.owner import Owner
from controller.web.server import WebServer
from controller.web.web_config import WebSection
from fsm.round.effects import Effect
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

BROWSERS = 20
UPDATES = 150
INTERVAL_S = 0.03
RSS_SETTLE_S = 6.0
ROOT = Path(__file__).resolve().parent.parent
_SEQ = re.compile(r'"seq":(\d+)')


class _NoDevices:
    def apply(self, effect: Effect) -> None:
        pass

    def safe_state(self, glyph: str = " ") -> None:
        pass

    def close(self) -> None:
        pass


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _Clients:
    """``n`` websocket clients in a child process (browsers are other processes: no share of
    this process's GIL), one asyncio loop; each arrival's CLOCK_MONOTONIC time by seq, read back
    when the child is told to stop (a line on its stdin)."""

    def __init__(self, url: str, n: int) -> None:
        self.url, self.n = url, n
        self.arrivals: list[dict[int, float]] = [{} for _ in range(n)]
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        cmd = [sys.executable, "-m", "bench.bench_web", "clients", self.url, str(self.n)]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "connected":
            raise RuntimeError("the websocket clients did not connect")

    def finish(self) -> None:
        proc = self.proc
        if proc is None:
            return
        out, _ = proc.communicate("stop\n", timeout=30)
        self.arrivals = [{int(k): v for k, v in a.items()} for a in json.loads(out)]
        self.proc = None


def _client_main(url: str, n: int) -> None:
    """The child: ``n`` clients; prints "connected", then, after a line on stdin, the arrivals."""
    from tornado.websocket import websocket_connect

    arrivals: list[dict[int, float]] = [{} for _ in range(n)]

    async def one(i: int, conn: Any, stop: asyncio.Event) -> None:
        seen = arrivals[i]
        while not stop.is_set():
            msg = await conn.read_message()
            if msg is None:
                break
            now = time.monotonic()
            m = _SEQ.search(msg if isinstance(msg, str) else msg.decode())
            if m is not None:
                seen.setdefault(int(m.group(1)), now)

    async def main() -> None:
        conns = [await websocket_connect(url) for _ in range(n)]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(one(i, c, stop)) for i, c in enumerate(conns)]
        print("connected", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        stop.set()
        for c in conns:
            c.close()
        await asyncio.wait(tasks, timeout=2)

    asyncio.run(main())
    print(json.dumps(arrivals), flush=True)


def _page_update() -> dict[str, float | int]:
    config = load_config(SIMULATED_TABLE)
    game = config.game

    def make_machine(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    with tempfile.TemporaryDirectory(prefix="pgw-") as tmp:
        db = Path(tmp) / "j.db"
        owner = Owner(db, make_machine, _NoDevices(), software_hash=lambda: "0" * 64)
        owner.start()
        server = WebServer(owner, db, config.supervisors, WebSection(enabled=True), port=0)
        server.start()
        published: dict[int, float] = {}
        watching = threading.Event()

        def watch() -> None:
            seq = owner.public.seq
            while not watching.is_set():
                snap = owner.wait_published(seq, timeout=0.2)
                if snap.seq != seq:
                    published[snap.seq] = time.monotonic()
                    seq = snap.seq

        watcher = threading.Thread(target=watch, daemon=True)
        clients = _Clients(server.url.replace("http://", "ws://") + "ws", BROWSERS)
        try:
            owner.post(Event("maintenance_entered", {"supervisor": "trainer"}))
            owner.wait_idle(30)
            watcher.start()
            clients.start()
            time.sleep(0.3)
            posted: dict[int, float] = {}
            first = owner.public.seq + 1
            for _ in range(UPDATES):
                t0 = time.monotonic()
                receipt = owner.post_tracked(Event("light_test", {"supervisor": "trainer"}))
                receipt.wait(10)
                if receipt.seq is not None:
                    posted[receipt.seq] = t0
                time.sleep(INTERVAL_S)
            time.sleep(0.5)
        finally:
            clients.finish()
            watching.set()
            watcher.join(5)
            server.stop()
            owner.stop()
    seqs = [s for s in range(first, first + UPDATES) if s in published and s in posted]
    delays = [(arr[s] - published[s]) * 1000 for arr in clients.arrivals for s in seqs if s in arr]
    missing = sum(1 for arr in clients.arrivals for s in seqs if s not in arr)
    commits = [(published[s] - posted[s]) * 1000 for s in seqs]
    p99 = _p(delays, 0.99)
    commit_p99 = _p(commits, 0.99)
    return {
        "page_browsers": BROWSERS,
        "page_updates": len(seqs),
        "page_update_p50_ms": round(statistics.median(delays), 3),
        "page_update_p99_ms": round(p99, 3),
        "page_update_max_ms": round(max(delays), 3),
        "page_frames_missed": missing,
        "page_commit_p99_ms": round(commit_p99, 3),
        "page_update_vs_commit_p99_ratio": round(p99 / commit_p99, 3) if commit_p99 else 0.0,
    }


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _spawn(db: Path, *args: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "controller.cli", "simulate", "--db", str(db), *args]
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _service_rss() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="pgw-") as tmp:
        base = _spawn(Path(tmp) / "h.db", "--headless", "--rounds", "3", "--linger", "--seed", "2")
        assert base.stdout is not None
        base.stdout.readline()  # the rounds are played; it lingers
        time.sleep(1.0)
        headless = _rss_mib(base.pid)
        _stop(base)
        proc = _spawn(Path(tmp) / "p.db", "--port", "0", "--pace", "0.05", "--seed", "2")
        assert proc.stdout is not None
        url = ""
        while not url:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("simulate exited before serving its page")
            if line.startswith("page: "):
                url = line.split("page: ", 1)[1].strip()
        threading.Thread(target=lambda: [None for _ in proc.stdout or ()], daemon=True).start()
        clients = _Clients(url.replace("http://", "ws://") + "ws", BROWSERS)
        try:
            clients.start()
            time.sleep(RSS_SETTLE_S)
            served = _rss_mib(proc.pid)
            clients.finish()
        finally:
            _stop(proc)
    return {
        "service_rss_mib": round(served, 1),
        "service_headless_rss_mib": round(headless, 1),
        "service_rss_vs_headless_ratio": round(served / headless, 3) if headless else 0.0,
    }


def run() -> dict[str, float | int | str]:
    return {**_page_update(), **_service_rss()}


if __name__ == "__main__" and sys.argv[1:2] == ["clients"]:
    _client_main(sys.argv[2], int(sys.argv[3]))
