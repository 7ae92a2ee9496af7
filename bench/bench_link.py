"""Benchmarks of the linked progressive (docs/link.md), on a real nats-server on loopback with the
link controller on its own thread:

- ``link_contribution_p99_ms``: a table's lock-out committed -> the contribution shipped,
  consumed and committed by the link controller -> the pool's value in the key-value bucket ->
  the table's link has it (what its display shows); target <= 100 ms. The baseline measured in
  the same run is a bare NATS request/reply round trip on the same server
  (``link_nats_rtt_p99_ms``) and the ratio between them.
- ``link_tables_sustained``: how many tables at ten times a real table's wager rate one link
  controller keeps up with here. A real table: 40 rounds an hour, every entry of a real round of
  the table above (re-chained per table) shipped; ten times that is a round every 9 s. The
  stream is loaded with a backlog of lightweight publishers' entries (real journal entries, not
  whole tables), the controller started, and its consumption rate measured; sustained tables =
  consumption rate / one table's entry rate at 10x (target: 1,000). Every entry carries its
  table's MAC (issue 22) and the controller checks it, its chain and its plausibility.
- ``link_mac_check_us``: the link controller's check of one entry's MAC (the header parsed, the
  table's key found, HMAC-SHA256 over the table, seq and hash, compared in constant time) and
  ``link_mac_sign_us`` the shipper's, against a bare ``hmac.new(key, msg, sha256)`` of the same
  message in the same run (``link_bare_hmac_us``, ``link_mac_check_vs_bare_hmac``).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REAL_ROUNDS_PER_HOUR = 40
SPEEDUP = 10
SAMPLES = 120
PUBLISHERS = 200
ROUNDS_EACH = 6


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _controller_cfg(tmp: Path, url: str, tables: dict[str, int], pool: str = "BENCH") -> Any:
    from controller.link.link_config import load_controller_config

    return load_controller_config(_controller_file(tmp, url, tables, pool))


def _controller_file(tmp: Path, url: str, tables: dict[str, int], pool: str = "BENCH") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)

    lines = "\n".join(f"{k} = {v}" for k, v in tables.items())
    for table in tables:
        _key(tmp.parent, table)
    text = f"""[link]
pool = "{pool}"
servers = ["{url}"]
journal = "{tmp / "pool.db"}"
keys = "{tmp.parent / "link-keys"}"
[pool]
initial_cents = 100000
rate_bp = 2100
hidden_rate_bp = 500
[tables]
{lines}
"""
    path = tmp / "link.toml"
    path.write_text(text)
    return path


def _key(tmp: Path, table: str) -> Path:
    """The table's link key file, provisioned in the run's keyring on first use."""
    from controller.link.keys import provision

    path = tmp / f"{table}.key"
    if not path.exists():
        provision(tmp / "link-keys", table, path)
    return path


class _Devices:
    def apply(self, effect: Any) -> None:
        pass

    def safe_state(self, glyph: str = " ") -> None:
        pass

    def close(self) -> None:
        pass


def _table(tmp: Path, url: str) -> tuple[Any, Any, Any]:
    import tomllib

    from controller.config import SIMULATED_TABLE, parse_config
    from controller.journal.lock import owner_journal_options
    from controller.service.owner import Owner
    from controller.service.wiring import LinkAttachment
    from fsm.round.machine import RoundMachine

    data: dict[str, Any] = tomllib.loads(SIMULATED_TABLE.read_text())
    data["table"].update(id="B1", asset_number=80001)
    data["game"].update(card_reading_shoe=False, side_wager={"offered": False})
    data["journal"]["path"] = str(tmp / "B1.db")
    data["link"] = {"pool": "BENCH", "servers": [url], "timeout_s": 5.0,
                    "key_file": str(_key(tmp, "B1"))}  # fmt: skip
    cfg = parse_config(data)
    game = cfg.game
    owner = Owner(
        cfg.journal_path,
        lambda s: RoundMachine(game) if s is None else RoundMachine.restore(game, s),
        _Devices(),
        draw=lambda: 3,
        **owner_journal_options(cfg),
    )
    return cfg, owner, LinkAttachment(cfg, cfg.journal_path)


def _ev(owner: Any, etype: str, **data: Any) -> Any:
    from fsm.round.events import Event

    receipt = owner.post_tracked(Event(etype, data))
    receipt.wait(10)
    refused = [e for e in receipt.effects or () if e.TYPE == "rejected"]
    if refused:  # the script is out of step with the round: measuring it would be garbage
        raise RuntimeError(f"bench_link: {etype} refused in {owner.public.state}: {refused}")
    return receipt


def _wait(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() >= deadline:
            raise RuntimeError(f"bench_link: the table did not get there within {timeout} s")
        time.sleep(0.002)


def _latency(tmp: Path, url: str) -> tuple[list[float], Path]:
    cfg, owner, attachment = _table(tmp, url)
    owner.start()
    attachment.start(owner)
    link = attachment.link
    samples: list[float] = []
    try:
        _wait(lambda: not (owner.public.view.get("link") or {}).get("down", True), 15)
        _ev(owner, "table_opened", supervisor="trainer")
        for _ in range(SAMPLES):
            if owner.public.state == "Open_Shuffling":
                _ev(owner, "shuffle_complete", count=53)
            for p in (1, 2, 3):
                _ev(owner, "chip_detected", position=p)
            t0 = time.perf_counter()
            receipt = _ev(owner, "lockout_pressed")
            if not any(e.TYPE == "meter_movement" for e in receipt.effects):
                receipt = _ev(owner, "chips_confirmed")
            seq = receipt.seq
            link.wait_pool(lambda v, seq=seq: v.get("tables", {}).get("B1", 0) >= seq, 5.0)
            samples.append((time.perf_counter() - t0) * 1000)
            if owner.public.state == "Open_LockedOut" and not any(
                e.TYPE == "meter_movement" for e in receipt.effects
            ):
                _ev(owner, "chips_confirmed")
            if owner.public.state == "Open_LockedOut":  # the dealer activates the RNG
                _ev(owner, "rng_activated")  # (NY 5324.41(h)(8)(ii)); the owner draws it
            _wait(lambda: owner.public.state == "Open_Dealing", 5)
            _ev(owner, "dealt", remaining=4)
            _ev(owner, "play_complete")
            for p in (1, 2, 3):
                _ev(owner, "progressive_outcome", position=p, line=None)
            _wait(lambda: owner.public.state in ("Open_Betting", "Open_Shuffling"), 5)
    finally:
        attachment.stop()
        owner.stop()
    return samples, cfg.journal_path


async def _rtt(url: str, n: int = 200) -> list[float]:
    import nats

    nc = await nats.connect(url)
    try:

        async def echo(msg: Any) -> None:
            await msg.respond(msg.data)

        await nc.subscribe("bench.echo", cb=echo)
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            await nc.request("bench.echo", b"x" * 200, timeout=2)
            out.append((time.perf_counter() - t0) * 1000)
        return out
    finally:
        await nc.close()


def _template(db: Path) -> list[tuple[int, str, dict[str, Any], str]]:
    """One real round of the table: (round offset, type, data, state_hash) per entry."""
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT round_id, type, data, state_hash FROM journal ORDER BY seq"
    ).fetchall()
    conn.close()
    last = max(r[0] or 0 for r in rows)
    one = [r for r in rows if r[0] == last - 1]
    return [(0, t, json.loads(d), s) for _, t, d, s in one]


def _in_round(data: dict[str, Any], rnd: int) -> dict[str, Any]:
    """The template's data with its effects' round ids made ``rnd`` (a plausible round)."""
    effects = [
        {**e, "round_id": rnd} if isinstance(e, dict) and "round_id" in e else e
        for e in data.get("effects", [])
    ]
    return {**data, "effects": effects} if "effects" in data else data


async def _load(url: str, template: list[Any], tables: list[str], rounds: int, tmp: Path) -> int:
    import nats

    from controller.journal.format import Entry, canonical_json, entry_hash
    from controller.link.keys import load_table_key
    from controller.link.messages import encode_entry, headers_for, journal_subject

    nc = await nats.connect(url)
    js = nc.jetstream()
    sent = 0
    try:
        for i, table in enumerate(tables):
            key = load_table_key(_key(tmp, table), table)
            prev, seq = "g" * 64, 0
            for rnd in range(1, rounds + 1):
                for _, typ, template_data, s_hash in template:
                    seq += 1
                    data = _in_round(template_data, rnd)
                    digest = entry_hash(seq, seq, rnd, typ, canonical_json(data, "d"), prev, s_hash)
                    entry = Entry(seq, seq, rnd, typ, data, prev, digest, s_hash, "")
                    await js.publish_async(
                        journal_subject(table),
                        encode_entry(entry),
                        headers=headers_for(table, 90000 + i, seq, key.entry_header(seq, digest)),
                    )
                    prev = digest
                    sent += 1
        await js.publish_async_completed()
    finally:
        await nc.close()
    return sent


async def _stream_messages(url: str) -> int:
    import nats

    from controller.link.messages import STREAM

    nc = await nats.connect(url)
    try:
        info = await nc.jetstream().stream_info(STREAM)
        return int(info.state.messages)
    finally:
        await nc.close()


def run() -> dict[str, float | int | str]:
    from controller.link.servers import NatsProcess, nats_server_binary
    from controller.link.service import ControllerThread

    if nats_server_binary() is None:
        return {"link_bench_error": "nats-server is not installed"}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server = NatsProcess(tmp / "nats")
        server.start()
        try:
            # the link controller in its own process, as in production
            conf = _controller_file(tmp / "c1", server.url, {"B1": 80001})
            ctl = subprocess.Popen(
                [sys.executable, "-m", "controller.cli", "link", "serve", "--config", str(conf)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                samples, table_db = _latency(tmp, server.url)
            finally:
                ctl.terminate()
                ctl.wait(10)
            rtt = asyncio.run(_rtt(server.url))
            template = _template(table_db)
            names = [f"P{i:03d}" for i in range(PUBLISHERS)]
            assets = {n: 90000 + i for i, n in enumerate(names)}
            cfg2 = _controller_cfg(tmp / "c2", server.url, assets, "BENCH2")
            # the stream also holds the latency table's entries: the new consumer reads them too
            asyncio.run(_load(server.url, template, names, ROUNDS_EACH, tmp))
            sent = asyncio.run(_stream_messages(server.url))
            ctl2 = ControllerThread(cfg2)
            t0 = time.perf_counter()
            ctl2.start()
            controller = ctl2.controller
            assert controller is not None
            _wait(lambda: controller.consumed >= sent, 60)
            elapsed = time.perf_counter() - t0
            consumed = controller.consumed
            refused = [t for t, st in controller.pool.tables.items() if st.refused] + sorted(
                {k[0] for k in controller._entries_refused}
            )
            ctl2.stop()
            if refused:  # the figure would measure refusals, not the work
                raise RuntimeError(f"bench_link: the controller refused {refused[:3]}")
            mac = _mac_costs(tmp)
        finally:
            server.kill()
    per_table_per_s = len(template) * REAL_ROUNDS_PER_HOUR * SPEEDUP / 3600
    rate = consumed / elapsed
    p99 = _p99(samples)
    return {
        "link_contribution_p99_ms": round(p99, 1),
        "link_contribution_p50_ms": round(sorted(samples)[len(samples) // 2], 1),
        "link_nats_rtt_p99_ms": round(_p99(rtt), 2),
        "link_contribution_vs_nats_rtt_ratio": round(p99 / _p99(rtt), 1),
        "link_controller_entries_per_s": round(rate),
        "link_entries_per_round": len(template),
        "link_tables_sustained": int(rate / per_table_per_s),
        **mac,
    }


def _mac_costs(tmp: Path, n: int = 20_000) -> dict[str, float]:
    """One entry's MAC at the shipper and its check at the controller, against a bare HMAC of
    the same message, per entry in microseconds (best of five runs of ``n``)."""
    import hashlib
    import hmac

    from controller.link.keys import Keyring, entry_mac, load_table_key

    key = load_table_key(_key(tmp, "P000"), "P000")
    ring = Keyring(tmp / "link-keys")
    digest = hashlib.sha256(b"an entry").hexdigest()
    header = key.entry_header(42, digest)
    text = f"paigow-link-entry\nP000\n42\n{digest}".encode()
    assert ring.check_entry("P000", 42, digest, header) is None
    assert entry_mac(key.secret, "P000", 42, digest) == header.partition(":")[2]

    def best(fn: Any) -> float:
        runs = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            runs.append((time.perf_counter() - t0) / n * 1e6)
        return min(runs)

    bare = best(lambda: hmac.new(key.secret, text, hashlib.sha256).hexdigest())
    check = best(lambda: ring.check_entry("P000", 42, digest, header))
    sign = best(lambda: key.entry_header(42, digest))
    return {
        "link_bare_hmac_us": round(bare, 2),
        "link_mac_check_us": round(check, 2),
        "link_mac_sign_us": round(sign, 2),
        "link_mac_check_vs_bare_hmac": round(check / bare, 2),
    }
