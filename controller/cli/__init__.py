"""The ``tablectl`` command line: parses arguments and hands each subcommand to its module.

Responsible only for the argument grammar of DESIGN.md's command-line contract; each subcommand's
work lives in its own ``controller/cli/<command>.py`` module. Must never hold a game rule.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import select
import sys
from collections.abc import Sequence

# Each module has ``register(subparsers)``; one line per module, in the order help lists them.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "hands",
    "config",
    "journal",
    "report",
    "simulate",
    "run",
    "console",
    "selftest",
    "parsheet",
    "sas",
    "drill",
    "link",
    "central",
    "rng",
    "verify_software",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tablectl", description="Pai gow table controller")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"controller.cli.{name}").register(sub)
    return parser


#: The exit code when the reader of standard output went away (``tablectl ... | head``): a
#: shell's code for a process ended by SIGPIPE, without a message or a traceback.
EXIT_STDOUT_CLOSED = 141


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    _tolerant_streams()
    try:
        args = parser.parse_args(argv)
        code: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        if not _stdout_closed():
            raise
        # Python's advice: point stdout at devnull so the flush at exit does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_STDOUT_CLOSED
    return code


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
