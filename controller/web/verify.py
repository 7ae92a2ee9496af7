"""The page's on-demand software verification: ``POST /api/verify-software {"seed": HEX}`` by a
signed-in supervisor (docs/software-verification.md, docs/web.md).

Responsible for one route: the digest (`controller.lab.software.request`, HMAC-SHA1 keyed by the
seed over every approved file) computed off the page's event loop, journaled as a
``software_verified`` entry in the supervisor's name (``via`` web) before it is answered. Must
never answer a digest that was not journaled, nor answer anyone not signed in.
"""

from __future__ import annotations

from typing import Any

from tornado.ioloop import IOLoop

from controller.lab.software import VerifyError, parse_seed
from controller.lab.software import request as verification
from controller.web.routes import BaseHandler, wait_receipt


class VerifySoftwareHandler(BaseHandler):
    async def post(self) -> None:
        supervisor = self.supervisor()
        if supervisor is None:
            self.reply(401, {"ok": False, "error": "sign in with your supervisor id and PIN"})
            return
        seed = self.body().get("seed")
        if not isinstance(seed, str):
            self.reply(400, {"ok": False, "error": "seed: 1-64 bytes in hex, as a string"})
            return
        try:
            parse_seed("hmac-sha1", seed)
        except VerifyError as exc:
            self.reply(400, {"ok": False, "error": str(exc)})
            return
        loop = IOLoop.current()
        record, answer = await loop.run_in_executor(
            self.page.post_pool, verification, "hmac-sha1", seed, supervisor, "web"
        )
        receipt = self.page.owner.post_tracked(record.envelope())
        committed = await loop.run_in_executor(self.page.post_pool, wait_receipt, receipt)
        if not committed or receipt.seq is None:
            self.reply(503, {"ok": False, "error": receipt.error or "not journaled in time"})
            return
        status = 200 if answer.get("ok") else 409
        self.reply(status, {**answer, "seq": receipt.seq, "by": supervisor})


def routes(page: Any) -> list[Any]:
    """The verification's route, for `controller.web.routes.make_app`'s ``extra``."""
    return [(r"/api/verify-software", VerifySoftwareHandler, {"page": page})]
