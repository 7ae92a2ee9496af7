"""Every ``tablectl`` command against bad arguments, hostile stdin and a closed stdout: a clear
message and exit 2 (usage or bad input), never a traceback (issue 12).

The commands are enumerated from ``controller.cli.build_parser()``, so a command added later is
covered without touching this file: its options must use the bounded types of
``controller.cli.args`` (or ``choices``), and it must survive the same inputs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cli import EXIT_STDOUT_CLOSED, build_parser, main
from controller.cli.args import BOUNDED_TYPES

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]
EXAMPLE = ROOT / "deploy" / "config.example.toml"

#: Numbers no option of any command could mean.
HOSTILE_NUMBERS = (
    "nan", "inf", "-inf", "1e999", "99999999999999999999999", "-99999999999999999999999",
    "", "0x10", "1_000", "\u0661",  # an Arabic-Indic digit: str.isdigit says yes
)  # fmt: skip
#: Bytes a hostile or broken client could put on stdin.
HOSTILE_STDIN = (
    b"\xff\xfe\x00\x01 not UTF-8\n",
    b"\x00" * 64 + b"\n",
    b"[" * 100_000 + b"\n",
    b'{"a":' * 50_000 + b"\n",
    b"A" * 2_000_000 + b"\n",
    bytes(range(256)) * 64,
)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def leaf_commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every runnable command path (``("journal", "verify")``) with its parser."""
    out: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []

    def walk(path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
        children = _subparsers(parser)
        if not children:
            out.append((path, parser))
        for name, child in children.items():
            walk((*path, name), child)

    walk((), build_parser())
    return out


LEAVES = leaf_commands()
LEAF_IDS = [" ".join(path) for path, _ in LEAVES]


def typed_options() -> Iterator[tuple[tuple[str, ...], str, argparse.Action]]:
    for path, parser in LEAVES:
        for action in parser._actions:
            if action.option_strings and action.type is not None:
                yield path, action.option_strings[-1], action


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr[-2000:]


def test_the_enumeration_finds_every_registered_command() -> None:
    names = {path[0] for path, _ in LEAVES}
    assert {"hands", "settle", "config", "journal", "report", "simulate", "run"} <= names
    assert ("journal", "verify") in {p for p, _ in LEAVES}
    assert len(LEAVES) >= 14


@pytest.mark.parametrize(("path", "option", "action"), list(typed_options()))
def test_every_numeric_option_has_a_bounded_type(
    path: tuple[str, ...], option: str, action: argparse.Action
) -> None:
    """``type=int`` takes 99999999999999999999999 and ``type=float`` takes nan: every typed option
    of every command is one of controller.cli.args' bounded types."""
    assert isinstance(action.type, BOUNDED_TYPES), (
        f"tablectl {' '.join(path)} {option}: type {action.type!r}; use controller.cli.args"
    )


@pytest.mark.parametrize(("path", "option", "action"), list(typed_options()))
def test_every_numeric_option_refuses_numbers_no_command_could_mean(
    path: tuple[str, ...], option: str, action: argparse.Action, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = build_parser()
    for value in HOSTILE_NUMBERS:
        if action.choices is not None and value in map(str, action.choices):
            continue
        with pytest.raises(SystemExit) as info:
            parser.parse_args([*path, f"{option}={value}"])
        assert info.value.code == 2, (path, option, value)
        err = capsys.readouterr().err
        assert option in err and "Traceback" not in err, (option, value, err)


@pytest.mark.parametrize("path", [p for p, _ in LEAVES], ids=LEAF_IDS)
def test_every_command_with_a_bad_argument_and_hostile_stdin_exits_2_with_its_usage(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(HOSTILE_STDIN[5])))
    with pytest.raises(SystemExit) as info:
        main([*path, "--no-such-option", "\x7f"])
    out, err = capsys.readouterr()
    assert info.value.code == 2, err
    assert "usage:" in err and "error:" in err
    no_traceback(err)
    assert out == ""


def test_a_bad_argument_exits_2_from_the_installed_command_too() -> None:
    done = subprocess.run(
        [*TABLECTL, "report", "--no-such-option"], input=HOSTILE_STDIN[0], capture_output=True,
        cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert b"usage:" in done.stderr and b"Traceback" not in done.stderr


@pytest.mark.parametrize("stdin", HOSTILE_STDIN, ids=lambda b: repr(b[:12]))
@pytest.mark.parametrize("path", [("hands",), ("settle",), ("config", "hash-pin")])
def test_commands_that_read_stdin_refuse_hostile_bytes_with_a_message_and_exit_2(
    path: tuple[str, ...], stdin: bytes
) -> None:
    done = subprocess.run(
        [*TABLECTL, *path], input=stdin, capture_output=True, cwd=ROOT, timeout=120
    )
    err = done.stderr.decode("utf-8", "replace")
    no_traceback(err)
    assert done.returncode == 2, err
    assert b"error" in done.stdout or "must" in err


def test_settle_on_deeply_nested_json_is_an_error_line_not_a_recursion_error() -> None:
    done = subprocess.run(
        [*TABLECTL, "settle"], input=b"[" * 100_000 + b"]" * 100_000 + b"\n",
        capture_output=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    no_traceback(done.stderr.decode())
    assert done.returncode == 2
    assert b"nested too deeply" in done.stdout


@pytest.mark.parametrize(
    "text", ["a = " + "[" * 100_000 + "]" * 100_000, "a = " + "{b = " * 10_000 + "1" + "}" * 10_000]
)
def test_config_check_on_deeply_nested_toml_names_it_not_a_recursion_error(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(text + "\n")
    done = subprocess.run(
        [*TABLECTL, "config", "check", str(path)], capture_output=True, text=True, cwd=ROOT
    )
    no_traceback(done.stderr)
    assert done.returncode == 1
    assert "not valid TOML: nested too deeply" in done.stderr


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("hostile") / "journal.db"
    done = subprocess.run(
        [*TABLECTL, "simulate", "--headless", "--rounds", "2", "--db", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("253402300800000", "--from: must be at most 253402300799999 (year 9999)"),
        ("9999999999999999999999", "--from: must be at most 253402300799999 (year 9999)"),
        ("9999-12-31T23:00:00-14:00", "--from: must be between 1970 and 9999 (UTC)"),
        ("-1", "--from: must not be negative"),
    ],
)
@pytest.mark.parametrize("kind", ["rounds", "shift", "hits"])
def test_report_times_no_calendar_holds_are_refused_with_exit_2(
    journal: Path, kind: str, value: str, message: str
) -> None:
    done = subprocess.run(
        [*TABLECTL, "report", kind, "--db", str(journal), f"--from={value}"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    no_traceback(done.stderr)
    assert done.returncode == 2
    assert message in done.stderr


def _simulate(db: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TABLECTL, "simulate", "--headless", "--rounds", "1", "--db", db, *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip


def test_simulate_on_a_journal_in_a_missing_directory_exits_2_naming_it(tmp_path: Path) -> None:
    done = _simulate(str(tmp_path / "nowhere" / "j.db"))
    no_traceback(done.stderr)
    assert done.returncode == 2
    assert f"directory {tmp_path / 'nowhere'} does not exist" in done.stderr
    assert not (tmp_path / "nowhere").exists()


def test_simulate_on_a_directory_or_a_control_character_exits_2(tmp_path: Path) -> None:
    done = _simulate(str(tmp_path))
    assert done.returncode == 2 and "is a directory" in done.stderr
    done = _simulate(str(tmp_path / "a\tb.db"))
    assert done.returncode == 2 and "control characters are not allowed" in done.stderr
    no_traceback(done.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.fixture()
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory nobody may write: a read-only tmpfs as root (root ignores mode bits)."""
    target = tmp_path / "ro"
    target.mkdir()
    if os.geteuid() != 0:
        target.chmod(0o555)
        yield target
        target.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(target)])
    if mounted.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("cannot mount a read-only tmpfs as root")
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=False)


def test_simulate_on_a_journal_in_a_read_only_directory_exits_2(read_only_dir: Path) -> None:
    done = _simulate(str(read_only_dir / "j.db"))
    no_traceback(done.stderr)
    assert done.returncode == 2
    assert "Read-only file system" in done.stderr or "Permission denied" in done.stderr


def test_a_nul_in_the_configured_journal_path_is_refused_by_the_loader(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    assert 'path = "/var/lib/paigow/journal.db"' in text
    config = tmp_path / "nul.toml"
    config.write_text(text.replace('"/var/lib/paigow/journal.db"', '"/tmp/a\\u0000b.db"'))
    done = subprocess.run(
        [*TABLECTL, "simulate", "--headless", "--rounds", "1", "--config", str(config)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    no_traceback(done.stderr)
    assert done.returncode == 2
    assert "journal.path: control characters are not allowed" in done.stderr


def _closed_stdout(argv: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first byte (``| head -0``)
    try:
        return subprocess.run(
            [*TABLECTL, *argv], stdout=write, stderr=subprocess.PIPE, input=stdin, cwd=ROOT,
            timeout=300,
        )  # fmt: skip
    finally:
        os.close(write)


HELP_INTO_CLOSED_PIPES = """
import json, os, sys
from controller.cli import main
results = {}
for path in json.loads(sys.argv[1]):
    read, write = os.pipe()
    os.close(read)  # the reader has gone (``| head -0``)
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(write, 1)
    os.close(write)
    try:
        code = main([*path, "--help"])
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:
        code = repr(exc)
    os.dup2(saved, 1)
    os.close(saved)
    results[" ".join(path)] = code
sys.stderr.write(json.dumps(results))
"""


def test_every_commands_help_into_a_closed_pipe_exits_quietly() -> None:
    """Each command's --help into a pipe nobody reads, all in one process (each in a fresh one
    would take a second apiece): an exit code, never an exception."""
    paths = [list(p) for p, _ in LEAVES]
    done = subprocess.run(
        [sys.executable, "-c", HELP_INTO_CLOSED_PIPES, json.dumps(paths)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    no_traceback(done.stderr)
    results = json.loads(done.stderr)
    assert set(results) == set(LEAF_IDS)
    for name, code in results.items():
        assert code in (0, EXIT_STDOUT_CLOSED), (name, code)


def test_every_command_that_prints_into_a_closed_pipe_exits_without_a_traceback(
    journal: Path, tmp_path: Path
) -> None:
    db = str(journal)
    runs: list[tuple[list[str], bytes]] = [
        (["journal", "verify", "--db", db], b""),
        (["journal", "export", "--db", db], b""),
        (["journal", "export", "--db", db, "--format", "csv"], b""),
        (["report", "rounds", "--db", db], b""),
        (["report", "shift", "--db", db, "--json"], b""),
        (["report", "meters", "--db", db], b""),
        (["report", "hits", "--db", db], b""),
        (["hands"], b"As Ks Qs Js Ts 9s 8s\n" * 50),
        (["settle"], b"{}\n" * 50),
        (["config", "hash-pin"], b"482913\n"),
        (["simulate", "--headless", "--rounds", "1", "--db", str(tmp_path / "s.db")], b""),
    ]
    for argv, stdin in runs:
        done = _closed_stdout(argv, stdin)
        err = done.stderr.decode()
        no_traceback(err)
        assert "BrokenPipe" not in err, (argv, err)
        assert done.returncode != 0, argv  # nothing was read: never "done"
