"""The long run of `make stress` (issue 12): N headless rounds on one simulated table in this
process, faults injected at random rounds, with the resident memory, the Python heap (traced
allocations) and the thread count sampled every 1,000 rounds; at the end the journal verifies
and every finished-journal invariant holds (tests.stress.powercut.check_finished).

Run as ``python -m tests.stress.longrun ROUNDS SEED DB [STEP]``: prints one JSON line with the
samples (the stress runner starts it beside the power cuts, on the other core). The heap is
sampled with the progressive claims cache emptied (bounded: it would hide a leak while it fills).
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


def run(rounds: int, seed: int, db: Path, step: int = 1000) -> dict[str, Any]:
    from controller.sim.simulate import _Stop, build_service, load_sim_config, play
    from fsm.rules.progressive import _claims

    spec = fault_spec(rounds, seed)
    config = load_sim_config(None)
    service = build_service(config, db, seed, spec)
    stop = _Stop()
    samples: list[dict[str, Any]] = []
    tracemalloc.start(1)
    t0 = time.monotonic()
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
            cached = _claims.cache_info().currsize
            _claims.cache_clear()
            gc.collect()
            heap, _ = tracemalloc.get_traced_memory()
            samples.append(
                {
                    "rounds": service.owner.public.rounds_completed,
                    "rss_kib": rss_kib(),
                    "heap_kib": heap // 1024,
                    "threads": threading.active_count(),
                    "claims_cached": cached,
                    "seconds": round(time.monotonic() - t0, 1),
                }
            )
            print(json.dumps({"sample": samples[-1]}), file=sys.stderr, flush=True)
        fired = [str(f) for f in service.plan.fired]
    finally:
        service.close()
        tracemalloc.stop()
    return {"rounds": rounds, "faults": len(fired), "spec_items": spec.count(",") + 1,
            "samples": samples}  # fmt: skip


def growth(samples: list[dict[str, Any]], key: str) -> float:
    """Growth of ``key`` per 1,000 rounds from the second sample on (the first holds start-up:
    imports, caches, the journal's pages)."""
    if len(samples) < 3:
        return 0.0
    a, b = samples[1], samples[-1]
    return (b[key] - a[key]) * 1000 / max(1, b["rounds"] - a["rounds"])


def main(argv: list[str]) -> int:
    rounds, seed, db = int(argv[0]), int(argv[1]), Path(argv[2])
    out = run(rounds, seed, db, int(argv[3]) if len(argv) > 3 else 1000)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
