"""The ``tablectl`` command line: parses arguments and hands each subcommand to its module.

Responsible only for the argument grammar of DESIGN.md's command-line contract; each subcommand's
work lives in its own ``controller/cli/<command>.py`` module. Must never hold a game rule.
"""

from __future__ import annotations

import argparse
import importlib
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
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tablectl", description="Pai gow table controller")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"controller.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
