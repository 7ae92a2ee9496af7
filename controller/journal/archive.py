"""Closing a period of the journal into a verified archive, and checking archives (issue 28
item 6; the retention rule: docs/journal.md "Retention and archives").

`make_archive` copies the live journal, as it stands with the table closed and the controller
stopped, into an archive file (SQLite's online backup: a consistent copy), checks the copy with
`controller.journal.audit.verify` (the hash chain, every stored fact, and its head equal to the
live journal's), and writes the archive's head record beside it (``<name>.head.json``: the
table, the seq and hash of the head, the SHA-256 of the archive file, the meters at the close,
when and by which two supervisors). `check_archives` checks every archive of a directory against
its head record: the file's SHA-256, its own verify, the head it holds and the table; a tampered
archive is named.

Starting the live journal anew with the meters carried over, its chain linked from the head
written here, is `controller.journal`'s fresh-journal step (another module): this one only reads
the live journal and writes the archive and its head record. Must never modify the live
journal, never write an archive that did not verify, never overwrite an archive.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.journal.audit import connect_read_only, verify
from controller.journal.reports import JournalReader, ReportError

HEAD_SUFFIX = ".head.json"
ARCHIVE_SUFFIX = ".journal.db"
_CHUNK = 1 << 20


class ArchiveError(Exception):
    """No archive was made; the message says why (nothing was written)."""


@dataclass(frozen=True)
class ArchiveHead:
    """What an archive holds, written beside it as JSON and checked by `check_archives`."""

    table_id: str
    file: str  # the archive file's name, in the same directory as its head record
    sha256: str
    entries: int
    rounds: int
    first_seq: int
    head_seq: int
    head_hash: str
    meters: dict[str, Any]
    closed_ms: int
    supervisors: tuple[str, str]

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "supervisors": list(self.supervisors)}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _first_seq(path: Path) -> int:
    conn = connect_read_only(path)
    try:
        row = conn.execute("SELECT MIN(seq) FROM journal").fetchone()
    finally:
        conn.close()
    return int(row[0] or 0)


def make_archive(
    db: Path, out_dir: Path, supervisors: Sequence[str], closed_ms: int
) -> ArchiveHead:
    """Archive the journal at ``db`` into ``out_dir``, approved by two distinct
    ``supervisors`` (their PINs checked by the caller). The caller holds the journal's lock
    (no controller writes it meanwhile). ArchiveError: the live journal does not verify, the
    table is not closed, the copy does not verify, or an archive of that period exists."""
    if len(supervisors) != 2 or supervisors[0] == supervisors[1]:
        raise ArchiveError("closing a period needs two different supervisors, each with a PIN")
    live = verify(db, use_anchor=False)
    if not live.ok:
        raise ArchiveError(f"{db} does not verify: {'; '.join(live.problems[:3])}")
    if live.entries == 0:
        raise ArchiveError(f"{db} holds no entry: nothing to archive")
    try:
        with JournalReader(db) as reader:
            snapshot = reader.stored_snapshot() or {}
            meters = reader.stored_meters()
            table_id = reader.meta().get("table_id", "")
    except ReportError as exc:
        raise ArchiveError(str(exc)) from None
    if snapshot.get("state") != "Closed":
        raise ArchiveError(
            f"the table is {snapshot.get('state')}: a period is closed with the table closed"
        )
    first = _first_seq(db)
    # the close's time first: periods sort in order (a journal started anew counts from 1 again)
    name = f"{table_id or 'table'}-{closed_ms:013d}-{first}-{live.head_seq}"
    target = out_dir / f"{name}{ARCHIVE_SUFFIX}"
    head_path = out_dir / f"{name}{HEAD_SUFFIX}"
    if target.exists() or head_path.exists():
        raise ArchiveError(f"{target} exists: an archive is never overwritten")
    for record in sorted(out_dir.glob(f"*{HEAD_SUFFIX}")) if out_dir.is_dir() else []:
        try:
            done = read_head(record)
        except ArchiveError:
            continue  # check_archives names it
        if done["table_id"] == table_id and done["head_hash"] == live.head_hash:
            raise ArchiveError(f"this period is archived already: {done['file']}")
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    try:
        source = connect_read_only(db)
        try:
            copy = sqlite3.connect(partial)
            try:
                source.backup(copy)
                copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            finally:
                copy.close()
        finally:
            source.close()
        with partial.open("rb") as f:
            os.fsync(f.fileno())
        copied = verify(partial, use_anchor=False, expect_head=(live.head_seq, live.head_hash))
        if not copied.ok or copied.head_hash != live.head_hash:
            raise ArchiveError(f"the copy does not verify: {'; '.join(copied.problems[:3])}")
        os.replace(partial, target)
    except sqlite3.Error as exc:
        raise ArchiveError(f"cannot copy {db}: {exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    head = ArchiveHead(
        table_id=table_id,
        file=target.name,
        sha256=file_sha256(target),
        entries=live.entries,
        rounds=live.rounds,
        first_seq=first,
        head_seq=live.head_seq,
        head_hash=live.head_hash,
        meters=meters,
        closed_ms=closed_ms,
        supervisors=(supervisors[0], supervisors[1]),
    )
    tmp = head_path.with_name(head_path.name + ".tmp")
    tmp.write_text(json.dumps(head.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.chmod(tmp, 0o444)
    os.chmod(target, 0o444)
    os.replace(tmp, head_path)
    directory = os.open(out_dir, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return head


def read_head(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArchiveError(f"{path.name}: not a readable head record ({exc})") from None
    needed = ("table_id", "file", "sha256", "first_seq", "head_seq", "head_hash")
    if not isinstance(data, dict) or any(k not in data for k in needed):
        raise ArchiveError(f"{path.name}: not a head record (needs {', '.join(needed)})")
    return data


def check_archives(
    out_dir: Path, table_id: str | None = None
) -> tuple[list[str], list[dict[str, Any]]]:
    """``(problems, heads)`` for every archive in ``out_dir`` (oldest first, by the close's
    time in its name): each archive file against its head record (SHA-256, its own verify, the
    head it holds) and the table. A problem names the archive."""
    problems: list[str] = []
    heads: list[dict[str, Any]] = []
    records = sorted(out_dir.glob(f"*{HEAD_SUFFIX}"))
    if not records:
        return [f"{out_dir}: no archive (no *{HEAD_SUFFIX})"], []
    for record in records:
        try:
            head = read_head(record)
        except ArchiveError as exc:
            problems.append(str(exc))
            continue
        archive = out_dir / str(head["file"])
        name = archive.name
        if not archive.is_file():
            problems.append(f"archive {name}: missing")
            continue
        if table_id is not None and head["table_id"] != table_id:
            problems.append(f"archive {name}: of table {head['table_id']}, not {table_id}")
        if file_sha256(archive) != head["sha256"]:
            problems.append(f"archive {name}: its SHA-256 is not the head record's: changed")
        report = verify(
            archive, use_anchor=False, expect_head=(int(head["head_seq"]), str(head["head_hash"]))
        )
        problems.extend(f"archive {name}: {p}" for p in report.problems[:5])
        if report.ok and report.head_seq != int(head["head_seq"]):
            problems.append(
                f"archive {name}: ends at seq {report.head_seq}, its head record says "
                f"{head['head_seq']}"
            )
        heads.append(head)
    return problems, heads
