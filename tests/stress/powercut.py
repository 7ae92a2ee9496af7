"""Power cuts and SIGKILLs of a real ``tablectl simulate --headless`` (issue 12, `make stress`).

Each chain plays one journal to R rounds through as many restarts as it takes. Every process
runs with the recorder `pcut.c` preloaded and dies by SIGKILL at a seeded watched operation (a
write or sync of the journal, its WAL or its anchor, before or after it): a kill mid-commit, or
between a durable commit and its outputs. In ``power`` chains the files are then replaced by the
disk after a power cut (`tests.stress.disk`: unsynced writes lost, torn or reordered); in
``kill`` chains they stay as the page cache left them. After every cut, before the restart:

- no acknowledged entry is lost: every entry the anchor records as acknowledged (its commit had
  returned: the ``acked`` of any anchor record written, `tests.stress.disk.anchored_seq`) and
  every entry of the synced image (its WAL sync had returned) is in the journal after the cut,
  with the same hash;
  no entry appears that was never written (the journal after the cut is a prefix of the one
  before it);
- the journal verifies by replay (hash chain, anchor not ahead, meters and state equal the
  replay's);
and then the restart must power up (no storage fault) and go on. When the chain reaches R
rounds: exactly R completed, each round id completed or voided by rule, no contribution, payout
or refund counted twice, meters reconcile to the cent with the journaled movements.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.cli.journal import make_replay
from controller.journal.audit import connect_read_only
from controller.journal.seal import new_verification_key, write_new_seal_file
from controller.journal.store import verify
from tests.stress.disk import power_cut

ROOT = Path(__file__).resolve().parents[2]
SIMULATED_TABLE = ROOT / "controller" / "data" / "simulated-table.toml"
#: A process dies at a watched operation drawn from 1..OPS_SPAN (a round is about 90).
OPS_SPAN = 450


class StressFailure(AssertionError):
    """A check of the stress run failed; the message says which and where."""


@dataclass
class ChainResult:
    cuts: int = 0
    lost: int = 0
    restarts: int = 0
    torn: int = 0
    modes: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    rounds: int = 0


def entry_hashes(db: Path) -> list[tuple[int, str]]:
    """(seq, hash) of every entry, read through a private copy (a reader never writes ours)."""
    if not db.exists() or db.stat().st_size == 0:
        return []
    with tempfile.TemporaryDirectory(prefix="stress-read-") as tmp:
        copy = Path(tmp) / db.name
        shutil.copyfile(db, copy)
        wal = db.with_name(db.name + "-wal")
        if wal.exists():
            shutil.copyfile(wal, Path(tmp) / wal.name)
        conn = sqlite3.connect(copy)
        try:
            return [(int(s), str(h)) for s, h in conn.execute("SELECT seq, hash FROM journal")]
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise
        finally:
            conn.close()


def _rows(db: Path) -> list[tuple[int, int | None, str, dict[str, Any]]]:
    conn = connect_read_only(db)
    try:
        rows = conn.execute("SELECT seq, round_id, type, data FROM journal ORDER BY seq").fetchall()
    finally:
        conn.close()
    return [(s, r, t, json.loads(d)) for s, r, t, d in rows]


def sealed_table(workdir: Path, name: str) -> tuple[Path, Path, bytes]:
    """The simulated table's configuration with forward-secure seals (issue 23: the stress
    suite's journals are sealed as a live table's are): its path, the sealing-key file (new,
    beside the journal) and the verification key that checks every seal."""
    seal_file = workdir / f"{name}.seal"
    verification_key = new_verification_key()
    write_new_seal_file(seal_file, verification_key)
    text = SIMULATED_TABLE.read_text()
    assert "\n[journal]\n" in text
    text = text.replace("\n[journal]\n", f"\n[journal]\nseal_key = {json.dumps(str(seal_file))}\n")
    config = workdir / f"{name}.toml"
    config.write_text(text)
    return config, seal_file, verification_key


def check_verifies(db: Path, where: str, verify_key: bytes | None = None) -> int:
    """The journal verifies by replay from its own recorded configuration (and every seal with
    ``verify_key``); its entry count."""
    replay, why = make_replay(db, None)
    if replay is None:
        raise StressFailure(f"{where}: no replay: {why}")
    report = verify(db, replay, verify_key=verify_key)
    if not report.ok:
        raise StressFailure(f"{where}: journal verify failed: {report.problems[:3]}")
    return report.entries


def check_finished(db: Path, rounds: int, where: str, verify_key: bytes | None = None) -> None:
    """The invariants of a finished journal (issue 12: after every restart; at the end)."""
    check_verifies(db, where, verify_key)
    rows = _rows(db)
    if [r[0] for r in rows] != list(range(1, len(rows) + 1)):
        raise StressFailure(f"{where}: seqs are not gapless")
    done = [r[3]["round_id"] for r in rows if r[2] == "round_completed" and not _rejected(r)]
    if len(done) != rounds or len(set(done)) != rounds:
        raise StressFailure(f"{where}: {len(done)} rounds completed ({len(set(done))} distinct)")
    voided = {e["round_id"] for r in rows for e in r[3]["effects"] if e["type"] == "round_voided"}
    missing = set(range(1, max(done) + 1)) - set(done) - voided
    if missing:
        raise StressFailure(f"{where}: round ids neither completed nor voided: {sorted(missing)}")
    twice: Counter[tuple[Any, ...]] = Counter()
    moved: Counter[str] = Counter()
    for _, round_id, _, data in rows:
        for e in data["effects"]:
            if e["type"] == "meter_movement":
                moved[e["level"]] += e["display_cents"]
                if e["kind"] in ("contribution", "reversal"):  # once per round and level
                    twice[(e["kind"], e["round_id"], e["level"])] += 1
            elif e["type"] == "pay":
                twice[("pay", round_id, e["position"], e["level"], e["line"])] += 1
            elif e["type"] == "refund":
                twice[("refund", round_id, e["position"])] += 1
    if twice and twice.most_common(1)[0][1] > 1:
        raise StressFailure(f"{where}: counted twice: {twice.most_common(3)}")
    conn = connect_read_only(db)
    try:
        stored = {
            lvl: json.loads(v) for lvl, v in conn.execute('SELECT level, "values" FROM meters')
        }
        config = json.loads(conn.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
    finally:
        conn.close()
    for level in config["levels"]:
        name = level["name"]
        if stored[name]["display_cents"] != level["initial_cents"] + moved[name]:
            raise StressFailure(f"{where}: meter {name} does not reconcile with its movements")


def _rejected(row: tuple[int, int | None, str, dict[str, Any]]) -> bool:
    return any(e["type"] == "rejected" for e in row[3]["effects"])


def run_chain(
    workdir: Path,
    index: int,
    rounds: int,
    seed: int,
    kind: str,
    recorder: Path,
    rng: random.Random,
    max_cuts: int,
    deadline: float,
) -> ChainResult:
    """One journal played to ``rounds`` through power cuts (``kind`` "power") or SIGKILLs."""
    t0 = time.monotonic()
    db = workdir / f"{kind}{index}.db"
    config, seal_file, verify_key = sealed_table(workdir, f"{kind}{index}")
    watched = [
        db,
        db.with_name(db.name + "-wal"),
        db.with_name(db.name + "-journal"),
        db.with_name(db.name + ".anchor"),
        seal_file,  # overwritten after every entry, synced when idle: a cut may lose its write
    ]
    log = workdir / f"{kind}{index}.pcut.log"
    result = ChainResult()
    cmd = [
        sys.executable,
        "-m",
        "controller.cli",
        "simulate",
        "--config",
        str(config),
        "--headless",
        "--rounds",
        str(rounds),
        "--seed",
        str(seed),
        "--db",
        str(db),
    ]
    while True:
        log.unlink(missing_ok=True)
        cut_here = result.cuts < max_cuts and time.monotonic() < deadline
        env = dict(os.environ)
        if cut_here:
            env.update(
                LD_PRELOAD=str(recorder),
                PCUT_LOG=str(log),
                PCUT_WATCH=",".join(str(p) for p in watched),
                PCUT_KILL_AT=str(rng.randint(1, OPS_SPAN)),
                PCUT_KILL_AFTER=str(rng.randint(0, 1)),
            )
        where = f"{kind} chain {index}, cut {result.cuts + 1}"
        before = entry_hashes(db)
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, timeout=600, check=False)
        result.restarts += 1
        if proc.returncode == 0:
            if result.cuts < max_cuts and time.monotonic() < deadline:
                rounds += max(2, rounds // 4)  # cuts still due: the same journal plays on
                cmd[cmd.index("--rounds") + 1] = str(rounds)
                continue
            break
        if proc.returncode != -9:
            raise StressFailure(
                f"{where}: the restart exited {proc.returncode}: "
                f"{(proc.stdout + proc.stderr).decode(errors='replace')[-1500:]}"
            )
        written = entry_hashes(db)  # as the page cache holds it: every commit that was written
        if written[: len(before)] != before:
            raise StressFailure(f"{where}: entries before the start changed")
        if kind == "power":
            with tempfile.TemporaryDirectory(prefix="stress-synced-") as tmp:
                outcome = power_cut(watched, log, rng, Path(tmp))
                synced = entry_hashes(Path(tmp) / db.name)
            # acknowledged: every entry the anchor called acknowledged, and every entry the
            # synced files already held
            acked = sorted({*synced, *(e for e in written if e[0] <= outcome.anchored)})
            result.modes[outcome.mode] += 1
            result.torn += outcome.torn
        else:
            acked = written
        after = entry_hashes(db)
        lost = [seq for seq, h in acked if (seq, h) not in set(after)]
        result.lost += len(lost)
        if lost:
            raise StressFailure(f"{where}: acknowledged entries lost: {lost[:5]} ...")
        if after != written[: len(after)]:
            raise StressFailure(f"{where}: the journal after the cut is not what was written")
        if after:
            check_verifies(db, where, verify_key)
        result.cuts += 1
    check_finished(db, rounds, f"{kind} chain {index} (finished)", verify_key)
    result.rounds = rounds
    result.seconds = time.monotonic() - t0
    return result
