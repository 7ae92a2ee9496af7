"""Quick to start (issue 29): the command line imports only what the command it runs needs, and
``tablectl --version`` names the release and the software hash an inspector compares.

Every command, and the service's start after a power cut, pays for each import, on a Pi several
times over. The figures are measured by ``bench/bench_cli.py`` (``cli_start_vs_bare_python``);
these tests keep the imports from coming back silently: each runs the real command line in a
fresh interpreter and reads its ``sys.modules``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from controller.cli import COMMANDS, build_parser
from controller.service.selfcheck import software_manifest, write_manifest
from controller.version import __version__

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "deploy" / "config.example.toml"

#: What no command's help, nor ``config check``, may import: the round machine and its library,
#: the GPIO and serial libraries, SQLite wrappers, the page's server, the floor link's client.
HEAVY = (
    "transitions",
    "gpiozero",
    "serial",  # pyserial
    "tornado",
    "sqlite_utils",
    "sqlite3",
    "nats",
    "asyncio",
    "ssl",
    "fsm.round.events",
    "fsm.rules.parsheet",
    "controller.cli.parsheet",
    "controller.link.messages",
    "controller.journal.anchor",
    "controller.journal.seal",
    "fsm.round.machine",
    "fsm.round.catalogue",
    "controller.service.owner",
    "controller.journal.store",
)


def run_wrapped(*argv: str) -> tuple[set[str], int]:
    """The modules a fresh interpreter holds after ``tablectl ARGV`` (its exit ignored), and the
    entries its rank tables (``fsm.rules.ranking.rank_tables``) hold by then."""
    code = (
        "import sys, json\n"
        "from controller.cli import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "ranking = sys.modules.get('fsm.rules.ranking')\n"
        "tables = [] if ranking is None else [\n"
        "    t for opts in (ranking.DEFAULT_OPTIONS,) for t in ranking.rank_tables(opts)]\n"
        "entries = sum(len(t) for t in tables)\n"
        "sys.stderr.write('\\nMODULES ' + json.dumps([sorted(sys.modules), entries]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    marker = done.stderr.rindex("MODULES ")
    modules, entries = json.loads(done.stderr[marker + len("MODULES ") :])
    return set(modules), entries


def modules_after(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after ``tablectl ARGV`` (its exit ignored)."""
    return run_wrapped(*argv)[0]


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_help_imports_no_command_module_and_nothing_heavy() -> None:
    modules = modules_after("--help")
    assert heavy_in(modules) == []
    assert sorted(m for m in modules if m.startswith(("fsm", "drivers", "controller."))) == [
        "controller.cli"
    ]


def test_a_command_s_help_imports_only_its_own_module() -> None:
    modules = modules_after("report", "--help")
    assert "controller.cli.report" in modules
    others = {f"controller.cli.{m}" for m, _ in COMMANDS.values()} - {"controller.cli.report"}
    assert sorted(modules & others) == []


def test_config_check_reads_the_configuration_without_the_machine_or_device_libraries() -> None:
    modules = modules_after("config", "check", str(EXAMPLE))
    assert "controller.config" in modules
    assert heavy_in(modules) == []


def test_config_check_imports_only_its_own_command_and_builds_no_rank_table() -> None:
    """The rule of issue 29 for ``config check``: no other command's module, none of the device,
    page, storage or network libraries (`HEAVY`: pyserial, gpiozero, tornado, sqlite-utils,
    transitions, ...), and its jackpot check (NJ 13:69D-1.52(e)) answered from the stored census,
    not from rank tables computed for it (they were most of its 0.63 s)."""
    modules, rank_entries = run_wrapped("config", "check", str(EXAMPLE))
    assert heavy_in(modules) == []
    commands = {f"controller.cli.{m}" for m, _ in COMMANDS.values()}
    assert sorted(modules & commands) == ["controller.cli.config"]
    assert "fsm.rules.jackpot_odds" in modules  # the check ran ...
    assert rank_entries == 0  # ... and built no rank table


def test_the_help_lines_are_each_command_module_s_own() -> None:
    """``tablectl --help`` lists each command from `COMMANDS` without importing its module; the
    line must be the one the module registers (``tablectl CMD --help`` shows the module's)."""
    full = build_parser()
    subparsers = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    registered = {a.dest: a.help for a in subparsers._choices_actions}
    assert registered == {name: summary for name, (_, summary) in COMMANDS.items()}


def test_each_command_registered_alone_has_the_grammar_of_the_whole_parser() -> None:
    def sub_of(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

    full = sub_of(build_parser())
    for name in COMMANDS:
        alone = sub_of(build_parser(only=name))
        assert alone.choices[name].format_help() == full.choices[name].format_help(), name


def test_version_prints_the_release_and_the_software_hash(tmp_path: Path) -> None:
    """The hash printed is the SHA-256 of the manifest install.sh writes (so ``sha256sum
    /etc/paigow/software.manifest`` on a table gives the same figure)."""
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"tablectl {__version__}"
    manifest = tmp_path / "software.manifest"
    write_manifest(manifest, software_manifest())
    assert lines[1] == f"software {hashlib.sha256(manifest.read_bytes()).hexdigest()}"
    assert lines[2].startswith("python 3.")


def test_no_command_is_an_error_that_points_at_the_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2
    assert "a command is required (tablectl --help lists them)" in done.stderr
