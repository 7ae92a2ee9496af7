"""``tablectl central ingest --nats URL --pg DSN --keys DIR [--once | --until-idle S]`` (every
table's journal stream into PostgreSQL) and ``tablectl central report shift|meters|hits --pg
DSN [--json]`` (the floor's view, table by table and in total); ``tablectl central serve`` is in
central_serve.py.

Parsing and printing only: the work is `controller.link.central`. Must never print a traceback
for an unreachable server or a bad argument.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from controller.cli.args import seconds, whole
from controller.journal.reports import ReportError, dollars, parse_time


def register(sub: Any) -> None:
    parser = sub.add_parser("central", help="floor-wide reporting from every table's stream")
    actions = parser.add_subparsers(dest="central_command", required=True)
    ing = actions.add_parser("ingest", help="consume every table's journal stream into PostgreSQL")
    ing.add_argument("--nats", required=True, action="append", help="a NATS server URL (repeat)")
    ing.add_argument("--pg", required=True, help="the PostgreSQL connection string (libpq DSN)")
    ing.add_argument(
        "--keys", required=True, help="the tables' link keys (a keyring directory, docs/link.md)"
    )
    stop = ing.add_mutually_exclusive_group()
    stop.add_argument("--once", action="store_true", help="stop once nothing new arrives")
    stop.add_argument(
        "--until-idle", type=seconds(0.0, 86400.0), metavar="SECONDS", help="stop after S idle"
    )
    ing.add_argument("--tls-ca", help="CA file for tls:// servers")
    ing.add_argument("--tls-cert", help="client certificate (with --tls-key)")
    ing.add_argument("--tls-key", help="client key")
    ing.add_argument("--user", help="the NATS user (docs/link.md: `central`, read-only)")
    ing.add_argument("--password-file", help="a file holding the NATS user's password")
    ing.set_defaults(func=run_ingest)
    rep = actions.add_parser("report", help="the floor's shift, meters or hits from PostgreSQL")
    rep.add_argument("kind", choices=("shift", "meters", "hits"))
    rep.add_argument("--pg", required=True, help="the PostgreSQL connection string (libpq DSN)")
    rep.add_argument("--json", action="store_true", help="one JSON document on stdout")
    rep.add_argument("--from", dest="start", help="window start: ISO-8601 UTC or ms since epoch")
    rep.add_argument("--to", dest="end", help="window end, exclusive")
    rep.add_argument(
        "--limit", type=whole(0, 1_000_000), default=25, help="hits: the floor's last N (0 = all)"
    )
    rep.set_defaults(func=run_report)
    from controller.cli import central_serve

    central_serve.register(actions)


def _connect_options(args: argparse.Namespace) -> dict[str, Any]:
    import ssl

    options: dict[str, Any] = {}
    if args.tls_ca:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=args.tls_ca)
        if args.tls_cert:
            ctx.load_cert_chain(args.tls_cert, args.tls_key)
        options["tls"] = ctx
    if args.user:
        options["user"] = args.user
    if args.password_file:
        with open(args.password_file, encoding="utf-8") as f:
            options["password"] = f.read().strip()
    return options


def run_ingest(args: argparse.Namespace) -> int:
    from controller.link.central import CentralError, Ingest
    from controller.link.keys import Keyring

    try:
        options = _connect_options(args)
        keys = Keyring(Path(args.keys))
    except OSError as exc:
        print(f"central ingest: {exc}", file=sys.stderr)
        return 2
    try:
        ingest = Ingest(args.nats, args.pg, connect_options=options, keys=keys)
        stats = ingest.run(once=args.once, until_idle=args.until_idle)
    except (CentralError, OSError) as exc:
        print(f"central ingest: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        return 0
    print(
        f"central ingest: {stats.taken} stored, {stats.duplicates} duplicates dropped,"
        f" {stats.refused} refused"
    )
    return 1 if stats.refused else 0


def run_report(args: argparse.Namespace) -> int:
    from controller.link import central

    try:
        start = None if args.start is None else parse_time(args.start, "--from")
        end = None if args.end is None else parse_time(args.end, "--to")
    except ReportError as exc:
        print(f"central report: {exc}", file=sys.stderr)
        return 2
    if args.kind == "meters" and (start is not None or end is not None):
        print(
            "central report: meters are the whole stream; use 'shift' for a window", file=sys.stderr
        )
        return 2
    try:
        conn = central.connect_pg(args.pg)
    except central.CentralError as exc:
        print(f"central report: {exc}", file=sys.stderr)
        return 3
    try:
        if args.kind == "shift":
            doc = central.floor_shift(conn, start, end)
        elif args.kind == "meters":
            doc = central.floor_meters(conn)
        else:
            doc = central.floor_hits(conn, start, end, args.limit)
    except Exception as exc:  # psycopg.Error: no schema yet, permissions
        print(f"central report: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    finally:
        conn.close()
    if args.json:
        print(json.dumps(doc, sort_keys=True))
    else:
        print("\n".join(_text(args.kind, doc)))
    return 1 if doc.get("refused") else 0


def _text(kind: str, doc: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if kind == "hits":
        for h in doc["floor"]:
            lines.append(
                f"{h['table']:<10} seq {h['seq']:<6} position {h['position']} {h['level']}"
                f" {h['line']} {dollars(int(h['cents']))} ({h['from']}) by {h['validated_by']}"
            )
        lines.append(f"floor: {doc['total']['hits']} hits, {dollars(doc['total']['cents'])}")
        return lines
    key = "moved_cents" if kind == "meters" else "meter_end_cents"
    for t in doc["tables"]:
        head = f" head seq {t['seq']}" if "seq" in t else ""
        hits = f" hits {len(t['hits'])}" if kind == "shift" else ""
        lines.append(f"table {t['table']}:{head} rounds {t['rounds']}{hits}")
        for lvl in t["levels"]:
            lines.append(
                f"  {lvl['level']:<14} wagered {dollars(lvl['wagered_cents'])}"
                f" contributed {dollars(lvl['contributed_cents'])}"
                f" paid {dollars(lvl['paid_from_meter_cents'])}"
                f" paid by the pool {dollars(lvl.get('paid_by_pool_cents', 0))}"
                f" adjustments {dollars(lvl['adjustments_cents'])} meter moved {dollars(lvl[key])}"
            )
        lines.extend(f"  problem: {p}" for p in t["problems"])
    for lvl in doc["total"]["levels"]:
        lines.append(
            f"floor {lvl['level']:<14} wagered {dollars(lvl['wagered_cents'])}"
            f" contributed {dollars(lvl['contributed_cents'])}"
            f" paid {dollars(lvl['paid_from_meter_cents'])}"
            f" paid by the pool {dollars(lvl.get('paid_by_pool_cents', 0))}"
        )
    lines.extend(f"refused: {r['reason']}" for r in doc["refused"])
    return lines
