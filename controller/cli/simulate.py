"""``tablectl simulate``: the controller on a simulated table (``make run``), or, with
``--headless``, a scripted run that stops when the journal holds N completed rounds.

Responsible only for the arguments and the exit code (0 done; 2 bad input, nothing touched, a
new journal's path that cannot be used included (missing or read-only directory); 3 no progress;
4 storage fault (an existing journal on read-only storage included); 5 the owner thread failed;
6 the journal is in use by another controller, nothing touched); the work is in
`controller.sim.simulate`.
Must never hold a game rule or be used on real hardware (``tablectl run``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any, cast

from controller.cli import args as types
from controller.cli.args import whole
from controller.config import ConfigError
from controller.journal.format import JournalError, StorageFault
from controller.sim.actors import parse_people
from controller.sim.faults import KINDS, parse_faults

EXIT_BAD_INPUT = 2
EXIT_STORAGE_FAULT = 4
EXIT_IN_USE = 6


def register(sub: Any) -> None:
    p = sub.add_parser(
        "simulate",
        help="run the controller on a simulated table (--headless: N scripted rounds)",
        description="The same service as `tablectl run`, on gpiozero MockFactory pins, a "
        "simulated shoe and shuffler and scripted dealer, players and supervisor.",
    )
    p.add_argument("--config", metavar="PATH", help="table configuration (default: simulated)")
    p.add_argument(
        "--port",
        type=types.whole(0, 65535),
        default=8080,
        help="without --headless: the virtual table's page on 127.0.0.1:PORT (default 8080; "
        "0: any free port, printed)",
    )
    p.add_argument(
        "--no-script",
        action="store_true",
        help="without --headless: the scripted dealer, players and supervisor never act "
        "(every role is a person at the page)",
    )
    p.add_argument("--db", metavar="PATH", help="journal file (default: the config's)")
    p.add_argument(
        "--sas-link",
        metavar="PATH",
        help="serve SAS on a pty; PATH: symlink to its host side",
    )
    p.add_argument("--headless", action="store_true", help="play N rounds, then exit")
    p.add_argument(
        "--rounds",
        type=types.whole(1, 10**7),
        metavar="N",
        help="with --headless: play until the journal holds N completed rounds (a total: a "
        "journal that holds N already plays none, and says so)",
    )
    p.add_argument("--seed", default="1", metavar="S", help="seed of the simulation (default 1)")
    p.add_argument(
        "--faults",
        metavar="SPEC",
        help="comma-separated KIND[=VALUE]@ROUND; kinds: " + ", ".join(KINDS),
    )
    p.add_argument("--linger", action="store_true", help="with --headless: keep serving")
    p.add_argument(
        "--people",
        metavar="ROLES",
        default="",
        help="training: the roles a person holds, any of dealer,players,supervisor (comma-"
        "separated; default: none, every role scripted); a scripted role never acts where a "
        "person holds it",
    )
    p.add_argument(
        "--pace",
        type=types.seconds(0, 60),
        default=None,
        metavar="SECONDS",
        help="without --headless: pause after each action of the scripted dealer, players and "
        "supervisor (default 0.4; 0 = full speed)",
    )
    p.add_argument(
        "--console-socket",
        metavar="PATH",
        help="without --headless: the supervisor console's socket (default: beside the journal, "
        "<db>.console.sock)",
    )
    p.add_argument(
        "--tables",
        type=whole(1, 1000, "a number of tables"),
        metavar="N",
        help="with --headless --linked: N simulated tables on one linked pool (docs/link.md)",
    )
    p.add_argument(
        "--linked",
        action="store_true",
        help="with --tables N: the tables' progressive linked through a link controller",
    )
    p.add_argument("--nats", metavar="URL", help="with --linked: this NATS server, not a new one")
    p.add_argument("-v", "--verbose", action="store_true", help="log warnings and errors")
    p.set_defaults(func=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    from controller.sim import simulate

    logging.basicConfig(
        level=logging.WARNING if args.verbose else logging.CRITICAL,
        format="%(levelname)s %(name)s: %(message)s",
    )
    err = sys.stderr
    try:
        parse_faults(args.faults)
        parse_people(args.people)
    except ValueError as exc:
        print(f"tablectl simulate: {exc}", file=err)
        return EXIT_BAD_INPUT
    linked = _linked_problem(args)
    if linked is not None:
        print(f"tablectl simulate: {linked}", file=err)
        return EXIT_BAD_INPUT
    if args.linked:
        from controller.link.simrun import run_linked

        return run_linked(
            int(args.tables),
            int(args.rounds),
            str(args.seed),
            fault_spec=args.faults,
            nats_url=args.nats,
            directory=Path(args.db).with_suffix("") if args.db else None,
            out=sys.stdout,
        )
    if args.headless:
        if args.rounds is None:
            print("tablectl simulate: --headless needs --rounds N", file=err)
            return EXIT_BAD_INPUT
        if args.rounds < 1:
            print(f"tablectl simulate: --rounds: must be 1 or more, got {args.rounds}", file=err)
            return EXIT_BAD_INPUT
    elif args.rounds is not None or args.linger:
        print("tablectl simulate: --rounds and --linger need --headless", file=err)
        return EXIT_BAD_INPUT
    if args.console_socket is not None and args.headless:
        print("tablectl simulate: --console-socket is for the non-headless table", file=err)
        return EXIT_BAD_INPUT
    if not 0 <= args.port <= 65535:
        print(f"tablectl simulate: --port: 0 to 65535, got {args.port}", file=err)
        return EXIT_BAD_INPUT
    if args.no_script and args.headless:
        print("tablectl simulate: --no-script is for the non-headless table", file=err)
        return EXIT_BAD_INPUT
    if args.pace is not None and (args.headless or not 0 <= args.pace <= 60):
        print("tablectl simulate: --pace takes 0 to 60 seconds, without --headless", file=err)
        return EXIT_BAD_INPUT
    if args.sas_link:
        from controller.floor.service import sas_link_problem

        problem = sas_link_problem(Path(args.sas_link))
        if problem:
            print(f"tablectl simulate: {problem}", file=err)
            return EXIT_BAD_INPUT
    try:
        config = simulate.load_sim_config(args.config)
    except ConfigError as exc:
        print(f"tablectl simulate: {exc}", file=err)
        return EXIT_BAD_INPUT
    db = Path(args.db) if args.db else config.journal_path
    from controller.journal.lock import JournalInUse, JournalLock

    problem = live_journal_problem(db) or journal_path_problem(db)
    if problem is not None:
        print(f"tablectl simulate: {problem}", file=err)
        return EXIT_BAD_INPUT
    try:  # one controller per journal: before any pty, socket or thread is started
        lock = JournalLock.acquire(db)
    except JournalInUse as exc:
        print(f"tablectl simulate: {exc}", file=err)
        return EXIT_IN_USE
    except OSError as exc:
        if db.exists():  # a journal whose storage went read-only: a storage fault
            print(f"tablectl simulate: storage fault: cannot lock the journal: {exc}", file=err)
            return EXIT_STORAGE_FAULT
        # the directory cannot take a new journal's lock file: nothing was touched
        print(f"tablectl simulate: journal {db}: {exc.strerror or exc}", file=err)
        return EXIT_BAD_INPUT
    try:
        return _simulate_locked(args, db, simulate)
    finally:
        lock.release()


def _linked_problem(args: argparse.Namespace) -> str | None:
    """Why the many-tables options do not go together (None: they do, or none is given)."""
    from controller.link.simrun import LINK_FAULTS

    link_faults = [f for f in parse_faults(args.faults) if f.kind in LINK_FAULTS]
    if not args.linked:
        if args.tables is not None or args.nats is not None:
            return "--tables and --nats need --linked"
        if link_faults:
            return f"--faults {link_faults[0]}: needs --tables N --linked"
        return None
    if args.tables is None or args.tables < 1:
        return "--linked needs --tables N (1 or more)"
    if not args.headless or args.rounds is None or args.rounds < 1:
        return "--linked needs --headless --rounds N"
    if args.sas_link or args.linger:
        return "--linked takes no --sas-link or --linger"
    if args.nats is not None and any(f.kind == "nats-down" for f in link_faults):
        return (
            "--faults nats-down: takes down the nats-server the run starts; with --nats URL "
            "the server is not the run's to stop (drop --nats, or use link-down)"
        )
    return None


#: The installed live table's configuration (deploy/install.sh); its journal is never a
#: simulated table's.
LIVE_CONFIG = Path("/etc/paigow/table.toml")


def live_journal_problem(db: Path, live_config: Path = LIVE_CONFIG) -> str | None:
    """Why a simulated (training) table must not use ``db``: it is a live journal (its
    ``meta.mode``, or the first power_up of a journal made before it), or the journal path of
    the live configuration (the default one, or the installed ``live_config``'s) even before a
    live journal exists there. None: it may. Nothing is opened for writing."""
    from controller.config import DEFAULT_JOURNAL, load_config
    from controller.journal.audit import recorded_mode

    if recorded_mode(db) == "live":
        return (
            f"journal {db} is a LIVE table's journal: a training or simulated table never "
            "writes to it (nothing was appended); give --db a journal of its own"
        )
    live_paths = {Path(DEFAULT_JOURNAL)}
    try:
        if live_config.is_file():
            live_paths.add(load_config(live_config).journal_path)
    except Exception:  # an unreadable live configuration: the default path is still refused
        pass
    resolved = db.resolve()
    for live in live_paths:
        if resolved == live.resolve():
            return (
                f"journal {db} is the live table's journal path ({live}): a training or "
                "simulated table never writes there; give --db a journal of its own"
            )
    return None


def journal_path_problem(db: Path) -> str | None:
    """Why ``db`` cannot be a journal path (a NUL or control character, a directory, a
    directory that does not exist), or None; checked before anything is created."""
    text = str(db)
    if not text.isprintable():
        return f"--db: control characters are not allowed in a journal path, got {text!r}"
    if db.is_dir():
        return f"journal {db}: is a directory; name a file"
    parent = db.parent
    if not parent.is_dir():
        return f"journal {db}: directory {parent} does not exist"
    return None


def _simulate_locked(args: argparse.Namespace, db: Path, simulate: Any) -> int:
    from controller.sim.actors import People

    err = sys.stderr
    people = People(parse_people(args.people))
    try:
        if args.headless:
            rounds = cast(int, args.rounds)
            return int(
                simulate.run_headless(
                    db,
                    rounds,
                    args.seed,
                    fault_spec=args.faults,
                    config_path=args.config,
                    linger=args.linger,
                    out=sys.stdout,
                    sas_link=Path(args.sas_link) if args.sas_link else None,
                    people=people,
                )
            )
        pace = simulate.DEFAULT_PACE_S if args.pace is None else args.pace
        return int(
            simulate.run_service(
                db,
                args.seed,
                config_path=args.config,
                fault_spec=args.faults,
                out=sys.stdout,
                pace_s=pace,
                console_socket=Path(args.console_socket) if args.console_socket else None,
                sas_link=Path(args.sas_link) if args.sas_link else None,
                port=args.port,
                scripted=not args.no_script,
                people=people,
                commands=sys.stdin,  # the trainer's commands (people, fault, hit, status, help)
            )
        )
    except StorageFault as exc:  # cleared only by a restart that passes the storage check
        print(f"tablectl simulate: storage fault, play refused: {exc}", file=err)
        return EXIT_STORAGE_FAULT
    except JournalError as exc:
        print(f"tablectl simulate: {exc}", file=err)
        return EXIT_BAD_INPUT
