"""`make conformance`: each "implemented" row of docs/conformance.md killed by its own mutant.

    python -m tests.conformance [--rows SUB ...] [-j N] [--keep]

For every row the matrix marks implemented, and every reading to confirm that names a mutant (or
those named by ``--rows``: a subdivision such as
``(a)(4)``, or a label such as ``"NJ 11.8C (b)6"``), the row's mutant (tests/conformance/mutants.py)
is applied to a temporary copy of this checkout and the row's cited tests run there in a fresh
pytest process (``-x``): the mutant is killed when a test fails (pytest's status 1). First the cited
tests run once unmutated and must pass (a test failing anyway proves nothing): a row citing a test
that fails unmutated is BROKEN (the rule does not hold as the code stands) and its mutant is not
run. Printed, one line a row: killed / SURVIVED / NOT APPLIED (the patch's text is not found
exactly once: the code drifted and the mutant must be rewritten) / BROKEN / ERROR (the tests could
not run); then the rows that did not end killed.
Exit status 0 only when every row's mutant was killed. Never writes to the checkout itself.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.conformance.matrix import ROOT, Row, mutated
from tests.conformance.mutants import MUTANTS, Mutant, apply

PYTEST = ["-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q", "--no-header"]


@dataclass
class Result:
    row: Row
    status: str  # killed, SURVIVED, NOT APPLIED, BROKEN, ERROR
    detail: str
    seconds: float


def _copy_tree(dest: Path) -> None:
    """The checkout's files as they are on disk (tracked and untracked-not-ignored), no caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if not src.is_file():
            continue  # deleted in the work tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def _pytest(tree: Path, tests: list[str], stop_first: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    args = [sys.executable, *PYTEST, *(["-x"] if stop_first else []), *tests]
    return subprocess.run(
        args, cwd=tree, env=env, capture_output=True, text=True, timeout=1800, check=False
    )


def _failed(out: str) -> list[str]:
    return [ln.split(" ")[1] for ln in out.splitlines() if ln.startswith(("FAILED ", "ERROR "))]


def _tail(out: str, n: int = 12) -> str:
    return "\n".join("    " + ln for ln in out.strip().splitlines()[-n:])


def _run_row(row: Row, tree: Path) -> Result:
    t0 = time.monotonic()
    mutant: Mutant | None = MUTANTS.get(row.mutant or "")
    if mutant is None:
        return Result(row, "ERROR", f"names no mutant of mutants.py ({row.mutant!r})", 0.0)
    if not row.tests:
        return Result(row, "ERROR", "cites no test", 0.0)
    try:
        restore = apply(mutant, tree)
    except ValueError as e:
        return Result(row, "NOT APPLIED", str(e), 0.0)
    try:
        proc = _pytest(tree, row.tests, stop_first=True)
    except subprocess.TimeoutExpired:
        return Result(row, "ERROR", "the cited tests ran past 30 minutes", 1800.0)
    finally:
        restore()
    secs = time.monotonic() - t0
    if proc.returncode == 1:
        return Result(row, "killed", "by " + ", ".join(_failed(proc.stdout)[:1]), secs)
    if proc.returncode == 0:
        return Result(row, "SURVIVED", "every cited test passed with the rule broken", secs)
    return Result(row, "ERROR", f"pytest status {proc.returncode}\n{_tail(proc.stdout)}", secs)


def _print(res: Result) -> None:
    print(
        f"{res.status:<11} {res.row.label:<22} {res.row.mutant or '-':<44} "
        f"{res.seconds:5.1f} s  {res.detail}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.conformance", description=__doc__)
    ap.add_argument("--rows", nargs="*", help="only these subdivisions, e.g. '(a)(4)' '(b)6'")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="rows run at once (one copy each)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies")
    args = ap.parse_args(argv)

    selected = mutated()
    if args.rows:
        selected = [r for r in selected if r.subdivision in args.rows or r.label in args.rows]
    if not selected:
        print("conformance: no row selected")
        return 1

    t_start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="paigow-conformance-"))
    jobs = max(1, args.jobs)
    trees = [work / f"tree{i}" for i in range(jobs)]
    try:
        for t in trees:
            _copy_tree(t)
        everything = list(dict.fromkeys(n for r in selected for n in r.tests))
        base = _pytest(trees[0], everything, stop_first=False)
        failing = {f.split("[")[0] for f in _failed(base.stdout)}
        if base.returncode not in (0, 1) or (base.returncode == 1 and not failing):
            print(f"conformance: the cited tests could not run (status {base.returncode}):")
            print(_tail(base.stdout))
            return 1
        results: list[Result] = []
        runnable: list[Row] = []
        for row in selected:
            broken = [t for t in row.tests if t in failing]
            if broken:
                res = Result(row, "BROKEN", "fails unmutated: " + ", ".join(broken), 0.0)
                results.append(res)
                _print(res)
            else:
                runnable.append(row)
        print(
            f"conformance: {len(everything) - len(failing)} of {len(everything)} cited tests pass "
            f"unmutated; {len(runnable)} of {len(selected)} rows to run"
        )

        free = list(trees)
        lock = threading.Lock()

        def one(row: Row) -> Result:
            with lock:
                tree = free.pop()
            try:
                return _run_row(row, tree)
            finally:
                with lock:
                    free.append(tree)

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for res in pool.map(one, runnable):
                results.append(res)
                _print(res)
    finally:
        if args.keep:
            print(f"conformance: copies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    bad = [r for r in results if r.status != "killed"]
    elapsed = time.monotonic() - t_start
    print(
        f"conformance: {len(results) - len(bad)} of {len(results)} mutants killed "
        f"in {elapsed:.0f} s"
    )
    for status in ("SURVIVED", "NOT APPLIED", "BROKEN", "ERROR"):
        rows = [r for r in bad if r.status == status]
        if rows:
            print(f"{status}: " + ", ".join(f"{r.row.label} ({r.row.mutant})" for r in rows))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
