"""The head anchor: the journal's last seq and hash, kept in a small file outside the journal.

SQLite alone cannot tell a journal that lost its last commits (a damaged WAL frame makes SQLite
drop that frame and every later one, silently) from one that never had them. The anchor can: for
each append the owner makes ``(seq, hash)`` durable in a file that may live on another medium
(``[journal] anchor``), together with ``acked``: the last seq whose commit had returned. At
power-up and in verify a journal that ends before ``acked``, or whose entry at the anchor's seq
has another hash, is a storage fault.

The write of seq n's record runs *while* SQLite commits seq n (one flush in parallel with the
other, not one after the other): the record says ``seq n, acked n-1`` — n is in flight. Once the
commit has returned, a second record ``seq n, acked n`` is written in the background after at
most ``ACK_LINGER_S`` (replaced by seq n+1's record when that comes first, which says ``acked n``
too, so a burst of appends costs one anchor flush each). So after a power cut the
journal may end one entry before the anchor's seq, but never before its ``acked``: the entry in
flight was never acknowledged to anyone.

File format (``ANCHOR_SIZE`` bytes, two slots so a torn write never loses both): each slot is one
ASCII line padded with spaces to ``SLOT`` bytes, ``PGA3 <seq> <hash> <acked> <mac> <crc32>``,
where ``mac`` is HMAC-SHA256 of ``"<seq>:<hash>:<acked>"`` under the journal's key (``-`` for an
unkeyed journal) and ``crc32`` (8 hex digits) covers the text before it. Seq n goes to slot n % 2;
a write is one ``pwrite`` of one slot plus ``fdatasync`` (the file never changes size, so no
metadata is synced). The reader takes the valid slot with the highest ``(seq, acked)``.

Also the key file of the keyed chain (`load_key`). This module must never open the journal, and
never write anything but the anchor file.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAGIC = "PGA3"
SLOT = 192
ANCHOR_SIZE = 2 * SLOT
# How long an acknowledgement waits for the next append's record to supersede it. An entry whose
# acknowledgement is not yet durable is covered as "in flight": this (plus one flush) is the
# window in which the loss of exactly the last acknowledged entry would go unseen.
ACK_LINGER_S = 0.005
KEY_BYTES = 32


class AnchorError(Exception):
    """The anchor file cannot be read or written; the message names the file and the reason."""


@dataclass(frozen=True)
class AnchorRecord:
    """What the anchor vouches for: entry ``seq`` has ``hash`` if the journal holds it, and the
    journal held at least ``acked`` entries (``acked`` is ``seq`` or ``seq - 1``: seq in flight).
    ``mac`` is empty for an unkeyed journal."""

    seq: int
    hash: str
    acked: int
    mac: str = ""


def default_anchor_path(journal: str | Path) -> Path:
    """``<journal>.anchor``, beside the journal (deploy docs put it on another medium)."""
    p = Path(journal)
    return p.with_name(p.name + ".anchor")


def anchor_mac(key: bytes, seq: int, digest: str, acked: int) -> str:
    return hmac.new(key, f"{seq}:{digest}:{acked}".encode("ascii"), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class AnchorVerdict:
    """What a journal ending at ``last_seq`` means against its anchor: ``vanished`` (a problem
    naming how many acknowledged entries are missing), ``mismatch`` (the anchored seq holds
    another entry) or ``in_flight`` (the anchor's seq was being committed at a cut and never
    became durable: never acknowledged, not a fault)."""

    vanished: int = 0
    mismatch: bool = False
    in_flight: bool = False


def judge(
    record: AnchorRecord, last_seq: int, hash_at: Callable[[int], str | None]
) -> AnchorVerdict:
    """The one rule power-up and verify apply (``hash_at(seq)``: the journal's hash there)."""
    if record.acked > last_seq:
        return AnchorVerdict(vanished=record.acked - last_seq)
    if record.seq > last_seq:  # acked <= last_seq < seq: seq == acked + 1, the entry in flight
        return AnchorVerdict(in_flight=True)
    if record.seq == 0:
        return AnchorVerdict()
    return AnchorVerdict(mismatch=hash_at(record.seq) != record.hash)


def _slot_text(record: AnchorRecord) -> bytes:
    body = f"{MAGIC} {record.seq} {record.hash} {record.acked} {record.mac or '-'}"
    line = f"{body} {zlib.crc32(body.encode('ascii')):08x}"
    return line.encode("ascii").ljust(SLOT - 1, b" ") + b"\n"


def _parse_slot(raw: bytes) -> AnchorRecord | None:
    try:
        text = raw.decode("ascii").strip()
        magic, seq, digest, acked, mac, crc = text.split(" ")
    except (UnicodeDecodeError, ValueError):
        return None
    body = f"{magic} {seq} {digest} {acked} {mac}"
    if magic != MAGIC or f"{zlib.crc32(body.encode('ascii')):08x}" != crc:
        return None
    if not seq.isdigit() or not acked.isdigit() or len(digest) != 64:
        return None
    if int(acked) not in (int(seq), int(seq) - 1):
        return None
    return AnchorRecord(int(seq), digest, int(acked), "" if mac == "-" else mac)


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
    return max(records, key=lambda r: (r.seq, r.acked))


class AnchorWriter:
    """Keeps the anchor file open and writes one slot per record (``pwrite`` + ``fdatasync``).

    `write` is synchronous (power-up's catch-up). An append uses `begin` (seq n in flight: the
    write starts on the writer's thread while the caller commits), `wait` (it is durable) and
    `acknowledge` (the commit returned: ``acked n`` written in the background, superseded by the
    next `begin`). A failed background write is raised by the next `begin`, `wait` or `close`.
    """

    def __init__(self, path: str | Path, key: bytes | None = None) -> None:
        self.path = Path(path)
        self._key = key
        created = not self.path.exists()
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o640)
            if os.fstat(self._fd).st_size < ANCHOR_SIZE:  # new: "seq 0" (an empty journal)
                empty = _slot_text(AnchorRecord(0, "0" * 64, 0, self._mac(0, "0" * 64, 0)))
                os.pwrite(self._fd, empty + b" " * (SLOT - 1) + b"\n", 0)
                os.fsync(self._fd)
            if created:
                _fsync_dir(self.path.parent)
        except OSError as exc:
            raise AnchorError(f"anchor {self.path}: cannot open for writing: {exc}") from exc
        self._cond = threading.Condition()
        self._pending: AnchorRecord | None = None  # the next record the thread writes
        self._writing = False
        self._written = 0  # records made durable (or failed), to wait for one
        self._queued = 0
        self._error: AnchorError | None = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self._flushers = 0  # callers waiting for everything to be durable: no lingering
        # An append's commit is under way (`begin` without its `acknowledge` yet): the thread
        # waits with a timeout of ACK_LINGER_S, so `acknowledge` need not wake it (a wake-up per
        # append, and the thread taking the GIL while the owner runs, cost more than the rest of
        # the anchor's work); ``_polling`` says the thread is in such a wait.
        self._expecting = False
        self._polling = False
        self._acked_at = 0.0  # monotonic time the pending acknowledgement was posted

    def write(self, seq: int, digest: str) -> None:
        """Make ``(seq, digest, acked=seq)`` durable before returning (`AnchorError` if not)."""
        self._idle()
        self._write(AnchorRecord(seq, digest, seq, self._mac(seq, digest, seq)))

    def settle(self, seq: int, digest: str) -> None:
        """Power-up's catch-up: make ``(seq, digest, acked=seq)`` durable in *both* slots, one
        after the other. A record of seq + 1 left in flight by a cut would otherwise outlive the
        restart: the next append's seq + 1 (another entry) is committed while its own record is
        being written, and a SIGKILL between the two left an anchor naming the old entry at that
        seq: a storage fault ("rewritten or replaced") after a plain kill (found by
        `make stress`)."""
        self._idle()
        record = AnchorRecord(seq, digest, seq, self._mac(seq, digest, seq))
        for slot in (seq % 2, 1 - seq % 2):  # torn at any point: the other slot stays valid
            self._write(record, slot)

    def begin(self, seq: int, digest: str) -> None:
        """Start making ``(seq, digest, acked=seq-1)`` durable on the writer's thread."""
        record = AnchorRecord(seq, digest, seq - 1, self._mac(seq, digest, seq - 1))
        with self._cond:
            self._expecting = True
            self._post(record, wake=True)

    def wait(self) -> None:
        """Return once the record of the last `begin` is durable (`AnchorError` if it failed)."""
        with self._cond:
            target = self._queued
            while self._written < target and self._error is None:
                self._cond.wait()
            self._raise_error()

    def abandon(self) -> None:
        """The commit of the last `begin` failed: wait for its record (`wait`); no
        acknowledgement follows."""
        with self._cond:
            self._expecting = False
            self._cond.notify_all()
        self.wait()

    def acknowledge(self, seq: int, digest: str) -> None:
        """The commit of ``seq`` returned: write ``acked=seq`` in the background, at most
        ``ACK_LINGER_S`` later unless the next `begin` supersedes it first."""
        record = AnchorRecord(seq, digest, seq, self._mac(seq, digest, seq))
        with self._cond:
            self._expecting = False
            self._acked_at = time.monotonic()
            # a thread in its timed wait finds the record by itself, within ACK_LINGER_S
            self._post(record, wake=not self._polling)

    def _post(self, record: AnchorRecord, *, wake: bool) -> None:
        """Hand ``record`` to the thread (``self._cond`` held)."""
        self._raise_error()
        if self._pending is None:
            self._queued += 1
        self._pending = record  # a record not yet started is superseded, never reordered
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"anchor {self.path.name}", daemon=True
            )
            self._thread.start()
        if wake:
            self._cond.notify_all()

    def _timed_wait(self, timeout: float) -> None:
        self._polling = True
        try:
            self._cond.wait(timeout)
        finally:
            self._polling = False

    def _next(self) -> AnchorRecord | None:
        """The next record to write, once it is due; None when closing (``self._cond`` held)."""
        while True:
            record = self._pending
            urgent = self._flushers or self._closing
            if record is None:
                if self._closing:
                    return None
                if self._expecting and not urgent:
                    self._timed_wait(ACK_LINGER_S)  # the acknowledgement comes unannounced
                else:
                    self._cond.wait()
                continue
            if record.acked == record.seq and not urgent:
                # An acknowledgement lingers: the next append's record, which says the same
                # (acked n), supersedes it in a burst, so a burst costs one flush an append.
                remaining = self._acked_at + ACK_LINGER_S - time.monotonic()
                if remaining > 0:
                    self._timed_wait(remaining)
                    continue
            self._pending, self._writing = None, True
            return record

    def _run(self) -> None:
        while True:
            with self._cond:
                record = self._next()
                if record is None:
                    return
            error: AnchorError | None = None
            try:
                self._write(record)
            except AnchorError as exc:
                error = exc
            with self._cond:
                self._writing = False
                self._written += 1
                if error is not None and self._error is None:
                    self._error = error
                self._cond.notify_all()

    def flush(self) -> None:
        """Wait until every record posted is durable (`AnchorError` if one failed)."""
        self._idle()

    def _idle(self) -> None:
        """Wait until no record is pending or being written; raise a background failure."""
        with self._cond:
            self._flushers += 1
            self._cond.notify_all()
            try:
                while (self._pending is not None or self._writing) and self._error is None:
                    self._cond.wait()
                self._raise_error()
            finally:
                self._flushers -= 1

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _write(self, record: AnchorRecord, slot: int | None = None) -> None:
        try:
            where = record.seq % 2 if slot is None else slot
            os.pwrite(self._fd, _slot_text(record), where * SLOT)
            os.fdatasync(self._fd)
        except OSError as exc:
            raise AnchorError(
                f"anchor {self.path}: write of seq {record.seq} failed: {exc}"
            ) from exc

    def _mac(self, seq: int, digest: str, acked: int) -> str:
        return "" if self._key is None else anchor_mac(self._key, seq, digest, acked)

    def close(self) -> None:
        """Write what is pending (the last acknowledgement), stop the thread, close the file;
        `AnchorError` if a background write failed (the file is closed all the same)."""
        try:
            if self._fd >= 0:
                self._idle()
        finally:
            with self._cond:
                self._closing = True
                self._cond.notify_all()
            if self._thread is not None:
                self._thread.join()
                self._thread = None
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
