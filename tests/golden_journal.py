"""The golden journal: the export of a seeded headless run, timestamps and hashes stripped.

``tests/golden/headless-seed7-5rounds.jsonl`` is the journal of ``tablectl simulate --headless
--rounds 5 --seed 7`` on the simulated table, one entry per line, without what changes from run
to run (``ts``, the hashes, ``mac``, the power-up's ``software_hash``). tests/test_golden_journal.py
compares a fresh run with it, so any change of the table's behaviour shows up in review as a diff
of this file. When behaviour changes on purpose, regenerate it (and review the diff) with:

    .venv/bin/python tests/golden_journal.py
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden" / "headless-seed7-5rounds.jsonl"
ROUNDS, SEED = 5, 7
VOLATILE = ("ts", "prev_hash", "state_hash", "hash", "mac")


def normalised_export(db: Path) -> str:
    """The export of ``db`` as JSON lines without the fields that differ between runs."""
    from controller.journal.audit import export

    out = io.StringIO()
    export(db, "jsonl", out)
    lines = []
    for line in out.getvalue().splitlines():
        entry = json.loads(line)
        for key in VOLATILE:
            entry.pop(key, None)
        if entry["type"] == "power_up":  # the installed software and this machine's clock
            entry["data"].pop("software_hash", None)
            entry["data"].pop("clock_synced", None)
        lines.append(json.dumps(entry, sort_keys=True, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def through_rounds(export: str, rounds: int) -> str:
    """The export up to and including the entry that completed round ``rounds``. The run stops
    once that entry is published, and an event a simulated device was about to post meanwhile
    (the shuffler's ``shuffle_complete`` for the next round, the shuffle having been asked for by
    that very entry) may or may not be journaled before the stop: it belongs to no round of the
    five, and whether it made it depends on the machine's load, not on the table's behaviour."""
    lines = export.splitlines(keepends=True)
    done = 0
    for index, line in enumerate(lines):
        if json.loads(line)["type"] == "round_completed":
            done += 1
            if done == rounds:
                return "".join(lines[: index + 1])
    return export


def golden_run() -> str:
    """Play the seeded headless run in a fresh directory; its normalised export through the
    last of its rounds."""
    from controller.sim.simulate import run_headless

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "golden.db"
        code = run_headless(db, ROUNDS, SEED)
        if code != 0:
            raise RuntimeError(f"the golden run ended with exit code {code}")
        return through_rounds(normalised_export(db), ROUNDS)


def main() -> int:
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(golden_run(), encoding="utf-8")
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
