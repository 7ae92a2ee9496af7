"""The small files beside a journal: where the anchor is by default and the most each file may
hold (`controller.journal.safeio` reads none larger).

Kept apart from ``anchor`` and ``seal`` (hashing, threads) so that ``tablectl config check`` can
name a configured file that would be refused without importing what writes it. Must never read
or write a file.
"""

from __future__ import annotations

from pathlib import Path

#: The most an anchor file may hold to be read at all (its two slots are ANCHOR_SIZE bytes; a
#: path configured to /dev/zero or a huge file is refused, not read into memory)
ANCHOR_READ_LIMIT = 4096
#: The most a key file may hold (64 hex digits and some white space).
KEY_FILE_LIMIT = 256
#: The sealing-key file: exactly this many bytes (``controller.journal.seal``).
SEAL_FILE_SIZE = 160


def default_anchor_path(journal: str | Path) -> Path:
    """``<journal>.anchor``, beside the journal (deploy docs put it on another medium)."""
    p = Path(journal)
    return p.with_name(p.name + ".anchor")
