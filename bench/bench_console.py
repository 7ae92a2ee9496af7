"""Benchmark of the supervisor console, against baselines measured in the same run: an
authenticated request (``light-test`` in maintenance: socket, JSON, scrypt PIN check, the owner's
commit, the reply) against its two unavoidable parts done directly (one scrypt check plus one
event posted to the owner with ``post_tracked`` and waited for); and ``status`` requests per
second over the socket (no PIN, no commit). Writes only temporary files."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from controller.config import SIMULATED_TABLE, check_pin, load_config
from controller.console.server import ConsoleServer, request_line, send_request
from controller.service.owner import Owner
from fsm.round.effects import Effect
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

N_STATUS = 300
N_AUTH = 20


class _NoDevices:
    def apply(self, effect: Effect) -> None:
        pass

    def safe_state(self, glyph: str = " ") -> None:
        pass

    def close(self) -> None:
        pass


def _per_s(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def run() -> dict[str, float | int | str]:
    config = load_config(SIMULATED_TABLE)
    game = config.game

    def make_machine(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    with tempfile.TemporaryDirectory(prefix="pgb-") as tmp:
        owner = Owner(
            Path(tmp) / "j.db", make_machine, _NoDevices(), software_hash=lambda: "0" * 64
        )
        owner.start()
        sock = Path(tmp) / "c.sock"
        server = ConsoleServer(owner, config.supervisors, sock)
        server.start()
        try:
            status = request_line("status", [], None, None)
            t0 = time.perf_counter()
            for _ in range(N_STATUS):
                send_request(sock, status, 30)
            status_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            for _ in range(N_STATUS):
                owner.post_tracked(Event("supervisor_key", {"on": False})).wait(30)
            post_s = time.perf_counter() - t0
            send_request(sock, request_line("maintenance", ["enter"], "trainer", "1234"), 30)
            light = request_line("light-test", [], "trainer", "1234")
            t0 = time.perf_counter()
            for _ in range(N_AUTH):
                reply = send_request(sock, light, 30)
                if not reply.get("ok"):
                    return {"console_bench_error": str(reply.get("error"))}
            auth_s = time.perf_counter() - t0
        finally:
            server.stop()
            owner.stop()
    stored = config.supervisors["trainer"].pin_hash
    t0 = time.perf_counter()
    for _ in range(N_AUTH):
        check_pin(stored, "1234")
    scrypt_s = time.perf_counter() - t0
    return {
        "console_status_per_s": round(_per_s(N_STATUS, status_s), 1),
        "console_authenticated_request_ms": round(1000 * auth_s / N_AUTH, 2),
        "console_scrypt_check_ms": round(1000 * scrypt_s / N_AUTH, 2),
        "console_owner_post_commit_ms": round(1000 * post_s / N_STATUS, 3),
        # (scrypt + post) / console request: 1.0 = the console adds nothing of its own
        "console_request_vs_scrypt_plus_commit": round(
            (scrypt_s / N_AUTH + post_s / N_STATUS) / (auth_s / N_AUTH), 3
        ),
    }


if __name__ == "__main__":
    print(run())
