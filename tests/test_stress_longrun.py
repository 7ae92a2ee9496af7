"""The long run's memory check (issue 12, "memory and thread counts flat"): `heap_bytes` sees
what a leak holds, wherever it is held, and `problems` fails samples that grow.

The long run itself (10,000 rounds) is `make stress`; a one-off run of it with a deliberate
leak is in /work/notes/longrun.md. These tests use the real walk of the real heap.
"""

from __future__ import annotations

import threading
from typing import Any

from stress.longrun import MAX_HEAP_KIB_PER_1000, heap_bytes, problems

KIB = 1024


class _Holder:
    def __init__(self) -> None:
        self.kept: list[bytes] = []


_HELD = _Holder()


def test_heap_bytes_counts_a_leak_held_by_an_object() -> None:
    before = heap_bytes()
    _HELD.kept.extend(bytes(KIB) + i.to_bytes(4, "big") for i in range(1000))
    try:
        grown = heap_bytes() - before
    finally:
        _HELD.kept.clear()
    assert grown >= 1000 * KIB, grown


def test_heap_bytes_counts_a_leak_held_by_another_threads_local() -> None:
    """A buffer that only a running function's local holds (``buf += data`` in a device
    thread's loop) is in no container the collector knows: the walk starts from the other
    threads' frames too."""
    ready, done = threading.Event(), threading.Event()

    def loop() -> None:
        buf = b""
        for i in range(1000):
            buf += bytes(KIB - 4) + i.to_bytes(4, "big")
        ready.set()
        done.wait(10)
        del buf

    before = heap_bytes()
    thread = threading.Thread(target=loop)
    thread.start()
    try:
        ready.wait(10)
        grown = heap_bytes() - before
    finally:
        done.set()
        thread.join()
    assert grown >= 1000 * KIB, grown


def _samples(leak_per_round: int, rounds_per_sample: int = 1000) -> list[dict[str, Any]]:
    """Four samples of the real heap, ``leak_per_round`` bytes kept per 'round' between them."""
    samples = []
    try:
        for n in range(4):
            _HELD.kept.extend(
                bytes(leak_per_round) + i.to_bytes(4, "big")
                for i in range(rounds_per_sample if leak_per_round else 0)
            )
            samples.append(
                {
                    "rounds": (n + 1) * rounds_per_sample,
                    "heap_kib": heap_bytes() // KIB,
                    "threads": threading.active_count(),
                }
            )
    finally:
        _HELD.kept.clear()
    return samples


def test_a_heap_growing_1_kib_a_round_fails_the_long_run() -> None:
    found = problems(_samples(KIB))
    assert any("heap grows" in p for p in found), found


def test_a_flat_heap_passes_the_long_run() -> None:
    samples = _samples(0)
    assert problems(samples) == [], samples
    assert samples[-1]["heap_kib"] - samples[1]["heap_kib"] < MAX_HEAP_KIB_PER_1000


def test_a_thread_more_at_each_sample_fails_the_long_run() -> None:
    samples = [{"rounds": 1000 * (n + 1), "heap_kib": 100, "threads": 9 + n} for n in range(3)]
    assert any("thread count grows" in p for p in problems(samples))
