"""``tablectl sas log`` and ``tablectl sas poll``: the floor link's frame log, and a small host to
check the wiring and the answers (docs/sas.md).

Responsible only for arguments and printing; the host is ``drivers.sas.host``, the log is written
by the running service (``controller.floor.framelog``). Must never write the journal.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

from controller.cli import args as types

EXIT_BAD_INPUT = 2
EXIT_NO_ANSWER = 3


def register(sub: Any) -> None:
    parser = sub.add_parser("sas", help="the floor link: frame log; a small host for wiring checks")
    actions = parser.add_subparsers(dest="sas_command", required=True)
    log = actions.add_parser("log", help="print the floor link's last frames")
    log.add_argument("--db", metavar="PATH", help="the journal (log beside it: <db>.sas-log.json)")
    log.add_argument("--config", metavar="PATH", help="table configuration (its journal path)")
    log.add_argument("--file", metavar="PATH", help="the frame log file itself")
    log.add_argument(
        "--last", type=types.whole(0, 10**6), default=0, metavar="N", help="only the last N frames"
    )
    log.add_argument("--json", action="store_true", help="JSON lines")
    log.set_defaults(func=run_log)
    poll = actions.add_parser("poll", help="send one poll as the host and print the answer")
    poll.add_argument(
        "--port", required=True, metavar="PATH", help="tty path or socket://HOST:PORT"
    )
    poll.add_argument(
        "--address", type=types.whole(1, 127), default=1, metavar="N", help="machine address 1-127"
    )
    poll.add_argument("--transport", choices=("stream", "uart"), default="stream")
    poll.add_argument("--timeout", type=types.seconds(0.01, 60), default=1.0, metavar="S")
    poll.add_argument("poll", help="'general' or a hex command such as 1A, 2F, 52")
    poll.add_argument("data", nargs="*", help="data bytes in hex after the command (e.g. 0001)")
    poll.set_defaults(func=run_poll)


def _log_path(args: argparse.Namespace) -> Path:
    from controller.floor.framelog import log_path_for

    if args.file:
        return Path(args.file)
    if args.db:
        return log_path_for(Path(args.db))
    from controller.config import load_config

    return log_path_for(load_config(args.config).journal_path if args.config else Path(""))


def run_log(args: argparse.Namespace) -> int:
    from controller.config import ConfigError
    from controller.floor.framelog import read_log

    if not (args.file or args.db or args.config):
        print("tablectl sas log: give --db, --config or --file", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        frames = read_log(_log_path(args))
    except (ValueError, ConfigError) as exc:
        print(f"tablectl sas log: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.last > 0:
        frames = frames[-args.last :]
    for f in frames:
        if args.json:
            print(json.dumps(f))
            continue
        t = datetime.datetime.fromtimestamp(float(f.get("t", 0)), datetime.UTC)
        when = f"{t:%Y-%m-%dT%H:%M:%S.%f}Z"
        print(f"{when} {f.get('dir', '?'):2} {f.get('hex', ''):<40} {f.get('name', '')}")
    return 0


def run_poll(args: argparse.Namespace) -> int:
    from drivers.sas.host import HostPort, build_request, describe_answer

    try:
        data = bytes.fromhex("".join(args.data))
        frame = build_request(args.address, args.poll, data)
    except ValueError as exc:
        print(f"tablectl sas poll: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        port = HostPort(args.port, args.transport)
    except Exception as exc:  # SerialException, OSError: the port cannot be opened
        print(f"tablectl sas poll: {args.port}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        port.send(frame)
        answer = port.read_answer(args.timeout)
        if len(frame) == 1 and answer:
            port.send(b"\x80")  # acknowledge the exception (a poll to another address)
    finally:
        port.close()
    print(f"sent    {frame.hex(' ').upper()}")
    print(f"answer  {answer.hex(' ').upper() or '-'}")
    print(f"        {describe_answer(args.address, frame, answer)}")
    return 0 if answer else EXIT_NO_ANSWER
