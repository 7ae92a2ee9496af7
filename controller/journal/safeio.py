"""Reading the small files beside the journal (anchor, keys, configuration) safely.

A path configured to ``/dev/zero`` would be read for ever, a FIFO would block the reader (power-up,
verify, config check) until someone writes to it: `read_small_file` reads only a regular file no
larger than its bound, opens it without blocking, checks the open file (not the path, which could
be swapped between a check and the open) and reads at most bound + 1 bytes.
This module must never write, and never read more than the bound.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SafeReadError(OSError):
    """The file is not a regular file, too large, or unreadable; the message says which."""


def read_small_file(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path`` when it holds at most ``limit`` bytes.
    `FileNotFoundError` when it does not exist; `SafeReadError` (naming ``what`` and the path)
    for a directory, device, FIFO or socket, a file over ``limit``, or a read error."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise SafeReadError(f"{what} {p}: cannot read: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SafeReadError(f"{what} {p}: not a regular file ({_kind(info.st_mode)})")
        if info.st_size > limit:
            raise SafeReadError(
                f"{what} {p}: {info.st_size} bytes, more than the {limit} bytes it may hold"
            )
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise SafeReadError(f"{what} {p}: grew past the {limit} bytes it may hold")
        return data
    except SafeReadError:
        raise
    except OSError as exc:
        raise SafeReadError(f"{what} {p}: cannot read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def small_file_problem(path: str | Path, limit: int, what: str) -> str | None:
    """Why ``path`` could not be read as `read_small_file` reads it (None: it can, or it does
    not exist yet). Reads nothing: ``config check`` uses it for the anchor and key files."""
    try:
        read_small_file(path, limit, what)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return str(exc)
    return None
