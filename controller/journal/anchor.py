"""The head anchor: the journal's last seq and hash, kept in a small file outside the journal.

SQLite alone cannot tell a journal that lost its last commits (a damaged WAL frame makes SQLite
drop that frame and every later one, silently) from one that never had them. The anchor can: the
owner writes ``(seq, hash)`` after each commit, durably, to a file that may live on another medium
(``[journal] anchor``); at power-up and in verify a journal that ends before its anchor, or whose
entry at the anchor's seq has another hash, is a storage fault.

File format (``ANCHOR_SIZE`` bytes, two slots so a torn write never loses both): each slot is one
ASCII line padded with spaces to ``SLOT`` bytes, ``PGA2 <seq> <hash> <mac> <crc32>``, where ``mac``
is HMAC-SHA256 of ``"<seq>:<hash>"`` under the journal's key (``-`` for an unkeyed journal) and
``crc32`` (8 hex digits) covers the text before it. Seq n goes to slot n % 2; a write is one
``pwrite`` of one slot plus ``fdatasync`` (the file never changes size, so no metadata is synced).
The reader takes the valid slot with the highest seq.

Also the key file of the keyed chain (`load_key`). This module must never open the journal, and
never write anything but the anchor file.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

MAGIC = "PGA2"
SLOT = 192
ANCHOR_SIZE = 2 * SLOT
KEY_BYTES = 32


class AnchorError(Exception):
    """The anchor file cannot be read or written; the message names the file and the reason."""


@dataclass(frozen=True)
class AnchorRecord:
    """What the anchor vouches for: the journal held at least ``seq`` entries, the last one with
    ``hash``. ``mac`` is empty for an unkeyed journal."""

    seq: int
    hash: str
    mac: str = ""


def default_anchor_path(journal: str | Path) -> Path:
    """``<journal>.anchor``, beside the journal (deploy docs put it on another medium)."""
    p = Path(journal)
    return p.with_name(p.name + ".anchor")


def anchor_mac(key: bytes, seq: int, digest: str) -> str:
    return hmac.new(key, f"{seq}:{digest}".encode("ascii"), hashlib.sha256).hexdigest()


def _slot_text(record: AnchorRecord) -> bytes:
    body = f"{MAGIC} {record.seq} {record.hash} {record.mac or '-'}"
    line = f"{body} {zlib.crc32(body.encode('ascii')):08x}"
    return line.encode("ascii").ljust(SLOT - 1, b" ") + b"\n"


def _parse_slot(raw: bytes) -> AnchorRecord | None:
    try:
        text = raw.decode("ascii").strip()
        magic, seq, digest, mac, crc = text.split(" ")
    except (UnicodeDecodeError, ValueError):
        return None
    body = f"{magic} {seq} {digest} {mac}"
    if magic != MAGIC or f"{zlib.crc32(body.encode('ascii')):08x}" != crc:
        return None
    if not seq.isdigit() or len(digest) != 64:
        return None
    return AnchorRecord(int(seq), digest, "" if mac == "-" else mac)


def read_anchor(path: str | Path) -> AnchorRecord | None:
    """The anchor's record (the valid slot with the highest seq); None when the file does not
    exist. `AnchorError` when it exists but holds no valid slot or cannot be read."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AnchorError(f"anchor {p}: cannot read: {exc}") from exc
    records = [r for r in (_parse_slot(raw[i : i + SLOT]) for i in (0, SLOT)) if r is not None]
    if not records:
        raise AnchorError(f"anchor {p}: no valid record (damaged or not an anchor file)")
    return max(records, key=lambda r: r.seq)


class AnchorWriter:
    """Keeps the anchor file open and writes one slot per commit (``pwrite`` + ``fdatasync``)."""

    def __init__(self, path: str | Path, key: bytes | None = None) -> None:
        self.path = Path(path)
        self._key = key
        created = not self.path.exists()
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o640)
            if os.fstat(self._fd).st_size < ANCHOR_SIZE:  # new: "seq 0" (an empty journal)
                empty = _slot_text(AnchorRecord(0, "0" * 64, self._mac(0, "0" * 64)))
                os.pwrite(self._fd, empty + b" " * (SLOT - 1) + b"\n", 0)
                os.fsync(self._fd)
            if created:
                _fsync_dir(self.path.parent)
        except OSError as exc:
            raise AnchorError(f"anchor {self.path}: cannot open for writing: {exc}") from exc

    def write(self, seq: int, digest: str) -> None:
        """Make ``(seq, digest)`` durable before returning (`AnchorError` if it cannot)."""
        mac = self._mac(seq, digest)
        try:
            os.pwrite(self._fd, _slot_text(AnchorRecord(seq, digest, mac)), (seq % 2) * SLOT)
            os.fdatasync(self._fd)
        except OSError as exc:
            raise AnchorError(f"anchor {self.path}: write of seq {seq} failed: {exc}") from exc

    def _mac(self, seq: int, digest: str) -> str:
        return "" if self._key is None else anchor_mac(self._key, seq, digest)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory if str(directory) else ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def load_key(path: str | Path) -> bytes:
    """The keyed chain's key: a file holding 64 hex digits (32 bytes), readable by the service
    only (``deploy/install.sh`` creates it with ``umask 077``). `AnchorError` names the problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise AnchorError(f"key file {p}: cannot read: {exc}") from exc
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise AnchorError(f"key file {p}: must hold {2 * KEY_BYTES} hex digits (32 bytes)")
    return key
