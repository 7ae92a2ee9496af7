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


# --------------------------------------------------------------------------- one vocabulary
# Every producer (GPIO devices, serial adapters, SAS, console, page, link, simulator, owner)
# builds the typed record of fsm/round/events.py and posts its envelope; only the round's own
# modules and the journal's readers (which turn a journaled entry back into its envelope) build
# an Event from a type and data.
ENVELOPE_READERS = {
    "controller/journal/tail.py",  # a committed entry -> its typed event
    "controller/cli/journal.py",  # verify: replays each journaled entry
    "controller/service/owner.py",  # the machine's own post effects, and the canonical form
}


def string_built_events(path: Path) -> list[int]:
    """Lines of ``Event(<a string literal or a name>, ...)`` calls (an envelope built by hand)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "Event"
            and node.args
        ):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize(
    "path", sources("drivers") + sources("controller"), ids=lambda p: str(p.relative_to(ROOT))
)
def test_producers_build_typed_events_never_string_built_ones(path: Path) -> None:
    rel = path.relative_to(ROOT).as_posix()
    if rel in ENVELOPE_READERS:
        return
    assert string_built_events(path) == [], f"{rel}: build the event's record (fsm/round/events)"


def test_the_check_sees_a_string_built_event(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        'post(Event("chip_detected", {"position": 1}))\npost(ChipDetected(1).envelope())\n'
    )
    assert string_built_events(bad) == [1]


# --------------------------------------------------------------------------- page, console, circles
def imported_names(path: Path) -> set[str]:
    """Every module ``path`` imports, in full (``controller.console.server``), at any level."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sources("controller/web"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_never_imports_the_console(path: Path) -> None:
    """The supervisor's requests and PIN gate are shared (controller/supervisor/): the page and
    the console are two channels, neither built on the other."""
    used = imported_names(path)
    assert not {n for n in used if n.startswith("controller.console")}, path.name


def test_no_import_circle_among_our_modules() -> None:
    """No module imports (at any level) a module that imports it back, directly or through
    others: a reader can learn each module before the ones that use it (a package's
    ``__init__`` re-exporting its modules is not a circle)."""
    modules = {
        p.relative_to(ROOT).with_suffix("").as_posix().replace("/", "."): p
        for package in ("fsm", "drivers", "controller")
        for p in sources(package)
        if p.name != "__init__.py"
    }
    graph = {
        name: {used for used in imported_names(path) if used in modules and used != name}
        for name, path in modules.items()
    }
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
