"""``tablectl journal verify`` and ``tablectl journal export``: the auditor's view of a journal.

Responsible for running `controller.journal.audit.verify` (chain, everything stored, the anchor
and, through the round machine re-run from the journal's own configuration, every entry's effects
and state) and ``export`` on a journal file
named on the command line, and for turning every failure into a clear message and a non-zero exit.
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
from controller.journal.anchor import load_key
from controller.journal.audit import (
    ReplayFactory,
    connect_read_only,
    export,
    schema_problems,
    verify,
)
from controller.journal.format import JSON, Entry, JournalError, completes_a_round
from controller.journal.reports import BENCH_BANNER
from fsm.round.config import GameConfig
from fsm.round.events import Event
from fsm.round.machine import RoundMachine


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
    ver.add_argument("--key-file", help="the keyed chain's key: check every entry's MAC")
    ver.set_defaults(func=run_verify)
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


def recorded_game_config(path: Path) -> dict[str, JSON] | None:
    """The game configuration the journal began with (its ``meta.config`` row, covered by the
    genesis hash), read-only; None when it records none or cannot be read."""
    try:
        conn = connect_read_only(path)
    except Exception:
        return None
    try:
        if schema_problems(conn):
            return None
        row = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        value = None if row is None else json.loads(row[0])
        return value if isinstance(value, dict) else None
    except Exception:
        return None
    finally:
        conn.close()


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
    except Exception as exc:  # a bad --config (ConfigError lists its problems), a bad key file
        print(f"journal verify: {exc}", file=sys.stderr)
        return 2
    if why_not is not None:
        print(f"journal verify: warning: {why_not}", file=sys.stderr)
    result = verify(
        path, replay, anchor=args.anchor, use_anchor=not args.no_anchor, key=key
    ).to_json()
    _print_verify(result, args.json)
    return 0 if result["ok"] else 1


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
