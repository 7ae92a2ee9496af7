"""``tablectl link serve --config PATH`` (the link controller of a linked progressive),
``tablectl link verify --db PATH`` (its journal's chain, anchor and replay through the pool's
rules) and ``tablectl link keys new|retire|list`` (the tables' link keys, docs/link.md).

Parsing and printing only: the service is `controller.link.service`. Must never print a traceback
for a bad file or a bad configuration.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser("link", help="the link controller of a linked progressive")
    actions = parser.add_subparsers(dest="link_command", required=True)
    serve = actions.add_parser("serve", help="run the link controller (systemd ExecStart)")
    serve.add_argument("--config", required=True, help="the link controller's TOML file")
    serve.set_defaults(func=run_serve)
    ver = actions.add_parser("verify", help="verify a pool's journal (chain, anchor, replay)")
    ver.add_argument("--db", required=True, help="the pool's journal file")
    ver.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ver.set_defaults(func=run_verify)
    keys = actions.add_parser("keys", help="the tables' link keys: provision, rotate, retire")
    kact = keys.add_subparsers(dest="keys_command", required=True)
    new = kact.add_parser(
        "new", help="a new key for a table (its first, or its next: a rotation); the key file"
    )
    new.add_argument("--keys", required=True, help="the centre's keyring directory")
    new.add_argument("--table", required=True, help="the table's id")
    new.add_argument("--out", required=True, help="the table's key file to write (0600)")
    new.set_defaults(func=run_keys)
    ret = kact.add_parser("retire", help="remove a table's old key from the keyring")
    ret.add_argument("--keys", required=True, help="the centre's keyring directory")
    ret.add_argument("--table", required=True, help="the table's id")
    ret.add_argument("--key-id", required=True, help="the key id to retire")
    ret.set_defaults(func=run_keys)
    lst = kact.add_parser("list", help="each table's key ids (never the keys)")
    lst.add_argument("--keys", required=True, help="the centre's keyring directory")
    lst.set_defaults(func=run_keys)


def run_serve(args: argparse.Namespace) -> int:
    from controller.journal.format import JournalError
    from controller.link.link_config import load_controller_config
    from controller.link.service import SelfCheckFailed, serve
    from fsm.configread import ConfigValueError

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        cfg = load_controller_config(args.config)
    except ConfigValueError as exc:
        print(f"link serve: {exc}", file=sys.stderr)
        return 2
    try:
        return serve(cfg)
    except (SelfCheckFailed, JournalError, OSError) as exc:
        print(f"link serve: {exc}", file=sys.stderr)
        return 3


def run_keys(args: argparse.Namespace) -> int:
    from controller.link import keys

    try:
        if args.keys_command == "new":
            out = Path(args.out)
            if out.exists():
                why = "the table's key file is never overwritten; write the new one beside it"
                print(f"link keys: {out} exists: {why}", file=sys.stderr)
                return 2
            kid = keys.provision(Path(args.keys), args.table, out)
            print(f"table {args.table}: key {kid} added to {args.keys}; its key file is {out}")
        elif args.keys_command == "retire":
            keys.retire(Path(args.keys), args.table, args.key_id)
            print(f"table {args.table}: key {args.key_id} retired")
        else:
            for table, ids in keys.listing(Path(args.keys)).items():
                print(f"{table}: {' '.join(ids)}")
    except OSError as exc:
        print(f"link keys: {exc}", file=sys.stderr)
        return 2
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from controller.journal.audit import verify
    from controller.link.service import PoolReplayer

    path = Path(args.db)
    if not path.is_file():
        print(f"link verify: {path}: no such journal file", file=sys.stderr)
        return 1
    report = verify(path, PoolReplayer)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print(f"{path}: {'ok' if report.ok else 'PROBLEMS'} ({report.entries} entries)")
        for problem in report.problems:
            print(f"  {problem}")
    return 0 if report.ok else 1
