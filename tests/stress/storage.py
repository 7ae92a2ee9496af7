"""Storage faults under a real ``tablectl simulate`` (issue 12, `make stress`).

Each case prepares a journal (a real run of a few rounds), damages its storage the way the field
does, starts the controller on it and requires: exit 4 (the storage fault), a message saying
what is wrong, nothing appended (no play, progressive or other), and ``tablectl journal verify``
naming the damage where the damage is in the file. Real parts: a small tmpfs mounted by the run
(it runs as root) for the full disk, read-only bind mounts and remounts for the read-only file
and directory, byte edits of real SQLite pages, rows edited and deleted through sqlite3 with the
append-only triggers dropped (as someone with a shell would).

Damage in the middle of history (a page or row power-up does not read: power-up reads a fixed
number of rows, docs/journal.md) is not a power-up fault by design; those cases require verify
to pinpoint it and a maintenance entry's full check to refuse play.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from controller.journal.audit import connect_read_only
from controller.journal.format import SCHEMA_SQL
from tests.stress.powercut import ROOT, StressFailure


def simulate(db: Path, rounds: int, seed: int = 4, timeout: float = 300) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "controller.cli", "simulate", "--headless", "--rounds"]
    cmd += [str(rounds), "--seed", str(seed), "--db", str(db)]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=timeout, check=False)
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace")


def journal_verify(db: Path) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "controller.cli", "journal", "verify", "--db", str(db)]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=300, check=False)
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace")


def count(db: Path) -> int:
    conn = connect_read_only(db)
    try:
        return int(conn.execute("SELECT count(*) FROM journal").fetchone()[0])
    finally:
        conn.close()


@contextlib.contextmanager
def tmpfs(size: str) -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="stress-tmpfs-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        with contextlib.suppress(OSError):
            where.rmdir()


def _copy_journal(src: Path, dst_dir: Path) -> Path:
    dst = dst_dir / src.name
    for suffix in ("", ".anchor"):
        shutil.copyfile(src.with_name(src.name + suffix), dst.with_name(dst.name + suffix))
    return dst


def _unguarded(db: Path) -> sqlite3.Connection:
    """A plain shell's connection with the append-only triggers dropped."""
    conn = sqlite3.connect(db, isolation_level=None)
    for name in ("journal_no_update", "journal_no_delete", "journal_append_only"):
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    return conn


def _put_triggers_back(conn: sqlite3.Connection) -> None:
    for statement in SCHEMA_SQL:
        if statement.lstrip().upper().startswith("CREATE TRIGGER"):
            conn.execute(statement)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _page_of(db: Path, name: str, kind: str) -> int:
    conn = connect_read_only(db)
    try:
        pages = [
            int(p)
            for (p,) in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ? ORDER BY pageno",
                (name, kind),
            )
        ]
    finally:
        conn.close()
    if not pages:
        raise StressFailure(f"storage: no {kind} page of table {name} in {db}")
    return pages[len(pages) // 2]


def _smash_page(db: Path, page: int) -> None:
    conn = connect_read_only(db)
    size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    conn.close()
    with open(db, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(os.urandom(size // 2))


@dataclass
class Case:
    name: str
    damage: Callable[[Path], None]
    message: str  # what the controller's exit message must contain
    verify_says: str | None  # what verify must name (None: the file is sound; verify passes)
    power_up_fault: bool = True  # False: middle of history, seen by verify and maintenance
    mount: str | None = None  # tmpfs size for cases that need their own filesystem


@dataclass
class StorageResult:
    cases: list[str] = field(default_factory=list)
    faults: int = 0


def run(workdir: Path) -> StorageResult:
    result = StorageResult()
    base = workdir / "storage-base" / "j.db"
    base.parent.mkdir(parents=True, exist_ok=True)
    code, text = simulate(base, 6, seed=9)
    if code != 0:
        raise StressFailure(f"storage: the base run exited {code}: {text[-800:]}")

    def edit_last(db: Path) -> None:
        conn = _unguarded(db)
        conn.execute(
            "UPDATE journal SET data = replace(data, '\"effects\"', '\"effects\" ') "
            "WHERE seq = (SELECT max(seq) FROM journal)"
        )
        _put_triggers_back(conn)

    def edit_middle(db: Path) -> None:
        conn = _unguarded(db)
        conn.execute("UPDATE journal SET ts_ms = ts_ms + 1 WHERE seq = 20")
        _put_triggers_back(conn)

    def delete_last(db: Path) -> None:
        conn = _unguarded(db)
        conn.execute("DELETE FROM journal WHERE seq = (SELECT max(seq) FROM journal)")
        _put_triggers_back(conn)

    def delete_middle(db: Path) -> None:
        conn = _unguarded(db)
        conn.execute("DELETE FROM journal WHERE seq = 20")
        _put_triggers_back(conn)

    def edit_meters(db: Path) -> None:
        conn = _unguarded(db)
        conn.execute("UPDATE meters SET \"values\" = replace(\"values\", ':', ': ') ")
        _put_triggers_back(conn)

    cases = [
        Case("edited last row", edit_last, "does not match its hash", "hash mismatch"),
        Case("edited row mid-history", edit_middle, "", "seq 20: hash mismatch", False),
        Case("deleted last row", delete_last, "journal ends at seq", "journal ends at seq"),
        Case("deleted row mid-history", delete_middle, "", "gap after seq 19", False),
        Case("edited meters", edit_meters, "not those seq", "state hash mismatch"),
        Case(
            "corrupted page of the state table",
            lambda db: _smash_page(db, _page_of(db, "state", "leaf")),
            "storage fault",
            "integrity_check",
        ),
        Case(
            "corrupted page mid-history",
            lambda db: _smash_page(db, _page_of(db, "journal", "leaf")),
            "",
            "integrity_check",
            False,
        ),
    ]

    def damaged(case: Case) -> None:
        with tempfile.TemporaryDirectory(prefix="stress-storage-") as tmp:
            db = _copy_journal(base, Path(tmp))
            case.damage(db)
            _expect(case, db, result)

    jobs: list[Callable[[], None]] = [functools.partial(damaged, c) for c in cases]
    jobs += [
        lambda: _disk_full_at_power_up(base, result),
        lambda: _disk_full_while_playing(result),
        lambda: _read_only(base, result, whole_directory=False),
        lambda: _read_only(base, result, whole_directory=True),
    ]
    with concurrent.futures.ThreadPoolExecutor(3) as pool:  # each mostly waits on its process
        for future in [pool.submit(job) for job in jobs]:
            future.result()
    result.faults = len(result.cases)  # one injected fault per case (appends are thread-safe)
    return result


def _expect(case: Case, db: Path, result: StorageResult) -> None:
    before = count(db) if case.verify_says is None or "gap" in case.verify_says else None
    code, text = simulate(db, 50)
    where = f"storage case {case.name!r}"
    if case.power_up_fault:
        if code != 4 or case.message not in text:
            raise StressFailure(f"{where}: exit {code}, expected 4 with {case.message!r}: {text}")
        if before is not None and count(db) != before:
            raise StressFailure(f"{where}: entries were appended after the storage fault")
    vcode, vtext = journal_verify(db)
    if case.verify_says is None:
        if vcode != 0:
            raise StressFailure(f"{where}: verify failed on a sound file: {vtext[-600:]}")
    elif vcode == 0 or case.verify_says not in vtext:
        raise StressFailure(f"{where}: verify did not name {case.verify_says!r}: {vtext[-800:]}")
    result.cases.append(case.name)


def _disk_full_at_power_up(base: Path, result: StorageResult) -> None:
    with tmpfs("4m") as where:
        db = _copy_journal(base, where)
        before = count(db)
        code, text = simulate(db, 50)
        if code != 4 or "bytes free" not in text or count(db) != before:
            raise StressFailure(f"storage: full disk at power-up: exit {code}: {text[-600:]}")
    result.cases.append("disk full at power-up")


def _disk_full_while_playing(result: StorageResult) -> None:
    """Start on a filesystem with room, then fill it to the last byte while the table plays."""
    with tmpfs("20m") as where:
        db = where / "j.db"
        cmd = [sys.executable, "-m", "controller.cli", "simulate", "--headless"]
        cmd += ["--rounds", "100000", "--seed", "5", "--db", str(db)]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            import time

            deadline = time.monotonic() + 60
            while (not db.exists() or count(db) < 60) and time.monotonic() < deadline:
                time.sleep(0.1)
            with open(where / "filler", "wb", buffering=0) as f, contextlib.suppress(OSError):
                while True:  # every free block
                    f.write(b"\0" * 65536)
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        text = out.decode(errors="replace")
        if proc.returncode != 4 or "full" not in text:
            raise StressFailure(f"storage: disk full while playing: exit {proc.returncode}: {text}")
        (where / "filler").unlink()
        vcode, vtext = journal_verify(db)
        if vcode != 0:  # nothing half-written: the failed commit rolled back
            raise StressFailure(f"storage: after disk full, verify failed: {vtext[-600:]}")
    result.cases.append("disk full while playing")


def _read_only(base: Path, result: StorageResult, *, whole_directory: bool) -> None:
    name = "read-only directory" if whole_directory else "read-only file"
    with tmpfs("64m") as where:
        db = _copy_journal(base, where)
        before = count(db)
        if whole_directory:
            subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        else:
            subprocess.run(["mount", "--bind", str(db), str(db)], check=True)
            subprocess.run(["mount", "-o", "remount,ro,bind", str(db)], check=True)
        try:
            code, text = simulate(db, 50, timeout=200)
        finally:
            if not whole_directory:
                subprocess.run(["umount", str(db)], check=False)
        if code != 4 or "storage fault" not in text or count(db) != before:
            raise StressFailure(f"storage: {name}: exit {code} (expected 4): {text[-800:]}")
    result.cases.append(name)
