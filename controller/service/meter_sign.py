"""The progressive meter sign's reader: the owner's published snapshot -> the sign.

Responsible for showing, on the sign (``drivers.gpio.interfaces.MeterSign``), each level's
displayed amount from ``PublicSnapshot.meters`` and, while a hit is pending or being paid
(``state`` Open_JackpotPending, ``view.round.pending``), "WIN" and the areas on that level, in
turn with what each of those hits pays (``pays_cents``, the round's own figure) (NY
5324.41(a)(4) with 5324.2(l); PA 605a.7(1); table-rules.md: the win shown within 30 seconds). It
runs on its own thread, woken by every publication (a contribution, a payout, a reset), and
turns the page when there are more levels than modules. Must never read anything but the
published snapshot (not the round machine, not the journal), never post an event, and never show
a level's reserve (hidden) or overflow amount: only ``display_cents`` reaches the sign.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from drivers.gpio.interfaces import MeterSign
from drivers.gpio.sign import SignLevel, sign_texts
from fsm.round.states import JACKPOT_PENDING

log = logging.getLogger(__name__)

#: Seconds each page shows when there are more levels than modules.
PAGE_S = 4.0


class Published(Protocol):
    """What the reader needs of ``controller.service.owner.Owner``."""

    @property
    def public(self) -> Any: ...

    def wait_published(self, after_seq: int, timeout: float | None = None) -> Any: ...


def sign_levels(snapshot: Any) -> list[SignLevel]:
    """The levels as the sign shows them, from a ``PublicSnapshot``: the displayed amount of
    each level (in the meters' order) and, in Open_JackpotPending, the areas of its pending
    hits."""
    meters: Mapping[str, Any] = snapshot.meters or {}
    wins: dict[str, list[int]] = {}
    amounts: dict[str, list[int]] = {}
    if snapshot.state == JACKPOT_PENDING:
        round_view = (snapshot.view or {}).get("round") or {}
        for hit in round_view.get("pending") or ():
            level, position = hit.get("level"), hit.get("position")
            if isinstance(level, str) and isinstance(position, int):
                wins.setdefault(level, []).append(position)
                pays = hit.get("pays_cents")  # what it pays at the meter as it stands
                if isinstance(pays, int) and not isinstance(pays, bool) and pays >= 0:
                    amounts.setdefault(level, []).append(pays)
    out = []
    for name, meter in meters.items():
        cents = meter.get("display_cents", 0) if isinstance(meter, Mapping) else 0
        key = str(name)
        out.append(
            SignLevel(
                key,
                max(0, int(cents)),
                tuple(wins.get(key, ())),
                tuple(amounts.get(key, ())),
            )
        )
    return out


class SignReader:
    """Keeps ``sign`` in step with ``owner``'s publications on a daemon thread."""

    def __init__(
        self,
        owner: Published,
        sign: MeterSign,
        *,
        page_s: float = PAGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._owner = owner
        self._sign = sign
        self._page_s = page_s
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown: tuple[str, ...] | None = None
        self.updates = 0
        self.last_error: str | None = None

    def refresh(self, snapshot: Any) -> bool:
        """Show ``snapshot`` now (on the caller's thread); True if the sign changed."""
        page = int(self._clock() // self._page_s) if self._page_s > 0 else 0
        texts = sign_texts(sign_levels(snapshot), self._sign.modules, page)
        if texts == self._shown:
            return False
        self._sign.show(texts)
        self._shown = texts
        self.updates += 1
        return True

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="meter-sign", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        seq = -1
        while not self._stop.is_set():
            snapshot = self._owner.wait_published(seq, timeout=min(self._page_s, 1.0) or 1.0)
            if self._stop.is_set():
                break
            try:
                self.refresh(snapshot)
                self.last_error = None
            except Exception as exc:  # a sign that fails must not stop the reader
                if self.last_error is None:
                    log.exception("meter sign update failed")
                self.last_error = f"{type(exc).__name__}: {exc}"
            if snapshot.seq == seq:  # nothing new (timeout, or a stopped owner): don't spin
                self._stop.wait(0.05)
            seq = snapshot.seq

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
