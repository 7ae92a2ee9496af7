"""The rough edges a newcomer met (issue 29), each made explicit where a user could trip again:
the page's port in use, ``--rounds`` as a total, the par sheets' silence on a terminal, the
example configuration's placeholders, the installer's dry run, the README's promises.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

from controller.cli import config as config_cli

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]
README = (ROOT / "README.md").read_text()


def test_make_run_with_its_port_in_use_stops_with_a_message_instead_of_playing_pageless(
    tmp_path: Path,
) -> None:
    """The page is the point of ``make run``: a port in use (another ``make run``) stops it at
    once, exit 7, naming the port and the way out; it never plays on without its page."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        done = subprocess.run(
            [*TABLECTL, "simulate", "--db", str(tmp_path / "j.db"), "--pace", "0",
             "--port", str(port)],
            capture_output=True, text=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        holder.close()
    assert done.returncode == 7, done.stdout + done.stderr
    assert f"the page could not start on port {port}" in done.stderr
    assert "make run PORT=8081" in done.stderr
    assert "stopped" not in done.stdout  # it never started playing


def test_a_second_headless_run_to_the_same_total_says_it_plays_nothing(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    argv = [*TABLECTL, "simulate", "--headless", "--rounds", "2", "--db", str(db)]
    first = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "already holds" not in first.stdout
    again = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "already holds 2 rounds and --rounds is the total to reach" in again.stdout
    assert "--rounds 4 plays 2 more" in again.stdout


def test_parsheet_says_what_it_is_doing_on_a_terminal_and_nothing_in_a_pipe() -> None:
    argv = [*TABLECTL, "parsheet", "--pay-table", "envy-a", "--rounds", "100", "--format", "json"]
    master, slave = os.openpty()
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=slave, cwd=ROOT, timeout=300)
        os.close(slave)
        slave = -1
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert done.returncode == 0
    text = seen.decode()
    assert "parsheet: exact par sheets of 1 pay tables" in text
    assert re.search(r"parsheet: done in \d+\.\d s", text)
    piped = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert piped.returncode == 0 and piped.stderr == ""


def test_config_check_warns_of_the_example_s_table_id_and_pin() -> None:
    example = tomllib.loads((ROOT / "deploy" / "config.example.toml").read_text())
    assert example["table"]["id"] == config_cli.EXAMPLE_TABLE_ID
    assert example["table"]["asset_number"] == config_cli.EXAMPLE_ASSET_NUMBER
    assert example["supervisors"]["supervisor1"]["pin_hash"] == config_cli.EXAMPLE_PIN_HASH
    done = subprocess.run(
        [*TABLECTL, "config", "check", str(ROOT / "deploy" / "config.example.toml")],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.startswith("ok, with 2 warnings\n")
    assert "the PIN 0000" in done.stderr and "table.id 'T1'" in done.stderr
    simulated = subprocess.run(
        [*TABLECTL, "config", "check", str(ROOT / "controller" / "data" / "simulated-table.toml")],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert simulated.stdout.startswith("ok\n") and "warning" not in simulated.stderr


def test_the_installer_s_dry_run_says_when_it_restarts_the_service() -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "install.sh"), "--dry-run"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PAIGOW_BOARD_MODEL": "Raspberry Pi 4 Model B Rev 1.5"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "&& systemctl restart" not in done.stdout
    assert (
        "then, if it passes," in done.stdout and "is not a new copy of the example" in done.stdout
    )


def test_the_readme_tells_a_newcomer_what_the_issue_found_missing() -> None:
    """Training PINs, the terminal's commands, how long make test takes, the page's port."""
    simulated = (ROOT / "controller" / "data" / "simulated-table.toml").read_text()
    pins = re.search(r"Training PINs \(simulation only.*?\): trainer (\d+), floor (\d+)", simulated)
    assert pins is not None
    assert f"`trainer` PIN {pins.group(1)}" in README and f"`floor` PIN {pins.group(2)}" in README
    for command in ("help", "status", "fault", "hit"):
        assert f"`{command}" in README, command
    assert re.search(r"`make test` takes about \d+ minutes", README)
    assert "make run PORT=" in README


def test_every_readme_section_a_script_cites_exists() -> None:
    """``.ci/system-deps`` cited a README section that did not exist."""
    headings = {line.lstrip("#").strip() for line in README.splitlines() if line.startswith("#")}
    for script in (ROOT / ".ci").iterdir():
        for cited in re.findall(r'README: "([^"]+)"', script.read_text()):
            assert cited in headings, (script.name, cited)


def test_hands_says_it_reads_card_text() -> None:
    done = subprocess.run(
        [*TABLECTL, "hands", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert "as card text" in " ".join(done.stdout.split())
    hands_line = next(line for line in README.splitlines() if line.startswith("tablectl hands"))
    following = README.split(hands_line, 1)[1].splitlines()[1]
    assert "card text in" in following and "JSON lines in" not in following
    ranked = subprocess.run(
        [*TABLECTL, "hands"], input="AS KS QS JS TS\n", capture_output=True, text=True,
        cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert '"category": "royal-flush"' in ranked.stdout


def test_the_tools_that_judge_the_code_are_pinned_exactly() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {}
    for spec in project["optional-dependencies"]["test"]:
        name, _, version = spec.partition("==")
        pins[name] = version
    for tool in ("ruff", "mypy", "pytest", "pytest-xdist", "pytest-timeout", "hypothesis"):
        assert re.fullmatch(r"\d+(\.\d+)+", pins.get(tool, "")), f"{tool} is not pinned with =="
