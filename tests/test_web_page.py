"""The page end to end (issue 11, "Done means"): a `tablectl simulate` process serving the virtual
table, a real headless chromium (Debian's, through Playwright) playing a full round by clicking:
the supervisor signs in with a PIN and opens the table, chips dropped in two acceptors light them,
the lock-out locks them and shows L, NEXT confirms the count and the drawn starting position shows
on the display, NEXT settles the side wagers and the shoe deals, NEXT ends play, the dealer enters
a meter-funded hit (the simulated table without a card-reading shoe: a hit on demand, as the SAS
conformance tests do; a practice deck is issue 11's "training" part), the light blinks and the
display shows P until the supervisor validates it; the meters read over SAS are the journal's;
SIGTERM stops the service and the journal verifies. Every websocket frame the browser received
is checked for card identities before their round resolved (NY 5324.41(k)(3)(iii) for the
pending hit; DESIGN.md "The page": no card identity before its round resolves).

A second test runs the scripted people on a card-reading table with the browser watching two
rounds: the seven hands appear only after their round resolved, and it makes the README's
picture (docs/img/page.png; the first test makes the operator guide's, docs/img/guide-*.png:
written when missing, refreshed with ``PAGE_PICTURES=1``).
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sas_support import HIT_LINE, bcd_value, hit_config, host, journal_meters
from web_support import (
    ROOT,
    TABLECTL,
    Axe,
    SimProcess,
    card_leaks,
    closed_table,
    launch,
    need_chromium,
    picture,
)

pytestmark = [pytest.mark.xdist_group("browser"), pytest.mark.timeout(300)]

WAIT_MS = 30_000


def _state(page: Any, state: str) -> None:
    page.wait_for_selector(f'#state-words[data-state="{state}"]', timeout=WAIT_MS)


def _attr(page: Any, selector: str, name: str) -> str:
    return str(page.get_attribute(selector, name))


def _wait_attr(page: Any, selector: str, name: str, value: str) -> None:
    page.wait_for_function(
        "([s, n, v]) => document.querySelector(s)?.getAttribute(n) === v",
        arg=[selector, name, value],
        timeout=WAIT_MS,
    )


def _collect(page: Any, frames: list[str]) -> None:
    def on_socket(ws: Any) -> None:
        ws.on(
            "framereceived",
            lambda payload: frames.append(
                payload if isinstance(payload, str) else payload.decode()
            ),
        )

    page.on("websocket", on_socket)


def _verify(db: Path) -> dict[str, Any]:
    done = subprocess.run(
        [*TABLECTL, "journal", "verify", "--db", str(db), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def test_a_full_round_played_by_clicking_with_a_jackpot_validated_by_pin(tmp_path: Path) -> None:
    executable = need_chromium()
    from playwright.sync_api import sync_playwright

    config = hit_config(tmp_path)
    link = tmp_path / "sas-link"
    sim = SimProcess(
        tmp_path, "--config", str(config), "--no-script", "--sas-link", str(link), "--seed", "4"
    )
    frames: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = launch(pw, executable)
            page = browser.new_page(viewport={"width": 1500, "height": 900}, bypass_csp=True)
            axe = Axe()
            _collect(page, frames)
            page.goto(sim.url)
            closed_table(page)
            assert _attr(page, "#display", "data-glyph") == " "
            # a wrong PIN is refused (and journaled), the right one signs in
            page.fill("#sup-id", "trainer")
            page.fill("#sup-pin", "9999")
            page.click("#login-btn")
            page.wait_for_selector("#action-result:has-text('not accepted')", timeout=WAIT_MS)
            page.fill("#sup-pin", "1234")
            page.click("#login-btn")
            page.wait_for_selector("#signed-in:not([hidden])", timeout=WAIT_MS)
            picture(page, "guide-open", tmp_path)
            page.click("button[data-request=open]")
            _state(page, "Open_Betting")
            _wait_attr(page, "#light-1", "data-state", "attract")
            assert _attr(page, "#display", "data-glyph") == "-"
            # chips in areas 1 and 3 light their acceptors
            page.click("#chip-1")
            _wait_attr(page, "#light-1", "data-state", "lit")
            page.click("#chip-3")
            _wait_attr(page, "#light-3", "data-state", "lit")
            assert _attr(page, "#light-2", "data-state") == "attract"
            picture(page, "guide-betting", tmp_path)
            # no more bets
            page.click("#btn-lockout")
            _state(page, "Open_LockedOut")
            _wait_attr(page, "#light-1", "data-state", "locked")
            assert _attr(page, "#display", "data-glyph") == "L"
            # the 1-7 side wagers closed (none placed) before the RNG is activated (j)(2)(i)
            page.click("button[data-request=side-wagers]")
            page.wait_for_selector("#action-result:has-text('placed: done')", timeout=WAIT_MS)
            page.click("#btn-next")  # the chip count confirmed
            page.wait_for_selector("#next-hint:has-text('draws the starting')", timeout=WAIT_MS)
            page.click("#btn-next")  # NEXT again activates the RNG (h)(8)(ii): the number drawn
            _state(page, "Open_SideWagers")
            glyph = _attr(page, "#display", "data-glyph")
            assert glyph in "1234567" and len(glyph) == 1
            lit = page.eval_on_selector_all("#display .seg.on", "els => els.length")
            assert lit >= 2  # a digit 1-7 lights at least two segments
            page.click("#btn-next")  # side wagers settled: the shoe deals
            _state(page, "Open_Play")
            page.click("#btn-next")  # hands set
            _state(page, "Open_Settlement")
            page.select_option("#outcome-1", HIT_LINE)
            page.click("#enter-outcome-1")
            page.wait_for_selector("#enter-outcome-3", timeout=WAIT_MS)
            page.click("#enter-outcome-3")  # no win
            _state(page, "Open_JackpotPending")
            _wait_attr(page, "#light-1", "data-state", "blink")
            assert _attr(page, "#display", "data-glyph") == "P"
            # the hit's line on the sign and in the banner; validating is confirmed first,
            # saying what it does, and the reply says what to pay, from where
            assert "HIT at area 1" in page.text_content("#table")
            assert "JACKPOT" in page.inner_text("#alarm")
            axe.check(page, "Open_JackpotPending")
            picture(page, "guide-hit", tmp_path)
            page.click("button[data-request=validate-hit]")
            page.wait_for_selector("#confirm[open]", timeout=WAIT_MS)
            assert "paid now from the meter" in page.inner_text("#confirm-text")
            picture(page, "guide-confirm", tmp_path)
            page.click("#confirm-yes")
            page.wait_for_selector("#action-result:has-text('pay area 1 $')", timeout=WAIT_MS)
            said = page.inner_text("#action-result")
            assert "from the meter" in said
            paid_cents = int(
                re.search(r"pay area 1 \$([\d,]+\.\d\d)", said)
                .group(1)  # type: ignore[union-attr]
                .replace(",", "")
                .replace(".", "")
            )
            page.wait_for_selector("#round-line:has-text('1 completed')", timeout=WAIT_MS)
            _state(page, "Open_Betting")
            page.wait_for_selector("#hands .hand", timeout=WAIT_MS)
            picture(page, "guide-validated", tmp_path)
            # the games manager's views: the hit in the history with its amount, the shift
            page.click("#report-hits")
            page.wait_for_selector("#report td:has-text('natural royal flush')", timeout=WAIT_MS)
            assert f"${paid_cents / 100:,.2f}" in page.inner_text("#report")
            page.click("#report-shift")
            page.wait_for_selector("#report:has-text('1 rounds completed')", timeout=WAIT_MS)
            page.click("#report-meters")
            page.wait_for_selector("#meter-chart polyline", state="attached", timeout=WAIT_MS)
            assert "after round 1" in page.inner_text("#report")
            csv_text = page.request.get(sim.url + "api/report?kind=hits&format=csv").text()
            axe.check(page, "games manager")
            page.click("button[data-request=close]")
            page.wait_for_selector("#confirm[open]", timeout=WAIT_MS)
            page.click("#confirm-yes")
            _state(page, "Closed")
            axe.check(page, "Closed signed in")
            browser.close()
        # the meters over SAS are the journal's
        meters = journal_meters(sim.db)["progressive"]
        assert meters["wagered_cents"] == 200 and meters["meter_paid_cents"] > 0
        sm = host(link)
        try:
            resp = sm.write_type_R(0x1C, length_to_read=32)
        finally:
            sm.port.close()
        data = list(resp.data)
        values = [bcd_value(data[i : i + 4]) for i in range(0, len(data), 4)]
        assert values[0] == meters["wagered_cents"]
        assert values[3] == meters["meter_paid_cents"]
        assert axe.found == {}, axe.found
    finally:
        code = sim.stop()
    assert code == 0
    report = _verify(sim.db)
    assert report.get("ok") is True, report
    types = [json.loads(f).get("type") for f in frames]
    assert "frame" in types
    assert card_leaks(frames, sim.db) == []
    from web_support import journal_rows

    rows = journal_rows(sim.db)
    refused = [d for _, _, t, d in rows if t == "console_refused"]
    assert [r["request"] for r in refused] == ["web sign-in"]
    pays = [e for _, _, _, d in rows for e in d.get("effects") or [] if e.get("type") == "pay"]
    assert [p["cents"] for p in pays] == [paid_cents]  # the page said the journal's amount
    # the page's CSV is `tablectl report hits`'s fold: the same hits, the same amounts
    done = subprocess.run(
        [*TABLECTL, "report", "hits", "--db", str(sim.db), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    reported = json.loads(done.stdout)["hits"]
    exported = list(csv.DictReader(io.StringIO(csv_text)))
    assert [int(h["cents"]) for h in exported] == [h["cents"] for h in reported] == [paid_cents]
    validated = [d for _, _, t, d in rows if t == "hit_validated"]
    assert validated and validated[0]["supervisor"] == "trainer" and validated[0]["via"] == "web"


def test_the_hands_reach_the_page_only_after_their_round_resolves(tmp_path: Path) -> None:
    executable = need_chromium()
    from playwright.sync_api import sync_playwright

    sim = SimProcess(tmp_path, "--seed", "7", "--pace", "0.15")
    frames: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = launch(pw, executable)
            page = browser.new_page(viewport={"width": 1500, "height": 900})
            _collect(page, frames)
            page.goto(sim.url)
            page.wait_for_selector("#round-line:has-text('2 completed')", timeout=90_000)
            page.wait_for_selector("#hands .hand .card", timeout=WAIT_MS)
            _state(page, "Open_Betting")
            page.wait_for_selector(".light.lit", timeout=WAIT_MS)
            picture(page, "page", tmp_path)
            browser.close()
    finally:
        code = sim.stop()
    assert code == 0
    assert card_leaks(frames, sim.db) == []
    shown = [json.loads(f).get("hands") for f in frames]
    assert any(h and len(h["hands"]) == 7 for h in shown)
