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
#: One record of the sealing-key file (``controller.journal.seal``), padded to this size.
SEAL_RECORD_SIZE = 160
#: Where its two records (slots) begin: each within a 512-byte sector of its own, so a write torn
#: by a power cut damages only the slot it was writing.
SEAL_SLOTS = (0, 512)
#: The most a sealing-key file may hold: its second slot's end (a file made before the second
#: slot holds one record, SEAL_RECORD_SIZE bytes).
SEAL_FILE_SIZE = SEAL_SLOTS[1] + SEAL_RECORD_SIZE


def default_anchor_path(journal: str | Path) -> Path:
    """``<journal>.anchor``, beside the journal (deploy docs put it on another medium)."""
    p = Path(journal)
    return p.with_name(p.name + ".anchor")
