"""The page's HTTP and websocket routes (Tornado handlers), all on the page's own event loop.

Routes: ``/`` the page; ``/static/...`` its files; ``/ws?since=SEQ`` the live feed (frames, and
the journal entries after SEQ for a browser that reconnects); ``/api/frame`` and
``/api/entries?since=SEQ`` the same by HTTP; ``POST /api/input`` a press on the simulated table
(drives the MockFactory pin as the hardware would; refused on the Pi), also the dealer's entries
there (a position's outcome without a card-reading shoe, the dice total); ``POST /api/login`` /
``/api/logout`` a supervisor's session; ``POST /api/action`` a supervisor's step, posted on the
owner's queue as the console's event (``via: "web"``). Every POST carries the XSRF token
(Tornado's ``xsrf_cookies``); the session cookie is HttpOnly and SameSite=Strict.

Adding a control: a handler here (or an ``input``/``request`` name below) and its drawing in
static/table.js; the page's state comes only from frames. Must never touch the round machine or
the journal for writing, never block the loop (PIN checks and commits wait on an executor), and
never send a card of an unresolved round (frames come from `controller.web.view`).
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tornado.web
import tornado.websocket
from tornado.ioloop import IOLoop

from controller.journal.audit import connect_read_only
from controller.journal.tail import read_entries
from controller.supervisor.gate import SUPERVISOR_ID_RULE, valid_supervisor_id
from controller.supervisor.requests import REQUESTS, RequestError, build_event
from controller.web import view
from controller.web.auth import COOKIE, Sessions
from controller.web.feed import Hub
from controller.web.handler import MAX_BODY, JsonHandler
from controller.web.web_config import WebSection
from fsm.round.events import DicePositionEntered, PaiGowWagers, ProgressiveOutcome, SideWagers

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
#: The longest the page waits for the owner to commit a posted step (s).
COMMIT_TIMEOUT_S = 10.0
#: Requests of the console a supervisor may take from the page (all but ``status``).
#: verify-software has its own route (controller/web/verify.py): it answers a digest
ACTIONS = tuple(r for r in REQUESTS if r not in ("status", "verify-software"))
#: Host names a page listening on the loopback answers to (a DNS-rebinding site's name is not).
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def host_allowed(section: WebSection, host_header: str) -> bool:
    """Whether a request's Host header names this page: on a loopback address only a loopback
    name (so another site's name resolved to 127.0.0.1 gets nothing); on another address any."""
    if section.host not in LOOPBACK_NAMES:
        return True
    name = host_header.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else name
    else:
        name = name.rsplit(":", 1)[0]
    return name in LOOPBACK_NAMES


#: Entries a catching-up browser is sent at most.
CATCH_UP = 200


class Inputs:
    """What the page may press on the simulated table
    (``controller.sim.simulated_table.MockPins``)."""

    def drop_chip(self, position: int) -> None: ...

    def press_lockout(self) -> None: ...

    def press_next(self) -> None: ...

    def press_void(self) -> None: ...

    def turn_key(self, on: bool) -> None: ...

    def shake(self) -> None: ...


@dataclass
class Page:
    """Everything the handlers share (built by `controller.web.server.WebServer`)."""

    owner: Any
    journal_path: Path
    section: WebSection
    hub: Hub
    sessions: Sessions
    gate: Any  # controller.supervisor.gate.PinGate (the console's and the page's PIN check)
    inputs: Any = None  # MockPins on the simulated table; None on the Pi
    mode: str = "pit"
    latest: Callable[[], dict[str, Any] | None] = lambda: None
    gate_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="page-pin")
    )
    post_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(4, thread_name_prefix="page-post")
    )
    #: extra inputs by name, added by other parts of the page (training): name -> f(body)
    extra_inputs: dict[str, Callable[[Mapping[str, Any]], None]] = field(default_factory=dict)
    #: the simulated table's trainer (`controller.sim.training.Trainer`): adds the training
    #: routes of `controller.web.training`; None on the Pi
    training: Any = None


class BaseHandler(JsonHandler):
    page: Page

    def initialize(self, page: Page) -> None:
        self.page = page

    def prepare(self) -> None:
        if not host_allowed(self.page.section, self.request.host):
            raise tornado.web.HTTPError(421, reason="this page answers to 127.0.0.1 only")

    def sessions(self) -> Sessions:
        return self.page.sessions


class IndexHandler(BaseHandler):
    def get(self) -> None:
        self.xsrf_token  # noqa: B018 - sets the XSRF cookie the page's POSTs must echo
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish((STATIC / "index.html").read_bytes())


class FrameHandler(BaseHandler):
    def get(self) -> None:
        latest = self.page.latest() or {}
        self.reply(200, {**latest, "me": self.supervisor()})


def entries_after(journal_path: Path, since: int, up_to: int) -> list[dict[str, Any]]:
    """The journal's entries after ``since`` up to the published ``up_to``, as the page lists
    them (no card field): for a browser that reconnects."""
    if since >= up_to:
        return []
    conn = connect_read_only(journal_path)
    try:
        start = max(since, up_to - CATCH_UP)
        rows = read_entries(conn, start, up_to, CATCH_UP)
    finally:
        conn.close()
    return [view.entry_line(e.seq, e.ts_ms, e.round_id, e.type, e.data) for e in rows]


class EntriesHandler(BaseHandler):
    def get(self) -> None:
        try:
            since = int(self.get_argument("since", "0"))
        except ValueError:
            raise tornado.web.HTTPError(400, reason="since: a journal seq") from None
        up_to = int(self.page.owner.public.seq)
        self.reply(200, {"entries": entries_after(self.page.journal_path, since, up_to)})


def _loopback(address: str | None) -> bool:
    """True for a client on this machine (127.0.0.0/8, ::1, an IPv4-mapped loopback)."""
    try:
        ip = ipaddress.ip_address((address or "").split("%")[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


class InputHandler(BaseHandler):
    """A press on the simulated table: the mock pin is driven as the hardware would be."""

    def post(self) -> None:
        if not (self.page.section.remote_inputs or _loopback(self.request.remote_ip)):
            self.reply(
                403,
                {
                    "ok": False,
                    "error": "the simulated table's inputs answer this machine only "
                    "([web] remote_inputs = true to allow others)",
                },
            )
            return
        pins = self.page.inputs
        data = self.body()
        name = str(data.get("input", ""))
        if name in self.page.extra_inputs:
            try:
                self.page.extra_inputs[name](data)
            except ValueError as exc:
                self.reply(400, {"ok": False, "error": str(exc)})
                return
            self.reply(200, {"ok": True})
            return
        if pins is None:
            self.reply(403, {"ok": False, "error": "read-only: the table's own buttons act here"})
            return
        try:
            if name == "chip":
                pins.drop_chip(_area(data.get("position")))
            elif name == "lockout":
                pins.press_lockout()
            elif name == "next":
                pins.press_next()
            elif name == "void":
                pins.press_void()
            elif name == "key":
                pins.turn_key(bool(data.get("on")))
            elif name == "shake":
                pins.shake()
            elif name == "outcome":  # the dealer enters a position's outcome (no card reader)
                line = data.get("line")
                if line is not None and not isinstance(line, str):
                    raise ValueError("line: a pay-table line or null")
                entered = ProgressiveOutcome(
                    position=_area(data.get("position")), line=line or None
                )
                self.page.owner.post(entered.envelope())
            elif name == "dice":  # the dealer enters the dice total (start_mode dice)
                total = data.get("total")
                if isinstance(total, bool) or not isinstance(total, int):
                    raise ValueError("dice total: a whole number from 3 to 18 (three dice)")
                self.page.owner.post(DicePositionEntered(total=total).envelope())
            elif name == "side_wagers":  # the dealer enters the 1-7 side wagers placed
                entered_bets = SideWagers(bets=_side_bets(data.get("bets")), via="web")
                self.page.owner.post(entered_bets.envelope())
            elif name == "pai_gow":  # the dealer enters the areas holding a pai gow wager
                positions = data.get("positions")
                if not isinstance(positions, list) or not all(
                    isinstance(p, int) and not isinstance(p, bool) for p in positions
                ):
                    raise ValueError("pai gow positions: a list of betting areas 1 to 6")
                self.page.owner.post(PaiGowWagers(positions=positions, via="web").envelope())
            else:
                raise ValueError(f"input: unknown {name!r}")
        except (TypeError, ValueError) as exc:
            self.reply(400, {"ok": False, "error": str(exc)})
            return
        self.reply(200, {"ok": True})


def _area(raw: Any) -> int:
    """A betting area as the page sends it: a whole number 1 to 6 (never true, 1.5 or "1")."""
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= 6:
        raise ValueError(f"area: a betting area 1 to 6, got {str(raw)[:20]!r}")
    return raw


def _side_bets(raw: Any) -> list[dict[str, int]]:
    """The 1-7 side wagers as the page sends them: ``[{"position", "number", "cents"}]`` (the
    machine checks the rules; this only checks the shape, with the reason in words)."""
    if not isinstance(raw, list):
        raise ValueError("side wagers: a list of bets (an empty list: none placed)")
    shape = "side wagers: each bet names an area, a number 1-7 and an amount in whole cents"
    bets = []
    for bet in raw:
        if not isinstance(bet, Mapping):
            raise ValueError(shape)
        entry: dict[str, int] = {}
        for key in ("position", "number", "cents"):
            value = bet.get(key)
            # whole numbers only: 150.7 cents or "5" is a careless entry, never silently rounded
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(shape)
            entry[key] = value
        bets.append(entry)
    return bets


class LoginHandler(BaseHandler):
    async def post(self) -> None:
        data = self.body()
        supervisor, pin = data.get("supervisor"), data.get("pin")
        if not isinstance(supervisor, str) or not isinstance(pin, str) or not supervisor:
            self.reply(400, {"ok": False, "error": "supervisor and pin: both required"})
            return
        if not valid_supervisor_id(supervisor):  # the console's rule: never journaled as given
            self.reply(400, {"ok": False, "error": f"supervisor: must be {SUPERVISOR_ID_RULE}"})
            return
        if not self.page.section.actions:
            self.reply(403, {"ok": False, "error": "the page is read-only ([web] actions)"})
            return
        refused = await IOLoop.current().run_in_executor(
            self.page.gate_pool, self.page.gate.authenticate, supervisor, pin, "web sign-in"
        )
        if refused is not None:
            self.reply(403, {"ok": False, "error": refused})
            return
        token = self.page.sessions.create(supervisor)
        self.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
        self.reply(200, {"ok": True, "supervisor": supervisor})


class LogoutHandler(BaseHandler):
    def post(self) -> None:
        self.page.sessions.drop(self.get_cookie(COOKIE))
        self.clear_cookie(COOKIE, path="/")
        self.reply(200, {"ok": True})


def wait_receipt(receipt: Any) -> bool:
    return bool(receipt.wait(COMMIT_TIMEOUT_S))


class ActionHandler(BaseHandler):
    """A supervisor's step: the console's request by name, with the session's supervisor."""

    async def post(self) -> None:
        supervisor = self.supervisor()
        if supervisor is None:
            self.reply(401, {"ok": False, "error": "sign in with your supervisor id and PIN"})
            return
        data = self.body()
        name = str(data.get("request", ""))
        args = data.get("args", [])
        if name not in ACTIONS:
            self.reply(400, {"ok": False, "error": f"request: one of {', '.join(ACTIONS)}"})
            return
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            self.reply(400, {"ok": False, "error": "args: a list of strings"})
            return
        if self.page.section.require_key and not self.page.owner.public.view.get("supervisor_key"):
            self.reply(409, {"ok": False, "error": "turn the supervisor key switch on first"})
            return
        try:
            event = build_event(name, args, supervisor, via="web")
        except RequestError as exc:
            self.reply(400, {"ok": False, "error": str(exc)})
            return
        receipt = self.page.owner.post_tracked(event)
        committed = await IOLoop.current().run_in_executor(
            self.page.post_pool, wait_receipt, receipt
        )
        if not committed or receipt.seq is None:
            self.reply(503, {"ok": False, "error": receipt.error or "not committed in time"})
            return
        refused = [e for e in receipt.effects if e.TYPE == "rejected"]
        state = receipt.public.state if receipt.public is not None else ""
        if refused:
            reason = view.reason_words(str(dict(refused[0].to_json()).get("reason", "refused")))
            self.reply(409, {"ok": False, "seq": receipt.seq, "state": state, "error": reason})
            return
        said = [w for w in (view.effect_words(e.to_json()) for e in receipt.effects) if w]
        self.reply(200, {"ok": True, "seq": receipt.seq, "state": state, "words": "; ".join(said)})


class FeedSocket(tornado.websocket.WebSocketHandler):
    """The live feed of one browser: the frames (the newest only, as the hub decides), after
    the journal entries since ``?since=SEQ`` for a browser that reconnects."""

    page: Page

    def initialize(self, page: Page) -> None:
        self.page = page

    def prepare(self) -> None:
        if not host_allowed(self.page.section, self.request.host):
            raise tornado.web.HTTPError(421, reason="this page answers to 127.0.0.1 only")

    def open(self, *args: str, **kwargs: str) -> None:
        try:
            since = int(self.get_argument("since", "-1"))
        except ValueError:
            since = -1
        if since >= 0:
            up_to = self.page.hub.latest_seq
            missed = entries_after(self.page.journal_path, since, up_to)
            if missed:
                self.write_message(json.dumps({"type": "entries", "entries": missed}))
        self.page.hub.add(self)

    def send(self, text: str, done: Callable[[], None]) -> None:
        future = self.write_message(text)
        future.add_done_callback(lambda _f: done())

    def on_message(self, message: str | bytes) -> None:
        pass  # the feed is one-way; clicks are POSTs with the XSRF token

    def on_close(self) -> None:
        self.page.hub.remove(self)


def make_app(page: Page, extra: Sequence[Any] = ()) -> tornado.web.Application:
    """The page's application; ``extra``: routes added by other parts of the page (the training
    routes of `controller.web.training` on the simulated table), matched first."""
    args = {"page": page}
    return tornado.web.Application(
        [
            *extra,
            (r"/", IndexHandler, args),
            (r"/ws", FeedSocket, args),
            (r"/api/frame", FrameHandler, args),
            (r"/api/entries", EntriesHandler, args),
            (r"/api/input", InputHandler, args),
            (r"/api/login", LoginHandler, args),
            (r"/api/logout", LogoutHandler, args),
            (r"/api/action", ActionHandler, args),
        ],
        static_path=str(STATIC),
        xsrf_cookies=True,
        xsrf_cookie_kwargs={"samesite": "Strict", "path": "/"},
        websocket_ping_interval=20,
        websocket_max_message_size=MAX_BODY,
    )
