"""What a test lab's requests cost (issue 28): the on-demand software digests and the RNG's dump.

- ``verify_hmac_ms`` / ``verify_sas21_ms``: one on-demand digest over every approved file (an
  approved manifest of the installed software written to a temporary file, as on a table), and
  ``verify_vs_sha256_read``: the SAS 21 digest's time / reading and SHA-256-hashing the same
  files in the same process (the floor of any digest that reads them; near 1 means the CRC
  costs little beyond the reading). The SAS link waits this long once per 21 (docs/sas.md).
- ``rng_dump_draws_per_s``: production draws with their bytes (`rng.draw_with_bytes`, one
  ``os.urandom`` read per byte, as the round draws), and ``rng_dump_vs_seeded``: that rate /
  the seeded simulator's draws (``random.Random.randrange(7)``) in the same process.
- ``rng_battery_s_per_10m``: the scaled values' battery (`rng_stats.battery`) per 10,000,000
  values (docs/rng.md).
"""

from __future__ import annotations

import hashlib
import random
import tempfile
import time
from pathlib import Path

from controller.lab import rng_stats, software
from controller.service import rng, selfcheck

ROUNDS = 5
DRAWS = 200_000


def _best(fn: object, rounds: int = ROUNDS) -> float:
    assert callable(fn)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run() -> dict[str, float | int | str]:
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "software.manifest"
        selfcheck.write_manifest(manifest)
        entries, _, _ = software.approved_list(manifest)
        files = [software.resolve(e) for e in entries]

        def read_and_hash() -> None:
            h = hashlib.sha256()
            for f in files:
                h.update(f.read_bytes())

        hmac_s = _best(lambda: software.verify("hmac-sha1", "0badf00d", manifest))
        sas_s = _best(lambda: software.rom_signature(0x1234, manifest))
        base_s = _best(read_and_hash)
    dump_s = _best(lambda: [rng.draw_with_bytes() for _ in range(DRAWS)], 3)
    seeded = random.Random(1)
    seeded_s = _best(lambda: [seeded.randrange(7) for _ in range(DRAWS)], 3)
    values = bytes(rng.draw_position() for _ in range(1_000_000))
    battery_s = _best(lambda: rng_stats.battery(values), 2)
    return {
        "verify_hmac_ms": round(hmac_s * 1000, 1),
        "verify_sas21_ms": round(sas_s * 1000, 1),
        "verify_vs_sha256_read": round(sas_s / base_s, 2),
        "rng_dump_draws_per_s": round(DRAWS / dump_s),
        "rng_dump_vs_seeded": round(seeded_s / dump_s, 3),
        "rng_battery_s_per_10m": round(battery_s * 10, 1),
    }
