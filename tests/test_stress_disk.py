"""The power-cut disk model of `make stress` (tests/stress/disk.py, tests/stress/pcut.c) checked
on a file written by a real process under the recorder: a write made durable by fsync survives
every cut, a later unsynced write may be lost (the synced image keeps the old bytes and the old
size), kept, or seen in any version it passed through — the model SQLite's crash tests use
(issue 12: a power cut, unlike SIGKILL, loses unsynced writes)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from stress.disk import SECTOR, analyse, build_recorder, choose, parse_log

CHILD = """
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.pwrite(fd, b"A" * 4096, 0)
os.fsync(fd)
os.pwrite(fd, b"B" * 1024, 0)
os.pwrite(fd, b"C" * 1024, 512)
os.pwrite(fd, b"D" * 100, 8192)
os.close(fd)
"""


def _cc() -> str | None:
    return shutil.which(os.environ.get("CC", "cc"))


def test_power_cut_keeps_synced_writes_and_may_lose_tear_or_reorder_the_rest(
    tmp_path: Path,
) -> None:
    if _cc() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no C compiler: .ci/system-deps installs gcc")
        pytest.skip("no C compiler")
    recorder = build_recorder(tmp_path)
    target = tmp_path / "f"
    log = tmp_path / "log"
    env = {**os.environ, "LD_PRELOAD": str(recorder), "PCUT_LOG": str(log)}
    env["PCUT_WATCH"] = str(target)
    subprocess.run([sys.executable, "-c", CHILD, str(target)], env=env, check=True)
    ops = parse_log(log)
    assert [op.kind for op in ops] == ["W", "S", "W", "W", "W"]
    cut = analyse(target, ops)
    assert cut is not None
    assert cut.synced == b"A" * 4096  # every unsynced write undone, the size too
    assert cut.latest == target.read_bytes() and len(cut.latest) == 8292
    # sector 1 (bytes 512..1023) was written twice after the sync: A, then B, then C
    assert [v[:1] for v in cut.versions[1]] == [b"A", b"B", b"C"]
    assert choose(cut, random.Random(1), "lost")[0] == cut.synced
    assert choose(cut, random.Random(1), "kept")[0] == cut.latest
    seen: set[bytes] = set()
    for seed in range(200):
        image, _ = choose(cut, random.Random(seed), "random")
        assert image[1536:4096] == b"A" * 2560  # never written since the sync: as synced
        assert len(image) in (4096, 8292)  # data=ordered: a size only with its data
        seen.add(image[SECTOR : SECTOR + 1])
    assert {b"A", b"B", b"C"} <= seen  # lost, an intermediate version (reordered), the latest
