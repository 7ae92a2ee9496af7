"""The architecture of DESIGN.md, checked on the source: `fsm` is pure (no I/O, no clock, no
randomness, no threads of its own) and imports nothing from `drivers` or `controller`; `drivers`
imports nothing from `controller`. A reader finds every rule in fsm/, every wire in drivers/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Modules whose use in fsm/ would bring a clock, randomness, I/O or hardware into the rules.
FORBIDDEN_IN_FSM = {
    "time",
    "datetime",
    "random",
    "secrets",
    "os",
    "sys",
    "socket",
    "sqlite3",
    "sqlite_utils",
    "subprocess",
    "serial",
    "gpiozero",
    "lgpio",
    "logging",
    "shutil",
    "signal",
    "asyncio",
    "urllib",
    "http",
    "io",
    "threading",  # issue 7 point 11: no lock in fsm/ (each table builds its own machine)
}
# Reading the package's own pay-table and house-way files (data shipped with the code) is the
# one file access fsm/ makes: it happens at load, never while a round is stepped.
DATA_READERS = {"fsm/rules/progressive.py", "fsm/rules/paytables.py", "fsm/rules/houseway.py"}
# fsm/configread.py parses TOML text for them (``parse_toml``: one place that refuses nesting too
# deep for the parser); it opens no file.
DATA_READERS |= {"fsm/configread.py"}
DATA_MODULES = {"tomllib", "pathlib", "importlib"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", sources("fsm"), ids=lambda p: str(p.relative_to(ROOT)))
def test_fsm_imports_no_io_clock_randomness_or_outer_layer(path: Path) -> None:
    rel = path.relative_to(ROOT).as_posix()
    used = imported_modules(path)
    assert not used & {"drivers", "controller"}, f"{rel} reaches an outer layer"
    assert not used & FORBIDDEN_IN_FSM, f"{rel} imports {sorted(used & FORBIDDEN_IN_FSM)}"
    if rel not in DATA_READERS:
        assert not used & DATA_MODULES, f"{rel} reads files: only {sorted(DATA_READERS)} may"


@pytest.mark.parametrize("path", sources("drivers"), ids=lambda p: str(p.relative_to(ROOT)))
def test_drivers_never_import_the_controller(path: Path) -> None:
    assert "controller" not in imported_modules(path)


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import time\nfrom controller.service.owner import Owner\n")
    assert {"time", "controller"} <= imported_modules(bad)


def private_imports(path: Path) -> list[str]:
    """Names starting with an underscore that ``path`` takes from another module of the project:
    ``from fsm.x import _name``, or ``mod._name`` on a module it imported."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").startswith("fsm")
        ):
            for alias in node.names:
                if alias.name.startswith("_") and alias.name != "__future__":
                    found.append(f"{node.module}.{alias.name}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update((a.asname or a.name).split(".")[0] for a in node.names)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("path", sources("fsm/round"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_round_takes_no_private_name_from_another_module(path: Path) -> None:
    """Issue 21: a module of the round uses another's public names only, so a reader of one phase
    never has to chase a private helper through the package."""
    assert private_imports(path) == []


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from fsm.round.config import _split_key\nfrom fsm.round import states as S\nS._tree\n"
    )
    assert private_imports(bad) == ["fsm.round.config._split_key", "S._tree"]
