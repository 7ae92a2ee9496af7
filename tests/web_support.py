"""Shared parts of the page's tests: a `tablectl simulate` process with its page, Debian's
chromium through Playwright, and the card-identity check of the frames a browser received."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from controller.journal.audit import connect_read_only

ROOT = Path(__file__).resolve().parent.parent
TABLECTL = [sys.executable, "-m", "controller.cli"]
CHROMIUM = "/usr/bin/chromium"
#: The page's pictures (README, operator guide, docs/web.md).
PICTURES = ROOT / "docs" / "img"
#: axe-core, vendored (tests/vendor/axe-core/README.md)
AXE = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"


def need_chromium() -> str:
    """Debian's chromium (installed by .ci/system-deps); a skip without it, except under CI."""
    found = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing (.ci/system-deps installs it)")
        pytest.skip("chromium is not installed (make system-deps)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("playwright is not installed (the test extra)")
    return found


def launch(playwright: Any, executable: str) -> Any:
    """Headless chromium; ``--no-sandbox`` because the tests may run as root."""
    return playwright.chromium.launch(
        executable_path=executable, headless=True, args=["--no-sandbox", "--disable-gpu"]
    )


class SimProcess:
    """``tablectl simulate`` with its page on a free port (read from its "page:" line)."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.db = tmp / "journal.db"
        cmd = [*TABLECTL, "simulate", "--db", str(self.db), "--port", "0", *args]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self.url = self.wait_line("page: ").split("page: ", 1)[1].strip()

    def wait_line(self, needle: str, timeout: float = 60.0) -> str:
        assert self.proc.stdout is not None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            line = self.proc.stdout.readline()
            if not line:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read() if self.proc.stderr else ""
                    raise AssertionError(f"simulate exited {self.proc.returncode}: {err[-2000:]}")
                continue
            self.lines.append(line)
            if needle in line:
                return line
        raise AssertionError(f"no {needle!r} in {self.lines}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate()
        return self.proc.returncode


def journal_rows(db: Path) -> list[tuple[int, int | None, str, dict[str, Any]]]:

    conn = connect_read_only(db)
    try:
        rows = conn.execute("SELECT seq, round_id, type, data FROM journal ORDER BY seq").fetchall()
    finally:
        conn.close()
    return [(int(s), r, str(t), json.loads(d)) for s, r, t, d in rows]


def card_leaks(frames: Iterable[str], db: Path) -> list[str]:
    """Every card identity a browser was sent before its round resolved (empty: none).

    The journal says at which seq each round resolved (its ``round_summary`` effect). A frame's
    ``hands`` (the seven hands of a round) may only be those of a round resolved at or before
    the frame's seq; nothing else a frame or a catch-up message carries may name any card (as
    the page writes them: ``As``, ``Td``, ``JK``), and no message may carry a ``stacks``
    field (the journal's ``dealt`` cards)."""
    from fsm.rules.cards import DECK, format_card

    every_card = {format_card(c) for c in DECK}
    resolved_at: dict[int, int] = {}
    for seq, _round_id, _etype, data in journal_rows(db):
        for effect in data.get("effects") or []:
            if effect.get("type") == "round_summary":
                resolved_at.setdefault(int(effect["round_id"]), seq)
    leaks: list[str] = []
    for text in frames:
        msg = json.loads(text)
        if "stacks" in text:
            leaks.append(f"a message carries 'stacks': {text[:200]}")
        seq = int(msg.get("seq", 0))
        hands = msg.pop("hands", None)
        if hands:
            rid = int(hands["round_id"])
            if resolved_at.get(rid, 1 << 62) > seq:
                leaks.append(f"frame seq {seq}: the hands of round {rid}, not resolved yet")
        found = every_card & _strings(msg)
        if found:
            leaks.append(f"message at seq {seq}: names cards {sorted(found)}")
    return leaks


def _strings(value: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(value, dict):
        for v in value.values():
            out |= _strings(v)
    elif isinstance(value, list):
        for v in value:
            out |= _strings(v)
    elif isinstance(value, str):
        out.add(value)
        for sep in '"{}[]:,':
            value = value.replace(sep, " ")
        out.update(value.split())
    return out


class Axe:
    """axe-core over the page in each state reached: the serious and critical violations."""

    def __init__(self) -> None:
        self.found: dict[str, list[str]] = {}
        self.states: list[str] = []

    def check(self, page: Any, where: str) -> None:
        if not page.evaluate("() => typeof axe !== 'undefined'"):
            page.add_script_tag(path=str(AXE))
        result = page.evaluate(
            """async () => {
                const r = await axe.run(document, {resultTypes: ['violations']});
                return r.violations.filter(v => v.impact === 'critical' || v.impact === 'serious')
                  .map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3)
                  .map(n => n.target.join(' ')).join(' | '));
            }"""
        )
        self.states.append(where)
        if result:
            self.found[where] = list(result)


def picture(page: Any, name: str, tmp: Path) -> None:
    """A screenshot of the page from its top: always made (and checked to be a PNG); written
    into docs/img/ (the README's and the operator guide's pictures) when it is missing there or
    when ``PAGE_PICTURES=1`` asks to refresh them, so a test run leaves the checkout unchanged."""
    shot = tmp / f"{name}.png"
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = PICTURES / f"{name}.png"
    if os.environ.get("PAGE_PICTURES") == "1" or not target.exists():
        PICTURES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)


def closed_table(page: Any, pin: str = "1234", timeout_s: float = 60.0) -> None:
    """Wait for the simulated table to show Closed. On a machine loaded enough that a simulated
    device stays silent past its link's ``silence_timeout`` (3 s) the table starts in Fault
    (``LINK_TIMEOUT``) and, with no scripted supervisor, stays there: the trainer signs in at
    the page, clears the fault once the device answers again (confirmed, as the page asks) and
    signs out, so the test starts from Closed as it means to."""
    end = time.monotonic() + timeout_s
    page.wait_for_selector(
        '#state-words[data-state="Closed"], #state-words[data-state="Fault"]',
        timeout=int(timeout_s * 1000),
    )
    if page.get_attribute("#state-words", "data-state") == "Closed":
        return
    page.fill("#sup-id", "trainer")
    page.fill("#sup-pin", pin)
    page.click("#login-btn")
    page.wait_for_selector("#signed-in:not([hidden])", timeout=10_000)
    while page.get_attribute("#state-words", "data-state") == "Fault":
        assert time.monotonic() < end, "the table stayed in Fault"
        page.click("#actions button:has-text('Clear the fault')")
        page.click("#confirm-yes")
        page.wait_for_timeout(500)
    page.wait_for_selector('#state-words[data-state="Closed"]', timeout=10_000)
    page.click("#logout-btn")
    page.wait_for_selector("#login-form:not([hidden])", timeout=10_000)
    page.fill("#sup-id", "")
