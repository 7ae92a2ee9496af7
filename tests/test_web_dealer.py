"""The page used by people (issue 25): a dealer alone finishes a round at the page in every start
mode, with and without the card-reading shoe; every refusal of a scripted list is shown in words
at the control that caused it; a stopped server covers the page with the offline banner; the
page fits four screen sizes without horizontal scrolling; axe-core finds no critical or serious
violation in any state reached; and the dealer's round is played with the keyboard alone.

One `tablectl simulate` per test (its own journal and configuration), one chromium for the
module (Debian's, through Playwright). axe-core is the vendored ``tests/vendor/axe-core/
axe.min.js`` (MPL-2.0, its licence beside it), injected into a context that bypasses the page's
Content-Security-Policy (the page itself loads only its own scripts).

Regulations: NY 5324.41(k)(2) (no progressive wager after the lock-out: the late chip refused),
(d)(4) (each acceptor's light says its state: here in words and shape as well as colour),
(j)(2)(i) (the 1-7 side wagers closed before the RNG is activated: the dealer enters them),
(h)(8)(i) (the dice shaken at least three times), (n)(3)-(7) (three-card: the pai gow
positions entered, the three-card bonus settled before the fours); WCAG 2.2 AA.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import Axe, SimProcess, closed_table, journal_rows, launch, need_chromium, picture

from controller.config import SIMULATED_TABLE

pytestmark = [pytest.mark.xdist_group("browser"), pytest.mark.timeout(300)]

WAIT_MS = 30_000
SCREENS = [(1920, 1080), (1024, 768), (768, 1024), (390, 844)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw, executable)
        yield b
        b.close()


def table_config(tmp: Path, mode: str, shoe: bool) -> Path:
    """The simulated table in one start mode, with or without the card-reading shoe (the 1-7
    side wager needs the RNG, NY 5324.41(j)(1): offered only there)."""
    text = SIMULATED_TABLE.read_text(encoding="utf-8")
    text = text.replace('start_mode = "rng"', f'start_mode = "{mode}"')
    text = text.replace("card_reading_shoe = true", f"card_reading_shoe = {str(shoe).lower()}")
    if mode == "three_card":
        text = text.replace("three_card_bonus = false", "three_card_bonus = true")
    if mode != "rng":
        text = text.replace("side_wager = { offered = true", "side_wager = { offered = false")
    path = tmp / "table.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _page(browser: Any, sim: SimProcess, width: int = 1400, height: int = 1000) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    page.goto(sim.url)
    page.wait_for_selector("#conn.on", timeout=WAIT_MS)
    return page


def _state(page: Any, state: str, timeout: int = WAIT_MS) -> None:
    page.wait_for_selector(f'#state-words[data-state="{state}"]', timeout=timeout)


def _current(page: Any) -> str:
    return str(page.get_attribute("#state-words", "data-state"))


class Dealer:
    """The dealer at the page: by pointer (clicks) or by keyboard alone (Tab to the control,
    then Enter / Space / typing)."""

    def __init__(self, page: Any, keyboard: bool, axe: Axe | None, db: Path) -> None:
        self.page = page
        self.db = db
        self.keyboard = keyboard
        self.axe = axe
        self.seen: set[str] = set()

    def look(self) -> None:
        state = _current(self.page)
        if self.axe is not None and state not in self.seen:
            self.seen.add(state)
            self.axe.check(self.page, state)

    def focus(self, selector: str) -> None:
        """Tab until the control has the focus (the way a keyboard user gets there)."""
        page = self.page
        page.wait_for_selector(selector, state="visible", timeout=WAIT_MS)
        for _ in range(120):
            if page.evaluate("(s) => document.activeElement?.matches(s) ?? false", selector):
                visible = page.evaluate(
                    "() => getComputedStyle(document.activeElement).outlineStyle !== 'none'"
                )
                assert visible, f"{selector} has the focus but no visible focus indicator"
                return
            page.keyboard.press("Tab")
        raise AssertionError(f"Tab never reached {selector}")

    def press(self, selector: str) -> None:
        if self.keyboard:
            self.focus(selector)
            self.page.keyboard.press("Enter")
        else:
            self.page.click(selector)

    def choose(self, selector: str, value: str) -> None:
        if self.keyboard:
            self.focus(selector)
            index = self.page.evaluate(
                "([s, v]) => [...document.querySelector(s).options].findIndex(o => o.value === v)",
                [selector, value],
            )
            for _ in range(index):
                self.page.keyboard.press("ArrowDown")
            assert self.page.input_value(selector) == value
        else:
            self.page.select_option(selector, value)

    def type(self, selector: str, text: str) -> None:
        if self.keyboard:
            self.focus(selector)
            self.page.keyboard.press("Control+A")
            self.page.keyboard.type(text)
        else:
            self.page.fill(selector, text)

    def wait_next(self, words: str) -> None:
        self.page.wait_for_selector(f"#next-hint:has-text('{words}')", timeout=WAIT_MS)

    def play_round(self, mode: str, shoe: bool) -> None:
        """Lock-out to the next round's betting, as the dealer, with the page's words only."""
        page = self.page
        _state(page, "Open_Betting")
        self.look()
        self.press("#do-chip-2")  # a wager of our own, so the round has at least one
        page.wait_for_selector('#light-2[data-state="lit"]', timeout=WAIT_MS)
        page.wait_for_timeout(600)  # the scripted players place theirs
        self.press("#do-lockout")
        _state(page, "Open_LockedOut")
        assert "lock-out" not in page.inner_text("#next-step").lower() or mode == "three_card"
        self.look()
        if mode == "three_card":
            page.wait_for_selector("#enter-pai-gow", timeout=WAIT_MS)
            self.press("#enter-pai-gow")
            page.wait_for_selector("#enter-pai-gow", state="detached", timeout=WAIT_MS)
        if mode == "rng":  # the 1-7 side wagers, entered by the dealer (j)(2)(i)
            page.wait_for_selector("#enter-side-wagers", timeout=WAIT_MS)
            assert "side wagers" in page.inner_text("#next-step")
            self.choose("#side-number-2", "5")
            self.press("#enter-side-wagers")
            page.wait_for_selector("#enter-side-wagers", state="detached", timeout=WAIT_MS)
        self.wait_next("confirms the chip count")
        assert "Count the chips" in page.inner_text("#next-step")
        self.press("#do-next")
        if mode == "rng":
            self.wait_next("draws the starting position")
            self.press("#do-next")
            _state(page, "Open_SideWagers")
            self.look()
            page.wait_for_selector("#display-meaning:has-text('first stack')", timeout=WAIT_MS)
            assert "Settle the 1-7 side wagers" in page.inner_text("#next-step")
            # the dealer's own side wager, settled on the number drawn: pay or collect
            page.wait_for_selector("#side-results li:has-text('Area 2 on 5')", timeout=WAIT_MS)
            said = page.inner_text("#side-results")
            shown = r"Area 2 on 5 \(\$5\.00\): (wins: pay at 6:1|loses: collect)"
            assert re.search(shown, said), said
            self.press("#do-next")
        elif mode == "dice":
            _state(page, "Open_StartingPosition_Dice")
            self.look()
            for n in (1, 2, 3):
                self.press("#do-shake")
                page.wait_for_selector(f"#shake-hint:has-text('{n} shake')", timeout=WAIT_MS)
            page.wait_for_selector("#dice-total", timeout=WAIT_MS)
            assert "enter their total" in page.inner_text("#next-step")
            self.type("#dice-total", "11")
            self.press("#enter-dice")
        if mode == "three_card":  # the threes dealt: the bonus settled, then NEXT (n)(6)-(7)
            self.wait_next("ends the three-card bonus")
            assert "three-card bonus" in page.inner_text("#next-step")
            self.look()
            self.press("#do-next")
        _state(page, "Open_Play")
        self.look()
        assert "press NEXT" in page.inner_text("#next-step")
        self.wait_next("ends play")
        self.press("#do-next")
        if not shoe:  # the dealer enters each wagered area's progressive result
            _state(page, "Open_Settlement")
            self.look()
            assert "progressive result" in page.inner_text("#next-step")
            while _current(page) == "Open_Settlement":
                buttons = page.query_selector_all("[id^=enter-outcome-]")
                if not buttons:
                    page.wait_for_timeout(100)
                    continue
                button = str(buttons[0].get_attribute("id"))
                if button == "enter-outcome-2":  # the dealer's own wager: a flush, $3.00
                    self.choose("#outcome-2", "flush")
                self.press("#" + button)
                page.wait_for_timeout(300)
        page.wait_for_selector("#round-line:has-text('1 completed')", timeout=WAIT_MS)
        page.wait_for_selector("#hands .hand", timeout=WAIT_MS)
        # the round's steps stay readable however short a state was (the timeline)
        steps = page.inner_text("#entries")
        for words in ("lock-out pressed", "NEXT pressed", "round complete"):
            assert words in steps, steps
        if shoe:
            assert "cards dealt" in steps
        else:  # the flush's pay, in words, where the journal says it came from
            pays = [
                e
                for _, _, _, d in journal_rows(self.db)
                for e in d.get("effects") or []
                if e.get("type") == "pay" and e.get("position") == 2
            ]
            assert [p["cents"] for p in pays] == [300], pays
            source = "the chip tray" if pays[0]["from"] == "chip_tray" else "the meter"
            assert f"pay area 2 $3.00 from {source}" in page.inner_text("#timeline")


MODES = [
    ("rng", True),
    ("rng", False),
    ("dice", True),
    ("dice", False),
    ("three_card", True),
    ("three_card", False),
]


@pytest.mark.parametrize(("mode", "shoe"), MODES)
def test_a_dealer_alone_finishes_a_round_in_every_start_mode(
    browser: Any, tmp_path: Path, mode: str, shoe: bool
) -> None:
    config = table_config(tmp_path, mode, shoe)
    sim = SimProcess(tmp_path, "--config", str(config), "--people", "dealer", "--pace", "0.05")
    axe = Axe()
    try:
        page = _page(browser, sim)
        Dealer(page, keyboard=False, axe=axe, db=sim.db).play_round(mode, shoe)
        axe.check(page, "next round")
        assert page.errors == []
        page.context.close()
    finally:
        assert sim.stop() == 0
    assert axe.found == {}, axe.found  # WCAG 2.2 AA: none critical, none serious, every state


def test_the_dealers_round_by_keyboard_alone(browser: Any, tmp_path: Path) -> None:
    config = table_config(tmp_path, "rng", False)
    sim = SimProcess(tmp_path, "--config", str(config), "--people", "dealer", "--pace", "0.05")
    try:
        page = _page(browser, sim)
        Dealer(page, keyboard=True, axe=None, db=sim.db).play_round("rng", False)
        assert page.errors == []
        page.context.close()
    finally:
        assert sim.stop() == 0


def _refusal(page: Any, box: str, words: str) -> str:
    """The refusal's words at the control within a second of its journal entry reaching the
    page (the frame carrying it): polled for at most 1 s after the entry is listed."""
    page.wait_for_selector(f"#entries li.refused:has-text({words!r})", timeout=WAIT_MS)
    page.wait_for_selector(f"{box}:has-text({words!r})", timeout=1000)
    return str(page.inner_text(box))


def test_each_refusal_appears_in_words_at_its_control_ny_5324_41_k2(
    browser: Any, tmp_path: Path
) -> None:
    config = table_config(tmp_path, "dice", False)
    sim = SimProcess(tmp_path, "--config", str(config), "--no-script", "--seed", "5")
    axe = Axe()
    try:
        page = _page(browser, sim)
        closed_table(page)
        axe.check(page, "Closed")
        # the table is closed: the panel's NEXT needs the key; a chip is not taken
        page.click("#do-next")
        text = _refusal(page, "#msg-next", "needs the supervisor key switch on")
        assert "opens the table" in text
        assert page.is_visible(".bubble[data-for=next]")
        page.click("#btn-void")  # the drawing's VOID: not now, in words, no state name
        text = _refusal(page, "#msg-void", "not now")
        assert "Closed" not in text and "panel_void" not in text
        page.click("#chip-1")
        _refusal(page, "#msg-chip", "the table is closed")
        # a wrong PIN, then the supervisor opens (a supervisor's step, not confirmed: reversible)
        page.fill("#sup-id", "trainer")
        page.fill("#sup-pin", "9999")
        page.click("#login-btn")
        page.wait_for_selector("#action-result:has-text('not accepted')", timeout=WAIT_MS)
        page.fill("#sup-pin", "1234")
        page.click("#login-btn")
        page.wait_for_selector("#signed-in:not([hidden])", timeout=WAIT_MS)
        page.click("button[data-request=open]")
        _state(page, "Open_Betting")
        axe.check(page, "Open_Betting signed in")
        page.click("#do-chip-1")
        page.wait_for_selector('#light-1[data-state="lit"]', timeout=WAIT_MS)
        assert page.text_content("#light-word-1") == "BET"  # the light's state in words too
        page.click("#do-chip-1")
        _refusal(page, "#msg-chip", "already")
        page.click("#do-lockout")
        _state(page, "Open_LockedOut")
        assert page.text_content("#light-word-1") == "LOCKED"
        page.click("#do-chip-3")  # a late chip (NY 5324.41(k)(2))
        text = _refusal(page, "#msg-chip", "late chip")
        assert text.startswith("Area 3")
        page.click("#do-shake")  # shaking before the count: not now
        _refusal(page, "#msg-shake", "not now")
        page.click("#do-next")
        _state(page, "Open_StartingPosition_Dice")
        for _ in range(3):
            page.click("#do-shake")
        page.wait_for_selector("#dice-total", timeout=WAIT_MS)
        # an impossible total is explained before anything is sent; the machine's own
        # refusal (sent past the page's check) is shown there too
        page.fill("#dice-total", "2")
        page.click("#enter-dice")
        page.wait_for_selector("#msg-dice:has-text('not a possible total')", timeout=1000)
        page.evaluate("() => Page.press('dice', {total: 19})")
        _refusal(page, "#msg-dice", "total")
        axe.check(page, "Dice with refusals")
        # a stopped server: the full-screen banner within 5 s, the controls off
        assert page.is_hidden("#offline")
        sim.stop()
        page.wait_for_selector("#offline:not([hidden])", timeout=5000)
        assert page.is_disabled("#do-next") and page.is_disabled("#do-lockout")
        assert "No connection" in page.inner_text("#offline")
        axe.check(page, "offline")
        picture(page, "guide-offline", tmp_path)
        assert page.errors == []
        page.context.close()
    finally:
        sim.stop()
    assert axe.found == {}, axe.found


def test_four_screen_sizes_without_horizontal_scroll_wcag_1_4_10(
    browser: Any, tmp_path: Path
) -> None:
    sim = SimProcess(tmp_path, "--people", "dealer", "--pace", "0.05", "--seed", "7")
    try:
        page = _page(browser, sim)
        _state(page, "Open_Betting")
        page.click("#do-chip-3")
        page.wait_for_selector('#light-3[data-state="lit"]', timeout=WAIT_MS)
        for width, height in SCREENS:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(200)
            overflow = page.evaluate(
                "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"{width}x{height}: {overflow} px of horizontal scroll"
            small = page.evaluate(
                """() => [...document.querySelectorAll('button, input, select')]
                  .filter(e => e.offsetParent !== null && !e.closest('[hidden]'))
                  .map(e => [e.id || e.textContent.trim(), e.getBoundingClientRect()])
                  .filter(([_, r]) => r.width < 24 || r.height < 24)
                  .map(([n, r]) => n + ' ' + Math.round(r.width) + 'x' + Math.round(r.height))"""
            )
            assert small == [], f"{width}x{height}: targets under 24x24 CSS px: {small}"
            picture(page, f"page-{width}x{height}", tmp_path)
        # pit view: large type from two metres
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.click("#pit-btn")
        size = page.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('#state-words')).fontSize)"
        )
        assert size >= 48
        picture(page, "page-pit", tmp_path)
        page.click("#pit-btn")
        assert page.errors == []
        page.context.close()
    finally:
        assert sim.stop() == 0


def test_light_states_differ_in_words_not_colour_alone_ny_5324_41_d4(
    browser: Any, tmp_path: Path
) -> None:
    sim = SimProcess(tmp_path, "--people", "dealer", "--pace", "0.05", "--seed", "8")
    try:
        page = _page(browser, sim)
        _state(page, "Open_Betting")
        page.click("#do-chip-4")
        page.wait_for_selector('#light-4[data-state="lit"]', timeout=WAIT_MS)
        words = {page.text_content(f"#light-word-{i}") for i in range(1, 7)}
        assert "BET" in words and "open" in words
        label = str(page.get_attribute("#do-chip-4", "aria-label"))
        assert re.search(r"light wager placed", label)
        page.context.close()
    finally:
        assert sim.stop() == 0


def test_a_trainee_sets_the_dealers_hand_by_clicking_cards_ny_5324_41_g2(
    browser: Any, tmp_path: Path
) -> None:
    """The house-way drill answered by clicking the two cards of the low hand (drawn as cards),
    judged by the house way; the trainee's name, score and streak kept; the settle drill marks
    each area right or wrong."""
    from fsm.rules.cards import format_card, parse_cards
    from fsm.rules.houseway import HouseWay

    sim = SimProcess(tmp_path, "--no-script", "--seed", "9")
    axe = Axe()
    try:
        page = _page(browser, sim)
        page.wait_for_selector("#training:not([hidden])", timeout=WAIT_MS)
        page.fill("#trainee-name", "Dana")
        page.press("#trainee-name", "Tab")
        page.wait_for_selector("#drill-score:has-text('Dana: 0 right of 0')", timeout=WAIT_MS)
        page.select_option("#drill-kind", "house-way")
        page.click("#drill-new")
        row = page.wait_for_selector("#drill [data-cards]", timeout=WAIT_MS)
        assert row is not None
        cards = parse_cards(str(row.get_attribute("data-cards")))
        decision = HouseWay.load("reference").explain(cards)
        for card in decision.setting.low:
            page.click(f"#drill button.pick[data-card='{format_card(card)}']")
        page.click("#drill-check")
        page.wait_for_selector("#drill-verdict.good:has-text('Correct.')", timeout=WAIT_MS)
        page.wait_for_selector("#drill-score:has-text('1 right of 1')", timeout=WAIT_MS)
        assert "streak 1" in page.inner_text("#drill-score")
        axe.check(page, "drill answered")
        # settle: every area answered "win" with no vigorish; each area marked right or wrong
        page.select_option("#drill-kind", "settle")
        page.click("#drill-new")
        page.wait_for_selector("#drill .row[data-position]", timeout=WAIT_MS)
        areas = len(page.query_selector_all("#drill .row[data-position]"))
        page.click("#drill-check")
        page.wait_for_selector("#drill .verdict", timeout=WAIT_MS)
        marks = page.query_selector_all("#drill .verdict")
        assert len(marks) == areas
        assert all(m.inner_text().startswith(("right: ", "wrong: ")) for m in marks)
        page.wait_for_selector("#drill-score:has-text('of 2')", timeout=WAIT_MS)
        assert page.errors == []
        page.context.close()
    finally:
        assert sim.stop() == 0
    assert axe.found == {}, axe.found
