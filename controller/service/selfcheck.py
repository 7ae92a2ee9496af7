"""Power-up self-check: authentication of the controller's own software and of its storage.

`software_manifest` hashes every ``.py`` and ``.toml`` file (code, pay tables, house ways, and the
configuration's schema, which is code: ``controller/config.py`` and its readers) of the
installed ``fsm``, ``drivers`` and ``controller`` packages (SHA-256 each), the interpreter's
binary (``python/interpreter``), the systemd unit (`SYSTEM_FILES`, by its absolute path, where
installed), and names every runtime
dependency installed with them at its version (``python/tornado==6.6.1/RECORD``: the SHA-256 of
the distribution's RECORD, which lists each of its files with its own hash), so the manifest
names the versions ``deploy/requirements.lock`` installed; `software_hash` condenses the manifest
into one SHA-256 that the power-up journal entry records (table-rules.md: "an authentication of
its own software ... a SHA-256 manifest"; NJ 13:69E-1.39; NY 5321.18(b)(3)(iv) self-check).
`approval_problem` compares that hash with the approved manifest the installer writes
(``/etc/paigow/software.manifest``, `write_manifest`; ``python -m controller.service.selfcheck
--write PATH``) and names the files that differ: the check that can fail. `release_problem`
is the installer's check before that: the installed files against the manifest the release was
built with (``--release-manifest``). `check_storage`
reports why the journal's storage cannot be trusted (not our journal, no free space, and
SQLite's page check: at power-up ``quick_check`` of the small tables, a fixed cost; the full
``integrity_check`` of the whole file in verify and maintenance).

This module only reads, except `write_manifest` (the installer's step, never the service's): it
must never modify the software or the journal, never import the packages it hashes (it locates
them), and never decide whether play goes on (the caller does, from the problems).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from controller.journal.audit import connect_read_only, is_empty_database, schema_problems
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
#: The distribution whose runtime dependencies the manifest names (with its ``pi`` extra).
PROJECT = "paigow-table-controller"
PROJECT_EXTRAS = ("pi",)
#: Where deploy/install.sh writes the approved manifest (the unit passes it to ``tablectl run``).
APPROVED_MANIFEST = Path("/etc/paigow/software.manifest")
_LINE = re.compile(r"^([0-9a-f]{64})  (\S.*)$")


#: The manifest's entry for the Python interpreter (its binary, symlinks resolved).
INTERPRETER = "python/interpreter"
#: Files outside the packages that decide how the software runs, named by their absolute path
#: (issue 28 item 2): the systemd unit (its ExecStart names the approved manifest and the
#: configuration; its sandbox). An entry is in the manifest when the file exists here (a Pi
#: installed by deploy/install.sh); a development machine has none.
SYSTEM_FILES: tuple[Path, ...] = (Path("/etc/systemd/system/paigow-table.service"),)
#: The manifest's entries a release carries (deploy/release.sh ``software-packages.manifest``):
#: the packages' files and the system files. The interpreter and the dependencies' RECORDs are
#: the table's (they depend on its OS build and architecture; pip checks each locked file's hash).
RELEASE_PREFIXES: tuple[str, ...] = (*(f"{name}/" for name in SOFTWARE_PACKAGES), "/")


def interpreter_path() -> Path:
    """The interpreter binary running this process (a venv's ``python`` resolved)."""
    return Path(sys.executable).resolve()


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


def software_manifest(
    packages: Sequence[str] = SOFTWARE_PACKAGES,
    dependencies_of: str | None = PROJECT,
    system_files: Sequence[Path] = SYSTEM_FILES,
) -> dict[str, str]:
    """``{"fsm/rules/cards.py": sha256 hex, ...}``: every ``.py`` and ``.toml`` file under each
    package (subpackages included, ``__pycache__`` excluded), keyed by its POSIX path relative to
    the directory holding the package, and the installed runtime dependencies of the
    distribution ``dependencies_of`` (`dependency_manifest`; None: none, nor the interpreter
    or the system files), the interpreter and each of ``system_files`` that exists (keyed by
    its absolute path), in sorted order."""
    manifest: dict[str, str] = {}
    if dependencies_of is not None:
        manifest.update(dependency_manifest(dependencies_of))
        # the interpreter that runs it all (issue 28 item 2): the binary itself
        manifest[INTERPRETER] = hashlib.sha256(interpreter_path().read_bytes()).hexdigest()
        for system_file in system_files:
            if system_file.is_file():
                manifest[system_file.as_posix()] = hashlib.sha256(
                    system_file.read_bytes()
                ).hexdigest()
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


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dependency_manifest(
    project: str = PROJECT, extras: Sequence[str] = PROJECT_EXTRAS
) -> dict[str, str]:
    """``{"python/tornado==6.6.1/RECORD": sha256 hex of its RECORD, ...}``: the installed
    distributions ``project`` requires (without extras, or with one of ``extras``), and theirs,
    transitively. A requirement whose distribution is not installed is left out (a marker such
    as ``platform_system == "Windows"`` is never evaluated: what is installed is what runs);
    ``project`` not installed: an empty manifest (the packages are run from a source tree)."""
    try:
        importlib.metadata.distribution(project)
    except importlib.metadata.PackageNotFoundError:
        return {}
    manifest: dict[str, str] = {}
    seen: set[str] = {_normal(project)}
    todo = [project]
    while todo:
        name = todo.pop()
        for requirement in importlib.metadata.requires(name) or []:
            spec, _, marker = requirement.partition(";")
            extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
            if extra is not None and (name != project or extra.group(1) not in extras):
                continue
            found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
            if found is None or _normal(found.group(1)) in seen:
                continue
            seen.add(_normal(found.group(1)))
            try:
                dist = importlib.metadata.distribution(found.group(1))
            except importlib.metadata.PackageNotFoundError:
                continue
            key = f"python/{_normal(dist.metadata['Name'])}=={dist.version}/RECORD"
            manifest[key] = hashlib.sha256(_record_bytes(dist)).hexdigest()
            todo.append(dist.metadata["Name"])
    return manifest


def _record_bytes(dist: importlib.metadata.Distribution) -> bytes:
    """The distribution's RECORD file as stored (its bytes, so ``sha256sum`` agrees); its
    METADATA where there is no RECORD (a distribution not installed by pip)."""
    for file in dist.files or []:
        if file.name == "RECORD" and file.parent.name.endswith(".dist-info"):
            try:
                return Path(str(file.locate())).read_bytes()
            except OSError:
                break
    return (dist.read_text("RECORD") or dist.read_text("METADATA") or "").encode("utf-8")


def manifest_text(manifest: dict[str, str]) -> str:
    """The manifest as ``sha256sum`` prints it: ``<hex>  <path>\\n`` per file, sorted by path."""
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(manifest.items()))


def software_hash(manifest: dict[str, str] | None = None) -> str:
    """SHA-256 hex of `manifest_text` (UTF-8) of the installed software's manifest.

    So ``sha256sum`` of a manifest file written by `write_manifest` is its hash. The packages'
    lines (``dependencies_of=None``) are reproducible with coreutils from the directory holding
    the packages: ``find fsm drivers controller \\( -name '*.py' -o -name '*.toml' \\) -not
    -path '*/__pycache__/*' | LC_ALL=C sort | xargs sha256sum | sha256sum``.
    """
    text = manifest_text(software_manifest() if manifest is None else manifest)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_manifest(path: str | Path, manifest: dict[str, str] | None = None) -> str:
    """Write ``manifest`` (default: the installed software's) to ``path`` as `manifest_text`,
    atomically, mode 0644; returns its `software_hash`."""
    manifest = software_manifest() if manifest is None else manifest
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(manifest_text(manifest), encoding="utf-8")
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
    return software_hash(manifest)


def read_manifest(path: str | Path) -> dict[str, str]:
    """A manifest written by `write_manifest` (or ``sha256sum``); `SelfCheckError` names the
    first line that is not ``<64 hex>  <path>`` or a file that cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SelfCheckError(f"approved manifest {path}: cannot be read: {exc}") from exc
    manifest: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        found = _LINE.match(line)
        if found is None:
            raise SelfCheckError(f"approved manifest {path}: line {number} is not a manifest line")
        manifest[found.group(2)] = found.group(1)
    if not manifest:
        raise SelfCheckError(f"approved manifest {path}: empty")
    return manifest


def approval_problem(
    approved_path: str | Path, software: str, current: dict[str, str] | None = None
) -> str | None:
    """None when ``software`` (the hash journaled at power-up) is the hash of the approved
    manifest at ``approved_path``; otherwise what is wrong, naming the files that differ between
    the approved manifest and ``current`` (default: the installed software's manifest)."""
    try:
        approved = read_manifest(approved_path)
    except SelfCheckError as exc:
        return str(exc)
    expected = software_hash(approved)
    if software == expected:
        return None
    try:
        now = software_manifest() if current is None else current
    except SelfCheckError as exc:
        now = {}
        note = f"; {exc}"
    else:
        note = ""
    changed = sorted(k for k in approved.keys() & now.keys() if approved[k] != now[k])
    missing = sorted(approved.keys() - now.keys())
    added = sorted(now.keys() - approved.keys())
    parts = [f"{label} {', '.join(keys)}" for label, keys in (
        ("changed", changed), ("missing", missing), ("added", added)) if keys]  # fmt: skip
    return (
        f"software {software[:12]} is not the approved {expected[:12]} ({approved_path})"
        f"{': ' + '; '.join(parts) if parts else ''}{note}"
    )


def release_problem(release_path: str | Path, current: dict[str, str]) -> str | None:
    """None when the installed software ``current`` is the release's: every entry of the
    release's manifest at ``release_path`` (the packages' files and the system files, made when
    the release was built) has its hash here, and no package file is here that the release does
    not list; otherwise what differs, naming the files (deploy/install.sh stops on it)."""
    try:
        release = read_manifest(release_path)
    except SelfCheckError as exc:
        return str(exc)
    outside = sorted(k for k in release if not k.startswith(RELEASE_PREFIXES))
    if outside:
        return f"release manifest {release_path}: not a release's entries: {', '.join(outside)}"
    mine = {k: v for k, v in current.items() if k.startswith(RELEASE_PREFIXES)}
    changed = sorted(k for k in release.keys() & mine.keys() if release[k] != mine[k])
    missing = sorted(release.keys() - mine.keys())
    added = sorted(mine.keys() - release.keys())
    parts = [f"{label} {', '.join(keys)}" for label, keys in (
        ("changed", changed), ("missing", missing), ("added", added)) if keys]  # fmt: skip
    if not parts:
        return None
    return f"the installed software is not the release's ({release_path}): {'; '.join(parts)}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m controller.service.selfcheck [--release-manifest FILE] [--write PATH]``:
    print the installed software's manifest and hash, or write it as the approved manifest
    (deploy/install.sh), after comparing it with the release's manifest when one is given:
    a difference writes nothing, names the files and exits 1."""
    parser = argparse.ArgumentParser(prog="python -m controller.service.selfcheck")
    parser.add_argument("--write", metavar="PATH", help="write the approved manifest to PATH")
    parser.add_argument(
        "--release-manifest",
        metavar="FILE",
        help="the release's manifest (software-packages.manifest): the installed software must "
        "match it, or nothing is written (exit 1)",
    )
    args = parser.parse_args(argv)
    manifest = software_manifest()
    if args.release_manifest:
        problem = release_problem(args.release_manifest, manifest)
        if problem is not None:
            print(f"selfcheck: {problem}", file=sys.stderr)
            return 1
        print(f"the installed software matches the release's manifest {args.release_manifest}")
    if args.write:
        digest = write_manifest(args.write, manifest)
        print(f"{digest}  {args.write} ({len(manifest)} entries)")
    else:
        sys.stdout.write(manifest_text(manifest))
        print(f"software hash {software_hash(manifest)}")
    return 0


def check_storage(
    path: str | Path, *, full: bool = True, min_free_bytes: int = MIN_FREE_BYTES
) -> list[str]:
    """Problems with the journal's storage at ``path`` (empty list = usable).

    A missing file is not a problem (power-up creates it) as long as its directory exists; nor
    is an empty SQLite file (`is_empty_database`: a power cut during the first power-up).
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
        if is_empty_database(conn):  # never written (a cut during the first power-up): new
            return problems
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


if __name__ == "__main__":
    raise SystemExit(main())
