"""``tablectl simulate --headless --rounds R --tables N --linked``: N simulated tables on one linked
pool, each its own ``tablectl simulate`` process (as real tables are separate machines) with a
``[link]`` section, the link controller on a thread of this process, and a nats-server started
for the run (or the one ``--nats URL`` names).

``--faults`` may hold, besides the devices' faults (passed on to every table), ``link-down@R``
(the link controller is stopped when the first table reaches round R, and started again
``OUTAGE_S`` later: three times the simulated tables' ``timeout_s``) and ``nats-down@R`` (the
same for the NATS server, its stream store kept). The tables go on with the base game
meanwhile; the linked wager is unplayable until the controller confirms it holds every
contribution.

Simulation only. Must never run on a live table, or hold a game rule.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any, TextIO

from controller.config import SIMULATED_TABLE
from controller.journal.audit import connect_read_only
from controller.link.keys import provision
from controller.link.link_config import load_controller_config
from controller.sim.faults import parse_faults

LINK_FAULTS = ("link-down", "nats-down")
OUTAGE_S = 3.0
POOL = "SIM-POOL"


def table_config(directory: Path, index: int, url: str) -> tuple[Path, str, int]:
    """The configuration file of simulated table ``index`` on the pool."""

    table_id, asset = f"SIM{index}", 91000 + index
    text = SIMULATED_TABLE.read_text()
    text = re.sub(r'(?m)^id = ".*"$', f'id = "{table_id}"', text, count=1)
    text = re.sub(r"(?m)^asset_number = .*$", f"asset_number = {asset}", text, count=1)
    text = re.sub(r'(?m)^path = "/tmp/.*"$', f'path = "{directory / table_id}.db"', text, count=1)
    key = directory / f"{table_id}.key"
    if not key.exists():
        provision(directory / "link-keys", table_id, key)
    text += f'\n[link]\npool = "{POOL}"\nservers = ["{url}"]\ntimeout_s = 1.0\nkey_file = "{key}"\n'
    path = directory / f"{table_id}.toml"
    path.write_text(text)
    return path, table_id, asset


def controller_config(directory: Path, url: str, tables: dict[str, int]) -> Path:
    level = tomllib.loads(SIMULATED_TABLE.read_text())["game"]["levels"][0]
    lines = "\n".join(f"{k} = {v}" for k, v in tables.items())
    path = directory / "link.toml"
    path.write_text(
        f"""[link]
pool = "{POOL}"
servers = ["{url}"]
journal = "{directory / "pool.db"}"
keys = "{directory / "link-keys"}"

[pool]
level = "{level["name"]}"
initial_cents = {level["initial_cents"]}
reset_cents = {level["reset_cents"]}
rate_bp = {level["rate_bp"]}
hidden_rate_bp = {level["hidden_rate_bp"]}
wager_cents = 100

[tables]
{lines}
"""
    )
    return path


def _rounds(db: Path) -> int:

    try:
        conn = connect_read_only(db)
    except Exception:
        return 0
    try:
        row = conn.execute("SELECT max(round_id) FROM journal").fetchone()
        return int(row[0] or 0)
    except Exception:
        return 0
    finally:
        conn.close()


def _contributed(db: Path, level: str) -> int:
    """The cents wagered on ``level`` that a table's journal contributed (less its reversals:
    the contributions of the rounds it voided)."""
    total = last = 0
    try:
        conn = connect_read_only(db)
    except Exception:
        return 0
    try:
        for (data,) in conn.execute("SELECT data FROM journal"):
            effects = json.loads(data).get("effects", [])
            mine = [e for e in effects if e.get("type") == "meter_movement"]
            for e in mine:
                if e.get("level") == level and e.get("kind") == "contribution":
                    total += int(e["wagered_cents"])
                    last = int(e["wagered_cents"])
                elif e.get("level") == level and e.get("kind") == "reversal":
                    total -= last
    finally:
        conn.close()
    return total


def _pool_contributed(controller: Any, tables: set[str], want: int, wait_s: float = 15.0) -> int:
    """The cents wagered that the pool took from ``tables`` (contributions less reversals), once
    it holds ``want`` or ``wait_s`` passed (a controller restored late is still consuming)."""
    deadline = time.monotonic() + wait_s
    while True:
        took = 0
        ctl = controller.controller
        if ctl is not None:
            conn = connect_read_only(ctl.cfg.journal)
            try:
                wagered: dict[tuple[str, int], int] = {}
                for (data,) in conn.execute("SELECT data FROM journal"):
                    for e in json.loads(data).get("effects", []):
                        key = (str(e.get("table")), int(e.get("round_id") or 0))
                        if e.get("type") == "pool_contribution" and key[0] in tables:
                            wagered[key] = int(e["wagered_cents"])
                            took += wagered[key]
                        elif e.get("type") == "pool_reversal" and key[0] in tables:
                            took -= wagered.get(key, 0)
            finally:
                conn.close()
        if took == want or time.monotonic() >= deadline:
            return took
        time.sleep(0.2)


def run_linked(
    tables: int,
    rounds: int,
    seed: str,
    *,
    fault_spec: str | None = None,
    nats_url: str | None = None,
    directory: Path | None = None,
    out: TextIO | None = None,
) -> int:
    """Play ``rounds`` rounds at each of ``tables`` simulated tables on one pool; exit code."""
    from controller.link.servers import NatsProcess
    from controller.link.service import ControllerThread

    faults = parse_faults(fault_spec)
    link_faults = sorted((f.round, f.kind) for f in faults if f.kind in LINK_FAULTS)
    table_faults = ",".join(str(f) for f in faults if f.kind not in LINK_FAULTS)
    work = directory or Path(tempfile.mkdtemp(prefix="paigow-linked-"))
    work.mkdir(parents=True, exist_ok=True)
    server: NatsProcess | None = None
    if nats_url is None:
        server = NatsProcess(work / "nats")
        server.start()
        nats_url = server.url
    made = [table_config(work, i, nats_url) for i in range(1, tables + 1)]
    cfg = load_controller_config(controller_config(work, nats_url, {t: a for _, t, a in made}))
    level = cfg.level.name
    controller = ControllerThread(cfg)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        controller.start()
        if out:
            print(f"linked run in {work}: {tables} tables on pool {POOL} via {nats_url}", file=out)
        for i, (path, table_id, _) in enumerate(made):
            cmd = [sys.executable, "-m", "controller.cli", "simulate", "--headless", "--rounds",
                   str(rounds), "--seed", f"{seed}-{i}", "--config", str(path),
                   "--verbose"]  # fmt: skip
            if table_faults:
                cmd += ["--faults", table_faults]
            log = (work / f"{table_id}.log").open("ab")
            procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT))
            log.close()
        first_db = work / f"{made[0][1]}.db"
        restore: list[tuple[float, str]] = []
        while any(p.poll() is None for p in procs) or restore:
            now = time.monotonic()
            while link_faults and _rounds(first_db) >= link_faults[0][0]:
                _, kind = link_faults.pop(0)
                if out:
                    print(f"fault: {kind} at round {_rounds(first_db)}", file=out, flush=True)
                if kind == "link-down":
                    controller.stop()
                elif server is not None:
                    server.kill()
                restore.append((now + OUTAGE_S, kind))
            for due, kind in list(restore):
                if now >= due:
                    restore.remove((due, kind))
                    if kind == "nats-down" and server is not None:
                        server.start()
                    else:
                        controller = ControllerThread(cfg)
                        controller.start(wait=False)  # it serves once NATS answers
                    if out:
                        print(f"restored: {kind}", file=out, flush=True)
            time.sleep(0.1)
        codes = [p.returncode for p in procs]
        ctl = controller.controller
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (ctl is None or not ctl.ready.is_set()):
            time.sleep(0.1)  # a controller just restored: let it take what is in the stream
            ctl = controller.controller
        tables_total = {t: _contributed(work / f"{t}.db", level) for _, t, _ in made}
        pool_total = _pool_contributed(controller, set(tables_total), sum(tables_total.values()))
        if out:
            pool = controller.controller.pool if controller.controller is not None else None
            shown = "?" if pool is None else f"${pool.display_cents / 100:,.2f}"
            print(f"tables exited {codes}; pool {POOL} meter {shown}", file=out, flush=True)
            print(
                f"contributions: the tables journaled {sum(tables_total.values())} cents wagered"
                f" ({', '.join(f'{t} {c}' for t, c in tables_total.items())}); the pool took "
                f"{pool_total}",
                file=out,
                flush=True,
            )
        if pool_total != sum(tables_total.values()):
            if out:
                print(
                    "the pool's contributions differ from the tables': exit 1", file=out, flush=True
                )
            return max([1, *codes])
        return max(codes) if codes else 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(30)
        controller.stop()
        if server is not None:
            server.kill()
