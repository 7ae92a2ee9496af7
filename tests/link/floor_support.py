"""Support for the floor page's tests and benchmark: ``tablectl central ingest`` and ``tablectl
central serve`` as their own processes (as they run at the centre), a floor configuration file,
and a table that ships its journal without a linked pool."""

from __future__ import annotations

import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from link_support import ROOT, LinkedTable, table_key

from controller.config import SIMULATED_TABLE, hash_pin, parse_config

SUPERVISOR, PIN = "pit", "2468"


class CentralProcess:
    """``tablectl central ARGS`` as a process; ``serve`` prints its page's URL."""

    def __init__(self, log: Path, *args: str) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "central", *args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=log.open("ab"), text=True,
        )  # fmt: skip
        self.url = ""

    def wait_url(self, timeout: float = 30.0) -> str:
        assert self.proc.stdout is not None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            line = self.proc.stdout.readline()
            if "floor page: " in line:
                self.url = line.split("floor page: ", 1)[1].strip()
                return self.url
            if not line and self.proc.poll() is not None:
                raise AssertionError(f"central exited: {self.log.read_text()[-2000:]}")
        raise AssertionError("central serve printed no URL")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return int(self.proc.returncode)


def floor_toml(
    path: Path,
    sections: dict[str, list[str]],
    stale_s: float = 3.0,
    section_stale: dict[str, float] | None = None,
    **floor: Any,
) -> Path:
    lines = ["[floor]", 'title = "Test floor"', f"stale_s = {stale_s}"]
    lines += [f"{k} = {v!r}".replace("'", '"') for k, v in floor.items()]
    for name, tables in sections.items():
        lines += ["", "[[sections]]", f'name = "{name}"', "tables = [" + ", ".join(
            f'"{t}"' for t in tables) + "]"]  # fmt: skip
        if section_stale and name in section_stale:
            lines.append(f"stale_s = {section_stale[name]}")
    lines += [
        "",
        f"[supervisors.{SUPERVISOR}]",
        'name = "Pit boss"',
        f'pin_hash = "{hash_pin(PIN)}"',
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


class ShippedTable(LinkedTable):
    """A table whose ``[link]`` ships its journal to the centre without a linked pool."""

    def __init__(self, tmp: Path, table_id: str, asset: int, url: str) -> None:
        super().__init__(tmp, table_id, asset, url)
        data: dict[str, Any] = tomllib.loads(SIMULATED_TABLE.read_text())
        data["table"].update(id=table_id, asset_number=asset)
        data["game"].update(card_reading_shoe=False, side_wager={"offered": False})
        data["journal"]["path"] = str(tmp / f"{table_id}.db")
        data["sas"]["enabled"] = False
        data["link"] = {"servers": [url], "key_file": str(table_key(tmp, table_id))}
        from controller.service.wiring import LinkAttachment

        self.config = parse_config(data, f"{table_id}.toml")
        self.attachment = LinkAttachment(self.config, self.db)
