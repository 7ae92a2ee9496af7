"""Benchmark of the floor's page (``tablectl central serve``, docs/link.md "The floor's page"),
against baselines measured in the same run, on a real nats-server and PostgreSQL on loopback:

- ``floor_tile_update_p99_ms``: a table's commit (its entry's ``ts``, UTC ms) -> the tile with
  that seq (or a later one) arriving at each of 20 browsers on the page (websocket clients in a
  child process, as browsers are other processes), 50 tables shipping at ten times a real
  table's rate (a real table: 40 rounds an hour of `ENTRIES_PER_ROUND` entries); target <= 250.
  Baseline: the bare NATS delivery of the same entries to a plain subscriber of this process
  (``floor_nats_delivery_p99_ms``) and ``floor_tile_vs_nats_p99_ratio``.
- ``floor_serve_rss_mib``: the page's server's resident memory with 200 tables shipping at ten
  times the rate, 20 browsers connected; baseline: the same process before any table shipped
  (``floor_serve_idle_rss_mib``), ``floor_rss_vs_idle_ratio``; ``floor_tile_update_p99_ms_200``
  the latency at 200 tables (one process keeps up).

The entries are a synthetic round's, chained and MAC'd with each table's own link key (the page
checks both, as ingest does), each published on ``table.<id>.journal`` as a shipper does.
Writes only temporary files.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BROWSERS = 20
REAL_ROUNDS_PER_HOUR = 40
SPEEDUP = 10
ENTRIES_PER_ROUND = 14
ROOT = Path(__file__).resolve().parent.parent


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else float("nan")


def _round(rnd: int) -> list[tuple[str, dict[str, Any]]]:
    """One round's entries as a table journals them (types and effects; no card)."""
    wagers = {"type": "wagers", "positions": [1, 2, 3], "wager_cents": 100}
    move = {
        "type": "meter_movement", "level": "progressive", "kind": "contribution",
        "round_id": rnd, "display_cents": 21, "overflow_cents": 0, "reserve_cents": 5,
        "house_cents": 0, "wagers": 3, "wagered_cents": 300,
    }  # fmt: skip
    summary = {
        "type": "round_summary", "round_id": rnd, "outcome": "completed", "positions": [],
        "meters": [{"level": "progressive", "display_before_cents": 100000,
                    "display_after_cents": 100000 + 21 * rnd, "meter_before_cents": 0,
                    "meter_after_cents": 0}],
    }  # fmt: skip
    return [
        ("shuffle_complete", {"count": 53, "effects": [{"type": "acceptors", "armed": True}]}),
        ("chip_detected", {"position": 1, "effects": [{**wagers, "positions": [1]}]}),
        ("chip_detected", {"position": 2, "effects": [{**wagers, "positions": [1, 2]}]}),
        ("chip_detected", {"position": 3, "effects": [wagers]}),
        ("lockout_pressed", {"effects": [{"type": "acceptors", "armed": False}, move]}),
        ("chips_confirmed", {"effects": [{"type": "draw_rng"}]}),
        ("rng_activated", {"effects": []}),
        ("rng_drawn", {"value": 3, "effects": [{"type": "dispense", "stacks": 7, "cards": 7}]}),
        ("dealt", {"remaining": 4, "effects": []}),
        ("play_complete", {"effects": []}),
        ("progressive_outcome", {"position": 1, "line": None, "effects": []}),
        ("progressive_outcome", {"position": 2, "line": None, "effects": []}),
        ("progressive_outcome", {"position": 3, "line": None, "effects": []}),
        ("round_completed", {"round_id": rnd, "effects": [summary]}),
    ]


class _Pg:
    """A throwaway PostgreSQL cluster (as tests/link/pg_support.py makes one)."""

    def __init__(self, base: Path) -> None:
        versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
        found = shutil.which("initdb") or (str(versions[-1]) if versions else None)
        if found is None:
            raise OSError("PostgreSQL's initdb is not installed")
        self.bin = Path(found).parent
        self.base = base
        from controller.link.servers import free_port

        self.port = free_port()
        self.as_root = os.geteuid() == 0

    def _run(self, *cmd: str) -> None:
        argv = ["runuser", "-u", "nobody", "--", *cmd] if self.as_root else list(cmd)
        subprocess.run(argv, check=True, capture_output=True, timeout=120)

    def start(self) -> str:
        self.base.mkdir(parents=True, exist_ok=True)
        if self.as_root:
            os.chmod(self.base, 0o777)
            shutil.chown(self.base, "nobody")
        data = str(self.base / "pg")
        self._run(str(self.bin / "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-N")
        opts = f"-k {self.base} -c listen_addresses=127.0.0.1 -p {self.port} -c fsync=off"
        self._run(str(self.bin / "pg_ctl"), "-D", data, "-o", opts, "-l",
                  str(self.base / "log"), "-w", "start")  # fmt: skip
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.base / "pg"), "-m", "immediate", "stop")


def _floor_file(tmp: Path, tables: int) -> Path:
    lines = ["[floor]", "stale_s = 60", "page_size = 60"]
    for s in range(0, tables, 50):
        names = ", ".join(f'"F{tables}-{i:03d}"' for i in range(s, min(tables, s + 50)))
        lines += ["[[sections]]", f'name = "Pit {s // 50 + 1}"', f"tables = [{names}]"]
    path = tmp / f"floor{tables}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _keys(ring: Path, tables: int) -> dict[str, Any]:
    """Each simulated table's link key, provisioned in the keyring ``ring`` the page reads (its
    entries are MAC'd as a shipper's are: the page shows a live entry only with its MAC)."""
    from controller.link.keys import load_table_key, provision

    out: dict[str, Any] = {}
    for name in _names(tables):
        path = ring.parent / f"{name}.key"
        if not path.exists():
            provision(ring, name, path)
        out[name] = load_table_key(path, name)
    return out


def _names(tables: int) -> list[str]:
    return [f"F{tables}-{i:03d}" for i in range(tables)]


async def _ship(
    url: str,
    tables: int,
    seconds: float,
    nats_seen: dict[tuple[str, int], float],
    keys: dict[str, Any],
) -> list[tuple[str, int, int]]:
    """``tables`` tables shipping at 10x a real table's rate for ``seconds``: (table, seq, ts)."""
    import nats

    from controller.journal.format import Entry, canonical_json, entry_hash
    from controller.link.messages import encode_entry, ensure_stream, headers_for, journal_subject

    nc = await nats.connect(url)
    js = nc.jetstream()
    await ensure_stream(js)

    async def seen(msg: Any) -> None:
        body = json.loads(msg.data)
        nats_seen.setdefault((msg.subject.split(".")[1], int(body["seq"])), time.time() * 1000)

    await nc.subscribe("table.*.journal", cb=seen)
    per_table_s = 3600.0 / (REAL_ROUNDS_PER_HOUR * SPEEDUP * ENTRIES_PER_ROUND)
    names = _names(tables)
    seqs = dict.fromkeys(names, 0)
    prevs = dict.fromkeys(names, "g" * 64)
    rounds = dict.fromkeys(names, 1)
    sent: list[tuple[str, int, int]] = []
    start = time.monotonic()
    tick = per_table_s / tables
    n = 0
    while time.monotonic() - start < seconds:
        name = names[n % tables]
        n += 1
        seq = seqs[name] = seqs[name] + 1
        rnd, state = rounds[name], "0" * 64  # a real chain: the page checks it as ingest does
        typ, data = _round(rnd)[(seq - 1) % ENTRIES_PER_ROUND]
        if (seq % ENTRIES_PER_ROUND) == 0:
            rounds[name] += 1
        ts = time.time_ns() // 1_000_000
        digest = entry_hash(seq, ts, rnd, typ, canonical_json(data, "d"), prevs[name], state)
        entry = Entry(seq, ts, rnd, typ, data, prevs[name], digest, state, "")
        prevs[name] = digest
        mac = keys[name].entry_header(seq, digest)
        await js.publish(
            journal_subject(name), encode_entry(entry), headers=headers_for(name, 1, seq, mac)
        )
        sent.append((name, seq, ts))
        delay = start + n * tick - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
    await asyncio.sleep(1.0)
    await nc.close()
    return sent


class _Browsers:
    """``n`` websocket clients in a child process; each tile's arrival (UTC ms) by (table, seq)."""

    def __init__(self, url: str, n: int) -> None:
        cmd = [sys.executable, "-m", "bench.bench_floor", "clients", url, str(n)]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "connected":
            raise RuntimeError("the floor page's websocket clients did not connect")

    def finish(self) -> list[dict[str, list[tuple[int, float]]]]:
        out, _ = self.proc.communicate("stop\n", timeout=60)
        return [
            {t: [(int(s), float(a)) for s, a in v] for t, v in c.items()} for c in json.loads(out)
        ]


def _client_main(url: str, n: int) -> None:
    from tornado.websocket import websocket_connect

    arrivals: list[dict[str, list[tuple[int, float]]]] = [{} for _ in range(n)]

    async def one(i: int, conn: Any) -> None:
        seen = arrivals[i]
        while True:
            msg = await conn.read_message()
            if msg is None:
                break
            now = time.time() * 1000
            for t in json.loads(msg).get("tiles") or ():
                seen.setdefault(t["table"], []).append((int(t["seq"]), now))

    async def main() -> None:
        conns = [await websocket_connect(url) for _ in range(n)]
        tasks = [asyncio.create_task(one(i, c)) for i, c in enumerate(conns)]
        print("connected", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        for c in conns:
            c.close()
        await asyncio.wait(tasks, timeout=2)

    asyncio.run(main())
    print(json.dumps(arrivals))


def _latencies(
    sent: list[tuple[str, int, int]], clients: list[dict[str, list[tuple[int, float]]]]
) -> tuple[list[float], int]:
    """Per browser and entry: the first tile of its table at that seq or later."""
    out: list[float] = []
    missing = 0
    for c in clients:
        for table, seq, ts in sent:
            arrivals = c.get(table, [])
            hit = next((a for s, a in arrivals if s >= seq), None)
            if hit is None:
                missing += 1
            else:
                out.append(hit - ts)
    return out, missing


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _measure(tmp: Path, url: str, dsn: str, tables: int, seconds: float) -> dict[str, float]:
    ring = tmp / "link-keys"
    keys = _keys(ring, tables)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "central", "serve", "--config",
         str(_floor_file(tmp, tables)), "--pg", dsn, "--nats", url, "--port", "0",
         "--keys", str(ring)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "floor page: " not in line:
            raise RuntimeError(f"central serve did not start: {line!r}")
        page = line.split("floor page: ", 1)[1].strip()
        browsers = _Browsers(page.replace("http://", "ws://") + "ws", BROWSERS)
        time.sleep(2.0)
        idle = _rss_mib(proc.pid)
        nats_seen: dict[tuple[str, int], float] = {}
        sent = asyncio.run(_ship(url, tables, seconds, nats_seen, keys))
        busy = _rss_mib(proc.pid)
        clients = browsers.finish()
    finally:
        proc.terminate()
        proc.wait(20)
    lat, missing = _latencies(sent, clients)
    if os.environ.get("FLOOR_BENCH_DEBUG"):
        t0 = sent[0][2]
        buckets: dict[int, list[float]] = {}
        for c in clients:
            for table, seq, ts in sent:
                hit = next((a for s_, a in c.get(table, []) if s_ >= seq), None)
                if hit is not None:
                    buckets.setdefault((ts - t0) // 1000, []).append(hit - ts)
        for b, v in sorted(buckets.items()):
            print(
                f"  {tables} t+{b}s: p50 {sorted(v)[len(v) // 2]:.0f} p99 {_p99(v):.0f}",
                file=sys.stderr,
            )
    nats_lat = [nats_seen[(t, s)] - ts for t, s, ts in sent if (t, s) in nats_seen]
    return {
        "p99": round(_p99(lat), 1), "nats_p99": round(_p99(nats_lat), 1), "idle": idle,
        "busy": busy, "entries": len(sent), "missing": missing,
    }  # fmt: skip


def run() -> dict[str, float | int | str]:
    from controller.link.servers import NatsProcess, nats_server_binary

    if nats_server_binary() is None:
        return {"floor_bench_error": "nats-server is not installed"}
    with tempfile.TemporaryDirectory(prefix="paigow-floor-") as tmp_name:
        tmp = Path(tmp_name)
        pg_base = Path(tempfile.mkdtemp(prefix="paigow-floor-pg-"))  # outside the 0700 one
        try:
            pg = _Pg(pg_base)
            dsn = pg.start()
        except (OSError, subprocess.CalledProcessError) as exc:
            shutil.rmtree(pg_base, ignore_errors=True)
            return {"floor_bench_error": f"PostgreSQL: {exc}"}
        server = NatsProcess(tmp / "nats")
        server.start()
        try:
            fifty = _measure(tmp, server.url, dsn, 50, 20.0)
            two_hundred = _measure(tmp, server.url, dsn, 200, 15.0)
        finally:
            server.kill()
            pg.stop()
            shutil.rmtree(pg_base, ignore_errors=True)
    return {
        "floor_tile_update_p99_ms": fifty["p99"],
        "floor_nats_delivery_p99_ms": fifty["nats_p99"],
        "floor_tile_vs_nats_p99_ratio": round(fifty["p99"] / max(fifty["nats_p99"], 0.1), 1),
        "floor_entries_shipped_50": int(fifty["entries"]),
        "floor_tiles_missing": int(fifty["missing"] + two_hundred["missing"]),
        "floor_tile_update_p99_ms_200": two_hundred["p99"],
        "floor_serve_rss_mib": two_hundred["busy"],
        "floor_serve_idle_rss_mib": two_hundred["idle"],
        "floor_rss_vs_idle_ratio": round(two_hundred["busy"] / max(two_hundred["idle"], 0.1), 2),
    }


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "clients":
        _client_main(sys.argv[2], int(sys.argv[3]))
    else:
        print(json.dumps(run(), indent=2))
