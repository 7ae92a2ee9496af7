"""``tablectl journal verify``, ``export`` and ``setup-keys``: the auditor's view of a journal, and
the install step that makes its forward-secure sealing key.

Responsible for running `controller.journal.audit.verify` (chain, everything stored, the anchor
and, through the round machine re-run from the journal's own configuration, every entry's effects
and state) and ``export`` on a journal file
named on the command line, and for turning every failure into a clear message and a non-zero exit.
``setup-keys`` writes only the sealing-key file (the first sealing key) and prints the
verification key once; it never writes the verification key to any file.
Must never create, write or repair a journal file, and never print a traceback for a bad file.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from controller.config import load_config
from controller.journal import redact
from controller.journal.anchor import default_anchor_path, load_key
from controller.journal.audit import (
    ReplayFactory,
    connect_read_only,
    export,
    schema_problems,
    verify,
)
from controller.journal.format import JSON, Entry, JournalError, completes_a_round
from controller.journal.reports import BENCH_BANNER
from controller.journal.seal import (
    SealError,
    format_verification_key,
    new_verification_key,
    parse_verification_key,
    seal_id,
    write_new_seal_file,
)
from fsm.round.config import GameConfig
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

#: The installed table configuration (deploy/install.sh): plain verify compares the journal
#: with it when it exists.
INSTALLED_CONFIG = Path("/etc/paigow/table.toml")


def register(sub: Any) -> None:
    parser = sub.add_parser("journal", help="verify or export a table's journal (read-only)")
    actions = parser.add_subparsers(dest="journal_command", required=True)
    ver = actions.add_parser(
        "verify",
        help="check the hash chain, everything stored, the anchor, and replay every entry",
    )
    ver.add_argument("--db", required=True, help="the journal file (SQLite)")
    ver.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ver.add_argument(
        "--config",
        help="replay from this table configuration instead of the one recorded in the journal",
    )
    ver.add_argument("--anchor", help="the journal's head anchor (default: <db>.anchor)")
    ver.add_argument(
        "--no-anchor", action="store_true", help="check without the anchor (says so in the report)"
    )
    ver.add_argument("--key-file", help="the static keyed chain's key (journals made before seals)")
    ver.add_argument(
        "--verify-key",
        metavar="KEY",
        help="the verification key setup-keys printed (pgvk1-...): check every entry's "
        "forward-secure seal",
    )
    ver.add_argument(
        "--expect-head",
        metavar="SEQ:HASH",
        help="a head signed earlier (shift report, console status): the journal must hold it",
    )
    ver.add_argument(
        "--installed-config",
        metavar="PATH",
        help="the installed, approved table configuration to compare the journal with "
        f"(default: {INSTALLED_CONFIG} when it exists, for a journal of its table)",
    )
    ver.add_argument(
        "--no-installed-config",
        action="store_true",
        help="do not compare the journal with the installed configuration (says so)",
    )
    ver.add_argument(
        "--previous",
        metavar="DB",
        help="the journal this one carried its meters over from (tablectl journal carry): "
        "follow the chain across the carry",
    )
    ver.add_argument(
        "--archives",
        metavar="DIR",
        help="also check every archive of this journal in DIR (tablectl journal archive): "
        "each file against its head record; a tampered archive is named",
    )
    ver.set_defaults(func=run_verify)
    carry = actions.add_parser(
        "carry",
        help="start a fresh journal carrying the meters over from the previous one (two "
        "supervisors' PINs; docs/journal.md)",
    )
    carry.add_argument("--config", required=True, help="the table configuration (its journal)")
    whence = carry.add_mutually_exclusive_group(required=True)
    whence.add_argument("--from-journal", metavar="DB", help="the previous journal (verified)")
    whence.add_argument(
        "--from-report",
        metavar="FILE",
        help="the last signed meters report (tablectl report meters --json) when the previous "
        "journal is lost: verify cannot follow the chain across such a carry",
    )
    whence.add_argument(
        "--from-witness",
        action="store_true",
        help="central's copy of this table's journal (--pg): its chain to the witnessed head "
        "checked and replayed; verify cannot follow the chain across such a carry",
    )
    carry.add_argument("--pg", metavar="DSN", help="central's PostgreSQL (with --from-witness)")
    carry.add_argument(
        "--previous-anchor",
        metavar="PATH",
        help="the previous journal's anchor (default: <DB>.anchor, else the configured one)",
    )
    carry.add_argument(
        "--verify-key", metavar="KEY", help="the previous journal's verification key: its seals"
    )
    carry.add_argument(
        "--supervisor",
        action="append",
        default=[],
        metavar="ID",
        help="a supervisor who authorises the carry (twice: two different supervisors); each "
        "PIN is asked on the terminal (or read from stdin, one line each)",
    )
    carry.set_defaults(func=run_carry)
    arc = actions.add_parser(
        "archive",
        help="close a period: a verified archive of the journal and its head record (two "
        "supervisors' PINs; the table closed, the controller stopped)",
    )
    arc.add_argument("--db", required=True, help="the live journal file (SQLite)")
    arc.add_argument("--out", required=True, help="the archive directory")
    arc.add_argument("--config", required=True, help="the table configuration: its supervisors")
    arc.add_argument(
        "--supervisor",
        action="append",
        required=True,
        help="a supervisor's id; given twice, two different supervisors",
    )
    arc.add_argument(
        "--pin-stdin",
        action="store_true",
        help="read the two PINs from stdin, one line each, in the order of --supervisor",
    )
    arc.set_defaults(func=run_archive)
    keys = actions.add_parser(
        "setup-keys",
        help="make the forward-secure sealing key (install, once) and print the verification key",
    )
    keys.add_argument("--config", help="the table configuration: its [journal] seal_key")
    keys.add_argument("--seal-key", help="the sealing-key file to create (default: --config's)")
    keys.add_argument(
        "--no-qr", action="store_true", help="print the verification key as a string only"
    )
    keys.set_defaults(func=run_setup_keys)
    exp = actions.add_parser("export", help="write every entry as JSON lines or CSV on stdout")
    exp.add_argument("--db", required=True, help="the journal file (SQLite)")
    exp.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    exp.set_defaults(func=run_export)


def _missing(path: Path) -> str | None:
    if not path.exists():
        return f"{path}: no such journal file"
    if not path.is_file():
        return f"{path}: not a regular file"
    return None


def _jsonable(value: Any) -> JSON:
    """Effects as the journal stores them: plain JSON, whether the machine answers dicts or
    typed records (``to_json()`` or dataclasses)."""
    if hasattr(value, "to_json") and callable(value.to_json):
        return _jsonable(value.to_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


class MachineReplayer:
    """The round machine re-running journaled entries (`controller.journal.audit.Replayer`):
    each entry's type, data (without its effects) and timestamp go to ``step``."""

    def __init__(self, game: GameConfig) -> None:
        self._machine = RoundMachine(game)

    def step(self, entry: Entry) -> list[JSON]:
        data = {k: v for k, v in entry.data.items() if k != "effects"}
        effects = self._machine.step(Event(entry.type, data), entry.ts_ms)
        return [_jsonable(e) for e in effects]

    def snapshot(self) -> dict[str, JSON]:
        return dict(self._machine.snapshot())

    def meters(self) -> dict[str, JSON]:
        return {k: _jsonable(v) for k, v in self._machine.meters().items()}


def make_replay(path: Path, config_path: str | None) -> tuple[ReplayFactory | None, str | None]:
    """The replay factory: the round machine built from the journal's recorded configuration
    (or ``config_path``'s), or why there is none."""
    override: GameConfig | None = None
    if config_path is not None:
        override = load_config(config_path).game

    def factory(recorded: dict[str, JSON] | None) -> MachineReplayer:
        if override is not None:
            return MachineReplayer(override)
        game = GameConfig() if recorded is None else GameConfig.from_mapping(recorded, "game")
        return MachineReplayer(game)

    return factory, None


def run_verify(args: argparse.Namespace) -> int:
    path = Path(args.db)
    missing = _missing(path)
    if missing is not None:
        report: dict[str, JSON] = {"ok": False, "entries": 0, "rounds": 0, "problems": [missing]}
        _print_verify(report, args.json)
        return 1
    try:
        replay, why_not = make_replay(path, args.config)
        key = load_key(args.key_file) if args.key_file else None
        verify_key = None if args.verify_key is None else parse_verification_key(args.verify_key)
        expect_head = None if args.expect_head is None else parse_head(args.expect_head)
        installed = None if args.no_installed_config else _installed_config(args.installed_config)
    except Exception as exc:  # a bad --config (ConfigError lists its problems), a bad key file
        print(f"journal verify: {exc}", file=sys.stderr)
        return 2
    if why_not is not None:
        print(f"journal verify: warning: {why_not}", file=sys.stderr)
    result = verify(
        path,
        replay,
        anchor=args.anchor,
        use_anchor=not args.no_anchor,
        key=key,
        verify_key=verify_key,
        expect_head=expect_head,
    ).to_json()
    if args.previous is not None:
        from controller.service.carry import carried_problems

        across = carried_problems(path, args.previous)
        if across:
            result["problems"] = [*across, *result["problems"]]
            result["ok"] = False
        else:
            result["notes"] = [
                *result["notes"],
                f"carried over from {args.previous}: its head and meters",
            ]
    whence = _carried_from(path)
    if whence is not None and whence[0] != "journal":
        result["notes"] = [
            *result["notes"],
            f"seq 1 carries the meters over from a {whence[0]} at head {whence[1]}, not from a "
            "journal: the chain before it cannot be followed (--previous does not apply)",
        ]
    if installed is not None and _same_table(path, installed):
        extra = installed_problems(path, installed)
        if extra:
            result["problems"] = [*extra, *result["problems"]]
            result["ok"] = False
    if getattr(args, "archives", None):
        from controller.journal.archive import check_archives

        archived, heads = check_archives(Path(args.archives))
        result["archives"] = [
            {k: h.get(k) for k in ("file", "first_seq", "head_seq", "head_hash")} for h in heads
        ]
        if archived:
            result["problems"] = [*result["problems"], *archived]
            result["ok"] = False
        elif heads and args.previous is None and _starts_carried(path):
            # the live journal began with a carry: it must link to the newest archive's head
            from controller.service.carry import carried_problems

            newest = Path(args.archives) / str(heads[-1]["file"])
            across = carried_problems(path, newest)
            if across:
                result["problems"] = [*result["problems"], *across]
                result["ok"] = False
            else:
                result["notes"] = [
                    *result["notes"],
                    f"carried over from the newest archive {newest.name}: its head and meters",
                ]
    _print_verify(result, args.json)
    return 0 if result["ok"] else 1


def _carried_from(path: Path) -> tuple[str, str] | None:
    """The source and previous head (``SEQ:HASH``) of a journal whose seq 1 is a
    ``meters_carried`` entry; None for any other journal (or one that cannot be read)."""
    from controller.journal.audit import connect_read_only

    try:
        conn = connect_read_only(path)
        try:
            row = conn.execute(
                "SELECT data FROM journal WHERE seq = 1 AND type = 'meters_carried'"
            ).fetchone()
        finally:
            conn.close()
        data = None if row is None else json.loads(row[0])
    except Exception:
        return None
    if not isinstance(data, dict):
        return None
    return str(data.get("source")), f"{data.get('previous_seq')}:{data.get('previous_hash')}"


def _starts_carried(path: Path) -> bool:
    """Whether the journal's seq 1 is a ``meters_carried`` entry (a journal started anew)."""
    from controller.journal.audit import connect_read_only

    conn = connect_read_only(path)
    try:
        row = conn.execute("SELECT type FROM journal WHERE seq = 1").fetchone()
    finally:
        conn.close()
    return row is not None and row[0] == "meters_carried"


def run_archive(args: argparse.Namespace) -> int:
    """``tablectl journal archive``: two supervisors' PINs checked against the configuration,
    the controller not running (the journal's lock), then `make_archive`."""
    import getpass
    import time

    from controller.config import ConfigError, check_pin, load_config
    from controller.journal.archive import ArchiveError, make_archive
    from controller.journal.lock import JournalInUse, JournalLock

    who = [str(s) for s in args.supervisor]
    if len(who) != 2 or who[0] == who[1]:
        print(
            "journal archive: give --supervisor twice, two different supervisors", file=sys.stderr
        )
        return 2
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"journal archive: {exc}", file=sys.stderr)
        return 2
    if args.pin_stdin:
        pins = [sys.stdin.readline().rstrip("\n") for _ in who]
    else:
        pins = [getpass.getpass(f"PIN of {name}: ") for name in who]
    for name, pin in zip(who, pins, strict=True):
        known = config.supervisors.get(name)
        if known is None or not check_pin(known.pin_hash, pin):
            print(f"journal archive: refused: supervisor {name}: id or PIN not accepted",
                  file=sys.stderr)  # fmt: skip
            return 1
    path = Path(args.db)
    missing = _missing(path)
    if missing is not None:
        print(f"journal archive: {missing}", file=sys.stderr)
        return 2
    try:
        lock = JournalLock.acquire(path)
    except JournalInUse as exc:
        print(f"journal archive: {exc}: stop the controller first", file=sys.stderr)
        return 1
    try:
        head = make_archive(path, Path(args.out), who, int(time.time() * 1000))
    except ArchiveError as exc:
        print(f"journal archive: nothing archived: {exc}", file=sys.stderr)
        return 1
    finally:
        lock.release()
    print(f"archive {Path(args.out) / head.file}: entries {head.first_seq}-{head.head_seq}, "
          f"{head.rounds} rounds, head {head.head_seq}:{head.head_hash}")  # fmt: skip
    print(f"  file SHA-256 {head.sha256}; closed by {head.supervisors[0]} and "
          f"{head.supervisors[1]}; verified")  # fmt: skip
    print(f"  the live journal {path} is unchanged: to start it anew, move it aside and run "
          f"tablectl journal carry --config {args.config} --from-journal "
          f"{Path(args.out) / head.file} (two PINs): its seq 1 links from head "
          f"{head.head_seq}:{head.head_hash[:16]}... (docs/journal.md \"Retention and "
          "archives\")")  # fmt: skip
    return 0


def parse_head(text: str) -> tuple[int, str]:
    """``SEQ:HASH`` as the shift report and the console status print it."""
    seq, sep, digest = text.strip().partition(":")
    digest = digest.strip().lower()
    if (
        not sep
        or not seq.strip().isdigit()
        or int(seq) < 1
        or len(digest) != 64
        or any(c not in "0123456789abcdef" for c in digest)
    ):
        raise ValueError(f"--expect-head: must be SEQ:HASH (a seq and 64 hex digits), got {text!r}")
    return int(seq), digest


def _same_table(path: Path, installed: Any) -> bool:
    """The journal is the installed table's (its ``meta.table_id``): another table's journal
    audited on this machine is not compared with this table's configuration."""
    try:
        conn = connect_read_only(path)
    except Exception:
        return False
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'table_id'").fetchone()
    except Exception:
        return False
    finally:
        conn.close()
    return row is not None and str(row[0]) == str(installed.table.id)


def _installed_config(given: str | None) -> Any:
    """The installed configuration to compare with: ``--installed-config``, or the default path
    when it exists; None without one."""
    if given is None and not INSTALLED_CONFIG.is_file():
        return None
    return load_config(given if given is not None else INSTALLED_CONFIG)


def installed_problems(path: Path, installed: Any) -> list[str]:
    """The journal against the installed, approved configuration: a journal without the
    protection the installation gives (sealed or keyed) is named as downgraded, and the
    journal's configuration (its current one: the stored snapshot's, else the one it began
    with) must be the installed one."""
    from controller.service.restart import config_differences

    try:
        conn = connect_read_only(path)
    except Exception as exc:
        return [f"cannot compare with the installed configuration: {exc}"]
    try:
        if schema_problems(conn):
            return []
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        row = conn.execute("SELECT snapshot FROM state WHERE id = 1").fetchone()
    finally:
        conn.close()
    problems: list[str] = []
    key_id = meta.get("key_id", "")
    source = getattr(installed, "source", "the installed configuration")
    if installed.journal_seal_key is not None and not key_id.startswith("fss1:"):
        problems.append(
            f"downgraded: {source} seals the journal ([journal] seal_key) but this journal is "
            f"not sealed (key id {key_id or 'none'}): made without seals, or re-forged without them"
        )
    elif installed.journal_key_file is not None and not key_id:
        problems.append(
            f"downgraded: {source} keys the journal ([journal] key_file) but this journal is "
            "unkeyed: made without the key, or re-forged without it"
        )
    current: Any = None
    if row is not None:
        try:
            current = json.loads(row[0]).get("config")
        except (ValueError, AttributeError):
            current = None
    if not isinstance(current, dict):
        try:
            current = json.loads(meta.get("config", "null"))
        except ValueError:
            current = None
    if isinstance(current, dict):
        wanted = installed.game.to_mapping()
        differences = config_differences(current, wanted)
        if differences:
            keys = ", ".join(k for k, _, _ in differences[:10])
            problems.append(
                f"the journal's configuration is not the installed one ({source}): {keys} "
                "differ (a change pending in the file applies when the table next closes: "
                "verify again then)"
            )
    return problems


def _print_verify(report: dict[str, JSON], as_json: bool) -> None:
    training = any(p.get("training") for p in report.get("power_ups", []))
    report["training"] = training  # a simulated training table's journal (its power_ups say so)
    bench = any(p.get("unapproved_bench") for p in report.get("power_ups", []))
    if bench:  # tablectl run --unapproved-bench: a lab bench (the key only then)
        report["unapproved_bench"] = True
    if as_json:
        print(json.dumps(report, sort_keys=True))
        return
    status = "ok" if report["ok"] else "FAILED"
    print(f"journal verify: {status}: {report['entries']} entries, {report['rounds']} rounds")
    if training:
        print("journal verify: TRAINING journal (a simulated training table, not a live table)")
    if bench:
        print(f"journal verify: {BENCH_BANNER}")
    for problem in report["problems"]:
        print(f"  {problem}")
    for power_up in report.get("power_ups", []):
        print(f"  power-up at seq {power_up['seq']}: software {power_up['software_hash']}")
    for note in report.get("notes", []):
        print(f"  note: {note}")
    head = report.get("head")
    if isinstance(head, dict) and head.get("seq"):
        print(f"  head: seq {head['seq']} hash {head['hash']}")


def _read_pin(supervisor: str) -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"PIN of supervisor {supervisor}: ")
    return sys.stdin.readline().rstrip("\n")


def run_carry(args: argparse.Namespace) -> int:
    """A fresh journal whose seq 1 carries the previous journal's meters (two PINs)."""
    import time

    from controller.journal.lock import JournalInUse, JournalLock
    from controller.service.carry import (
        CarryError,
        CarrySource,
        check_supervisors,
        from_journal,
        from_report,
        from_witness,
        start_carried_journal,
    )

    try:
        config = load_config(args.config)
        verify_key = None if args.verify_key is None else parse_verification_key(args.verify_key)
        key = None if config.journal_key_file is None else load_key(config.journal_key_file)
    except Exception as exc:
        print(f"journal carry: {exc}", file=sys.stderr)
        return 2
    if args.from_witness and not args.pg:
        print("journal carry: --from-witness needs --pg DSN (central's database)", file=sys.stderr)
        return 2
    previous = Path(args.from_journal or args.from_report or "witness")
    try:
        supervisors = check_supervisors(
            [(sid, _read_pin(sid)) for sid in args.supervisor], config.supervisors
        )
        source: CarrySource
        if args.from_report is not None:
            source = from_report(previous, config.table.id)
        elif args.from_witness:
            from controller.link.central import CentralError, connect_pg

            try:
                pg = connect_pg(args.pg)
            except CentralError as exc:
                raise CarryError(str(exc)) from None
            witness_replay, _ = make_replay(previous, args.config)  # the configured game
            assert witness_replay is not None
            try:
                source = from_witness(pg, config.table.id, witness_replay)
            finally:
                pg.close()
        else:
            anchor = args.previous_anchor
            if anchor is None and not default_anchor_path(previous).exists():
                anchor = config.journal_anchor or default_anchor_path(config.journal_path)
            replay, _ = make_replay(previous, None)
            assert replay is not None
            source = from_journal(previous, replay, verify_key=verify_key, anchor=anchor)
        with JournalLock.acquire(config.journal_path):
            entry = start_carried_journal(
                config.journal_path,
                source,
                supervisors,
                game=config.game,
                table_id=config.table.id,
                asset_number=config.table.asset_number,
                anchor=config.journal_anchor,
                seal_file=config.journal_seal_key,
                key=key,
                now_ms=lambda: time.time_ns() // 1_000_000,
            )
    except (CarryError, JournalError, JournalInUse, SealError, OSError) as exc:
        print(f"journal carry: {exc}", file=sys.stderr)
        return 1
    print(
        f"{config.journal_path}: a fresh journal; seq {entry.seq} carries the meters of "
        f"{previous} at its head {source.seq}:{source.hash} (by {' and '.join(supervisors)})"
    )
    if source.source != "journal":
        print(
            f"carried from the {source.source} ({previous}), not from a journal: verify cannot "
            "follow the chain across this carry (journal verify --previous does not apply); "
            "keep the signed report or the witness's head with the new journal (source "
            f"{source.source!r} in seq 1)"
        )
    else:
        print(
            f"follow the chain with: tablectl journal verify --db {config.journal_path} "
            f"--previous {previous}"
        )
    return 0


def run_setup_keys(args: argparse.Namespace) -> int:
    """Create the sealing-key file and print the verification key (a string, and a QR code)."""
    target: Path | None = None if args.seal_key is None else Path(args.seal_key)
    if target is None and args.config is not None:
        try:
            target = load_config(args.config).journal_seal_key
        except Exception as exc:
            print(f"journal setup-keys: {exc}", file=sys.stderr)
            return 2
        if target is None:
            print(
                f"journal setup-keys: {args.config} has no [journal] seal_key",
                file=sys.stderr,
            )
            return 2
    if target is None:
        print("journal setup-keys: give --seal-key PATH or --config PATH", file=sys.stderr)
        return 2
    verification_key = new_verification_key()
    try:
        write_new_seal_file(target, verification_key)
    except SealError as exc:
        print(f"journal setup-keys: {exc}", file=sys.stderr)
        return 1
    text = format_verification_key(verification_key)
    print(f"sealing key written to {target} (seal id fss1:{seal_id(verification_key)})")
    print("VERIFICATION KEY (print it now for the back office and the regulator; it is not kept")
    print("on this machine and cannot be shown again):")
    print(f"  {text}")
    if not args.no_qr:
        qr = _qr_text(text)
        if qr is not None:
            print(qr)
    print(f"check a journal with: tablectl journal verify --db PATH --verify-key {text}")
    return 0


def _qr_text(text: str) -> str | None:
    """The verification key as a QR code in terminal characters (segno: a small, pure-Python,
    well-kept ISO/IEC 18004 encoder); None when it is not installed."""
    try:
        import io

        import segno
    except ImportError:
        return None
    out = io.StringIO()
    segno.make(text, error="m", micro=False).terminal(out=out, compact=True)
    return out.getvalue()


def run_export(args: argparse.Namespace) -> int:
    path = Path(args.db)
    missing = _missing(path)
    if missing is not None:
        print(f"journal export: {missing}", file=sys.stderr)
        return 1
    try:
        count = export(path, args.format, sys.stdout, CardRedactor())
    except (JournalError, ValueError) as exc:
        print(f"journal export: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    print(f"journal export: {count} entries", file=sys.stderr)
    return 0


CARD_FIELDS, HIDDEN = redact.CARD_FIELDS, redact.HIDDEN  # the one list (controller/journal/redact)


class CardRedactor:
    """Card identities from the shoe never leave the controller before the round resolves
    (table-rules.md, NJ 13:69F-31.10): an export taken mid-round shows the dealt entries of that
    round with their card fields hidden. A round is resolved by an accepted ``round_completed``
    entry or a ``round_voided`` effect."""

    def __init__(self) -> None:
        self.resolved: set[int] = set()

    def see(self, entry: Entry) -> None:
        effects = entry.data.get("effects")
        effects = effects if isinstance(effects, list) else []
        if completes_a_round(entry.type, entry.data):
            rid = entry.data.get("round_id", entry.round_id)
            if isinstance(rid, int):
                self.resolved.add(rid)
        for e in effects:
            if isinstance(e, dict) and e.get("type") == "round_voided":
                rid = e.get("round_id")
                if isinstance(rid, int):
                    self.resolved.add(rid)

    def redact(self, entry: Entry) -> dict[str, JSON] | None:
        if entry.round_id in self.resolved or not any(k in entry.data for k in CARD_FIELDS):
            return None
        return {k: (HIDDEN if k in CARD_FIELDS else v) for k, v in entry.data.items()}
