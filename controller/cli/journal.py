"""``tablectl journal verify`` and ``tablectl journal export``: the auditor's view of a journal.

Responsible for running `controller.journal.audit.verify` (chain, stored state and, through the
round machine's pure ``replay``, the stored snapshot and meters) and ``export`` on a journal file
named on the command line, and for turning every failure into a clear message and a non-zero exit.
Must never create, write or repair a journal file, and never print a traceback for a bad file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from controller.journal.audit import Replay, connect_read_only, export, schema_problems, verify
from controller.journal.format import JSON, Entry, JournalError, completes_a_round, decode_object


def register(sub: Any) -> None:
    parser = sub.add_parser("journal", help="verify or export a table's journal (read-only)")
    actions = parser.add_subparsers(dest="journal_command", required=True)
    ver = actions.add_parser(
        "verify", help="check the hash chain, the stored state and the replay of every entry"
    )
    ver.add_argument("--db", required=True, help="the journal file (SQLite)")
    ver.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ver.add_argument(
        "--config",
        help="the table configuration the journal began with (default: the game configuration "
        "recorded in the journal)",
    )
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
    """The game configuration the journal began with, read-only.

    The ``config`` of the first entry that carries one (e.g. ``power_up``) when there is one;
    otherwise the stored snapshot's ``config`` (the latest) with every accepted ``config_changed``
    undone, newest first, from the old values its effect records. None when the journal records
    no configuration (an empty journal).
    """
    try:
        conn = connect_read_only(path)
    except Exception:
        return None
    try:
        if schema_problems(conn):
            return None
        for (data,) in conn.execute(
            "SELECT data FROM journal WHERE data LIKE '%\"config\":{%' ORDER BY seq LIMIT 1"
        ):
            obj = decode_object(data, "entry")
            if isinstance(obj.get("config"), dict):
                return dict(obj["config"])
        row = conn.execute("SELECT snapshot FROM state WHERE id = 1").fetchone()
        if row is None:
            return None
        snap = decode_object(row[0], "state")
        latest = snap.get("config")
        if not isinstance(latest, dict):
            return None
        undo: list[dict[str, JSON]] = []
        for (data,) in conn.execute(
            "SELECT data FROM journal WHERE type = 'config_changed' ORDER BY seq DESC"
        ):
            for effect in decode_object(data, "entry").get("effects", []):
                if isinstance(effect, dict) and effect.get("type") == "config_changed":
                    changes = effect.get("changes", [])
                    undo.append({str(c["key"]): c["old"] for c in changes if isinstance(c, dict)})
        return _undo_changes(dict(latest), undo)
    except Exception:
        return None
    finally:
        conn.close()


def _undo_changes(latest: dict[str, JSON], undo: list[dict[str, JSON]]) -> dict[str, JSON]:
    """Apply each mapping of old values (newest change first) to go back to the first config."""
    if not undo:
        return latest
    from fsm.round.config import GameConfig, with_changes

    config = GameConfig.from_mapping(latest, "snapshot.config")
    for old_values in undo:
        config = with_changes(config, old_values)
    return dict(config.to_mapping())


def make_replay(path: Path, config_path: str | None) -> tuple[Replay | None, str | None]:
    """The round machine's replay bound to the journal's game configuration, or why not."""
    try:
        from fsm.round import machine as machine_module
        from fsm.round.config import GameConfig
    except ImportError as exc:
        return None, f"round machine unavailable ({exc})"
    replay_fn = getattr(machine_module, "replay", None)
    try:
        from fsm.round import replay as replay_module

        replay_fn = getattr(replay_module, "replay", replay_fn)
    except ImportError:
        pass
    if replay_fn is None:
        return None, "round machine has no replay()"
    if config_path is not None:
        from controller.config import load_config

        game: Any = load_config(config_path).game
    else:
        recorded = recorded_game_config(path)
        try:
            game = GameConfig() if recorded is None else GameConfig.from_mapping(recorded, "game")
        except ValueError as exc:
            return None, f"the journal's recorded game configuration is not valid: {exc}"
    try:
        replay_fn(game, iter(()))
    except NotImplementedError:
        return None, "the round machine's replay is not implemented yet: entries not replayed"
    except Exception:
        pass  # an empty replay may legitimately refuse; the real run reports problems

    def bound(entries: Iterator[Entry]) -> tuple[dict[str, JSON], dict[str, JSON]]:
        snapshot, meters = replay_fn(game, entries)
        return dict(snapshot), dict(meters)

    return bound, None


def run_verify(args: argparse.Namespace) -> int:
    path = Path(args.db)
    missing = _missing(path)
    if missing is not None:
        report: dict[str, JSON] = {"ok": False, "entries": 0, "rounds": 0, "problems": [missing]}
        _print_verify(report, args.json)
        return 1
    try:
        replay, why_not = make_replay(path, args.config)
    except Exception as exc:  # a bad --config: ConfigError lists its problems
        print(f"journal verify: {exc}", file=sys.stderr)
        return 2
    if why_not is not None:
        print(f"journal verify: warning: {why_not}", file=sys.stderr)
    result = verify(path, replay).to_json()
    _print_verify(result, args.json)
    return 0 if result["ok"] else 1


def _print_verify(report: dict[str, JSON], as_json: bool) -> None:
    if as_json:
        print(json.dumps(report, sort_keys=True))
        return
    status = "ok" if report["ok"] else "FAILED"
    print(f"journal verify: {status}: {report['entries']} entries, {report['rounds']} rounds")
    for problem in report["problems"]:
        print(f"  {problem}")


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


CARD_FIELDS = ("stacks", "hands", "cards")
HIDDEN = "hidden until the round resolves"


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
