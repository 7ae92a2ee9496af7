"""Forward-secure seals: every journal entry sealed under a key that evolves with every entry.

The scheme of Bellare-Yee and Schneier-Kelsey secure audit logs (and of systemd-journald's
Forward Secure Sealing), per entry. At install ``tablectl journal setup-keys`` draws a random
32-byte *verification key* V, prints it once (a string and a QR code for the back office and
the regulator) and writes only the first *sealing key* k1 = SHA-256("paigow-seal-first:" + V)
to the sealing-key file on the Pi. Entry n is sealed with k_n:

    seal_n  = HMAC-SHA256(k_n, hash_n)          (hex, in the entry's ``mac`` column)
    k_{n+1} = SHA-256("paigow-seal-next:" + k_n)

and once entry n is committed, k_{n+1} replaces k_n in the sealing-key file (one ``pwrite`` over
the same bytes). SHA-256 is one-way, so someone who takes the Pi when it holds k_t cannot compute
any k_n with n < t: nothing sealed before t can be altered, removed or re-sealed without failing
verification, which re-derives the whole chain from V (`SealChain`).

The journal's ``meta.key_id`` of a sealed journal is ``fss1:<seal id>`` (`seal_id` of V, which
names V without revealing it); the sealing-key file repeats the id, so a key file of another
journal is refused.

The sealing-key file holds two slots (``SEAL_SLOTS``: offsets 0 and 512, each in a 512-byte
sector of its own), each empty (spaces) or one record, an ASCII line ``PGS1 <seal id> <next seq>
<key hex> <crc32>`` padded with spaces to ``SEAL_RECORD_SIZE`` bytes. ``next seq`` is the seq the
key seals next; the file's key is its valid record with the highest ``next seq``. One slot holds
the key the last sync made durable and is not written until the next sync; every new key goes
into the other slot. A power cut may lose or tear every write since the sync (the key is
overwritten after every entry but synced once a round: `tests/stress/disk.py` tears any unsynced
sector), which damages only that slot, and the synced key is left to derive forward from. The key
never gets ahead of the journal: k_{n+1} is written only after entry n's COMMIT returned. It may
fall behind it (a cut loses the unsynced writes): the writer then derives forward. It is synced
with the anchor's record (each round's end), at open and at close (`SealKeyFile.sync`), not at
every entry. At a sync the slot written since becomes the synced one and the other is emptied,
so between two syncs the file holds the key of the first entry after the last sync beside the
newest (the price of surviving a cut that tears every unsynced write: root at that moment could
re-seal the entries since that sync, about a round; the anchor and the witness off the Pi still
hold their hashes), and after a sync only the next key
(docs/journal.md: what flash wear-levelling means for "overwritten"). A file made with one
record (before the second slot) is read as its first slot.

This module must never keep the verification key on the Pi (it is printed, never written to a
file by `setup-keys`) and never move a sealing key backwards.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import threading
import zlib
from pathlib import Path

from controller.journal.files import SEAL_FILE_SIZE as SEAL_FILE_SIZE  # its old home
from controller.journal.files import SEAL_RECORD_SIZE, SEAL_SLOTS
from controller.journal.safeio import SafeReadError, read_small_file

_sha256 = hashlib.sha256
_hmac_digest = hmac.digest

SEAL_PREFIX = "fss1:"
MAGIC = "PGS1"
KEY_BYTES = 32
_FIRST = b"paigow-seal-first:"
_NEXT = b"paigow-seal-next:"
_ID = b"paigow-seal-id:"
_VK_PREFIX = "pgvk1"


class SealError(Exception):
    """A sealing key or verification key cannot be used; the message says why."""


def new_verification_key() -> bytes:
    """32 bytes from the OS CSPRNG."""
    return secrets.token_bytes(KEY_BYTES)


def seal_id(verification_key: bytes) -> str:
    """Names a verification key without revealing it (16 hex digits)."""
    return hashlib.sha256(_ID + verification_key).hexdigest()[:16]


def first_key(verification_key: bytes) -> bytes:
    """k1, the sealing key of seq 1."""
    return hashlib.sha256(_FIRST + verification_key).digest()


def evolve(key: bytes) -> bytes:
    """k_{n+1} from k_n (one-way: k_n cannot be computed from k_{n+1})."""
    return hashlib.sha256(_NEXT + key).digest()


def seal(key: bytes, digest: str) -> str:
    """The seal of an entry whose hash is ``digest`` under its sealing key (hex)."""
    return hmac.digest(key, digest.encode("ascii"), "sha256").hex()


def format_verification_key(key: bytes) -> str:
    """The printed form: ``pgvk1-`` + eight groups of 8 hex digits + a 4-hex-digit check, easy to
    read aloud and to type back (`parse_verification_key` ignores case, spaces and dashes)."""
    text = key.hex()
    check = f"{zlib.crc32(key) & 0xFFFF:04x}"
    groups = [text[i : i + 8] for i in range(0, len(text), 8)]
    return "-".join([_VK_PREFIX, *groups, check])


def parse_verification_key(text: str) -> bytes:
    """The verification key from its printed form (`SealError` names what is wrong)."""
    compact = "".join(text.split()).lower().replace("-", "")
    if not compact.startswith(_VK_PREFIX):
        raise SealError("verification key: must start with 'pgvk1-' (as setup-keys printed it)")
    body = compact[len(_VK_PREFIX) :]
    if len(body) != 2 * KEY_BYTES + 4 or any(c not in "0123456789abcdef" for c in body):
        raise SealError(
            f"verification key: must be 'pgvk1-' and {2 * KEY_BYTES + 4} hex digits "
            f"(got {len(body)} characters after the prefix)"
        )
    key = bytes.fromhex(body[: 2 * KEY_BYTES])
    if f"{zlib.crc32(key) & 0xFFFF:04x}" != body[2 * KEY_BYTES :]:
        raise SealError("verification key: check digits do not match (mistyped?)")
    return key


class SealChain:
    """The verifier's side: the sealing key of any seq, re-derived from the verification key,
    moving forward only (seqs are checked in order)."""

    def __init__(self, verification_key: bytes) -> None:
        self.id = seal_id(verification_key)
        self._seq = 1
        self._key = first_key(verification_key)

    def seal_of(self, seq: int, digest: str) -> str | None:
        """The seal entry ``seq`` must carry, or None for a seq below one already passed."""
        at = self._seq
        if seq == at + 1:  # the walk's usual step: one evolution (no loop)
            self._key = key = _sha256(_NEXT + self._key).digest()
            self._seq = seq
            return _hmac_digest(key, digest.encode("ascii"), "sha256").hex()
        if seq < at:
            return None
        while self._seq < seq:
            self._key = evolve(self._key)
            self._seq += 1
        return seal(self._key, digest)


def _record(sid: str, next_seq: int, key: bytes) -> bytes:
    body = f"{MAGIC} {sid} {next_seq} {key.hex()}"
    line = f"{body} {zlib.crc32(body.encode('ascii')):08x}"
    return line.encode("ascii").ljust(SEAL_RECORD_SIZE - 1, b" ") + b"\n"


#: An empty slot: what a synced file's other slot holds (no key).
_EMPTY = b" " * (SEAL_RECORD_SIZE - 1) + b"\n"
#: fdatasyncs a `SealKeyFile.sync` tries when the owner writes a key during each: the slots flip
#: only over a sync no key was written during; after the last try they wait for the next sync
#: (a headless table at full speed wrote one during 12 of 100 round-end syncs with one try)
SYNC_TRIES = 3


def _parse(raw: bytes, path: Path) -> tuple[str, int, bytes, int]:
    """(seal id, next seq, key, slot) of the file's newest valid record; `SealError` when no slot
    holds one, or two valid records name different journals."""
    found: list[tuple[int, str, bytes, int]] = []
    for slot, offset in enumerate(SEAL_SLOTS):
        record = _parse_record(raw[offset : offset + SEAL_RECORD_SIZE])
        if record is not None:
            found.append((record[1], record[0], record[2], slot))
    if not found:
        raise SealError(f"sealing key {path}: no valid record (damaged or not a sealing-key file)")
    if len({sid for _, sid, _, _ in found}) > 1:
        raise SealError(f"sealing key {path}: its two records name different journals")
    next_seq, sid, key, slot = max(found)
    return sid, next_seq, key, slot


def _parse_record(raw: bytes) -> tuple[str, int, bytes] | None:
    """One slot's record, or None when the slot is empty, torn or not a record."""
    try:
        magic, sid, seq, key_hex, crc = raw.decode("ascii").split()
        body = f"{magic} {sid} {seq} {key_hex}"
        ok = (
            magic == MAGIC
            and f"{zlib.crc32(body.encode('ascii')):08x}" == crc
            and seq.isdigit()
            and int(seq) >= 1
            and len(key_hex) == 2 * KEY_BYTES
        )
        key = bytes.fromhex(key_hex) if ok else b""
    except (UnicodeDecodeError, ValueError):
        ok = False
    if not ok:
        return None
    return sid, int(seq), key


def write_new_seal_file(path: str | Path, verification_key: bytes) -> None:
    """Create the sealing-key file holding k1 (``setup-keys``); refuses an existing file (a
    table's sealing key is never replaced behind its journal's back). 0600, fsynced."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise SealError(
            f"sealing key {p} exists: refusing to replace it (its journal would no longer "
            "verify; a new key goes with a new journal, docs/journal.md)"
        ) from exc
    except OSError as exc:
        raise SealError(f"sealing key {p}: cannot create: {exc}") from exc
    try:
        os.write(fd, _record(seal_id(verification_key), 1, first_key(verification_key)))
        os.fsync(fd)
    finally:
        os.close(fd)
    dfd = os.open(p.parent if str(p.parent) else ".", os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


class SealKeyFile:
    """The writer's side: the sealing-key file, kept open; the key moves forward only."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            raw = read_small_file(self.path, SEAL_FILE_SIZE, "sealing key")
        except FileNotFoundError as exc:
            raise SealError(
                f"sealing key {self.path}: no such file (made once, at install, by tablectl "
                "journal setup-keys)"
            ) from exc
        except SafeReadError as exc:
            raise SealError(str(exc)) from exc
        self.id, self.next_seq, self._key, slot = _parse(raw, self.path)
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)
            if not stat.S_ISREG(os.fstat(self._fd).st_mode):
                os.close(self._fd)
                raise SealError(f"sealing key {self.path}: not a regular file")
            # what was read is made durable first (a SIGKILL keeps unsynced writes in the page
            # cache): from here the slot of the newest record is the synced one
            os.fdatasync(self._fd)
        except OSError as exc:
            raise SealError(f"sealing key {self.path}: cannot open for writing: {exc}") from exc
        #: the slot holding the key the last sync made durable: untouched until the next sync,
        #: so a cut that tears every write since (the other slot) leaves it to derive from
        self._synced = slot
        self._dirty = False
        #: `advance` (the owner's thread) and `sync` (the anchor's) share the slots' state
        self._lock = threading.Lock()
        self._writes = 0  # advances so far: a sync flips the slots only over what it synced

    @property
    def journal_key_id(self) -> str:
        """The ``meta.key_id`` of the journal this key seals."""
        return SEAL_PREFIX + self.id

    def key_for(self, seq: int) -> bytes:
        """The sealing key of ``seq``, derived forward from the stored one; `SealError` when the
        stored key is already past ``seq`` (its key was erased: it can never be sealed again)."""
        if seq < self.next_seq:
            raise SealError(
                f"sealing key {self.path} is at seq {self.next_seq}: the key of seq {seq} was "
                "erased, entries from there cannot be sealed"
            )
        key = self._key
        for _ in range(seq - self.next_seq):
            key = evolve(key)
        return key

    def advance(self, next_seq: int, key: bytes) -> None:
        """Overwrite the stored key with ``key``, the key of ``next_seq`` (after the COMMIT of
        ``next_seq - 1`` returned). Never moves backwards. Not synced here (`sync`)."""
        with self._lock:
            if next_seq <= self.next_seq:
                return
            slot = 1 - self._synced  # never over the synced key: a torn write leaves it
            try:
                os.pwrite(self._fd, _record(self.id, next_seq, key), SEAL_SLOTS[slot])
            except OSError as exc:
                raise SealError(
                    f"sealing key {self.path}: write of seq {next_seq} failed: {exc}"
                ) from exc
            self.next_seq, self._key = next_seq, key
            self._writes += 1
            self._dirty = True

    def sync(self) -> None:
        """Make the last `advance` durable (with the anchor's record, or the journal closes):
        its slot becomes the synced one, and the other slot, the key the previous sync left, is
        emptied (no longer needed: the newest is on disk) and takes the keys until the next
        sync. A key written during the fdatasync is not durable: it syncs again (`SYNC_TRIES`).
        The emptying is made durable by the next sync, or at once when ``final``."""
        self._sync(final=False)

    def _sync(self, final: bool) -> None:
        for _ in range(SYNC_TRIES):
            with self._lock:
                if not self._dirty or self._fd < 0:
                    return
                writes = self._writes
            try:
                os.fdatasync(self._fd)  # outside the lock: the owner's next advance need not wait
                with self._lock:
                    if self._writes != writes:
                        continue  # a key written during the sync is not durable yet: again
                    self._dirty = False
                    self._synced = 1 - self._synced
                    os.pwrite(self._fd, _EMPTY, SEAL_SLOTS[1 - self._synced])
                if final:
                    os.fdatasync(self._fd)
                return
            except OSError as exc:
                raise SealError(f"sealing key {self.path}: sync failed: {exc}") from exc

    def close(self) -> None:
        try:
            self._sync(final=True)
        finally:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
