"""The ``tablectl`` command line: parses arguments and hands each subcommand to its module.

Responsible only for the argument grammar of DESIGN.md's command-line contract; each subcommand's
work lives in its own ``controller/cli/<command>.py`` module. Must never hold a game rule, and
never import what the command being run does not need: every command, and the service's start
after a power cut, pays for each import (a Pi's core is several times slower than a desktop's).
``main`` registers only the module of the command named on the line; every other command is a
one-line entry of `COMMANDS` for ``--help`` (tests/test_cli_start.py keeps those lines equal to
the modules' own and checks that ``--help`` imports nothing heavy).
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import select
import sys
from collections.abc import Sequence

#: Every command: the module that registers it (``register(subparsers)``) and its line in
#: ``tablectl --help``, in the order help lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "hands": ("hands", "rank hands read from stdin, one per line, as card text"),
    "settle": ("hands", "settle pai gow wagers read from stdin as JSON lines"),
    "config": ("config", "check a configuration file; hash a supervisor PIN"),
    "journal": ("journal", "verify or export a table's journal (read-only)"),
    "report": ("report", "reports from a table's journal (read-only)"),
    "simulate": (
        "simulate",
        "run the controller on a simulated table (--headless: N scripted rounds)",
    ),
    "run": ("run", "run the table service on real hardware (systemd)"),
    "console": ("console", "take a supervisor's step on the running table (PIN required)"),
    "selftest": ("selftest", "check the table's lights, digit, sign and inputs on a real board"),
    "parsheet": (
        "parsheet",
        "exact par sheets of the pay tables (all 154,143,080 hands) and the filing page",
    ),
    "sas": ("sas", "the floor link: frame log; a small host for wiring checks"),
    "drill": ("drill", "a dealer drill: house way, settlement, progressive pay"),
    "link": ("link", "the link controller of a linked progressive"),
    "central": ("central", "floor-wide reporting from every table's stream"),
    "rng": ("rng", "the production RNG's output for a test lab's batteries"),
    "verify-software": (
        "verify_software",
        "the software digest for a seed (HMAC-SHA1, or SAS 21's CRC-16)",
    ),
}

#: Each module once, in the order help lists its commands.
SUBCOMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(m for m, _ in COMMANDS.values()))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole grammar; or (``only``: a command's name) that command's module alone; or (any
    other ``only``: no command, or a mistyped one) every command as its help line."""
    parser = argparse.ArgumentParser(prog="tablectl", description="Pai gow table controller")
    parser.add_argument(
        "--version",
        action="store_true",
        help="print the version and the software hash of this installation, then exit",
    )
    if only in COMMANDS:
        # The command run, alone: every other command's parser (each an ArgumentParser, with
        # its gettext look-ups) only ever serves `tablectl --help` and a mistyped command. The
        # metavar is the one argparse makes of every command: the usage line names them all.
        metavar = "{" + ",".join(COMMANDS) + "}"
        sub = parser.add_subparsers(dest="command", required=False, metavar=metavar)
        importlib.import_module(f"controller.cli.{COMMANDS[only][0]}").register(sub)
        return parser
    sub = parser.add_subparsers(dest="command", required=False)
    modules = SUBCOMMAND_MODULES if only is None else ()
    registered: set[str] = set()
    for command, (module, summary) in COMMANDS.items():
        if module in modules:
            if module not in registered:
                importlib.import_module(f"controller.cli.{module}").register(sub)
                registered.add(module)
        else:
            sub.add_parser(command, help=summary)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command on the line: the first argument that is not an option."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


#: The exit code when the reader of standard output went away (``tablectl ... | head``): a
#: shell's code for a process ended by SIGPIPE, without a message or a traceback.
EXIT_STDOUT_CLOSED = 141


def main(argv: Sequence[str] | None = None) -> int:
    line = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=command_named(line) or "")
    _tolerant_streams()
    try:
        args = parser.parse_args(line)
        if args.version:
            from controller.cli.version import print_version

            code = print_version()
        elif args.command is None:
            parser.error("a command is required (tablectl --help lists them)")
        else:
            code = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        if not _stdout_closed():
            raise
        # Python's advice: point stdout at devnull so the flush at exit does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_STDOUT_CLOSED
    return int(code)


def _tolerant_streams() -> None:
    """Bytes on stdin that are not UTF-8 reach the commands as lone surrogates (each command
    refuses them with a message), and a message that quotes them is printed escaped: hostile
    input never ends a command with a UnicodeError."""
    for stream, errors in ((sys.stdin, "surrogateescape"), (sys.stdout, "backslashreplace")):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors=errors)
    if isinstance(sys.stderr, io.TextIOWrapper):
        sys.stderr.reconfigure(errors="backslashreplace")


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (the BrokenPipeError was ours,
    not a socket's)."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(revents & select.POLLERR for _, revents in poller.poll(0))
    except (OSError, ValueError):
        return False
