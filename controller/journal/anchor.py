"""The head anchor: the journal's last seq and hash, kept in a small file outside the journal.

SQLite alone cannot tell a journal that lost its last commits (a damaged WAL frame makes SQLite
drop that frame and every later one, silently) from one that never had them. The anchor can: for
each append the owner makes ``(seq, hash)`` durable in a file that may live on another medium
(``[journal] anchor``), together with ``acked``: the last seq whose commit had returned. At
power-up and in verify a journal that ends before ``acked``, or whose entry at the anchor's seq
has another hash, is a storage fault.

Seq n's record ``seq n, hash, acked n`` is posted once SQLite's commit of seq n has returned.
Not every record is written (issue 29: one flush per entry for the anchor doubled the card's
syncs): a record is *due* when its entry completed a round, or when ``SYNC_ENTRIES`` records
were posted since the last one written; a due record is written on the writer's thread while the
next append's COMMIT runs (the two flushes side by side), or ``LINGER_S`` after the writer's last
write when no append follows; `flush` and `close` write the last record posted, due or not. A
record that is not due is superseded by the next one. So the anchor never names an entry that
is not committed; a power cut alone never leaves the journal behind its anchor; after a cut the
journal is at most the entries since the last round end (or ``SYNC_ENTRIES`` + 1) ahead of it;
when append n of an entry after a round's end returns, that round's last entry is anchored; a
clean stop leaves the last entry anchored. The entries themselves are durable at their commit
(``synchronous=FULL``) whatever the anchor says: the anchor only detects their later loss.
Records of the earlier writer may say ``acked n-1`` (seq n in flight: that record was written
while n committed); the reader and `judge` still know them.

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

from controller.journal.files import ANCHOR_READ_LIMIT, KEY_FILE_LIMIT
from controller.journal.files import default_anchor_path as default_anchor_path  # its old home
from controller.journal.safeio import SafeReadError, read_small_file

MAGIC = "PGA3"
SLOT = 192
ANCHOR_SIZE = 2 * SLOT
#: How long the writer's thread waits, after a write, for the next append to take the record
#: posted meanwhile before writing it itself: the window in which the loss of the last entry of
#: an idle table would go unseen (plus one flush).
LINGER_S = 0.005
#: A record is due (written and flushed) at least every this many records, even in a round that
#: never ends (a fault, a long pending hit): the most entries by which the anchor may trail.
SYNC_ENTRIES = 16
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
        raw = read_small_file(p, ANCHOR_READ_LIMIT, "anchor")
    except FileNotFoundError:
        return None
    except OSError as exc:  # SafeReadError: a FIFO, /dev/zero, a file too large
        raise AnchorError(
            str(exc) if isinstance(exc, SafeReadError) else f"anchor {p}: cannot read: {exc}"
        ) from exc
    records = [r for r in (_parse_slot(raw[i : i + SLOT]) for i in (0, SLOT)) if r is not None]
    if not records:
        raise AnchorError(f"anchor {p}: no valid record (damaged or not an anchor file)")
    return max(records, key=lambda r: (r.seq, r.acked))


class AnchorWriter:
    """Keeps the anchor file open and writes one slot per record (``pwrite`` + ``fdatasync``).

    `write` and `settle` are synchronous (power-up's catch-up). An append calls `post` once its
    commit has returned (seq n's record becomes pending), and `before_commit` / `after_commit`
    around the next append's COMMIT: the pending record is written on the writer's thread while
    SQLite commits, and is durable when that append returns. With no next append, the thread
    writes it on its own ``LINGER_S`` after its last write (an idle table). A failed write is
    raised by the next `before_commit`, `after_commit`, `post`, `flush`, `write` or `close`.

    The hand-over is two plain locks used as semaphores (``_go``: a job for the thread; ``_done``:
    it is finished), one job at a time, and a third guards the pending record. The thread's own
    Python work falls while the owner's COMMIT holds no GIL, so neither waits for the other
    (``bench_journal``: ``journal_append_us`` against ``journal_append_no_anchor_us``).
    """

    def __init__(
        self,
        path: str | Path,
        key: bytes | None = None,
        on_sync: Callable[[], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self._key = key
        self._on_sync = on_sync  # called on the thread after each record it flushed
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
        self._done = threading.Lock()  # held until the thread has finished its job
        self._done.acquire()
        self._job = ""  # what the thread is to do: "write", "linger" or "stop"
        self._outstanding = False  # a job was handed over and its ``_done`` not yet taken
        self._lock = threading.Lock()  # guards the two below
        # (seq, hash, due) posted, not yet written; the thread builds the record's text and MAC
        self._pending: tuple[int, str, bool] | None = None
        # the last record posted but not written (not due); `flush` writes it
        self._unwritten: tuple[int, str] | None = None
        self._since_written = 0  # records posted since the last one written (thread only)
        self._parked = True  # the thread waits without a timeout: `post` must wake it
        self._error: AnchorError | None = None  # the first failed background write, not raised
        self._thread: threading.Thread | None = None

    def write(self, seq: int, digest: str) -> None:
        """Make ``(seq, digest)`` durable before returning (`AnchorError` if not)."""
        self.flush()
        self._write(AnchorRecord(seq, digest, seq, self._mac(seq, digest, seq)))

    def settle(self, seq: int, digest: str) -> None:
        """Power-up's catch-up: make ``(seq, digest)`` durable in *both* slots, one after the
        other. A record of seq + 1 left in flight by the earlier writer would otherwise outlive
        the restart and name another entry than the restart's own seq + 1 (a storage fault,
        "rewritten or replaced", after a plain kill: found by `make stress`); and no slot keeps
        a record older than the head."""
        self.flush()
        record = AnchorRecord(seq, digest, seq, self._mac(seq, digest, seq))
        for slot in (seq % 2, 1 - seq % 2):  # torn at any point: the other slot stays valid
            self._write(record, slot)

    def post(self, seq: int, digest: str, due: bool = True) -> None:
        """The commit of ``seq`` returned: its record is pending (in an append, the one before
        it was written beside this commit; otherwise a record not yet written is replaced: the
        later says more, and it is due if either was). ``due``: the record is to be written
        (its entry completed a round); one that is not is written only when ``SYNC_ENTRIES``
        records went unwritten, or by `flush`. A parked thread is woken to linger: it writes the
        record after ``LINGER_S`` unless the next COMMIT takes it first (woken to write at once,
        it would take the GIL from the owner's next append)."""
        with self._lock:
            if self._pending is not None:
                due = due or self._pending[2]
            self._pending = (seq, digest, due)
            wake, self._parked = self._parked, False
        if wake:
            self._hand_over("linger")

    def before_commit(self) -> None:
        """Just before a COMMIT: the pending record is written beside it (`AnchorError` for a
        failed earlier write: nothing is to be committed). The job is handed over even when
        nothing seems pending: the thread may be writing the record it took after lingering, and
        the job, done after that write, is what `after_commit` waits for."""
        self._take_done()
        self._raise_error()
        if self._thread is not None:
            self._hand_over("write")

    def after_commit(self) -> None:
        """After the COMMIT (returned or failed): the record written beside it is durable
        (`AnchorError` if that write failed). The job `before_commit` handed over is the only
        one outstanding then (it took any earlier one's first); without one nothing waits."""
        self._take_done()
        self._raise_error()

    def flush(self) -> None:
        """Return once the last record posted is durable, due or not (`AnchorError` if a write
        failed)."""
        if self._thread is not None:  # a job, even with nothing pending (`before_commit`)
            self._hand_over("flush")
            self._take_done()
        self._raise_error()

    def _take_done(self) -> None:
        if self._outstanding:
            self._done.acquire()
            self._outstanding = False

    def _hand_over(self, job: str) -> None:
        """Give the thread a job: ``write`` the pending record, ``linger`` (write it after
        ``LINGER_S`` unless a job comes first) or ``stop``."""
        self._take_done()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"anchor {self.path.name}", daemon=True
            )
            self._thread.start()
        self._job = job
        self._outstanding = True
        self._go.release()

    def _run(self) -> None:
        linger = False  # a record was just written: the next is likely posted soon
        while True:
            got = self._go.acquire(timeout=LINGER_S if linger else -1)  # -1: no timeout
            if got:
                job = self._job
                if job in ("write", "flush"):
                    self._write_pending(force=job == "flush")
                self._done.release()
                if job == "stop":
                    return
                linger = True
                continue
            with self._lock:  # idle since the last write: the record posted meanwhile, if any
                record, self._pending = self._pending, None
                self._parked = True
            if record is not None:
                self._background(*record)
            linger = False

    def _write_pending(self, force: bool = False) -> None:
        with self._lock:
            record, self._pending = self._pending, None
        if record is not None:
            self._background(*record)
        if force and self._unwritten is not None:
            self._background(*self._unwritten, True)

    def _background(self, seq: int, digest: str, due: bool) -> None:
        """Write and flush the record when it is due (or ``SYNC_ENTRIES`` went unwritten);
        otherwise keep it for `flush` (the next record supersedes it)."""
        self._since_written += 1
        if not due and self._since_written < SYNC_ENTRIES:
            self._unwritten = (seq, digest)
            return
        self._unwritten = None
        self._since_written = 0
        text = _slot_text(AnchorRecord(seq, digest, seq, self._mac(seq, digest, seq)))
        try:
            os.pwrite(self._fd, text, seq % 2 * SLOT)
            os.fdatasync(self._fd)
        except OSError as exc:
            if self._error is None:
                self._error = AnchorError(f"anchor {self.path}: write of seq {seq} failed: {exc}")
            return
        if self._on_sync is not None:
            self._on_sync()  # e.g. sync the sealing key's last overwrite

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
        """Write the pending record, stop the thread, close the file; `AnchorError` if a write
        failed (the file is closed all the same)."""
        try:
            self.flush()
        finally:
            if self._thread is not None:
                self._hand_over("stop")
                self._take_done()
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
        text = read_small_file(p, KEY_FILE_LIMIT, "key file").decode("ascii").strip()
    except SafeReadError as exc:
        raise AnchorError(str(exc)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise AnchorError(f"key file {p}: cannot read: {exc}") from exc
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise AnchorError(f"key file {p}: must hold {2 * KEY_BYTES} hex digits (32 bytes)")
    return key
