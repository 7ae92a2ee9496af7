"""``tablectl console``: a supervisor's request to the running table through its console socket.

Responsible for the arguments, reading the PIN (``getpass``, or one line of stdin with
``--pin-stdin``), checking the request's arguments before asking for the PIN (the same parser
the console uses), sending one request line and printing the reply readably (``--json``: the raw
reply). Exit codes: 0 done; 1 refused (PIN, or the table refused the step: its reason is
printed); 2 bad usage; 3 the console cannot be reached. Must never print or log the PIN, or hold
a game rule (the round machine decides; its refusal is printed as given).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import Any, TextIO

from controller.cli import args as types
from controller.config import DEFAULT_CONSOLE_SOCKET
from controller.console.server import COMMIT_TIMEOUT_S, request_line, send_request
from controller.supervisor.requests import REQUESTS, RequestError, build_event

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3


def register(sub: Any) -> None:
    requests = "\n".join(f"  {usage}" for usage in REQUESTS.values())
    p = sub.add_parser(
        "console",
        help="take a supervisor's step on the running table (PIN required)",
        description="Send one supervisor request to the table service's console socket.\n"
        "Every step is journaled with the supervisor's id; the PIN is asked for (or read\n"
        "from stdin with --pin-stdin) and never shown. Exit codes: 0 done, 1 refused,\n"
        "2 bad usage, 3 the console cannot be reached.",
        epilog="requests:\n" + requests,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--socket",
        default=DEFAULT_CONSOLE_SOCKET,
        metavar="PATH",
        help=f"the console socket (default {DEFAULT_CONSOLE_SOCKET}; "
        "tablectl simulate prints its own)",
    )
    p.add_argument("--supervisor", metavar="ID", help="your supervisor id (not for status)")
    p.add_argument("--pin-stdin", action="store_true", help="read the PIN from one line of stdin")
    p.add_argument("--json", action="store_true", help="print the raw JSON reply")
    p.add_argument(
        "--timeout",
        type=types.seconds(0.1, 3600),
        default=COMMIT_TIMEOUT_S + 5.0,
        metavar="S",
        help="seconds to wait for the reply",
    )
    p.add_argument("request", choices=tuple(REQUESTS), metavar="REQUEST", help="see below")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the request's arguments")
    p.set_defaults(func=run_console)


def _read_pin(args: argparse.Namespace, err: TextIO) -> str | None:
    if args.pin_stdin:
        line = sys.stdin.readline()
        return line.rstrip("\r\n") or None
    try:
        return getpass.getpass(f"PIN for {args.supervisor}: ")
    except (EOFError, KeyboardInterrupt):
        print("", file=err)
        return None


def _verify_args(rest: list[str]) -> None:
    from controller.lab.software import VerifyError, parse_seed

    if len(rest) != 1:
        raise RequestError(f"verify-software takes one SEED (usage: {REQUESTS['verify-software']})")
    try:
        parse_seed("hmac-sha1", rest[0])
    except VerifyError as exc:
        raise RequestError(f"verify-software: {exc}") from None


def _readable(reply: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if reply.get("ok"):
        lines.append(f"ok: entry {reply.get('seq')}, table now {reply.get('state')}")
        if "digest" in reply:  # verify-software
            lines.append(
                f"  {reply.get('method')} seed {reply.get('seed')}: {reply['digest']} over "
                f"{reply.get('files')} files ({reply.get('size')} bytes, {reply.get('manifest')})"
            )
    else:
        lines.append(f"refused: {reply.get('error', 'no reason given')}")
        if "seq" in reply:
            lines.append(f"  (journaled as entry {reply['seq']}; table {reply.get('state')})")
    status = reply.get("status")
    if isinstance(status, dict):
        for key, value in status.items():
            lines.append(f"  {key}: {json.dumps(value)}")
    for effect in reply.get("effects") or []:
        if isinstance(effect, dict):
            rest = {k: v for k, v in effect.items() if k != "type"}
            lines.append(f"  {effect.get('type')}: {json.dumps(rest)}")
    return lines


def run_console(
    args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    name: str = args.request
    rest: list[str] = list(args.args)
    pin: str | None = None
    if name != "status":
        if not args.supervisor:
            print(f"tablectl console: {name}: --supervisor ID is required", file=err)
            return EXIT_USAGE
        try:
            if name == "verify-software":  # answered by the table, journaled as asked
                _verify_args(rest)
            else:
                build_event(name, rest, args.supervisor)
        except RequestError as exc:
            print(f"tablectl console: {exc}", file=err)
            return EXIT_USAGE
        pin = _read_pin(args, err)
        if pin is None:
            print("tablectl console: no PIN given", file=err)
            return EXIT_USAGE
    elif rest:
        print("tablectl console: status takes no arguments", file=err)
        return EXIT_USAGE
    line = request_line(name, rest, args.supervisor if name != "status" else None, pin)
    try:
        reply = send_request(args.socket, line, args.timeout)
    except OSError as exc:
        print(
            f"tablectl console: cannot reach the table at {args.socket}: "
            f"{exc.strerror or exc} (is the service running? are you in group paigow?)",
            file=err,
        )
        return EXIT_UNREACHABLE
    except ValueError as exc:
        print(f"tablectl console: bad reply from {args.socket}: {exc}", file=err)
        return EXIT_UNREACHABLE
    if args.json:
        print(json.dumps(reply, separators=(",", ":")), file=out)
    else:
        for text in _readable(reply):
            print(text, file=out)
    return EXIT_OK if reply.get("ok") is True else EXIT_REFUSED
