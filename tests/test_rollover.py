"""Every place an amount or a meter is shown has a stated behaviour at its maximum (issue 28
item 5; docs/sas.md "Rollover", docs/operator-guide.md "Amounts at their maximum"), tested at
the edge: the sign (8 digits), the page, SAS (4- and 5-byte BCD fields) and the reports.

The configuration bounds every amount by MAX_CENTS ($1,000,000,000.00); meters are Python
integers in the journal and never wrap there.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from report_journals import TableDriver
from web_support import launch, need_chromium

from controller.floor.exceptions import FloorFold
from controller.floor.responder import Responder
from controller.floor.sas_config import parse_sas
from controller.journal import reports
from controller.journal.reports import JournalReader
from controller.service.owner import PublicSnapshot
from drivers.gpio.sign import SignLevel, amount_text, sign_texts
from drivers.sas import codec
from drivers.sas.sas_link import Poll
from fsm.configread import MAX_CENTS
from fsm.round import GameConfig
from fsm.round.config import ProgressiveLevel

ROOT = Path(__file__).resolve().parent.parent
SIGN_MAX = 9_999_999_999  # $99,999,999: eight digits of whole dollars


# ---------------------------------------------------------------------------------- the sign
@pytest.mark.parametrize(
    ("cents", "text"),
    [
        (99_999_999, "999999.99"),  # the largest amount shown with its cents
        (100_000_099, " 1000000"),  # whole dollars from $1,000,000: cents dropped, never rounded up
        (199_999_999, " 1999999"),
        (SIGN_MAX, "99999999"),  # the largest amount the sign shows
        (SIGN_MAX + 1, "--------"),  # beyond: dashes, never a wrapped or truncated number
        (MAX_CENTS, "--------"),
    ],
)
def test_the_sign_at_its_maximum_shows_dashes_never_a_wrapped_amount(cents: int, text: str) -> None:
    assert amount_text(cents) == text


def test_a_level_beyond_the_sign_shows_dashes_and_its_neighbour_its_amount() -> None:
    levels = [SignLevel("major", SIGN_MAX + 1), SignLevel("minor", 123_45)]
    assert sign_texts(levels, 2) == ("--------", "   123.45")


# ---------------------------------------------------------------------------------- the page
def _page_money() -> str:
    js = (ROOT / "controller" / "web" / "static" / "table.js").read_text(encoding="utf-8")
    found = re.search(r"const money = \(c\) => [^;]+;", js)
    assert found, "table.js formats money with one function, money(c)"
    return found.group(0)


def test_the_page_shows_every_amount_exactly_to_the_cent_up_to_the_configurations_bound() -> None:
    """The page's own money() in a real browser: exact at the sign's maximum, beyond it and at
    MAX_CENTS (JavaScript numbers hold integer cents exactly up to 2^53)."""
    from playwright.sync_api import sync_playwright

    executable = need_chromium()
    cases = [1, SIGN_MAX, SIGN_MAX + 1, 12_345_678_901, MAX_CENTS]
    with sync_playwright() as pw:
        browser = launch(pw, executable)
        try:
            page = browser.new_page()
            shown = page.evaluate(f"(() => {{ {_page_money()} return {cases}.map(money); }})()")
        finally:
            browser.close()
    assert shown == [
        "$0.01",
        "$99,999,999.99",
        "$100,000,000.00",
        "$123,456,789.01",
        "$1,000,000,000.00",
    ]


# ----------------------------------------------------------------------------------------- SAS
def test_bcd_meter_fields_roll_over_at_their_width_as_sas_meters_do() -> None:
    """4 bytes: 99,999,999 then 00000000; 5 bytes: 9,999,999,999 then 0000000000. The host
    takes the difference of two readings modulo the width."""
    assert codec.bcd(99_999_999, 4) == bytes.fromhex("99999999")
    assert codec.bcd(100_000_000, 4) == bytes.fromhex("00000000")
    assert codec.bcd(123_456_789, 4) == bytes.fromhex("23456789")
    assert codec.bcd(9_999_999_999, 5) == bytes.fromhex("9999999999")
    assert codec.bcd(10_000_000_000, 5) == bytes.fromhex("0000000000")
    assert (codec.bcd_max(4), codec.bcd_max(5)) == (99_999_999, 9_999_999_999)


def _snap(meters: dict[str, Any], **view: Any) -> PublicSnapshot:
    return PublicSnapshot(
        5, 0, "Open_Betting", 1, 1, MappingProxyType(view), MappingProxyType(meters)
    )


def _responder() -> Responder:
    problems: list[str] = []
    section = parse_sas({}, problems)
    assert problems == []
    return Responder(section, GameConfig(), "TBL0001")


def _meters(**values: int) -> dict[str, Any]:
    base: dict[str, Any] = dict.fromkeys(
        ("wagered_cents", "progressive_in", "wins", "tray_paid_cents", "meter_paid_cents",
         "paid_cents", "display_cents"),
        0,
    )  # fmt: skip
    base["last_hits"] = ()
    return {"progressive": {**base, **values}}


def test_coin_in_past_99_999_999_credits_rolls_over_in_0f_and_2f_carries_it_by_its_width() -> None:
    r = _responder()
    snap = _snap(_meters(wagered_cents=100_000_123, progressive_in=99_999_999))
    frame = r.respond(Poll(1, 0x0F, b"", b""), snap, FloorFold(), 0.0).frame
    assert frame is not None
    body = frame[2:-2]
    assert body[4:8] == bytes.fromhex("00000123")  # coin in, 4 bytes: rolled over
    assert body[20:24] == bytes.fromhex("99999999")  # games played at its maximum
    two_f = r.respond(Poll(1, 0x2F, b"\x00\x00\x00\x05", b""), snap, FloorFold(), 0.0).frame
    assert two_f is not None and bytes.fromhex("00000123") in two_f


def test_an_award_beyond_the_5_byte_field_is_not_answered_never_wrapped() -> None:
    """1B (handpay) and 84 (last progressive win) carry one award: above $99,999,999.99 the
    field would wrap to a wrong amount, so the poll is not answered (the reason in the frame
    log); at the maximum it is answered exactly."""
    r = _responder()
    pending = {"pending": [{"position": 1, "level": "progressive", "line": "not-a-line"}]}
    at_max = _snap(_meters(display_cents=9_999_999_999), round=pending)
    reply = r.respond(Poll(1, 0x1B, b"", b""), at_max, FloorFold(), 0.0)
    assert reply.frame is not None and bytes.fromhex("9999999999") in reply.frame
    beyond = _snap(_meters(display_cents=10_000_000_000), round=pending)
    reply = r.respond(Poll(1, 0x1B, b"", b""), beyond, FloorFold(), 0.0)
    assert reply.frame is None and "exceed the 5-byte BCD field" in reply.reason
    hit = {"amount_cents": 10_000_000_000, "position": 1}
    won = _snap(_meters(meter_paid_cents=10_000_000_000, last_hits=(hit,)))
    reply = r.respond(Poll(1, 0x84, b"", b""), won, FloorFold(), 0.0)
    assert reply.frame is None and "84" in reply.reason


# ------------------------------------------------------------------------------- the reports
def test_reports_show_the_exact_amount_beyond_every_display_width(tmp_path: Path) -> None:
    """The journal's meters are integers; reports print them exactly (text and JSON) however
    large, up to the configuration's bound."""
    level = ProgressiveLevel("progressive", 12_345_678_901, 12_345_678_901, 100)
    config = GameConfig(table_id="T9", levels=(level,))
    d = TableDriver(tmp_path / "j.db", config)
    d.open_table()
    d.play_round([1])
    d.close()
    with JournalReader(tmp_path / "j.db") as reader:
        report = reports.meters_report(reader)
    (lvl,) = report["levels"]
    assert lvl["display_cents"] == 12_345_678_901 + 1  # 1% of a $1 wager
    text = "\n".join(reports.meters_text(report))
    assert "display $123,456,789.02" in text
    assert reports.dollars(MAX_CENTS) == "$1,000,000,000.00"
