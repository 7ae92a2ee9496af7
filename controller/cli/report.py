"""``tablectl report rounds|shift|meters|hits --db PATH [--json] [--from T --to T]``.

Responsible for the argument grammar of the reports and their output (text for people, one JSON
document with ``--json``); the reports themselves are built by `controller.journal.reports` from the
journal, read-only. Before any figure is printed the journal is verified as ``journal verify``
does (chain, everything stored, the replay of every entry, and with ``--verify-key`` every seal):
when it fails, every money line is marked UNVERIFIED with the first bad seq, and the exit is 1.
The shift report ends with the journal's head (seq and hash) for the supervisor to sign: the
paper witness. Must never create or write a journal file, and never print a traceback for a
bad file or a bad time: a clear message and a non-zero exit instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from controller.cli import args as types
from controller.journal import reports
from controller.journal.reports import JournalReader, ReportError, parse_time

KINDS = ("rounds", "shift", "meters", "hits")
MAX_LIMIT = 1_000_000


def register(sub: Any) -> None:
    parser = sub.add_parser("report", help="reports from a table's journal (read-only)")
    parser.add_argument("kind", choices=KINDS, help="rounds (game recall), shift, meters, hits")
    parser.add_argument("--db", required=True, help="the journal file (SQLite)")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument(
        "--from", dest="start", help="window start, inclusive: ISO-8601 UTC or ms since epoch"
    )
    parser.add_argument(
        "--to", dest="end", help="window end, exclusive: ISO-8601 UTC or ms since epoch"
    )
    parser.add_argument(
        "--limit",
        type=types.whole(1, MAX_LIMIT),
        default=25,
        help="hits: how many of the last hits (default 25)",
    )
    parser.add_argument(
        "--verify-key",
        metavar="KEY",
        help="the verification key (pgvk1-...): the figures are vouched for by every seal too",
    )
    parser.set_defaults(func=run)


def _verification(path: str, verify_key: str | None) -> dict[str, Any]:
    """``journal verify`` of the journal the report reads (with the replay): ``verified``,
    ``first_bad_seq``, the first problems, whether the seals were checked, and the head."""
    from pathlib import Path

    from controller.cli.journal import make_replay
    from controller.journal.audit import verify
    from controller.journal.seal import parse_verification_key

    key = None if verify_key is None else parse_verification_key(verify_key)
    replay, _ = make_replay(Path(path), None)
    from controller.journal.anchor import default_anchor_path

    # a copy without its anchor still has its chain, seals and replay checked (a note says so)
    anchored = default_anchor_path(path).exists()
    result = verify(path, replay, verify_key=key, use_anchor=anchored)
    return {
        "verified": result.ok,
        "first_bad_seq": result.first_bad_seq,
        "problems": result.problems[:5],
        "notes": result.notes,
        "head": {"seq": result.head_seq, "hash": result.head_hash},
    }


def _mark_unverified(text: list[str], check: dict[str, Any]) -> list[str]:
    """Every line with a dollar figure marked, and a banner naming the first bad seq."""
    where = check["first_bad_seq"]
    tag = f"UNVERIFIED (from seq {where})" if where is not None else "UNVERIFIED"
    problem = check["problems"][0] if check["problems"] else "verification failed"
    banner = [
        f"UNVERIFIED: this journal fails verification"
        f"{'' if where is None else f' from seq {where}'}: {problem}",
        "UNVERIFIED: no figure below can be relied on (run tablectl journal verify)",
    ]
    marked = [f"{line}  [{tag}]" if "$" in line else line for line in text]
    return [*banner, *marked, banner[0]]


def run(args: argparse.Namespace) -> int:
    try:
        start = None if args.start is None else parse_time(args.start, "--from")
        end = None if args.end is None else parse_time(args.end, "--to")
    except ValueError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    if not 1 <= args.limit <= MAX_LIMIT:
        print(f"report: --limit: must be 1 to {MAX_LIMIT}, got {args.limit}", file=sys.stderr)
        return 2
    if start is not None and end is not None and end <= start:
        print("report: --to must be later than --from", file=sys.stderr)
        return 2
    if args.kind == "meters" and (start is not None or end is not None):
        print(
            "report: meters are the current meters; use 'report shift' for a window",
            file=sys.stderr,
        )
        return 2
    try:
        check = _verification(args.db, args.verify_key)
    except Exception as exc:  # a mistyped verification key
        print(f"report {args.kind}: {exc}", file=sys.stderr)
        return 2
    try:
        with JournalReader(args.db) as reader:
            document: Any
            if args.kind == "rounds":
                document = {"rounds": reports.rounds_report(reader, start, end)}
                text = reports.rounds_text(document["rounds"])
            elif args.kind == "shift":
                document = reports.shift_report(reader, start, end)
                text = reports.shift_text(document)
            elif args.kind == "meters":
                document = reports.meters_report(reader)
                text = reports.meters_text(document)
            else:
                document = {"hits": reports.hits_report(reader, start, end, args.limit)}
                text = reports.hits_text(document["hits"])
            if reader.training:  # a simulated training table's journal, on every report
                document["training"] = True
                text = [reports.TRAINING_BANNER, *text]
            if reader.unapproved_bench:  # tablectl run --unapproved-bench, on every report
                document["unapproved_bench"] = True
                text = [reports.BENCH_BANNER, *text]
            document["verification"] = check
            head = check["head"]
            if args.kind == "shift" and head["seq"]:  # the paper witness, for a signature
                text = [
                    *text,
                    f"journal head: seq {head['seq']} hash {head['hash']}",
                    "  signed (supervisor): ____________________  (check later with tablectl "
                    "journal verify --expect-head SEQ:HASH)",
                ]
            if not check["verified"]:
                text = _mark_unverified(text, check)
    except ReportError as exc:
        print(f"report {args.kind}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(document, sort_keys=True))
    else:
        print("\n".join(text))
    problems = document.get("problems") if isinstance(document, dict) else None
    return 1 if problems or not check["verified"] else 0
