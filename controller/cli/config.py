"""``tablectl config check PATH`` and ``tablectl config hash-pin``.

Responsible for reporting whether a configuration file can run a table (``ok`` and a summary, or
every problem with its key, exit 1) and for turning a supervisor PIN into its stored hash (a PIN
that is not 4 to 12 digits: exit 2). Must
never write a configuration file or a journal, and never print or log a PIN.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.config import ConfigError, TableConfig, hash_pin, load_config
from fsm.rules.jackpot_odds import one_in, rare_jackpots


def register(sub: Any) -> None:
    parser = sub.add_parser("config", help="check a configuration file; hash a supervisor PIN")
    actions = parser.add_subparsers(dest="config_command", required=True)
    check = actions.add_parser("check", help="validate a table configuration file")
    check.add_argument("path", help="the TOML configuration file")
    check.set_defaults(func=run_check)
    hashp = actions.add_parser(
        "hash-pin",
        help="print the pin_hash of a supervisor PIN (read from the terminal or one stdin line)",
    )
    hashp.set_defaults(func=run_hash_pin)


#: deploy/config.example.toml's placeholders (tests/test_newcomer.py keeps them equal to the file):
#: a table left with them passes the check, and is told so.
EXAMPLE_TABLE_ID = "T1"
EXAMPLE_ASSET_NUMBER = 1001
EXAMPLE_PIN_HASH = (
    "scrypt$n=16384,r=8,p=1$ZXhhbXBsZS1zYWx0LTAwMDA=$hrTc1Q4B6oXYxIYZ4+eJ9QimPYiQHXF01T9WT1rqeyU="
)


def example_warnings(config: TableConfig) -> list[str]:
    """What ``config`` still holds of the example's placeholders, in words."""
    warnings = []
    if (config.table.id, config.table.asset_number) == (EXAMPLE_TABLE_ID, EXAMPLE_ASSET_NUMBER):
        warnings.append(
            f"table.id {EXAMPLE_TABLE_ID!r} and table.asset_number {EXAMPLE_ASSET_NUMBER} are "
            "the example's: set this table's own (the journal keeps the id for ever)"
        )
    for name, supervisor in sorted(config.supervisors.items()):
        if supervisor.pin_hash == EXAMPLE_PIN_HASH:
            warnings.append(
                f"supervisors.{name}.pin_hash is the example's, the PIN 0000: make each "
                "supervisor's own with tablectl config hash-pin"
            )
    return warnings


def run_check(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.path)
        check_jackpots(config)  # NJ 13:69D-1.52(e): no jackpot rarer than 1 in 100 million
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    problems = journal_file_problems(config)
    if problems:
        print(f"{args.path}: {len(problems)} problem{'s' if len(problems) > 1 else ''}:",
              file=sys.stderr)  # fmt: skip
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    warnings = example_warnings(config)
    print("ok" if not warnings else f"ok, with {len(warnings)} warnings")
    for line in config.summary():
        print(f"  {line}")
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    return 0


def check_jackpots(config: TableConfig) -> None:
    """``tablectl config check``: ConfigError when a progressive jackpot is won less often than
    1 in 100,000,000 hands at the first level's reset amount (NJ 13:69D-1.52(e))."""
    g = config.game
    meter = min(g.levels[0].initial_cents, g.levels[0].reset_cents)
    rare = rare_jackpots(g.table, meter, g.progressive_wager_cents, g.ranking)
    if rare:
        raise ConfigError(
            config.source,
            [
                f"game.paytable: jackpot {name!r} is won in {one_in(p)} hands at the reset "
                f"amount ${meter / 100:,.2f}, rarer than 1 in 100,000,000 (NJ 13:69D-1.52(e))"
                for name, p in rare
            ],
        )


def journal_file_problems(config: Any) -> list[str]:
    """The anchor, key and sealing-key files are read only when they are regular files below
    their size bound (a path to /dev/zero or a FIFO would be read for ever or block power-up):
    say so now, for those that exist."""
    from controller.journal.files import (
        ANCHOR_READ_LIMIT,
        KEY_FILE_LIMIT,
        SEAL_FILE_SIZE,
        default_anchor_path,
    )
    from controller.journal.safeio import small_file_problem

    anchor = config.journal_anchor or default_anchor_path(config.journal_path)
    files = [
        ("journal.anchor", anchor, ANCHOR_READ_LIMIT, "anchor"),
        ("journal.key_file", config.journal_key_file, KEY_FILE_LIMIT, "key file"),
        ("journal.seal_key", config.journal_seal_key, SEAL_FILE_SIZE, "sealing key"),
    ]
    problems = []
    for key, path, limit, what in files:
        if path is None:
            continue
        problem = small_file_problem(path, limit, what)
        if problem is not None:
            problems.append(f"{key}: {problem} (read only when a regular file of at most "
                            f"{limit} bytes)")  # fmt: skip
    return problems


def run_hash_pin(args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        import getpass  # termios: only a PIN typed at a terminal

        pin = getpass.getpass("supervisor PIN (4-12 digits): ")
        again = getpass.getpass("again: ")
        if pin != again:
            print("config hash-pin: the two PINs differ", file=sys.stderr)
            return 2
    else:
        pin = sys.stdin.readline().strip()
    try:
        stored = hash_pin(pin)
    except ValueError as exc:
        print(f"config hash-pin: {exc}", file=sys.stderr)
        return 2
    print(f'pin_hash = "{stored}"')
    return 0
