"""The floor's page served by the centre (issue 26, docs/link.md "The floor's page"): four tables
(two linked to a pool, two shipping only) with the real owner, journal and shipper, a real
nats-server, a real PostgreSQL fed by ``tablectl central ingest``, ``tablectl central serve`` as
its own process and Debian's chromium: the tiles follow the tables; a jackpot pending validation
is an alarm within 2 s with the amount the pool locked (NY 5324.41(k)(3)(iii): a supervisor
validates every progressive payout; NY 5321.18(b)(3)(iii): the pool's lock) and ends when the
table validates it; a table that stops shipping turns stale; a signed-in supervisor acknowledges
an alarm and PostgreSQL keeps who and when; the shift's totals are `central report shift`'s;
axe-core finds nothing critical or serious at 1920x1080 and 1024x768.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from floor_support import PIN, SUPERVISOR, CentralProcess, ShippedTable, floor_toml
from link_support import (
    JACKPOT,
    InProcessController,
    LinkedTable,
    NatsServer,
    controller_toml,
    keyring,
    wait_for,
)
from test_central import journal_entries, publish
from web_support import Axe, launch, need_chromium, picture

from controller.cli import main
from controller.link.messages import recomputed_hash

LINKED = {"T1": 70001, "T2": 70002}
SHIPPING = {"T3": 70003, "T4": 70004}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw, executable)
        yield b
        b.close()


def stored_head(dsn: str, table: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT seq FROM heads WHERE table_id = %s", (table,)).fetchone()
    return 0 if row is None else int(row[0])


def tile(page: Any, table: str) -> Any:
    return page.locator(f"#tile-{table}")


def no_horizontal_scroll(page: Any) -> bool:
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"))


def test_the_floor_page_follows_four_tables_alarms_and_the_shift(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,  # type: ignore[type-arg]
    tables: list,  # type: ignore[type-arg]
    browser: Any,
) -> None:
    ctl = InProcessController(controller_toml(tmp_path / "link.toml", nats.url, LINKED))
    ctl.start()
    controllers.append(ctl)
    made: dict[str, LinkedTable] = {}
    for tid, asset in LINKED.items():
        made[tid] = LinkedTable(tmp_path, tid, asset, nats.url)
    for tid, asset in SHIPPING.items():
        made[tid] = ShippedTable(tmp_path, tid, asset, nats.url)
    for t in made.values():
        t.start()
        tables.append(t)
    for tid in LINKED:
        wait_for(lambda t=made[tid]: not t.link_down(), 15, what=f"{tid} confirmed")
    config = floor_toml(
        tmp_path / "floor.toml",
        {"Pit 1": ["T1", "T2"], "Pit 2": ["T3", "T4"]},
        stale_s=4.0,
        section_stale={"Pit 1": 120.0},  # the section of the pictures' hit stays live
    )
    with config.open("a") as f:  # the pool's journal is readable here: the page verifies it
        f.write(f'\n[[pools]]\nid = "POOL1"\njournal = "{tmp_path / "pool.db"}"\n')
    keys = str(keyring(tmp_path))
    ingest = CentralProcess(
        tmp_path / "ingest.log", "ingest", "--nats", nats.url, "--pg", pg, "--keys", keys
    )
    serve = CentralProcess(
        tmp_path / "serve.log", "serve", "--config", str(config), "--pg", pg, "--nats", nats.url,
        "--port", "0", "--keys", keys,
    )  # fmt: skip
    try:
        url = serve.wait_url()
        context = browser.new_context(viewport={"width": 1920, "height": 1080}, bypass_csp=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        page.wait_for_selector("#conn.on", timeout=10_000)

        # the tiles follow the tables' states
        for t in made.values():
            t.open()
        for tid in made:
            page.wait_for_selector(f'#tile-{tid}[data-state="Open_Betting"]', timeout=5000)
        made["T3"].bet(1, 2)
        page.wait_for_selector("#tile-T3 .wagers:has-text('2 wager(s), $2.00')", timeout=3000)
        made["T3"].ev("lockout_pressed")
        page.wait_for_selector('#tile-T3[data-state="Open_LockedOut"]', timeout=3000)
        assert "No more bets" in tile(page, "T3").inner_text()
        made["T3"].ev("chips_confirmed")
        made["T3"].ev("rng_activated")
        wait_for(lambda: made["T3"].state == "Open_Dealing", what="T3's draw")
        made["T3"].ev("dealt", remaining=4)
        made["T3"].ev("play_complete")
        made["T3"].settle({1: None, 2: None})
        wait_for(lambda: made["T3"].state in ("Open_Betting", "Open_Shuffling"), what="round end")
        page.wait_for_selector(f'#tile-T3[data-state="{made["T3"].state}"]', timeout=3000)
        assert "meter $" in tile(page, "T3").inner_text()
        for _ in range(2):
            made["T2"].play((1, 2, 3))
        page.wait_for_selector("#tile-T2 .pool-value", timeout=5000)
        page.wait_for_selector('.pool[data-pool="POOL1"] .verified.ok', timeout=10_000)
        assert "journal verified" in page.inner_text('.pool[data-pool="POOL1"]')

        # a jackpot pending validation: an alarm within 2 s, with the amount the pool locked
        t1 = made["T1"]
        t1.bet(1, 2)
        t1.to_settlement()
        settled = time.monotonic()
        t1.settle({1: JACKPOT, 2: None})
        wait_for(lambda: "locked_cents" in t1.view["round"]["pending"][0], what="the pool's lock")
        cents = int(t1.view["round"]["pending"][0]["locked_cents"])
        alarm = f'#alarms li[data-kind="hit"][data-table="T1"][data-cents="{cents}"]'
        page.wait_for_selector(
            alarm, timeout=max(1, int((settled + 2.0 - time.monotonic()) * 1000))
        )
        assert time.monotonic() - settled <= 2.0
        money = f"${cents // 100:,}.{cents % 100:02d}"
        assert money in page.inner_text(alarm)
        assert money in page.inner_text("#banner")
        assert page.is_visible("#tile-T1 .pending")

        # a supervisor signs in (the table's PIN rules: a wrong PIN is refused and stored)
        page.fill("#sup-id", SUPERVISOR)
        page.fill("#sup-pin", "0000")
        page.click("#login-btn")
        page.wait_for_selector("#login-msg:has-text('refused')", timeout=5000)
        page.fill("#sup-pin", PIN)
        page.click("#login-btn")
        page.wait_for_selector("#signed-in:not([hidden])", timeout=5000)
        page.click(f"{alarm} .ack-btn")
        page.wait_for_selector(
            f"{alarm}.acked:has-text('acknowledged by {SUPERVISOR}')", timeout=5000
        )
        with psycopg.connect(pg) as conn:
            acks = conn.execute("SELECT alarm, supervisor, acked_at FROM floor_acks").fetchall()
            refused = conn.execute("SELECT supervisor, reason FROM floor_signin_refused").fetchall()
        assert [(a.split(":")[0], s) for a, s, _ in acks] == [("hit", SUPERVISOR)]
        assert acks[0][2] is not None
        assert refused == [(SUPERVISOR, "wrong PIN")]
        # axe-core and the two screen sizes, with a hit pending and acknowledged (the pictures)
        axe = Axe()
        axe.check(page, "1920x1080 hit acknowledged")
        assert no_horizontal_scroll(page)
        picture(page, "floor-page", tmp_path)
        page.set_viewport_size({"width": 1024, "height": 768})
        page.wait_for_timeout(300)
        axe.check(page, "1024x768 hit acknowledged")
        assert no_horizontal_scroll(page)
        picture(page, "floor-page-1024", tmp_path)
        page.set_viewport_size({"width": 1920, "height": 1080})

        # validated at its table: the alarm ends
        t1.validate_hits()
        page.wait_for_selector('#alarms li[data-kind="hit"]', state="detached", timeout=2000)
        assert not page.is_visible("#tile-T1 .pending")

        # a table that stops shipping turns stale within its timeout (4 s)
        made["T4"].stop()
        tables.remove(made["T4"])
        stopped = time.monotonic()
        page.wait_for_selector('#tile-T4[data-stale="1"]', timeout=8000)
        assert time.monotonic() - stopped <= 4.0 + 2.0
        page.wait_for_selector('#alarms li[data-kind="offline"][data-table="T4"]', timeout=3000)
        assert page.is_visible("#tile-T4 .stale-note")

        # the witness: an entry that does not chain to T4's head is a fork alarm at once, and the
        # tile never shows it (ingest refuses it; the page checks the chain of what it is sent)
        held = journal_entries(made["T4"].db)
        last = held[-1]
        forged = replace(last, seq=last.seq + 1, prev_hash="0" * 64, data={**last.data, "x": 1})
        forged = replace(forged, hash=recomputed_hash(forged))
        with ThreadPoolExecutor(1) as pool:  # Playwright's loop runs on this thread
            pool.submit(publish, nats.url, "T4", [forged], tmp_path, False).result(30)
        page.wait_for_selector('#alarms li[data-kind="fork"][data-table="T4"]', timeout=5000)
        assert page.get_attribute("#tile-T4", "data-seq") == str(last.seq)

        # the shift: the page's totals are `central report shift --json`'s
        for tid in ("T1", "T2", "T3"):
            last = made[tid].owner.public.seq
            wait_for(
                lambda tid=tid, last=last: stored_head(pg, tid) >= last, 20, what=f"{tid} ingested"
            )
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["central", "report", "shift", "--pg", pg, "--json"])
        doc = json.loads(out.getvalue())
        page.click("#shift-btn")
        page.wait_for_selector("#shift-total", timeout=10_000)
        for key in ("wagered_cents", "contributed_cents", "paid_from_meter_cents"):
            shown = page.get_attribute("#shift-total", "data-" + key.replace("_", "-"))
            assert int(shown) == int(doc["total"]["progressive"][key]), key
        assert (
            int(doc["total"]["hits"]) == 1
            and int(page.inner_text("#shift-total td:nth-child(4)")) == 1
        )
        rows = page.locator('#shift-table tbody tr[data-row="table"]').count()
        assert rows == len(doc["tables"])
        csv = page.evaluate("async () => (await fetch('/api/shift.csv')).text()")
        assert csv.splitlines()[-1].startswith("floor,floor,")

        # every alarm kind on the screen at once, at both sizes
        axe.check(page, "1920x1080 stale and offline")
        page.set_viewport_size({"width": 1024, "height": 768})
        page.wait_for_timeout(300)
        axe.check(page, "1024x768 stale and offline")
        assert no_horizontal_scroll(page)
        assert axe.found == {}, axe.found
        assert errors == []
        context.close()
    finally:
        assert serve.stop() == 0, serve.log.read_text()[-2000:]
        ingest.stop()


def test_the_page_off_loopback_is_tls_and_read_only_until_a_supervisor_signs_in(
    tmp_path: Path, pg: str
) -> None:
    """Anyone reads the page; acknowledging needs a signed-in supervisor (as a table's page,
    NY 5324.41(k)(3)(iii): who validates is recorded); with its TLS files the page answers only
    over TLS, as NATS does off loopback (docs/link.md "Security")."""
    import http.cookiejar
    import ssl
    import urllib.error
    import urllib.request

    from test_link_security import make_ca

    certs = make_ca(tmp_path)
    config = floor_toml(
        tmp_path / "floor.toml", {"Pit 1": ["T1"]}, tls_cert=str(certs["cert"]),
        tls_key=str(certs["key"]),
    )  # fmt: skip
    serve = CentralProcess(
        tmp_path / "serve.log", "serve", "--config", str(config), "--pg", pg, "--port", "0"
    )
    try:
        url = serve.wait_url()
        assert url.startswith("https://127.0.0.1:")
        ctx = ssl.create_default_context(cafile=str(certs["ca"]))
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(
            urllib.request.HTTPSHandler(context=ctx), urllib.request.HTTPCookieProcessor(jar)
        )
        with opener.open(url + "api/floor", timeout=10) as r:
            floor = json.loads(r.read())
        assert [t["table"] for t in floor["tiles"]] == ["T1"] and floor["me"] is None
        opener.open(url, timeout=10).read()  # the page sets its XSRF cookie
        xsrf = next(c.value for c in jar if c.name == "_xsrf")
        ack = urllib.request.Request(
            url + "api/ack", data=b'{"alarm": "x"}', method="POST",
            headers={"X-XSRFToken": xsrf, "Content-Type": "application/json"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open(ack, timeout=10)
        assert refused.value.code == 403
        assert "sign in as a supervisor" in refused.value.read().decode()
        with pytest.raises(OSError):  # no plain HTTP on the TLS port (reset or refused)
            urllib.request.urlopen(url.replace("https://", "http://") + "api/floor", timeout=5)
    finally:
        assert serve.stop() == 0, serve.log.read_text()[-2000:]


def test_two_hundred_tables_page_by_section_at_1024x768(
    tmp_path: Path, pg: str, browser: Any
) -> None:
    """200 tables in four sections: a section's tiles come a page at a time (``page_size``), a
    section can be shown alone, nothing scrolls sideways and axe-core finds nothing critical."""
    sections = {f"Pit {s + 1}": [f"F{s * 50 + i:03d}" for i in range(50)] for s in range(4)}
    config = floor_toml(tmp_path / "floor.toml", sections, stale_s=60.0, page_size=24)
    serve = CentralProcess(
        tmp_path / "serve.log", "serve", "--config", str(config), "--pg", pg, "--port", "0"
    )
    try:
        url = serve.wait_url()
        context = browser.new_context(viewport={"width": 1024, "height": 768}, bypass_csp=True)
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("#conn.on", timeout=10_000)
        assert page.locator(".tile").count() == 4 * 24
        pit2 = page.locator('section[aria-label="section Pit 2"]')
        assert "page 1 of 3" in pit2.inner_text()
        pit2.locator("button:has-text('Next')").click()
        page.wait_for_selector("#tile-F074", timeout=2000)
        assert not page.is_visible("#tile-F050")
        page.click("#section-tabs button:has-text('Pit 4')")
        assert page.locator(".tile").count() == 24
        assert page.is_visible("#tile-F150")
        assert no_horizontal_scroll(page)
        axe = Axe()
        axe.check(page, "200 tables, 1024x768")
        assert axe.found == {}, axe.found
        context.close()
    finally:
        assert serve.stop() == 0, serve.log.read_text()[-2000:]
