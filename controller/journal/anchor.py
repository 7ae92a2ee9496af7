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

    `write` and `settle` are synchronous (power-up's catch-up). An append uses `begin` (seq n in
    flight: the write starts on the writer's thread while the caller commits), `wait` (it is
    durable) and `acknowledge` (the commit returned: ``acked n`` written in the background,
    superseded by the next `begin`). A failed background write is raised by the next `begin`,
    `wait`, `flush` or `close`.

    The hand-over is two plain locks used as semaphores (``_go``: a job for the thread; ``_done``:
    it is finished), one job at a time: one wake-up of the thread per append and at most one of
    the caller, where a `threading.Condition` cost several (``bench_journal``). The
    acknowledgement needs no wake-up at all: after writing seq n's record the thread waits for
    its next job with a timeout of ``ACK_LINGER_S`` and, when that passes, writes the
    acknowledgement the caller has posted meanwhile (a plain attribute).
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
        self._go = threading.Lock()  # held while the thread has no job; released: a job
        self._go.acquire()
        self._done = threading.Lock()  # held until the thread has finished the job
        self._done.acquire()
        # (kind, seq, hash), set before ``_go`` is released. The thread builds the records (and
        # their MACs) itself, while the caller's COMMIT holds no GIL.
        self._job: tuple[str, int, str] = ("", 0, "")
        self._outstanding = False  # a job was handed over and its ``_done`` not yet taken
        self._ack: tuple[int, str] | None = None  # posted by `acknowledge`: (seq, hash)
        self._abandoned = False  # the commit of the last `begin` failed: no acknowledgement
        self._error: AnchorError | None = None  # the first failed write not yet raised
        self._thread: threading.Thread | None = None

    def write(self, seq: int, digest: str) -> None:
        """Make ``(seq, digest, acked=seq)`` durable before returning (`AnchorError` if not)."""
        self.flush()
        self._write(AnchorRecord(seq, digest, seq, self._mac(seq, digest, seq)))

    def settle(self, seq: int, digest: str) -> None:
        """Power-up's catch-up: make ``(seq, digest, acked=seq)`` durable in *both* slots, one
        after the other. A record of seq + 1 left in flight by a cut would otherwise outlive the
        restart: the next append's seq + 1 (another entry) is committed while its own record is
        being written, and a SIGKILL between the two left an anchor naming the old entry at that
        seq: a storage fault ("rewritten or replaced") after a plain kill (found by
        `make stress`)."""
        self.flush()
        record = AnchorRecord(seq, digest, seq, self._mac(seq, digest, seq))
        for slot in (seq % 2, 1 - seq % 2):  # torn at any point: the other slot stays valid
            self._write(record, slot)

    def begin(self, seq: int, digest: str) -> None:
        """Start making ``(seq, digest, acked=seq-1)`` durable on the writer's thread."""
        if self._outstanding:  # a `begin` whose `wait` never came (an interrupted append)
            self.wait()
        self._raise_error()
        self._abandoned = False
        self._hand_over("begin", seq, digest)

    def wait(self) -> None:
        """Return once the record of the last `begin` is durable (`AnchorError` if it failed)."""
        if self._outstanding:
            self._done.acquire()
            self._outstanding = False
        self._raise_error()

    def abandon(self) -> None:
        """The commit of the last `begin` failed: wait for its record (`wait`); no
        acknowledgement follows."""
        self._abandoned = True
        self.wait()

    def acknowledge(self, seq: int, digest: str) -> None:
        """The commit of ``seq`` returned: write ``acked=seq`` in the background, at most
        ``ACK_LINGER_S`` after its record unless the next `begin` supersedes it first."""
        self._ack = (seq, digest)

    def flush(self) -> None:
        """Wait until every record posted is durable (`AnchorError` if one failed)."""
        self.wait()
        if self._thread is not None:
            self._hand_over("flush")
            self.wait()

    def _hand_over(self, kind: str, seq: int = 0, digest: str = "") -> None:
        """Give the thread its next job (none is outstanding)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"anchor {self.path.name}", daemon=True
            )
            self._thread.start()
        self._job = (kind, seq, digest)
        self._outstanding = True
        self._go.release()

    def _run(self) -> None:
        awaiting = 0  # the seq whose acknowledgement is due (0: none)
        while True:
            if awaiting:
                if not self._go.acquire(timeout=ACK_LINGER_S):
                    ack = self._ack
                    if ack is not None and ack[0] == awaiting:
                        self._background(*ack, ack[0])
                        awaiting = 0
                    elif self._abandoned:
                        awaiting = 0
                    continue  # the commit is still under way: wait on
            else:
                self._go.acquire()
            kind, seq, digest = self._job
            if kind == "begin":
                self._ack = None  # superseded: this record says acked n - 1 too
                self._background(seq, digest, seq - 1)
                awaiting = seq
            elif kind == "flush":
                ack = self._ack
                if awaiting and ack is not None and ack[0] == awaiting:
                    self._background(*ack, ack[0])
                self._ack, awaiting = None, 0
            self._done.release()
            if kind == "close":
                return

    def _background(self, seq: int, digest: str, acked: int) -> None:
        try:
            self._write(AnchorRecord(seq, digest, acked, self._mac(seq, digest, acked)))
        except AnchorError as exc:
            if self._error is None:
                self._error = exc

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
                self.flush()
        finally:
            if self._outstanding:
                self._done.acquire()
                self._outstanding = False
            if self._thread is not None:
                self._hand_over("close")
                self._done.acquire()
                self._outstanding = False
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
