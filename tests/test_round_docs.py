"""docs/round.md's diagram and event table are generated from the machine's own tables."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from fsm.round.machine import EFFECT_TYPES, EVENT_FIELDS

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _diagram_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("round_diagram", DOCS / "round_diagram.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_round_doc_diagram_is_current() -> None:
    assert _diagram_module().main(["--check"]) == 0


def test_every_event_and_effect_is_documented() -> None:
    text = (DOCS / "round.md").read_text(encoding="utf-8")
    for name in [*EVENT_FIELDS, *EFFECT_TYPES]:
        assert f"`{name}`" in text, name
