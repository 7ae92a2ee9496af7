"""Power-up self-check: authentication of the controller's own software and of its storage.

`software_manifest` hashes every ``.py`` and ``.toml`` file (code, pay tables, house ways) of the
installed ``fsm``, ``drivers`` and ``controller`` packages (SHA-256 each); `software_hash`
condenses the manifest into one SHA-256 that the power-up journal entry records (table-rules.md:
"an authentication of its own software ... a SHA-256 manifest"; NJ 13:69E-1.39; NY
5321.18(b)(3)(iv) self-check). `check_storage` reports why the journal's storage cannot be trusted
(not our journal, no free space, and SQLite's page check: at power-up ``quick_check`` of the small
tables, a fixed cost; the full ``integrity_check`` of the whole file in verify and maintenance).

This module only reads: it must never modify a file, never import the packages it hashes (it
locates them), and never decide whether play goes on (the caller does, from the problems).
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from controller.journal.audit import connect_read_only, schema_problems
from controller.journal.format import JournalError


class SelfCheckError(Exception):
    """The software to authenticate cannot be located; the message names the package."""


SOFTWARE_PACKAGES: tuple[str, ...] = ("fsm", "drivers", "controller")
# The pay tables and house ways are part of the certified software: a changed pay table must
# change the hash as surely as changed code.
SOFTWARE_SUFFIXES: tuple[str, ...] = (".py", ".toml")
MIN_FREE_BYTES = 16 * 1024 * 1024
#: The tables power-up reads (their pages are checked at every power-up).
QUICK_CHECKED = ("meta", "state", "meters")


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SelfCheckError(f"software package {name!r} is not installed")
    locations = list(spec.submodule_search_locations)
    if len(locations) != 1:
        raise SelfCheckError(
            f"software package {name!r} has {len(locations)} locations: {locations}"
        )
    return Path(locations[0])


def software_manifest(packages: Sequence[str] = SOFTWARE_PACKAGES) -> dict[str, str]:
    """``{"fsm/rules/cards.py": sha256 hex, ...}``: every ``.py`` and ``.toml`` file under each
    package
    (subpackages included, ``__pycache__`` excluded), keyed by its POSIX path relative to the
    directory holding the package, in sorted order."""
    manifest: dict[str, str] = {}
    for name in packages:
        root = _package_dir(name)
        for file in root.rglob("*"):
            if file.suffix not in SOFTWARE_SUFFIXES:
                continue
            if "__pycache__" in file.parts or not file.is_file():
                continue
            key = (Path(name) / file.relative_to(root)).as_posix()
            manifest[key] = hashlib.sha256(file.read_bytes()).hexdigest()
    return dict(sorted(manifest.items()))


def manifest_text(manifest: dict[str, str]) -> str:
    """The manifest as ``sha256sum`` prints it: ``<hex>  <path>\\n`` per file, sorted by path."""
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(manifest.items()))


def software_hash(manifest: dict[str, str] | None = None) -> str:
    """SHA-256 hex of `manifest_text` (UTF-8) of the installed software's manifest.

    Reproducible with coreutils from the directory holding the packages:
    ``find fsm drivers controller \\( -name '*.py' -o -name '*.toml' \\) -not -path
    '*/__pycache__/*' | LC_ALL=C sort | xargs sha256sum | sha256sum``.
    """
    text = manifest_text(software_manifest() if manifest is None else manifest)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_storage(
    path: str | Path, *, full: bool = True, min_free_bytes: int = MIN_FREE_BYTES
) -> list[str]:
    """Problems with the journal's storage at ``path`` (empty list = usable).

    A missing file is not a problem (power-up creates it) as long as its directory exists.
    Otherwise: SQLite ``integrity_check`` of the whole file (``full``) or ``quick_check`` of the
    small tables (``meta``, ``state``, ``meters``: what power-up reads, at a cost independent of
    the journal's length), that the file is our journal at the current schema, and at least
    ``min_free_bytes`` free on its disk. Any SQLite error is a problem, never ignored.
    """
    p = Path(path)
    problems: list[str] = []
    directory = p.parent if str(p.parent) else Path(".")
    if not directory.is_dir():
        return [f"{directory}: journal directory does not exist"]
    free = shutil.disk_usage(directory).free
    if free < min_free_bytes:
        problems.append(f"{directory}: only {free} bytes free, need {min_free_bytes}")
    if not p.exists():
        return problems
    try:
        conn = connect_read_only(p)
    except (JournalError, sqlite3.Error) as exc:
        return [*problems, f"{p}: cannot open: {exc}"]
    try:
        schema = schema_problems(conn)
        checks = (
            ["PRAGMA integrity_check"]
            if full or schema
            else [f"PRAGMA quick_check({table})" for table in QUICK_CHECKED]
        )
        for check in checks:
            rows = conn.execute(check).fetchall()
            if rows != [("ok",)]:
                problems.extend(f"{p}: {check[7:]}: {row[0]}" for row in rows)
        problems.extend(f"{p}: {problem}" for problem in schema)
    except sqlite3.Error as exc:
        problems.append(f"{p}: {exc}")
    finally:
        conn.close()
    return problems
