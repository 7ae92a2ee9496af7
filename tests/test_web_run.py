"""``tablectl run`` with ``[web] enabled``: the pit's status page on the Pi's service (issue 11),
here on gpiozero's MockFactory with real ptys as the shoe's and shuffler's ports. The page shows
the table ("pit" mode), refuses every press (the table's own buttons act on a real table), and a
supervisor's step taken there after a PIN check is journaled ``via: "web"``."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

from test_cmd_run import ROOT, TABLECTL, entry_rows, write_config
from test_web_server import Browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_run_serves_the_pit_page_read_only_until_a_supervisor_signs_in(
    tmp_path: Path, ptys: tuple[str, str]
) -> None:
    config = write_config(tmp_path, *ptys)
    port = _free_port()
    config.write_text(config.read_text() + f"\n[web]\nenabled = true\nport = {port}\n")
    db = tmp_path / "journal.db"
    proc = subprocess.Popen(
        [*TABLECTL, "run", "--config", str(config), "--pin-factory", "mock", "--unapproved-bench"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert lines[1].strip() == f"page: http://127.0.0.1:{port}/", lines
        b = Browser(f"http://127.0.0.1:{port}/")
        assert b.get("/")[0] == 200
        status, frame = b.get("/api/frame")
        assert status == 200
        shown = json.loads(frame)
        assert shown["mode"] == "pit" and shown["state"] == "Closed" and shown["me"] is None
        assert b.post("/api/input", {"input": "next"})[0] == 403
        assert b.post("/api/input", {"input": "chip", "position": 1})[0] == 403
        assert b.post("/api/action", {"request": "open", "args": []})[0] == 401
        assert b.post("/api/login", {"supervisor": "trainer", "pin": "1234"})[0] == 200
        status, reply = b.post("/api/action", {"request": "open", "args": []})
        assert status == 200, reply
        give_up = time.monotonic() + 30
        while not any(t == "table_opened" for t, _ in entry_rows(db)):
            assert time.monotonic() < give_up
            time.sleep(0.05)
        opened = [d for t, d in entry_rows(db) if t == "table_opened"]
        assert opened[0]["supervisor"] == "trainer" and opened[0]["via"] == "web"
        assert [t for t, _ in entry_rows(db)].count("panel_next") == 0
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
