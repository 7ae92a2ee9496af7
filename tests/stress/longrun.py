"""The long run of `make stress` (issue 12): N headless rounds on one simulated table in this
process, faults injected at random rounds, with the resident memory, the Python heap and the
thread count sampled every 1,000 rounds; at the end the journal verifies and every
finished-journal invariant holds (tests.stress.powercut.check_finished).

Run as ``python -m tests.stress.longrun ROUNDS SEED DB [STEP] [--tracemalloc]``: prints one JSON
line with the samples (the stress runner starts it beside the power cuts, on the other core).

The heap figure is `heap_bytes`: the bytes of every Python object reachable from the collector's
objects and the other threads' frames, walked at each sample only. ``tracemalloc`` traced every
allocation of every thread for the whole run and made a round 2.5 times slower (the long run was
the bottleneck of ``make stress``); ``--tracemalloc`` still adds its figure (``traced_kib``) for a
diagnosis. Each sample is taken with the table idle (`_quiet`: the round's follow-up answered)
and with the progressive claims cache emptied (bounded: it would hide a leak while it fills).
Must never change the table's timing: it only drives `controller.sim.simulate.play`.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from types import FrameType
from typing import Any

#: What the random faults are drawn from (each cleared by the scripted supervisor by the rules).
FAULT_KINDS = (
    "shoe-jam",
    "shoe-misdeal",
    "shoe-silent",
    "shoe-unplug",
    "shuffler-silent",
    "shuffler-unplug",
    "garbage",
)


def fault_spec(rounds: int, seed: int, every: int = 100) -> str:
    """One random fault about every ``every`` rounds (a wrong deck count among them)."""
    rng = random.Random(seed)
    items = []
    for r in range(5, rounds, every):
        at = r + rng.randrange(every // 2)
        kind = rng.choice((*FAULT_KINDS, "shuffler-count"))
        items.append(
            f"shuffler-count={rng.choice([51, 52, 54])}@{at}"
            if kind == "shuffler-count"
            else f"{kind}@{at}"
        )
    return ",".join(items)


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def heap_bytes() -> int:
    """The bytes (``sys.getsizeof``) of every distinct Python object reachable from the
    collector's objects and from the frames of every other thread (a running function's locals
    are in no container). Untracked objects (str, bytes, int, atomic tuples and dicts) count
    through whatever holds them. The caller's own thread is left out: its frames are the
    sampler's. About half a second per sample, nothing between samples."""
    gc.collect()
    me = threading.get_ident()
    stack: list[Any] = gc.get_objects()
    for ident, top in sys._current_frames().items():
        frame: FrameType | None = top
        while frame is not None and ident != me:
            stack.append(frame.f_locals)  # a running frame's referents leave its locals out
            frame = frame.f_back
    seen: set[int] = {id(stack)}
    total = 0
    while stack:
        obj = stack.pop()
        key = id(obj)
        if key in seen:
            continue
        seen.add(key)
        total += sys.getsizeof(obj, 0)
        stack.extend(gc.get_referents(obj))
    return total


def _quiet(service: Any, seconds: float = 5.0) -> None:
    """Wait until the table is idle before a sample: every posted event processed and the
    request of the round's end (the shuffle) answered, so that no answer in flight is counted."""
    from controller.sim.actors import WAITING_STATES

    owner = service.owner
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        owner.wait_idle(timeout=max(0.0, end - time.monotonic()))
        snap = owner.public
        if snap.state not in WAITING_STATES:
            break
        owner.wait_published(snap.seq, timeout=0.1)
    owner.wait_idle(timeout=max(0.0, end - time.monotonic()))


def run(
    rounds: int, seed: int, db: Path, step: int = 1000, *, trace: bool = False
) -> dict[str, Any]:
    from controller.sim.simulate import _Stop, build_service, load_sim_config, play
    from fsm.rules.progressive import line_claims

    spec = fault_spec(rounds, seed)
    config = load_sim_config(None)
    service = build_service(config, db, seed, spec)
    stop = _Stop()
    samples: list[dict[str, Any]] = []
    if trace:
        tracemalloc.start(1)
    t0 = time.monotonic()
    from fsm.rules.ranking import fill_rank_tables

    fill_rank_tables(config.game.ranking)  # as `tablectl run` does before READY: a bounded cache
    try:
        service.start()
        target = 0
        while target < rounds:
            target = min(rounds, target + step)
            code = play(service, target, stop, None)
            if code != 0:
                raise SystemExit(f"long run: play exited {code} before round {target}")
            # the progressive claims cache is bounded (lru_cache maxsize 4096) and fills over
            # the first few thousand rounds: emptied before each sample, so that the heap figure
            # shows what grows without bound
            _quiet(service)
            cached = line_claims.cache_info().currsize
            line_claims.cache_clear()
            blocks = sys.getallocatedblocks()  # before the walk: its own blocks are freed
            sample = {
                "rounds": service.owner.public.rounds_completed,
                "rss_kib": rss_kib(),
                "heap_kib": heap_bytes() // 1024,
                "blocks": blocks,
                "threads": threading.active_count(),
                "claims_cached": cached,
                "seconds": round(time.monotonic() - t0, 1),
            }
            if trace:
                sample["traced_kib"] = tracemalloc.get_traced_memory()[0] // 1024
            samples.append(sample)
            print(json.dumps({"sample": samples[-1]}), file=sys.stderr, flush=True)
        fired = [str(f) for f in service.plan.fired]
    finally:
        service.close()
        if trace:
            tracemalloc.stop()
    return {"rounds": rounds, "faults": len(fired), "spec_items": spec.count(",") + 1,
            "samples": samples}  # fmt: skip


def growth(samples: list[dict[str, Any]], key: str) -> float:
    """Growth of ``key`` per 1,000 rounds from the second sample on (the first holds start-up:
    imports, caches, the journal's pages)."""
    if len(samples) < 3:
        return 0.0
    a, b = samples[1], samples[-1]
    return float((b[key] - a[key]) * 1000 / max(1, b["rounds"] - a["rounds"]))


#: The long run fails when the heap grows more than this per 1,000 rounds (KiB), or the threads.
MAX_HEAP_KIB_PER_1000 = 256


def problems(samples: list[dict[str, Any]]) -> list[str]:
    """What the samples show growing without bound (empty: flat)."""
    found = []
    if growth(samples, "threads") > 0:
        found.append(f"the thread count grows: {samples}")
    heap = round(growth(samples, "heap_kib"), 1)
    if heap > MAX_HEAP_KIB_PER_1000:
        found.append(f"the Python heap grows {heap} KiB per 1,000 rounds")
    return found


def main(argv: list[str]) -> int:
    trace = "--tracemalloc" in argv
    argv = [a for a in argv if a != "--tracemalloc"]
    rounds, seed, db = int(argv[0]), int(argv[1]), Path(argv[2])
    out = run(rounds, seed, db, int(argv[3]) if len(argv) > 3 else 1000, trace=trace)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
