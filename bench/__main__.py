"""Run the benchmark modules, write their figures and judge them against their targets.

``make bench`` (``python -m bench [MODULE ...]``) writes ``build/bench/results.json`` (git-ignored:
a run never dirties the tree); ``make bench-record`` (``--record``) writes ``bench/results.json``,
the figures the README quotes. Either way the figures already in the file are kept and those
measured now replace theirs, after each module (one that fails later loses nothing). Exits 1
naming every figure measured now that misses its target (`TARGETS`), 0 when none does.
"""

from __future__ import annotations

import importlib
import json
import operator
import pkgutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
RECORDED = HERE / "results.json"
SCRATCH = HERE.parent / "build" / "bench" / "results.json"

#: The README's targets: figure -> (comparison, limit).
TARGETS: dict[str, tuple[str, float]] = {
    "five_card_vs_phevaluator": (">=", 0.3),
    "journal_commit_ratio": ("<=", 2.0),
    "restart_flat_ratio": ("<=", 1.5),
    "lockout_to_output_p99_ms": ("<=", 20.0),
    "parsheet_seconds": ("<=", 60.0),
    "sas_poll_p99_ms": ("<=", 10.0),
    "sas_poll_within_20ms_share": (">=", 1.0),
    "page_update_p99_ms": ("<=", 50.0),
    "service_rss_mib": ("<=", 80.0),
    "link_contribution_p99_ms": ("<=", 100.0),
    "link_tables_sustained": (">=", 1000),
    "floor_tile_update_p99_ms": ("<=", 250.0),
    "cli_start_vs_bare_python": ("<=", 4.0),
    "journal_bytes_per_round": ("<=", 30_000),
    "journal_syncs_per_round": ("<=", 16.0),
}
_COMPARE: dict[str, Callable[[float, float], bool]] = {"<=": operator.le, ">=": operator.ge}


def missed(figures: dict[str, object]) -> list[str]:
    """Each figure of ``figures`` that misses its target, in words."""
    out = []
    for key, (op, limit) in TARGETS.items():
        value = figures.get(key)
        if isinstance(value, int | float) and not _COMPARE[op](value, limit):
            out.append(f"{key} = {value} (target {op} {limit:g})")
    return out


def main(argv: list[str]) -> int:
    record = "--record" in argv
    only = {a for a in argv if a != "--record"}
    out = RECORDED if record else SCRATCH
    out.parent.mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = json.loads(out.read_text()) if out.exists() else {}
    measured: dict[str, object] = {}
    for mod in sorted(m.name for m in pkgutil.iter_modules([str(HERE)])):
        if not mod.startswith("bench_") or (only and mod not in only):
            continue
        start = time.perf_counter()
        figures = importlib.import_module(f"bench.{mod}").run()
        print(f"{mod} ({time.perf_counter() - start:.1f} s)")
        for key, value in figures.items():
            print(f"  {key}: {value}")
        measured.update(figures)
        results.update(figures)
        out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {out}" + ("" if record else " (make bench-record writes bench/results.json)"))
    misses = missed(measured)
    for line in misses:
        print(f"missed: {line}", file=sys.stderr)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
