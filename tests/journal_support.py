"""Reading a journal in tests: every entry as (seq, type, data), read-only.

One reader for the tests that look at what a run journaled (the owner, the console, the page,
SAS, the link, storage). It opens the file the way the auditors do (`connect_read_only`) and must
never write to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller.journal.audit import connect_read_only


def journal_entries(db: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """Every entry of the journal at ``db``, in seq order: (seq, type, decoded data)."""
    conn = connect_read_only(db)
    try:
        rows = conn.execute("SELECT seq, type, data FROM journal ORDER BY seq").fetchall()
    finally:
        conn.close()
    return [(int(seq), str(kind), json.loads(data)) for seq, kind, data in rows]
