"""The production RNG's draws for a test lab (`tablectl rng dump`, `tablectl rng stream`).

Responsible for writing (1) the draws exactly as the round makes them: each one is
`controller.service.rng.draw_with_bytes`, the very call `draw_position` makes (the OS CSPRNG,
`read_csprng`, through `scale`), written as its value 1..7 and the raw bytes it consumed; and
(2) the raw source alone (`read_csprng` in blocks) for a lab's bit-level batteries (dieharder,
NIST SP 800-22), which need far more bytes than the draws consume. And for refusing both while a
live table is open (`live_table_refusal`: the table's journal read read-only).

Must never use the simulator's seeded source, never draw for a round, never write or lock a
journal.
"""

from __future__ import annotations

import hashlib
import platform
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, TextIO

from controller.config import ConfigError, load_config
from controller.journal.format import JournalError
from controller.journal.reports import JournalReader, ReportError
from controller.service import rng

#: Where `deploy/install.sh` puts a table's configuration: a machine with this file is a table.
TABLE_CONFIG = Path("/etc/paigow/table.toml")
#: The states of a table that is not open: a dump is allowed there (fsm/round/states.py).
NOT_OPEN = ("Closed", "Maintenance")
#: The first line of a dump file (`read_dump` checks it).
DUMP_MAGIC = "# tablectl rng dump 1"
#: The block size of `stream` (the raw source for bit-level batteries).
STREAM_BLOCK = 1 << 16


def live_table_refusal(config: Path | None, db: Path | None) -> tuple[str | None, str]:
    """``(refusal, what was checked)``: the refusal is None when no live table is open here.

    The journal is ``db``, else the journal of ``config``, else of `TABLE_CONFIG` when this
    machine has one (a machine without it and without ``--db`` has no table). It is read
    read-only: a training journal, a journal not yet made, or a table whose stored state is
    Closed or Maintenance allows the dump; an open table (any other state, Fault included)
    refuses it, and so does a journal or configuration that cannot be read (fail closed)."""
    if db is None:
        path = config if config is not None else TABLE_CONFIG
        if config is None and not path.exists():
            return None, f"no table on this machine ({TABLE_CONFIG} absent, no --db)"
        try:
            db = load_config(path).journal_path
        except ConfigError as exc:
            return f"cannot tell whether the table is open: {exc}", str(path)
    if not db.exists():
        return None, f"{db}: no journal yet (the table has never run)"
    try:
        with JournalReader(db) as reader:
            if reader.training:
                return None, f"{db}: a training journal (simulated table)"
            snap = reader.stored_snapshot()
    except (ReportError, JournalError, sqlite3.Error, OSError) as exc:
        return f"cannot tell whether the table is open: {exc}", str(db)
    state = None if snap is None else snap.get("state")
    if snap is None:
        return None, f"{db}: no entry yet (the table has never opened)"
    if state in NOT_OPEN:
        return None, f"{db}: the table is {state}"
    return (
        f"the live table is open (state {state} in {db}): close the table first "
        "(the lab's draws must not run beside play)",
        str(db),
    )


@dataclass(frozen=True)
class DumpSummary:
    count: int
    raw_bytes: int
    rejected: int
    counts: tuple[int, ...]
    sha256: str
    started: str
    finished: str


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def dump(
    count: int,
    out: TextIO,
    raw: BinaryIO | None = None,
    draw: Callable[[], tuple[int, bytes]] | None = None,
) -> DumpSummary:
    """Write ``count`` production draws to ``out``: a header, then one line per draw, its value
    and the hex of the bytes it consumed (``4 a5``; ``2 fe3c``: 0xfe was rejected, then 0x3c
    gave 2). ``raw`` (optional) gets the same bytes as one binary stream. ``draw`` is only for
    tests; it defaults to the round's own `rng.draw_with_bytes`."""
    take = rng.draw_with_bytes if draw is None else draw
    started = _utc_now()
    digest = hashlib.sha256()
    header = (
        f"{DUMP_MAGIC}\n"
        "# source: os.urandom (getrandom(2)), the production RNG of controller/service/rng.py\n"
        f"# scaling: a byte b < {rng.ACCEPT_BELOW} gives b % 7 + 1; a byte "
        f"{rng.ACCEPT_BELOW}..255 is rejected and the next byte read (docs/rng.md)\n"
        f"# count: {count}; started: {started}; host: {platform.node()}\n"
        "# each line: the value 1..7, a space, the hex of the raw bytes it consumed\n"
    )
    out.write(header)
    digest.update(header.encode())
    tally = [0] * rng.POSITIONS
    total = 0
    lines: list[str] = []
    for i in range(count):
        value, consumed = take()
        tally[value - 1] += 1
        total += len(consumed)
        lines.append(f"{value} {consumed.hex()}\n")
        if raw is not None:
            raw.write(consumed)
        if len(lines) >= 65_536 or i == count - 1:
            block = "".join(lines)
            out.write(block)
            digest.update(block.encode())
            lines.clear()
    return DumpSummary(
        count=count,
        raw_bytes=total,
        rejected=total - count,
        counts=tuple(tally),
        sha256=digest.hexdigest(),
        started=started,
        finished=_utc_now(),
    )


def read_dump(path: Path) -> tuple[bytes, bytes]:
    """``(values, raw)`` of a dump file: the values as bytes 1..7 and every raw byte consumed,
    in order. ValueError names the first line that is not a draw."""
    values = bytearray()
    raw = bytearray()
    with path.open("r", encoding="ascii") as f:
        first = f.readline().rstrip("\n")
        if first != DUMP_MAGIC:
            raise ValueError(f"{path}: not a tablectl rng dump (first line {first[:40]!r})")
        for number, line in enumerate(f, start=2):
            if line.startswith("#"):
                continue
            value, _, hexed = line.rstrip("\n").partition(" ")
            try:
                v = int(value)
                consumed = bytes.fromhex(hexed)
            except ValueError:
                raise ValueError(f"{path}:{number}: not 'value hex': {line[:40]!r}") from None
            if not 1 <= v <= rng.POSITIONS or not consumed:
                raise ValueError(f"{path}:{number}: not a draw: {line[:40]!r}")
            values.append(v)
            raw += consumed
    return bytes(values), bytes(raw)


def stream(out: BinaryIO, nbytes: int | None) -> int:
    """Write ``nbytes`` (None: until the reader closes) of the production source to ``out``, in
    blocks of `STREAM_BLOCK`; the number written. A closed pipe ends it (BrokenPipeError)."""
    written = 0
    while nbytes is None or written < nbytes:
        n = STREAM_BLOCK if nbytes is None else min(STREAM_BLOCK, nbytes - written)
        out.write(rng.read_csprng(n))
        written += n
    out.flush()
    return written
