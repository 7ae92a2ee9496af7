"""``tablectl rng dump|stream|evidence``: the production RNG's output for a test lab (docs/rng.md).

Responsible only for arguments, the refusal on an open live table (`controller.lab.rng_dump`:
the table's journal read read-only) and printing; the draws, the raw stream and the evidence run
live in `controller.lab`. Must never use the simulator's seeded source or write a journal.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from controller.cli import args as types

EXIT_BAD_INPUT = 2
EXIT_REFUSED = 3
#: At most this many draws in one dump (about 2 GB of text).
MAX_COUNT = 10**9


def _table_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="the table's configuration, whose journal says whether the table is open "
        "(default /etc/paigow/table.toml when it exists)",
    )
    parser.add_argument("--db", metavar="PATH", help="the table's journal itself")


def register(sub: Any) -> None:
    parser = sub.add_parser("rng", help="the production RNG's output for a test lab's batteries")
    actions = parser.add_subparsers(dest="rng_command", required=True)
    dump = actions.add_parser(
        "dump", help="N draws exactly as the round draws them: each value 1-7 and its raw bytes"
    )
    dump.add_argument("--count", type=types.whole(1, MAX_COUNT), required=True, metavar="N")
    dump.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="the dump (text, one draw a line); '-': standard output (the summary then goes to "
        "standard error)",
    )
    dump.add_argument("--raw", metavar="FILE", help="also every raw byte consumed, as binary")
    _table_options(dump)
    dump.set_defaults(func=run_dump)
    stream = actions.add_parser(
        "stream", help="the production source's raw bytes on stdout (dieharder -g 200, NIST STS)"
    )
    stream.add_argument(
        "--bytes",
        type=types.whole(0, types.MAX_WHOLE),
        default=0,
        metavar="N",
        help="how many bytes (default 0: until the reader closes the pipe)",
    )
    _table_options(stream)
    stream.set_defaults(func=run_stream)
    evidence = actions.add_parser(
        "evidence", help="dump, statistical tests and dieharder; a report (text and JSON)"
    )
    evidence.add_argument(
        "--count", type=types.whole(1000, MAX_COUNT), default=10_000_000, metavar="N"
    )
    evidence.add_argument(
        "--out", required=True, metavar="DIR", help="where rng-evidence.json and .txt go"
    )
    evidence.add_argument("--work", metavar="DIR", help="the dump and dieharder's log")
    evidence.add_argument(
        "--dieharder",
        metavar="TESTS",
        help="comma-separated dieharder test numbers (default: docs/rng.md's set; 'none')",
    )
    _table_options(evidence)
    evidence.set_defaults(func=run_evidence)


def _refused(args: argparse.Namespace, command: str) -> bool:
    from controller.lab.rng_dump import live_table_refusal

    config = Path(args.config) if args.config else None
    db = Path(args.db) if args.db else None
    refusal, checked = live_table_refusal(config, db)
    if refusal is not None:
        print(f"rng {command}: refused: {refusal}", file=sys.stderr)
        return True
    print(f"rng {command}: {checked}", file=sys.stderr)
    return False


def run_dump(args: argparse.Namespace) -> int:
    from controller.lab.rng_dump import dump

    if _refused(args, "dump"):
        return EXIT_REFUSED
    to_stdout = args.out == "-"
    try:
        with contextlib.ExitStack() as files:
            out = (
                sys.stdout
                if to_stdout
                else files.enter_context(Path(args.out).open("w", encoding="ascii"))
            )
            raw = files.enter_context(Path(args.raw).open("wb")) if args.raw else None
            summary = dump(args.count, out, raw)
            out.flush()
    except OSError as exc:
        print(f"rng dump: cannot write: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(
        json.dumps(
            {
                "out": args.out,
                "raw": args.raw,
                "count": summary.count,
                "raw_bytes": summary.raw_bytes,
                "rejected_bytes": summary.rejected,
                "counts": list(summary.counts),
                "sha256": summary.sha256,
                "started": summary.started,
                "finished": summary.finished,
            }
        ),
        file=sys.stderr if to_stdout else sys.stdout,
    )
    return 0


def run_stream(args: argparse.Namespace) -> int:
    from controller.lab.rng_dump import stream

    if _refused(args, "stream"):
        return EXIT_REFUSED
    stream(sys.stdout.buffer, args.bytes or None)
    return 0


def run_evidence(args: argparse.Namespace) -> int:
    from controller.lab import rng_evidence

    if _refused(args, "evidence"):
        return EXIT_REFUSED
    tests: tuple[int, ...] = rng_evidence.DIEHARDER_TESTS
    if args.dieharder:
        spec = args.dieharder.strip()
        try:
            tests = () if spec == "none" else tuple(int(t) for t in spec.split(","))
        except ValueError:
            print(f"rng evidence: --dieharder: not test numbers: {spec[:40]!r}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if any(not 0 <= t <= 999 for t in tests):
            print("rng evidence: --dieharder: test numbers are 0..999", file=sys.stderr)
            return EXIT_BAD_INPUT
    work = Path(args.work) if args.work else rng_evidence.default_work_dir()
    try:
        doc = rng_evidence.evidence(Path(args.out), args.count, tests, work)
    except (OSError, RuntimeError, ValueError) as exc:
        print(f"rng evidence: {exc}", file=sys.stderr)
        return 1
    print("\n".join(rng_evidence.report_text(doc)))
    return 0 if doc["passed"] else 1
