"""The power-cut disk model of `make stress`: what a watched file holds after the power goes.

`pcut.c` (LD_PRELOADed into a real ``tablectl simulate``) logs, before every write to a watched
file (the journal, its ``-wal`` and its anchor), the old bytes and size of the range, and after
every completed ``fsync``/``fdatasync`` a barrier. After the process dies this module rebuilds,
per file, the image at its last sync (``synced``: every later write undone, newest first) and
every version each 512-byte sector held since, then picks the disk after the cut the way
SQLite's crash tests do (src/test6.c): each dirty sector independently keeps its synced content,
takes its latest version or any intermediate one (writeback may have flushed it before it was
overwritten: reordering), or, for a sector written more than once or partly, is torn (random
bytes inside the written range only: SQLite's powersafe-overwrite assumption). The file size
follows data=ordered: a size change is kept only as far as the data before it reached the disk.

The anchor file is outside SQLite and is modelled the same way: its ``pwrite`` of one slot is
unsynced until its ``fdatasync`` returns. Directory entries (file creation, the WAL's unlink at a
clean close) are not modelled, as in SQLite's crash tests. Test-only; never imported by the
controller.
"""

from __future__ import annotations

import hashlib
import os
import random
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SECTOR = 512
HERE = Path(__file__).resolve().parent


def build_recorder(directory: Path) -> Path:
    """Compile pcut.c with the system C compiler into ``directory`` (cached by its hash)."""
    source = HERE / "pcut.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    out = directory / f"pcut-{digest}.so"
    if not out.exists():
        cc = os.environ.get("CC", "cc")
        subprocess.run(
            [cc, "-shared", "-fPIC", "-O2", "-Wall", "-o", str(out), str(source), "-ldl"],
            check=True,
        )
    return out


@dataclass
class Op:
    kind: str  # "W" write, "S" sync, "T" truncate
    path: str
    off: int = 0
    new: bytes = b""
    old: bytes = b""
    old_size: int = 0
    new_size: int = 0


def parse_log(path: Path) -> list[Op]:
    """The recorder's log; a record cut short by the kill is dropped."""
    data = path.read_bytes() if path.exists() else b""
    ops: list[Op] = []
    i = 0
    try:
        while i < len(data):
            kind = chr(data[i])
            (n,) = struct.unpack_from("<I", data, i + 1)
            name = data[i + 5 : i + 5 + n].decode()
            i += 5 + n
            if kind == "W":
                off, length, old_size, old_len = struct.unpack_from("<4Q", data, i)
                i += 32
                old = data[i : i + old_len]
                new = data[i + old_len : i + old_len + length]
                i += old_len + length
                if len(new) != length:
                    break
                ops.append(Op("W", name, off, new, old, old_size))
            elif kind == "S":
                ops.append(Op("S", name))
            elif kind == "T":
                new_size, old_size, tail_len = struct.unpack_from("<3Q", data, i)
                i += 24
                tail = data[i : i + tail_len]
                i += tail_len
                ops.append(Op("T", name, new_size, b"", tail, old_size, new_size))
            else:
                break
    except (struct.error, UnicodeDecodeError):
        pass
    return ops


def anchored_seq(ops: list[Op], anchor: Path) -> int:
    """The highest seq the controller's anchor records as acknowledged before the cut: a
    ``PGA3 <seq> <hash> <acked> <mac> <crc>`` record's ``acked`` is the last seq whose commit had
    returned when it was written (controller/journal/anchor.py), whether or not the disk had it
    at the cut: that is what the cut tests."""
    best = 0
    for op in ops:
        if op.kind == "W" and op.path == str(anchor):
            for i in range(0, len(op.new), 192):
                fields = op.new[i : i + 192].split()
                if len(fields) == 6 and fields[0] == b"PGA3" and fields[3].isdigit():
                    best = max(best, int(fields[3]))
    return best


@dataclass
class FileCut:
    """One file at the cut: its synced image, the versions of its dirty sectors, the sizes it
    passed through since the sync."""

    synced: bytes
    latest: bytes
    versions: dict[int, list[bytes]] = field(default_factory=dict)
    sizes: list[int] = field(default_factory=list)
    written: dict[int, tuple[int, int]] = field(default_factory=dict)  # sector -> written range


def analyse(path: Path, ops: list[Op]) -> FileCut | None:
    """Undo ``path``'s writes since its last sync and record every version since then."""
    if not path.exists():
        return None
    mine = [op for op in ops if op.path == str(path)]
    last_sync = max((i for i, op in enumerate(mine) if op.kind == "S"), default=-1)
    unsynced = [op for op in mine[last_sync + 1 :] if op.kind != "S"]
    latest = path.read_bytes()
    img = bytearray(latest)
    for op in reversed(unsynced):  # newest first: back to the image at the last sync
        if op.kind == "W":
            img[op.off : op.off + len(op.old)] = op.old
            del img[op.old_size :]
        else:  # a truncate: put the tail back, or cut an extension off again
            if op.old_size > op.new_size:
                del img[op.new_size :]
                img.extend(op.old)
            del img[op.old_size :]
    synced = bytes(img)
    cut = FileCut(synced, latest, sizes=[len(img)])
    for op in unsynced:
        if op.kind == "W":
            end = op.off + len(op.new)
            if len(img) < end:
                img.extend(b"\0" * (end - len(img)))
            sectors = range(op.off // SECTOR, (end - 1) // SECTOR + 1) if op.new else range(0)
            for s in sectors:
                if s not in cut.versions:
                    cut.versions[s] = [synced[s * SECTOR : (s + 1) * SECTOR]]
            img[op.off : end] = op.new
            for s in sectors:
                cut.versions[s].append(bytes(img[s * SECTOR : (s + 1) * SECTOR]))
                lo, hi = max(op.off, s * SECTOR), min(end, (s + 1) * SECTOR)
                cut.written[s] = (lo - s * SECTOR, hi - s * SECTOR)
        else:
            if op.new_size < len(img):
                del img[op.new_size :]
            else:
                img.extend(b"\0" * (op.new_size - len(img)))
        cut.sizes.append(len(img))
    return cut


def choose(cut: FileCut, rng: random.Random, mode: str) -> tuple[bytes, int]:
    """The file after the power cut; ``mode`` "lost" (no unsynced write reached the disk),
    "kept" (all did) or "random" (each sector on its own). Returns (image, sectors torn)."""
    if mode == "lost":
        return cut.synced, 0
    if mode == "kept":
        return cut.latest, 0
    img = bytearray(cut.latest)
    torn = 0
    size = cut.sizes[rng.randrange(len(cut.sizes))]
    for s, versions in cut.versions.items():
        roll = rng.random()
        if roll < 0.05 and len(versions) > 1:
            lo, hi = cut.written[s]
            sector = bytearray(versions[rng.randrange(len(versions))].ljust(SECTOR, b"\0"))
            a = rng.randrange(lo, hi)
            b = rng.randrange(a, hi) + 1
            sector[a:b] = rng.randbytes(b - a)
            version = bytes(sector)
            torn += 1
        elif roll < 0.35:
            version = versions[0]  # never reached the disk
        elif roll < 0.85:
            version = versions[-1]
        else:
            version = versions[rng.randrange(len(versions))]
        start = s * SECTOR
        if start >= len(cut.synced) and version == versions[0]:
            # data=ordered: no size past data that never landed (a size the file had)
            size = min(size, max(n for n in cut.sizes if n <= start))
        need = start + len(version)
        if len(img) < need:
            img.extend(b"\0" * (need - len(img)))
        img[start : start + len(version)] = version
    if size > len(img):
        img.extend(b"\0" * (size - len(img)))
    return bytes(img[:size]), torn


@dataclass
class CutOutcome:
    mode: str
    torn: int
    dirty_sectors: int
    files: dict[str, tuple[int, int]]  # path -> (synced size, chosen size)
    anchored: int = 0  # the last seq whose append returned (anchored_seq)


def power_cut(
    watched: list[Path], log: Path, rng: random.Random, synced_copy: Path | None = None
) -> CutOutcome:
    """Replace each watched file by its content after a power cut (see the module docstring);
    with ``synced_copy`` (a directory) also write there the synced images (the state every
    acknowledged commit must survive in). The shared-memory index (``-shm``) is never synced:
    it is removed (SQLite rebuilds it from the WAL)."""
    ops = parse_log(log)
    mode = rng.choices(["lost", "kept", "random"], weights=[2, 1, 7])[0]
    anchors = [p for p in watched if p.name.endswith(".anchor")]
    outcome = CutOutcome(mode, 0, 0, {}, anchored_seq(ops, anchors[0]) if anchors else 0)
    for path in watched:
        cut = analyse(path, ops)
        if cut is None:
            continue
        image, torn = choose(cut, rng, mode)
        outcome.torn += torn
        outcome.dirty_sectors += len(cut.versions)
        outcome.files[str(path)] = (len(cut.synced), len(image))
        if synced_copy is not None:
            (synced_copy / path.name).write_bytes(cut.synced)
        path.write_bytes(image)
    for path in watched:
        shm = path.with_name(path.name + "-shm")
        if shm.exists() and not str(shm).endswith("-wal-shm"):
            shm.unlink()
    return outcome
