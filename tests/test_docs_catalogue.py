"""The entry catalogue of docs/journal.md and the effect table of docs/round.md are generated from
the typed records (issue 7 point 1: "the entry catalogue of docs/journal.md is generated from these
types"); this test keeps them equal."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from fsm.round.effects import EFFECTS
from fsm.round.events import EVENTS

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _catalogue() -> ModuleType:
    spec = importlib.util.spec_from_file_location("catalogue", DOCS / "catalogue.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_docs_catalogue_is_generated_from_the_records() -> None:
    assert _catalogue().main(["--check"]) == 0


def test_every_record_has_a_row_with_every_field() -> None:
    cat = _catalogue()
    journal = (DOCS / "journal.md").read_text(encoding="utf-8")
    for name, cls in [*EVENTS.items(), *EFFECTS.items()]:
        assert f"| `{name}` |" in journal, name
        for f in cls.FIELDS:
            assert f"`{f.key}`{'' if f.required else '?'} (" in journal, (name, f.key)
    assert cat.entry_types() in journal and cat.effects() in journal
