"""The JSON request handler both pages build on (the table's, controller/web/routes.py, and the
floor's, controller/central/server.py): the security headers, a bounded JSON body, JSON replies
and errors, and the signed-in supervisor from the session cookie.

Must never hold a page's own state: each page's handler says where its sessions are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import tornado.web

from controller.web.auth import COOKIE, Sessions

#: The largest request body either page reads (bytes).
MAX_BODY = 4096


class JsonHandler(tornado.web.RequestHandler):
    """Security headers, a bounded JSON object body, JSON replies and errors, the session."""

    def sessions(self) -> Sessions:
        raise NotImplementedError  # each page's handler names its sessions

    def set_default_headers(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header(
            "Content-Security-Policy",
            "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; "
            "style-src 'self'; script-src 'self'; frame-ancestors 'none'",
        )

    def supervisor(self) -> str | None:
        return self.sessions().get(self.get_cookie(COOKIE))

    def body(self) -> dict[str, Any]:
        if len(self.request.body) > MAX_BODY:
            raise tornado.web.HTTPError(413, reason="request too large")
        try:
            data = json.loads(self.request.body or b"{}")
        except ValueError:
            raise tornado.web.HTTPError(400, reason="not JSON") from None
        if not isinstance(data, dict):
            raise tornado.web.HTTPError(400, reason="a JSON object expected")
        return data

    def reply(self, status: int, data: Mapping[str, Any]) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(data, separators=(",", ":")))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"ok": False, "error": self._reason}))
