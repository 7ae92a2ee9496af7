"""The floor page's server (``tablectl central serve``): Tornado on one asyncio loop with the
floor's sources (`controller.central.floor.Floor`).

Routes: ``/`` the page; ``/static/...`` its files; ``/ws`` the live feed (one ``full`` message,
then an ``update`` every 50 ms when something changed: tiles, alarms, pools, status);
``/api/floor`` the same by HTTP; ``/api/shift?from=&to=`` (JSON) and ``/api/shift.csv`` the
shift per table and section (`controller.central.shift`); ``/api/trends?days=N`` the last days,
``?hours=N`` the shift hour by hour; ``POST /api/login`` / ``/api/logout`` a supervisor's
session (the table's PIN rules: `controller.supervisor.gate.PinGate`, its refusals stored in
PostgreSQL); ``POST /api/ack`` an acknowledgement of an alarm, stored with who and when.
Everything is readable by anyone the page is bound to; every POST carries the XSRF token and
every state change needs a session. A page bound to anything but loopback serves only with TLS.

Must never block the loop (PIN checks and database calls run on executors), write a table's
journal, central ingest's tables or the stream, or echo a PIN.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import ssl
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import tornado.httpserver
import tornado.netutil
import tornado.web
import tornado.websocket

from controller.central.floor import Floor, wall_ms
from controller.central.floor_config import FloorConfig
from controller.central.shift import DAY_MS, HOUR_MS, shift_csv, shift_view, trends_view
from controller.central.store import FloorStore
from controller.journal.reports import ReportError, parse_time
from controller.link.central import connect_pg
from controller.link.keys import Keyring
from controller.supervisor.gate import SUPERVISOR_ID_RULE, PinGate, valid_supervisor_id
from controller.supervisor.lockout import LockoutBook
from controller.web.auth import COOKIE, Sessions
from controller.web.handler import JsonHandler

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
MAX_DAYS = 31


class FloorApp:
    """What the handlers share."""

    def __init__(self, cfg: FloorConfig, floor: Floor, dsn: str) -> None:
        self.cfg = cfg
        self.floor = floor
        self.dsn = dsn
        self.sessions = Sessions(cfg.session_minutes)
        self.book = LockoutBook()
        self.gate = PinGate(floor.store, cfg.supervisors, self.book)
        self.reports = ThreadPoolExecutor(1, thread_name_prefix="floor-report")
        self._report_conn: Any = None
        self.sockets: set[FloorSocket] = set()
        floor.listeners.append(self.broadcast)

    def broadcast(self, msg: Mapping[str, Any]) -> None:
        text = json.dumps(msg, separators=(",", ":"))
        for sock in list(self.sockets):
            try:
                sock.write_message(text)
            except tornado.websocket.WebSocketClosedError:
                self.sockets.discard(sock)

    def report(self, fn: Any, *args: Any) -> Any:
        """Run a report on the report thread's own connection (never the poll's)."""
        if self._report_conn is None or self._report_conn.closed:
            self._report_conn = connect_pg(self.dsn)
        return fn(self._report_conn, self.cfg, *args)


class Base(JsonHandler):
    app: FloorApp

    def initialize(self, app: FloorApp) -> None:
        self.app = app

    def sessions(self) -> Sessions:
        return self.app.sessions

    def window(self) -> tuple[int | None, int | None]:
        try:
            start = self.get_argument("from", "") or None
            end = self.get_argument("to", "") or None
            return (
                None if start is None else parse_time(start, "from"),
                None if end is None else parse_time(end, "to"),
            )
        except ReportError as exc:
            raise tornado.web.HTTPError(400, reason=str(exc)) from None


class Index(Base):
    def get(self) -> None:
        self.xsrf_token  # noqa: B018 - sets the XSRF cookie the page's POSTs echo
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish((STATIC / "floor.html").read_bytes())


class FloorState(Base):
    def get(self) -> None:
        self.reply(200, {**self.app.floor.full(), "me": self.supervisor()})


class Shift(Base):
    async def get(self, csv: str | None = None) -> None:
        start, end = self.window()
        loop = asyncio.get_running_loop()
        try:
            view = await loop.run_in_executor(
                self.app.reports, self.app.report, shift_view, start, end
            )
        except Exception as exc:  # psycopg.Error: no schema yet
            raise tornado.web.HTTPError(503, reason=f"PostgreSQL: {exc}"[:200]) from None
        if csv:
            self.set_header("Content-Type", "text/csv; charset=utf-8")
            self.set_header("Content-Disposition", 'attachment; filename="floor-shift.csv"')
            self.finish(shift_csv(view))
        else:
            self.reply(200, view)


class Trends(Base):
    """``?days=N`` (1-31): the last days; ``?hours=N`` (1-24): the shift hour by hour."""

    async def get(self) -> None:
        hours = self.get_argument("hours", "")
        text, limit, step = (
            (hours, 24, HOUR_MS) if hours else (self.get_argument("days", "7"), MAX_DAYS, DAY_MS)
        )
        unit = "hours" if hours else "days"
        if not text.isdigit() or not 1 <= int(text) <= limit:
            raise tornado.web.HTTPError(400, reason=f"{unit}: a whole number 1-{limit}")
        loop = asyncio.get_running_loop()
        try:
            view = await loop.run_in_executor(
                self.app.reports, self.app.report, trends_view, wall_ms(), int(text), step
            )
        except Exception as exc:
            raise tornado.web.HTTPError(503, reason=f"PostgreSQL: {exc}"[:200]) from None
        self.reply(200, view)


class Login(Base):
    async def post(self) -> None:
        data = self.body()
        sid, pin = data.get("supervisor"), data.get("pin")
        if not valid_supervisor_id(sid):
            self.reply(400, {"ok": False, "error": f"refused: not {SUPERVISOR_ID_RULE}"})
            return
        if not isinstance(pin, str) or not pin.isdigit() or not 4 <= len(pin) <= 12:
            self.reply(400, {"ok": False, "error": "refused: a PIN is 4 to 12 digits"})
            return
        assert isinstance(sid, str)
        floor = self.app.floor
        loop = asyncio.get_running_loop()
        refusal = await loop.run_in_executor(
            floor.db, self.app.gate.authenticate, sid, pin, "floor-login"
        )
        if refusal is not None:
            self.reply(403, {"ok": False, "error": refusal})
            return
        token = self.app.sessions.create(sid)
        self.set_cookie(
            COOKIE, token, httponly=True, samesite="Strict",
            secure=self.request.protocol == "https",
        )  # fmt: skip
        self.reply(200, {"ok": True, "me": sid})


class Logout(Base):
    def post(self) -> None:
        self.app.sessions.drop(self.get_cookie(COOKIE))
        self.clear_cookie(COOKIE)
        self.reply(200, {"ok": True, "me": None})


class Me(Base):
    def get(self) -> None:
        self.reply(200, {"me": self.supervisor()})


class Ack(Base):
    async def post(self) -> None:
        who = self.supervisor()
        if who is None:
            self.reply(403, {"ok": False, "error": "sign in as a supervisor to acknowledge"})
            return
        key = self.body().get("alarm")
        floor = self.app.floor
        alarm = next((a for a in floor.alarms() if a["key"] == key), None)
        if alarm is None:
            self.reply(404, {"ok": False, "error": "no such alarm now (it may have ended)"})
            return
        loop = asyncio.get_running_loop()
        ack = await loop.run_in_executor(floor.db, floor.store.acknowledge, alarm, who)
        floor.acks[alarm["key"]] = ack
        self.reply(200, {"ok": True, "ack": ack})


class FloorSocket(tornado.websocket.WebSocketHandler):
    app: FloorApp

    def initialize(self, app: FloorApp) -> None:
        self.app = app

    def open(self, *args: str, **kwargs: str) -> None:
        self.app.sockets.add(self)
        self.write_message(json.dumps(self.app.floor.full(), separators=(",", ":")))

    def on_message(self, message: str | bytes) -> None:
        pass  # the feed only speaks

    def on_close(self) -> None:
        self.app.sockets.discard(self)


def make_app(app: FloorApp) -> tornado.web.Application:
    kw = {"app": app}
    return tornado.web.Application(
        [
            (r"/", Index, kw),
            (r"/ws", FloorSocket, kw),
            (r"/api/floor", FloorState, kw),
            (r"/api/shift(\.csv)?", Shift, kw),
            (r"/api/trends", Trends, kw),
            (r"/api/login", Login, kw),
            (r"/api/logout", Logout, kw),
            (r"/api/me", Me, kw),
            (r"/api/ack", Ack, kw),
        ],
        static_path=str(STATIC),
        xsrf_cookies=True,
        websocket_ping_interval=20,
    )


def tls_context(cfg: FloorConfig) -> ssl.SSLContext | None:
    if cfg.tls_cert is None or cfg.tls_key is None:
        return None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cfg.tls_cert), str(cfg.tls_key))
    return ctx


class ServeError(Exception):
    """The page cannot serve; the text says why."""


def serve(
    cfg: FloorConfig,
    dsn: str,
    servers: list[str],
    connect_options: Mapping[str, Any] | None = None,
    say: Any = print,
    keys: Keyring | None = None,
) -> int:
    """Serve until SIGTERM or SIGINT; the exit code. ``keys``: the tables' link keys (a live
    entry is shown with its table's MAC only; without them, what central ingest stored)."""
    ctx = tls_context(cfg)
    if ctx is None and not cfg.loopback:
        raise ServeError(
            f"floor.host {cfg.host} is not loopback: set floor.tls_cert and floor.tls_key "
            "(the page serves other machines only over TLS)"
        )
    return asyncio.run(_serve(cfg, dsn, servers, dict(connect_options or {}), ctx, say, keys))


async def _serve(
    cfg: FloorConfig,
    dsn: str,
    servers: list[str],
    options: dict[str, Any],
    ctx: ssl.SSLContext | None,
    say: Any,
    keys: Keyring | None = None,
) -> int:
    floor = Floor(cfg, FloorStore(dsn), servers=servers, connect_options=options, keys=keys)
    await floor.start()
    app = FloorApp(cfg, floor, dsn)
    loop = asyncio.get_running_loop()
    book_rows = await loop.run_in_executor(floor.db, floor.store.refusal_history)
    app.book.replay(book_rows, loop.time(), wall_ms())
    sockets = tornado.netutil.bind_sockets(cfg.port, cfg.host)
    server = tornado.httpserver.HTTPServer(make_app(app), ssl_options=ctx)
    server.add_sockets(sockets)
    port = int(sockets[0].getsockname()[1])
    host = f"[{cfg.host}]" if ":" in cfg.host else cfg.host
    say(f"floor page: {'https' if ctx else 'http'}://{host}:{port}/", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.stop()
    for sock in list(app.sockets):
        sock.close()
    await floor.stop()
    app.reports.shutdown(wait=False)
    return 0
