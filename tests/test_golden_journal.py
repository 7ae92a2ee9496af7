"""A seeded headless run journals exactly the golden journal (tests/golden_journal.py): any
change of what the table does, entry by entry, shows up as a diff in review. Regenerate on
purpose with ``.venv/bin/python tests/golden_journal.py``."""

from __future__ import annotations

import difflib

from golden_journal import GOLDEN, golden_run


def test_a_seeded_headless_run_journals_the_golden_journal() -> None:
    expected = GOLDEN.read_text(encoding="utf-8")
    got = golden_run()
    if got != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), got.splitlines(True), "golden", "this run", n=1
            )
        )
        raise AssertionError(
            "the table's behaviour changed; if on purpose, regenerate with "
            f"`.venv/bin/python tests/golden_journal.py` and review the diff:\n{diff[:6000]}"
        )
