"""Run every benchmark module and write bench/results.json (``make bench``)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    only = set(argv)
    here = Path(__file__).parent
    out = here / "results.json"
    results: dict[str, object] = json.loads(out.read_text()) if out.exists() else {}
    for mod in sorted(m.name for m in pkgutil.iter_modules([str(here)])):
        if not mod.startswith("bench_") or (only and mod not in only):
            continue
        start = time.perf_counter()
        figures = importlib.import_module(f"bench.{mod}").run()
        print(f"{mod} ({time.perf_counter() - start:.1f} s)")
        for key, value in figures.items():
            print(f"  {key}: {value}")
        results.update(figures)
        # after each module: one that fails later does not lose the figures already measured
        out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
