"""Reading a journal in tests: every entry as (seq, type, data), read-only.

One reader for the tests that look at what a run journaled (the owner, the console, the page,
SAS, the link, storage). It reads the file through the journal's one reader
(`controller.journal.tail.read_committed`, over the auditors' `connect_read_only`) and must never
write to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.journal.tail import read_committed


def journal_entries(db: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """Every entry of the journal at ``db``, in seq order: (seq, type, decoded data)."""
    return [(c.seq, c.type, c.data) for c in read_committed(db)]
