"""Input filters of the GPIO devices: the quiet-gap debounce, the stable-for-N-ms glitch filter,
and the timers the glitch filter confirms on.

Responsible for deciding, from edges and an injected clock, whether an activation is a press: a
glitch (an ESD spike on a long cable, a bounce) must never become a journaled press. Must never
block the callback thread (lgpio runs every pin's callback on one thread): a confirmation that
has to wait is handed to a :class:`Timers` (one background thread for all inputs, or
:class:`ManualTimers` in tests), never slept.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable
from typing import Protocol

Clock = Callable[[], float]


class QuietGapFilter:
    """Accepts an activation only if the line has been quiet (no edge at all) for ``window``
    seconds before it. Bounce on press and on release both fall inside the window."""

    def __init__(self, window: float, clock: Clock) -> None:
        self._window = window
        self._clock = clock
        self._last_edge = -math.inf
        self._lock = threading.Lock()

    def activation(self) -> bool:
        """Record an activating edge; True if it starts a new press."""
        with self._lock:
            now = self._clock()
            accepted = now - self._last_edge >= self._window
            self._last_edge = now
            return accepted

    def deactivation(self) -> None:
        """Record a releasing edge (it restarts the quiet gap)."""
        with self._lock:
            self._last_edge = self._clock()


class Timers(Protocol):
    """Calls ``fn`` once the injected clock reaches ``when`` (unless the handle is cancelled)."""

    def call_at(self, when: float, fn: Callable[[], None]) -> Cancel: ...

    def close(self) -> None: ...


Cancel = Callable[[], None]


class TimerThread:
    """One daemon thread running due callbacks in deadline order (the real :class:`Timers`).

    The deadlines are read on ``clock`` (the same clock the filters use); the thread waits on
    the difference, so a step of a manual clock is seen at the next wake-up. A callback that
    raises is reported to ``on_error`` and the thread goes on."""

    def __init__(
        self,
        clock: Clock = time.monotonic,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._clock = clock
        self._on_error = on_error
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._ids = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="gpio-filter-timers", daemon=True)
        self._thread.start()

    def call_at(self, when: float, fn: Callable[[], None]) -> Cancel:
        with self._cond:
            ident = next(self._ids)
            heapq.heappush(self._heap, (when, ident, fn))
            self._cond.notify_all()

        def cancel() -> None:
            with self._cond:
                self._cancelled.add(ident)

        return cancel

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed:
                    if not self._heap:
                        self._cond.wait()
                        continue
                    when, ident, fn = self._heap[0]
                    if ident in self._cancelled:
                        heapq.heappop(self._heap)
                        self._cancelled.discard(ident)
                        continue
                    delay = when - self._clock()
                    if delay <= 0:
                        heapq.heappop(self._heap)
                        break
                    self._cond.wait(min(delay, 0.05))
                else:
                    return
            try:
                fn()
            except BaseException as exc:  # the filter thread must outlive a bad callback
                if self._on_error is not None:
                    self._on_error(exc)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)


class ManualTimers:
    """:class:`Timers` for tests: nothing runs until :meth:`run_due` (after the test's clock
    moved)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._pending: list[tuple[float, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def call_at(self, when: float, fn: Callable[[], None]) -> Cancel:
        with self._lock:
            ident = next(self._ids)
            heapq.heappush(self._pending, (when, ident, fn))

        def cancel() -> None:
            with self._lock:
                self._cancelled.add(ident)

        return cancel

    def run_due(self) -> int:
        """Run every callback whose time has come on the clock; returns how many ran."""
        ran = 0
        while True:
            with self._lock:
                if not self._pending or self._pending[0][0] > self._clock():
                    return ran
                _, ident, fn = heapq.heappop(self._pending)
                if ident in self._cancelled:
                    self._cancelled.discard(ident)
                    continue
            fn()
            ran += 1

    def close(self) -> None:
        with self._lock:
            self._pending.clear()


class StableFilter:
    """Stable-for-``window``-seconds: an activation counts only once the line has stayed active
    for the whole window (a release inside it cancels the activation, so a spike or a bounce
    shorter than the window is dropped). ``window`` 0 passes every activation through at once.

    ``is_active`` reads the line when the window ends (the level, not only the edges, must still
    be active). ``confirmed`` runs on the timers' thread (or at once for window 0)."""

    def __init__(
        self,
        window: float,
        clock: Clock,
        timers: Timers | None,
        is_active: Callable[[], bool],
        confirmed: Callable[[], None],
    ) -> None:
        if window > 0 and timers is None:
            raise ValueError("a glitch filter with a window needs timers")
        self._window = window
        self._clock = clock
        self._timers = timers
        self._is_active = is_active
        self._confirmed = confirmed
        self._cancel: Cancel | None = None
        self._generation: object = None
        self._pressed = False
        self._lock = threading.Lock()
        self.dropped = 0  # activations that did not last the window (glitches)

    def activation(self) -> None:
        if self._window <= 0 or self._timers is None:
            with self._lock:
                self._pressed = True
            self._confirmed()
            return
        with self._lock:
            if self._cancel is not None:
                self._cancel()
            generation = object()
            self._generation = generation
            self._cancel = self._timers.call_at(
                self._clock() + self._window, lambda: self._check(generation)
            )

    def deactivation(self) -> bool:
        """A release: an activation still inside its window was a glitch (False); True when it
        ends a press that counted (the quiet gap then restarts)."""
        with self._lock:
            if self._cancel is not None:
                self._cancel()
                self._cancel = None
                self.dropped += 1
                return False
            pressed, self._pressed = self._pressed, False
            return pressed

    def _check(self, generation: object) -> None:
        with self._lock:
            if self._cancel is None or generation is not self._generation:
                return
            self._cancel = None
        if self._is_active():
            with self._lock:
                self._pressed = True
            self._confirmed()
        else:
            with self._lock:
                self.dropped += 1
