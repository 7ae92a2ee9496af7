"""The page's server in process (issue 11, pit status): a real owner on a real journal file, the
Tornado server on its own thread, real HTTP and websocket clients. CSRF protection, the session
cookie's flags, the console's PIN attempt limits (journaled), the key switch where configured,
read-only presses on the Pi, the catch-up of a reconnecting browser, the latest frame per
browser; and the frames' card rule on a unit scale."""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from journal_support import journal_entries

from controller.config import SIMULATED_TABLE, load_config
from controller.service.owner import Owner
from controller.supervisor.lockout import LOCKOUT_AFTER
from controller.web.feed import Hub
from controller.web.server import WebServer
from controller.web.view import Hands, entry_line
from controller.web.web_config import WebSection
from fsm.round.effects import Effect
from fsm.round.events import Event
from fsm.round.machine import RoundMachine


class _NoDevices:
    def apply(self, effect: Effect) -> None:
        pass

    def safe_state(self, glyph: str = " ") -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class Served:
    owner: Owner
    server: WebServer
    db: Path

    @property
    def url(self) -> str:
        return self.server.url


def _serve(tmp: Path, section: WebSection) -> Served:
    config = load_config(SIMULATED_TABLE)
    game = config.game

    def make_machine(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    db = tmp / "j.db"
    owner = Owner(db, make_machine, _NoDevices(), software_hash=lambda: "0" * 64)
    owner.start()
    server = WebServer(owner, db, config.supervisors, section, port=0, way=game.way)
    server.start()
    return Served(owner, server, db)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = _serve(tmp_path, WebSection(enabled=True))
    try:
        yield s
    finally:
        s.server.stop()
        s.owner.stop()


class Browser:
    """An HTTP client with a cookie jar, as a browser keeps one."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.headers: list[tuple[str, str]] = []

    def get(self, path: str) -> tuple[int, bytes]:
        with self.opener.open(self.base + path.lstrip("/"), timeout=30) as r:
            self.headers = r.getheaders()
            return r.status, r.read()

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def post(
        self, path: str, body: dict[str, Any], *, token: bool = True
    ) -> tuple[int, dict[str, Any]]:
        headers = {"Content-Type": "application/json"}
        xsrf = self.cookie("_xsrf")
        if token and xsrf:
            headers["X-XSRFToken"] = xsrf
        req = urllib.request.Request(
            self.base + path.lstrip("/"), json.dumps(body).encode(), headers, method="POST"
        )
        try:
            with self.opener.open(req, timeout=60) as r:
                self.headers = r.getheaders()
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as exc:
            self.headers = list(exc.headers.items())
            raw = exc.read()
            try:
                return exc.code, json.loads(raw or b"{}")
            except ValueError:
                return exc.code, {"raw": raw.decode(errors="replace")}


def test_a_post_without_the_xsrf_token_is_refused(served: Served) -> None:
    """CSRF: a POST must echo the page's XSRF cookie in its header; another site's form cannot."""
    b = Browser(served.url)
    assert b.get("/")[0] == 200
    assert b.cookie("_xsrf")
    status, _ = b.post("/api/login", {"supervisor": "trainer", "pin": "1234"}, token=False)
    assert status == 403
    assert b.cookie("paigow_session") is None
    status, reply = b.post("/api/login", {"supervisor": "trainer", "pin": "1234"})
    assert status == 200 and reply["ok"] is True


def test_the_session_cookie_is_httponly_and_samesite_strict(served: Served) -> None:
    b = Browser(served.url)
    b.get("/")
    xsrf = [v for k, v in b.headers if k.lower() == "set-cookie" and v.startswith("_xsrf=")]
    assert xsrf and "samesite=strict" in xsrf[0].lower()
    status, _ = b.post("/api/login", {"supervisor": "trainer", "pin": "1234"})
    assert status == 200
    cookies = [v for k, v in b.headers if k.lower() == "set-cookie"]
    session = [c for c in cookies if c.startswith("paigow_session=")]
    assert len(session) == 1
    flags = [p.strip().lower() for p in session[0].split(";")]
    assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags


def test_wrong_pins_lock_the_supervisor_with_the_consoles_limits_and_are_journaled(
    served: Served,
) -> None:
    """The console's attempt limits: after LOCKOUT_AFTER wrong PINs even the right one is refused
    for a while; every refusal is a ``console_refused`` entry, never with the PIN."""
    b = Browser(served.url)
    b.get("/")
    for _ in range(LOCKOUT_AFTER):
        status, reply = b.post("/api/login", {"supervisor": "trainer", "pin": "0000"})
        assert status == 403 and "not accepted" in reply["error"]
    status, reply = b.post("/api/login", {"supervisor": "trainer", "pin": "1234"})
    assert status == 403 and "locked" in reply["error"]
    assert b.cookie("paigow_session") is None
    refused = [d for _, t, d in journal_entries(served.db) if t == "console_refused"]
    assert len(refused) == LOCKOUT_AFTER + 1
    assert all(r["request"] == "web sign-in" and r["supervisor"] == "trainer" for r in refused)
    assert not any("0000" in json.dumps(r) or "1234" in json.dumps(r) for r in refused)
    # another supervisor is not locked
    status, _ = b.post("/api/login", {"supervisor": "floor", "pin": "2468"})
    assert status == 200


def test_a_supervisor_action_needs_a_session_and_is_journaled_via_the_page(
    served: Served,
) -> None:
    b = Browser(served.url)
    b.get("/")
    status, reply = b.post("/api/action", {"request": "open", "args": []})
    assert status == 401
    assert served.owner.public.state == "Closed"
    assert b.post("/api/login", {"supervisor": "floor", "pin": "2468"})[0] == 200
    status, reply = b.post("/api/action", {"request": "open", "args": []})
    assert status == 200 and reply["ok"] is True, reply
    opened = [d for _, t, d in journal_entries(served.db) if t == "table_opened"]
    assert opened == [{"effects": opened[0]["effects"], "supervisor": "floor", "via": "web"}]
    # a step the machine refuses is journaled and answered as refused
    status, reply = b.post("/api/action", {"request": "validate-hit", "args": ["2"]})
    assert status == 409 and reply["ok"] is False
    # signed out: no more actions
    assert b.post("/api/logout", {})[0] == 200
    assert b.post("/api/action", {"request": "close", "args": []})[0] == 401


def test_the_key_switch_is_needed_where_configured(tmp_path: Path) -> None:
    s = _serve(tmp_path, WebSection(enabled=True, require_key=True))
    try:
        b = Browser(s.url)
        b.get("/")
        assert b.post("/api/login", {"supervisor": "trainer", "pin": "1234"})[0] == 200
        status, reply = b.post("/api/action", {"request": "open", "args": []})
        assert status == 409 and "key" in reply["error"]
        assert s.owner.public.state == "Closed"
        s.owner.post(Event("supervisor_key", {"on": True}))
        assert s.owner.wait_idle(10)
        status, reply = b.post("/api/action", {"request": "open", "args": []})
        assert status == 200, reply
    finally:
        s.server.stop()
        s.owner.stop()


def test_a_read_only_page_refuses_sign_in_and_presses(tmp_path: Path) -> None:
    """``[web] actions = false``: the page only shows; on the Pi no press drives a pin."""
    s = _serve(tmp_path, WebSection(enabled=True, actions=False))
    try:
        b = Browser(s.url)
        b.get("/")
        assert b.post("/api/login", {"supervisor": "trainer", "pin": "1234"})[0] == 403
        assert b.post("/api/input", {"input": "next"})[0] == 403
        assert [t for _, t, _ in journal_entries(s.db)] == ["power_up"]
    finally:
        s.server.stop()
        s.owner.stop()


def test_the_page_listens_on_loopback_by_default(served: Served) -> None:
    assert WebSection().host == "127.0.0.1"
    assert served.server.host == "127.0.0.1"


def test_a_port_in_use_is_an_oserror_at_start(tmp_path: Path, served: Served) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        other = WebServer(
            served.owner, served.db, {}, WebSection(enabled=True, port=port), port=port
        )
        with pytest.raises(OSError):
            other.start()
    finally:
        taken.close()


async def _ws_messages(url: str, count: int) -> list[dict[str, Any]]:
    from tornado.websocket import websocket_connect

    conn = await websocket_connect(url)
    out: list[dict[str, Any]] = []
    try:
        while len(out) < count:
            msg = await asyncio.wait_for(conn.read_message(), 10)
            assert msg is not None
            out.append(json.loads(msg))
    finally:
        conn.close()
    return out


def test_a_reconnecting_browser_catches_up_from_its_last_seq(served: Served) -> None:
    owner = served.owner
    owner.post(Event("table_opened", {"supervisor": "trainer"}))
    owner.post(Event("shuffle_complete", {"count": 53, "deck_id": 1}))
    assert owner.wait_idle(10)
    head = owner.public.seq
    assert head >= 3
    ws = served.url.replace("http://", "ws://") + "ws?since=1"
    # the page's feed follows the journal's tail, a thread of its own: on a loaded machine it may
    # not yet hold the head the owner just committed; a browser reconnecting then gets the rest
    # as entries of its own, so the test connects again until the catch-up reaches the head
    end = time.monotonic() + 10
    while True:
        first, second = asyncio.run(_ws_messages(ws, 2))
        got = [e["seq"] for e in first.get("entries", [])]
        if (got and got[-1] >= head) or time.monotonic() > end:
            break
        time.sleep(0.2)
    assert first["type"] == "entries"
    assert [e["seq"] for e in first["entries"]] == list(range(2, head + 1))
    assert second["type"] == "frame" and second["seq"] == head
    assert second["state"] == "Open_Betting" and second["lights"] == ["attract"] * 6


class _SlowBrowser:
    """A browser connection that finishes sending only when the test says so."""

    def __init__(self) -> None:
        self.got: list[str] = []
        self.waiting: list[Callable[[], None]] = []

    def send(self, text: str, done: Callable[[], None]) -> None:
        self.got.append(text)
        self.waiting.append(done)


def test_a_slow_browser_gets_only_the_newest_frame_and_holds_up_no_other() -> None:
    hub = Hub()
    slow, fast = _SlowBrowser(), _SlowBrowser()
    hub.add(slow)
    hub.add(fast)
    hub.publish(1, "f1")
    for n in (2, 3, 4):
        hub.publish(n, f"f{n}")
        fast.waiting.pop()()  # the fast browser's frame has gone at once
    assert fast.got == ["f1", "f2", "f3", "f4"]
    assert slow.got == ["f1"]  # still sending f1
    slow.waiting.pop()()
    assert slow.got == ["f1", "f4"]  # f2 and f3 were replaced by the newest


def test_a_journal_entry_reaches_the_page_without_its_cards() -> None:
    stacks = [[0, 1, 2, 3, 4, 5, 6]] * 7
    line = entry_line(9, 0, 1, "dealt", {"remaining": 4, "stacks": stacks, "effects": []})
    assert "stacks" not in json.dumps(line) and line["words"] == "cards dealt (4 left in the shoe)"


def test_the_hands_are_shown_only_once_their_round_resolved() -> None:
    config = load_config(SIMULATED_TABLE)
    hands = Hands(config.game.way, config.game.ranking)
    order = [3, 2, 1, 0, 6, 5, 4]
    stacks = [list(range(i * 7, i * 7 + 7)) for i in range(7)]
    start = {"type": "starting_position", "order": order, "seat": 3, "number": 4, "by": "rng"}
    assert hands.note(1, "rng_drawn", {"value": 4, "effects": [start]}) is None
    assert hands.note(1, "dealt", {"remaining": 4, "stacks": stacks, "effects": []}) is None
    assert hands.last is None
    summary = {
        "type": "round_summary", "round_id": 1, "outcome": "completed", "meters": [],
        "positions": [{"position": 3, "wager_cents": 100, "line": None, "payout_cents": 0}],
    }  # fmt: skip
    shown = hands.note(1, "round_completed", {"round_id": 1, "effects": [summary]})
    assert shown is not None and hands.last is shown
    by_seat = {h["seat"]: h for h in shown["hands"]}
    assert sorted(by_seat) == list(range(7))
    assert by_seat[3]["cards"] == ["2c", "2d", "2h", "2s", "3c", "3d", "3h"]  # stack 0 -> seat 3
    assert len(by_seat[0]["high"]) == 5 and len(by_seat[0]["low"]) == 2
    assert by_seat[3]["wager_cents"] == 100


def test_the_section_reads_its_keys() -> None:
    section = WebSection.from_mapping({"enabled": True, "host": "0.0.0.0", "port": 8081})
    assert replace(section) == WebSection(True, "0.0.0.0", 8081)
    with pytest.raises(ValueError, match=r"^web\.port"):
        WebSection.from_mapping({"port": 70000})


def test_the_three_card_bonus_hands_are_the_threes_and_fours_of_each_seat() -> None:
    """NY 5324.41(n)(4)-(7): stacks of three then of four to the pai gow positions farthest
    left first, then the dealer; the page shows each seat's seven cards, after resolution."""
    hands = Hands()
    hands.note(2, "pai_gow_wagers", {"positions": [2, 5], "effects": []})
    hands.note(2, "dealt", {"remaining": 44, "stacks": [[0, 1, 2], [3, 4, 5], [6, 7, 8]]})
    fours = [[9, 10, 11, 12], [13, 14, 15, 16], [17, 18, 19, 20]]
    hands.note(2, "dealt", {"remaining": 32, "stacks": fours})
    assert hands.last is None
    summary = {"type": "round_summary", "round_id": 2, "outcome": "completed", "positions": []}
    shown = hands.note(2, "round_completed", {"effects": [summary]})
    assert shown is not None
    cards = {h["seat"]: h["cards"] for h in shown["hands"]}
    assert list(cards) == [0, 2, 5]  # the dealer first, then the areas
    assert cards[5] == ["2c", "2d", "2h", "4d", "4h", "4s", "5c"]  # the first three, first four
    assert cards[2] == ["2s", "3c", "3d", "5d", "5h", "5s", "6c"]
    assert cards[0] == ["3h", "3s", "4c", "6d", "6h", "6s", "7c"]


def test_a_loopback_page_answers_only_to_a_loopback_host_name(served: Served) -> None:
    """Another site's name resolved to 127.0.0.1 (DNS rebinding) gets nothing from the page."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", served.server.port, timeout=30)
    try:
        conn.request("GET", "/api/frame", headers={"Host": f"evil.example:{served.server.port}"})
        assert conn.getresponse().status == 421
    finally:
        conn.close()
    for name in ("127.0.0.1", "localhost", "[::1]"):
        conn = http.client.HTTPConnection("127.0.0.1", served.server.port, timeout=30)
        try:
            conn.request("GET", "/api/frame", headers={"Host": f"{name}:{served.server.port}"})
            assert conn.getresponse().status == 200, name
        finally:
            conn.close()
