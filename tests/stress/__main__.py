"""`make stress`: the controller tried adversarially in bounded time (issue 12).

    python -m tests.stress [--scale S] [--seed N] [--keep DIR]

Runs, on real parts (real ``tablectl simulate`` processes, SQLite files, ptys, MockFactory pins):
power cuts that lose unsynced writes and SIGKILLs at seeded journal operations
(`tests.stress.powercut`), storage faults (`tests.stress.storage`, root: it mounts tmpfs), a
million bad frames on the shoe, shuffler and SAS links (`tests.stress.fuzz`), every device fault
and hostile buttons (`tests.stress.devices`), and a long run of 10,000 rounds with random faults
whose memory and thread counts are sampled (`tests.stress.longrun`). ``--scale`` (or
``STRESS_SCALE``) multiplies every count (``make stress-short``: 0.1, for CI). The last line:

    stress: K kills survived, P power cuts survived, F frames fuzzed, D faults injected,
            R rounds, L events lost      (one line)

and the exit status is 1 when any check failed (the failure is printed above that line; L, the
acknowledged journal entries missing after a cut, must be 0).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from tests.stress import devices, storage
from tests.stress.disk import build_recorder
from tests.stress.longrun import growth, problems
from tests.stress.powercut import ROOT, ChainResult, StressFailure, run_chain

#: The full run's counts (scale 1).
POWER_CUTS = 210
KILLS = 210
FRAMES = 1_000_000
LONG_ROUNDS = 10_000
CHAIN_ROUNDS = 24
#: The chains run side by side (each mostly waits on its simulator's ptys).
WORKERS = 3


def _say(text: str) -> None:
    print(text, flush=True)


def _chains(
    workdir: Path, kind: str, cuts: int, seed: int, recorder: Path, deadline: float
) -> list[ChainResult]:
    """Journals played to CHAIN_ROUNDS through ``cuts`` cuts in all."""
    per_chain = 12
    n = max(1, -(-cuts // per_chain))
    rng = random.Random(seed)
    seeds = [rng.randrange(1, 10**6) for _ in range(n)]
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        futures = [
            pool.submit(
                run_chain,
                workdir,
                i,
                CHAIN_ROUNDS,
                seeds[i],
                kind,
                recorder,
                random.Random(seeds[i]),
                min(per_chain, cuts - i * per_chain),
                deadline,
            )
            for i in range(n)
        ]
        return [f.result() for f in futures]


def _tail(f: Any) -> str:
    f.seek(0)
    return str(f.read()[-2000:].decode(errors="replace"))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.stress")
    ap.add_argument("--scale", type=float, default=float(os.environ.get("STRESS_SCALE", "1")))
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--keep", metavar="DIR", help="work here and keep the files")
    ap.add_argument(
        "--no-long-run",
        action="store_true",
        help="skip the long run (run `python -m tests.stress.longrun` on its own)",
    )
    ap.add_argument(
        "--time-bound",
        type=float,
        default=15 * 60,
        metavar="SECONDS",
        help="draw no cut after this many seconds (default 900; fewer cuts than due fail)",
    )
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        _say("stress: needs root (it mounts tmpfs for the storage faults)")
        return 2
    scale = args.scale
    t0 = time.monotonic()
    # on tmpfs where there is one: the disk after a cut is the model's (tests.stress.disk), and
    # fsync there costs nothing, so the run is bounded by the controller, not the disk
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="stress-", dir=shm))
    workdir.mkdir(parents=True, exist_ok=True)
    totals = {"kills": 0, "cuts": 0, "frames": 0, "faults": 0, "rounds": 0, "lost": 0}
    failures: list[str] = []
    figures: dict[str, Any] = {"scale": scale}

    def phase(name: str, fn: Any) -> Any:
        start = time.monotonic()
        try:
            out = fn()
        except (StressFailure, AssertionError, subprocess.SubprocessError, OSError) as exc:
            failures.append(f"{name}: {exc}")
            _say(f"FAIL {name}: {exc}")
            traceback.print_exc()
            return None
        _say(f"{name}: done in {time.monotonic() - start:.0f} s")
        return out

    recorder = build_recorder(workdir)
    long_rounds = max(200, int(LONG_ROUNDS * scale))
    long_db = workdir / "long" / "j.db"
    long_db.parent.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "tests.stress.longrun",
        str(long_rounds),
        str(args.seed),
        str(long_db),
        str(max(200, long_rounds // 10)),  # a sample every 1,000 rounds in the full run
    ]
    # stderr to files, never a pipe nobody reads while they run (a full pipe would stall them)
    long_err = open(workdir / "long.err", "w+b")  # noqa: SIM115
    long_proc = None
    if not args.no_long_run:
        long_proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=long_err
        )
    frames = max(1000, int(FRAMES * scale))
    fuzz_cmd = [sys.executable, "-m", "tests.stress.fuzz", str(frames), str(args.seed)]
    fuzz_err = open(workdir / "fuzz.err", "w+b")  # noqa: SIM115
    fuzz_proc = subprocess.Popen(
        fuzz_cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=fuzz_err
    )
    # no cut is drawn after this (a shortfall fails the run); the chains then finish their rounds
    deadline = t0 + args.time_bound

    def cuts(kind: str, count: int) -> list[ChainResult]:
        results = _chains(workdir, kind, count, args.seed + len(kind), recorder, deadline)
        done = sum(r.cuts for r in results)
        totals["kills" if kind == "kill" else "cuts"] += done
        totals["lost"] += sum(r.lost for r in results)
        totals["rounds"] += sum(r.rounds for r in results)
        if kind == "power":
            modes: dict[str, int] = {}
            for r in results:
                for m, c in r.modes.items():
                    modes[m] = modes.get(m, 0) + c
            figures["power_cut_modes"] = modes
            figures["torn_sectors"] = sum(r.torn for r in results)
        figures[f"{kind}_restarts"] = sum(r.restarts for r in results)
        _say(f"{kind}: {done} cuts survived in {len(results)} journals, {totals['lost']} lost")
        if done < count:
            raise StressFailure(f"only {done} of {count} {kind} cuts within the time bound")
        return results

    phase("power cuts", lambda: cuts("power", max(2, int(POWER_CUTS * scale))))
    phase("SIGKILLs", lambda: cuts("kill", max(2, int(KILLS * scale))))

    def fuzz() -> None:
        out, _ = fuzz_proc.communicate(timeout=1200)
        if fuzz_proc.returncode != 0:
            raise StressFailure(_tail(fuzz_err))
        data = json.loads(out.decode().strip().splitlines()[-1])
        totals["frames"] += data["frames"]
        figures["frames_by_link"] = data["by_link"]

    phase("bad frames", fuzz)

    def storage_faults() -> None:
        r = storage.run(workdir)
        totals["faults"] += r.faults
        figures["storage_cases"] = r.cases

    phase("storage faults", storage_faults)

    def device_faults() -> None:
        r = devices.device_faults(workdir)
        totals["faults"] += r.faults
        totals["rounds"] += r.rounds
        figures["faults_cleared_before_the_device_recovered"] = r.cleared_before_recovery
        drops = devices.floor_link_drop(workdir)
        totals["faults"] += drops
        figures["floor_link_drops"] = drops
        b = devices.hostile_buttons(workdir, max(10, int(60 * scale)), args.seed)
        totals["rounds"] += b.rounds
        figures["buttons"] = {
            "presses": b.presses,
            "refused": dict(b.rejected),
            "states": sorted(b.states),
        }

    phase("device faults and buttons", device_faults)

    def long_run() -> None:
        assert long_proc is not None
        out, _ = long_proc.communicate(timeout=3600)
        if long_proc.returncode != 0:
            raise StressFailure(_tail(long_err))
        data = json.loads(out.decode().strip().splitlines()[-1])
        from tests.stress.powercut import check_finished

        check_finished(long_db, long_rounds, "long run")
        totals["rounds"] += long_rounds
        totals["faults"] += data["faults"]
        samples = data["samples"]
        figures["long_run"] = {
            "samples": samples,
            "rss_kib_per_1000_rounds": round(growth(samples, "rss_kib"), 1),
            "heap_kib_per_1000_rounds": round(growth(samples, "heap_kib"), 1),
            "threads_per_1000_rounds": round(growth(samples, "threads"), 2),
        }
        grows = problems(samples)
        if grows:
            raise StressFailure("; ".join(grows))

    if long_proc is not None:
        phase("long run", long_run)
    for proc in (long_proc, fuzz_proc):
        if proc is not None and proc.poll() is None:
            proc.kill()
    figures["seconds"] = round(time.monotonic() - t0)
    (workdir / "figures.json").write_text(json.dumps(figures, indent=1))
    _say(json.dumps(figures))
    if not args.keep and not failures:
        shutil.rmtree(workdir, ignore_errors=True)
    if totals["lost"]:
        failures.append(f"{totals['lost']} acknowledged entries lost")
    _say(
        f"stress: {totals['kills']} kills survived, {totals['cuts']} power cuts survived, "
        f"{totals['frames']} frames fuzzed, {totals['faults']} faults injected, "
        f"{totals['rounds']} rounds, {totals['lost']} events lost"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
