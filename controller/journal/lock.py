"""One controller per journal: an exclusive ``flock`` on ``<journal>.lock`` holding the pid.

`acquire` is the first thing `tablectl run` and `tablectl simulate` do, before any device,
socket or thread is started, and the lock is held for the life of the process (the kernel drops
it when the process ends, however it ends). A second start on the same journal fails at once with
`JournalInUse` ("journal PATH is in use (pid N)") and has touched nothing. This module must never
open the journal itself or remove a lock file it does not hold.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType
from typing import Any, TypedDict


class JournalInUse(Exception):
    """Another process holds the journal's lock; the message names the journal and its pid."""


def lock_path(journal: str | Path) -> Path:
    p = Path(journal)
    return p.with_name(p.name + ".lock")


class JournalLock:
    """A held lock; `release` (or the end of the process) gives it up."""

    def __init__(self, journal: Path, fd: int) -> None:
        self.journal = journal
        self.path = lock_path(journal)
        self._fd = fd

    @classmethod
    def acquire(cls, journal: str | Path) -> JournalLock:
        """Take the lock without waiting. `JournalInUse` if another process holds it;
        ``OSError`` if the lock file cannot be created (e.g. no such directory)."""
        p = Path(journal)
        path = lock_path(p)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise JournalInUse(f"journal {p} is in use (pid {holder})") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        return cls(p, fd)

    def release(self) -> None:
        if self._fd >= 0:
            try:
                os.ftruncate(self._fd, 0)
            finally:
                os.close(self._fd)  # closing the descriptor drops the flock
                self._fd = -1

    def __enter__(self) -> JournalLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


class OwnerJournalOptions(TypedDict):
    table_id: str | None
    asset_number: int | None
    game_config: dict[str, Any] | None
    anchor_path: Path | None
    key_file: Path | None
    seal_file: Path | None


def owner_journal_options(config: Any) -> OwnerJournalOptions:
    """The `controller.service.owner.Owner` keyword arguments of the journal's identity and
    protections, from a `controller.config.TableConfig` (one place for run and simulate)."""
    table = getattr(config, "table", None)
    game = getattr(config, "game", None)
    return {
        "table_id": getattr(table, "id", None),
        "asset_number": getattr(table, "asset_number", None),
        "game_config": None if game is None else game.to_mapping(),
        "anchor_path": getattr(config, "journal_anchor", None),
        "key_file": getattr(config, "journal_key_file", None),
        "seal_file": getattr(config, "journal_seal_key", None),
    }
