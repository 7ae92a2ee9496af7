"""`tablectl rng evidence` (`make rng-evidence`): the RNG's evidence report for a test lab.

Responsible for one run: ``count`` production draws written by `rng_dump.dump` (the round's own
draw) to a dump file, read back and checked (every value follows from its raw bytes by the
documented scaling), the `rng_stats.battery` on the values, dieharder on the production source's
raw stream (`rng_dump.stream` piped into ``dieharder -g 200``, its bytes counted), and a report
(JSON and text) with every p-value, the sizes, the run time and the verdict. Must never use the
simulator's seeded source, never write a journal; the caller refuses on an open live table.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.lab import rng_dump, rng_stats
from controller.service import rng

#: dieharder's tests run by default, each with its default psamples (100 p-values per test),
#: chosen to fit about ten minutes here (docs/rng.md, "Measured"): every Diehard test (0-13,
#: 15-17; not 14, "Sums", which dieharder itself says not to use) and the three NIST STS tests
#: (100-102). The RGB and DAB tests (200-209) do not fit beside them (docs/rng.md, "Measured");
#: a lab runs them itself on the raw stream (`tablectl rng stream | dieharder -g 200 -a`).
DIEHARDER_TESTS: tuple[int, ...] = (*range(0, 14), 15, 16, 17, 100, 101, 102)
#: dieharder's own verdict thresholds (its manual): WEAK below 0.005 or above 0.995, FAILED
#: below 0.000001 or above 0.999999.
DIEHARDER_FAILED = 1e-6

_ROW = re.compile(
    r"^\s*(?P<name>[\w]+)\|\s*(?P<ntup>\d+)\|\s*(?P<tsamples>\d+)\|\s*(?P<psamples>\d+)\|"
    r"\s*(?P<p>[0-9.eE+-]+)\|\s*(?P<verdict>\w+)"
)


@dataclass
class DieharderRow:
    test: str
    ntup: int
    tsamples: int
    psamples: int
    p_value: float
    assessment: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def parse_dieharder(text: str) -> list[DieharderRow]:
    """The result rows of dieharder's standard table output."""
    rows = []
    for line in text.splitlines():
        m = _ROW.match(line)
        if m:
            rows.append(
                DieharderRow(
                    m["name"],
                    int(m["ntup"]),
                    int(m["tsamples"]),
                    int(m["psamples"]),
                    float(m["p"]),
                    m["verdict"],
                )
            )
    return rows


@dataclass
class DieharderRun:
    rows: list[DieharderRow] = field(default_factory=list)
    raw_bytes: int = 0
    seconds: float = 0.0
    command: str = ""


def run_dieharder(tests: Sequence[int], log: Path) -> DieharderRun:
    """Each test in turn on the production source's raw stream (stdin, ``-g 200``, fresh bytes
    for every test: a stream is never rewound); the bytes it took are counted."""
    exe = shutil.which("dieharder")
    if exe is None:
        raise RuntimeError("dieharder is not installed (make system-deps installs it)")
    run = DieharderRun(command=f"dieharder -g 200 -d N (N in {list(tests)})")
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        for test in tests:
            proc = subprocess.Popen(
                [exe, "-g", "200", "-d", str(test)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            assert proc.stdin is not None and proc.stdout is not None
            fed = [0]

            def feed(pipe: Any = proc.stdin, counter: list[int] = fed) -> None:
                try:
                    while True:
                        counter[0] += rng_dump.stream(pipe, rng_dump.STREAM_BLOCK * 16)
                except (BrokenPipeError, ValueError, OSError):
                    pass

            feeder = threading.Thread(target=feed, daemon=True)
            feeder.start()
            text = proc.stdout.read().decode("utf-8", "replace")
            proc.wait()
            with contextlib.suppress(OSError):
                proc.stdin.close()
            feeder.join()
            out.write(text)
            out.flush()
            run.raw_bytes += fed[0]
            rows = parse_dieharder(text)
            if proc.returncode != 0 or not rows:
                raise RuntimeError(f"dieharder -d {test} failed (exit {proc.returncode}): {log}")
            run.rows += rows
    run.seconds = time.monotonic() - start
    return run


def _scaled_again(raw: bytes) -> bytes:
    """The values the documented rule gives for ``raw``, read independently of `rng.scale`:
    drop every byte 252..255, then b % 7 + 1."""
    kept = raw.translate(None, bytes(range(rng.ACCEPT_BELOW, 256)))
    return kept.translate(bytes((b % 7) + 1 for b in range(256)))


def evidence(
    out_dir: Path,
    count: int,
    dieharder_tests: Sequence[int],
    work: Path,
) -> dict[str, Any]:
    """One evidence run; writes ``rng-evidence.json`` and ``rng-evidence.txt`` to ``out_dir``
    (the dump and dieharder's log stay in ``work``) and returns the JSON document."""
    work.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    dump_path = work / "rng-dump.txt"
    t0 = time.monotonic()
    with dump_path.open("w", encoding="ascii") as f:
        summary = rng_dump.dump(count, f)
    dump_seconds = time.monotonic() - t0
    values, raw = rng_dump.read_dump(dump_path)
    if len(values) != count or _scaled_again(raw) != values:
        raise RuntimeError(f"{dump_path}: the values do not follow from the raw bytes")
    t0 = time.monotonic()
    results = rng_stats.battery(values)
    stats_seconds = time.monotonic() - t0
    threshold = rng_stats.family_alpha(len(results))
    dh = run_dieharder(dieharder_tests, work / "dieharder.log") if dieharder_tests else None
    dh_failed = [] if dh is None else [r for r in dh.rows if r.assessment == "FAILED"]
    stats_failed = [r for r in results if r.p_value < threshold]
    doc: dict[str, Any] = {
        "date": date,
        "host": platform.node(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "source": "os.urandom (getrandom(2)) via controller.service.rng.read_csprng",
        "scaling": f"byte b < {rng.ACCEPT_BELOW}: b % 7 + 1; 252..255 rejected (docs/rng.md)",
        "scaled": {
            "count": count,
            "raw_bytes": summary.raw_bytes,
            "rejected_bytes": summary.rejected,
            "counts": list(summary.counts),
            "dump_sha256": summary.sha256,
            "dump_seconds": round(dump_seconds, 1),
            "tests_seconds": round(stats_seconds, 1),
            "alpha_each": rng_stats.ALPHA,
            "alpha_family": threshold,
            "tests": [r.to_json() | {"passed_99": r.passed()} for r in results],
            "passed": not stats_failed,
        },
        "dieharder": None
        if dh is None
        else {
            "command": dh.command,
            "version": _dieharder_version(),
            "raw_bytes": dh.raw_bytes,
            "seconds": round(dh.seconds, 1),
            "tests": [r.to_json() for r in dh.rows],
            "weak": sum(r.assessment == "WEAK" for r in dh.rows),
            "failed": len(dh_failed),
            "passed": not dh_failed,
        },
        "seconds": round(time.monotonic() - started, 1),
    }
    doc["passed"] = not stats_failed and not dh_failed
    (out_dir / "rng-evidence.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out_dir / "rng-evidence.txt").write_text("\n".join(report_text(doc)) + "\n")
    return doc


def _dieharder_version() -> str:
    try:
        head = subprocess.run(
            ["dieharder", "-l"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    m = re.search(r"dieharder version (\S+)", head)
    return m[1] if m else "?"


def report_text(doc: dict[str, Any]) -> list[str]:
    """The report for people: what ran, sizes, every p-value and the verdict."""
    s = doc["scaled"]
    lines = [
        "RNG evidence: the starting-position RNG of the pai gow table controller",
        f"date {doc['date']}  host {doc['host']} ({doc['machine']}, Python {doc['python']})",
        f"source: {doc['source']}",
        f"scaling: {doc['scaling']}",
        "",
        f"Scaled values: {s['count']:,} draws from {s['raw_bytes']:,} raw bytes "
        f"({s['rejected_bytes']:,} rejected), counts of 1..7 {s['counts']}",
        f"dump sha256 {s['dump_sha256']} ({s['dump_seconds']} s; tests {s['tests_seconds']} s)",
        f"each test at the 99% level (p >= {s['alpha_each']}); the family passes when every "
        f"p >= {s['alpha_family']:.6f} (Bonferroni)",
    ]
    for t in s["tests"]:
        df = f"df {t['df']}" if t["df"] is not None else "z"
        mark = "pass" if t["passed_99"] else "below 0.01"
        lines.append(
            f"  {t['name']:<36} {df:>6}  stat {t['statistic']:>12.4f}  p {t['p_value']:.6f}  "
            f"{mark}  ({t['detail']})"
        )
    lines.append(f"scaled values: {'PASSED' if s['passed'] else 'FAILED'}")
    dh = doc["dieharder"]
    if dh is not None:
        lines += [
            "",
            f"dieharder {dh['version']}: {dh['command']}",
            f"raw stream: {dh['raw_bytes']:,} bytes of the production source in {dh['seconds']} s",
            f"{'test':<22}{'ntup':>5}{'tsamples':>10}{'psamples':>9}  {'p-value':<12}assessment",
        ]
        for r in dh["tests"]:
            lines.append(
                f"{r['test']:<22}{r['ntup']:>5}{r['tsamples']:>10}{r['psamples']:>9}  "
                f"{r['p_value']:<12.8f}{r['assessment']}"
            )
        lines.append(
            f"dieharder: {len(dh['tests'])} results, {dh['weak']} WEAK, {dh['failed']} FAILED: "
            f"{'PASSED' if dh['passed'] else 'FAILED'}"
        )
    lines += ["", f"run time {doc['seconds']} s; verdict {'PASSED' if doc['passed'] else 'FAILED'}"]
    return lines


def default_work_dir() -> Path:
    return Path(os.environ.get("TMPDIR", "/tmp")) / f"rng-evidence-{os.getpid()}"
