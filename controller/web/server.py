"""The page's server: Tornado on its own thread and its own event loop, and the feed beside it.

Responsible for binding the listening socket in `WebServer.start` (so a port in use is an
OSError there, before anything runs), running the loop on the ``page`` thread, starting the feed
(`controller.web.feed.Feed`) whose frames are handed to the loop with ``add_callback`` (the
only call into the loop from another thread), and stopping all of it. Must never touch the round
machine or the journal for writing; the owner is only read (`PublicSnapshot`) and posted to.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import tornado.httpserver
import tornado.netutil
from tornado.ioloop import IOLoop

from controller.supervisor.gate import PinGate
from controller.supervisor.lockout import LockoutBook, release_book, shared_book
from controller.web.auth import Sessions
from controller.web.feed import Feed, Hub
from controller.web.manager import routes as manager_routes
from controller.web.routes import Page, make_app
from controller.web.training import frame_extra
from controller.web.training import routes as training_routes
from controller.web.verify import routes as verify_routes
from controller.web.web_config import WebSection

log = logging.getLogger(__name__)


class WebServer:
    """The page of one table. ``inputs``: the simulated table's MockPins (clicks drive them);
    None on the Pi (the page only shows, and signed-in supervisors act)."""

    def __init__(
        self,
        owner: Any,
        journal_path: Path,
        supervisors: Mapping[str, Any],
        section: WebSection,
        *,
        port: int | None = None,
        inputs: Any = None,
        mode: str = "pit",
        way: Any = None,
        ranking: Any = None,
        extra: Callable[[], dict[str, Any]] | None = None,
        training: Any = None,
    ) -> None:
        self.section = section
        self.host = section.host
        self.port = section.port if port is None else port
        self._owner = owner
        self._journal_path = Path(journal_path)
        self.hub = Hub()
        # the sign-in's PIN gate is the console's, counted in the table's one wrong-PIN book
        # (shared with the console, rebuilt from the journal: the limits survive a restart)
        self._book: LockoutBook | None = shared_book(self._journal_path)
        gate = PinGate(owner, supervisors, self._book)
        self.page = Page(
            owner=owner,
            journal_path=self._journal_path,
            section=section,
            hub=self.hub,
            sessions=Sessions(section.session_minutes),
            gate=gate,
            inputs=inputs,
            mode=mode,
            training=training,
        )
        if training is not None:  # every frame says TRAINING and who plays
            extra = frame_extra(training, extra)
        self.feed = Feed(
            owner, self._deliver, mode=mode, way=way, ranking=ranking, extra=extra
        )  # fmt: skip
        self.page.latest = lambda: self.feed.latest
        self._loop: IOLoop | None = None
        self._thread: threading.Thread | None = None
        self._sockets: list[socket.socket] = []
        self._server: tornado.httpserver.HTTPServer | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def start(self) -> None:
        """Bind (OSError when the address is in use), start the loop thread, then the feed."""
        try:
            self._sockets = tornado.netutil.bind_sockets(self.port, self.host)
        except BaseException:
            self._release_book()
            raise
        self.port = int(self._sockets[0].getsockname()[1])
        self._thread = threading.Thread(target=self._run, name="page", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise OSError("the page's event loop did not start")
        try:
            self.feed.start()
        except Exception as exc:
            self.stop()
            raise OSError(f"the page could not read the journal: {exc}") from exc

    def _run(self) -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())
        loop = IOLoop.current()
        self._loop = loop
        extra: list[Any] = [*verify_routes(self.page), *manager_routes(self.page)]
        if self.page.training is not None:  # the simulated table's trainer: roles, faults, drills
            extra += training_routes(self.page)
        server = tornado.httpserver.HTTPServer(make_app(self.page, extra), xheaders=False)
        server.add_sockets(self._sockets)
        self._server = server
        self._ready.set()
        try:
            loop.start()
        finally:
            loop.close(all_fds=True)

    def _deliver(self, seq: int, text: str) -> None:
        loop = self._loop
        if loop is not None:
            loop.add_callback(self.hub.publish, seq, text)

    def stop(self) -> None:
        self.feed.stop()
        loop = self._loop
        if loop is not None:

            def halt() -> None:
                if self._server is not None:
                    self._server.stop()
                loop.stop()

            loop.add_callback(halt)
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        self._loop = None
        self.page.gate_pool.shutdown(wait=False)
        self.page.post_pool.shutdown(wait=False)
        self._release_book()

    def _release_book(self) -> None:
        if self._book is not None:
            release_book(self._book)
            self._book = None
