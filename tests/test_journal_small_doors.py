"""The small doors of issue 23: files beside the journal read only when regular and small.

On main c291293 ``[journal] anchor = "/dev/zero"`` passed ``config check`` and ``simulate``
reached 14.9 GB of memory in 8 s; a FIFO there hung power-up, verify and config check
(``read_anchor`` and ``load_key`` read without a size bound or a file-type check). Now each is
refused at once, naming the file and why (NY 5321.18(b)(3)(iv): the controller's self-check of
its storage never hangs the table).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.config import SIMULATED_TABLE, ConfigError, load_config
from controller.journal.anchor import AnchorError, load_key, read_anchor
from controller.journal.audit import verify
from controller.journal.format import StorageFault
from controller.journal.store import Journal

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TABLECTL, *args], capture_output=True, text=True, cwd=ROOT, timeout=60)


@pytest.fixture(params=["dev_zero", "fifo"])
def odd_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "dev_zero":
        return Path("/dev/zero")
    fifo = tmp_path / "odd.fifo"
    os.mkfifo(fifo)
    return fifo


def _config(tmp_path: Path, journal_lines: str) -> Path:
    text = SIMULATED_TABLE.read_text()
    text = text.replace(
        'path = "/tmp/paigow-simulated.db"',
        f"path = {json.dumps(str(tmp_path / 'j.db'))}\n{journal_lines}",
    )
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_an_anchor_or_key_that_is_a_device_or_fifo_is_refused_at_once(
    odd_file: Path, tmp_path: Path
) -> None:
    with pytest.raises(AnchorError, match="not a regular file"):
        read_anchor(odd_file)
    with pytest.raises(AnchorError, match="not a regular file"):
        load_key(odd_file)
    with pytest.raises(StorageFault, match="not a regular file"):
        Journal.open(tmp_path / "j.db", anchor=odd_file)
    Journal.open(tmp_path / "j.db").close()
    report = verify(tmp_path / "j.db", anchor=odd_file)
    assert any("not a regular file" in p for p in report.problems)


def test_an_oversized_anchor_or_key_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"0" * 100_000)
    with pytest.raises(AnchorError, match="more than the"):
        read_anchor(big)
    with pytest.raises(AnchorError, match="more than the"):
        load_key(big)


def test_config_check_names_an_anchor_or_key_that_cannot_be_read(
    odd_file: Path, tmp_path: Path
) -> None:
    for key in ("anchor", "key_file", "seal_key"):
        config = _config(tmp_path, f"{key} = {json.dumps(str(odd_file))}")
        done = tablectl("config", "check", str(config))
        assert done.returncode == 1, done.stdout
        assert f"journal.{key}:" in done.stderr and "not a regular file" in done.stderr


def test_a_configuration_that_is_a_device_or_fifo_is_refused(odd_file: Path) -> None:
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config(odd_file)


def test_simulate_with_a_dev_zero_anchor_stops_with_a_storage_fault_not_a_memory_blow_up(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, 'anchor = "/dev/zero"')
    done = subprocess.run(
        [*TABLECTL, "simulate", "--config", str(config), "--headless", "--rounds", "1"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert done.returncode == 4, done.stdout + done.stderr
    assert "not a regular file" in done.stdout + done.stderr
