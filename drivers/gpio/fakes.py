"""Plain in-memory fakes of the table's GPIO devices, for core tests and the simulated table.

Each fake satisfies the same Protocol as its gpiozero twin (``drivers.gpio.interfaces``) and
posts the same events; instead of pins it has methods a test or the virtual table calls
(``drop_chip``, ``press``, ``shake`` ...). No bounce, no threads, no pins. Must never decide a
game rule: like the real devices, they only post events and remember what they were told to show.
"""

from __future__ import annotations

from collections.abc import Sequence

from drivers.gpio.config import ACCEPTOR_COUNT
from drivers.gpio.interfaces import GLYPHS, OFF, Glyph, LightState, Post
from drivers.gpio.sign import DIGITS_PER_MODULE, cells, draw
from fsm.round.events import Event


class _Armed:
    """Fakes post only when a test drives them, so arming them changes nothing."""

    armed = True

    def arm(self) -> None:
        self.armed = True


class FakeAcceptors(_Armed):
    def __init__(self, post: Post, count: int = ACCEPTOR_COUNT) -> None:
        self._post = post
        self._count = count
        self._lights: tuple[LightState, ...] = (OFF,) * count
        self.closed = False

    def drop_chip(self, position: int) -> None:
        """A chip drops into acceptor ``position`` (1..6)."""
        if isinstance(position, bool) or not 1 <= position <= self._count:
            raise ValueError(f"acceptor position {position!r}: expected 1..{self._count}")
        self._post(Event("chip_detected", {"position": position}))

    @property
    def lights(self) -> tuple[LightState, ...]:
        return self._lights

    def set_lights(self, states: Sequence[LightState]) -> None:
        if self.closed:
            raise RuntimeError("acceptor lights are closed")
        self._lights = tuple(states)

    def close(self) -> None:
        self.closed = True


class FakeLockoutButton(_Armed):
    def __init__(self, post: Post) -> None:
        self._post = post
        self.closed = False

    def press(self) -> None:
        self._post(Event("lockout_pressed"))

    @property
    def is_pressed(self) -> bool:
        return False  # a fake press is instantaneous

    def close(self) -> None:
        self.closed = True


class FakeDealerPanel(_Armed):
    def __init__(self, post: Post) -> None:
        self._post = post
        self._key = False
        self.closed = False

    def press_next(self) -> None:
        self._post(Event("panel_next"))

    def press_void(self) -> None:
        self._post(Event("panel_void"))

    def turn_key(self, on: bool) -> None:
        """Turn the supervisor key; like the switch, only a change of position is posted."""
        if on != self._key:
            self._key = on
            self._post(Event("supervisor_key", {"on": on}))

    @property
    def supervisor_key_on(self) -> bool:
        return self._key

    def close(self) -> None:
        self.closed = True


class FakeDiceShaker(_Armed):
    def __init__(self, post: Post, lid_fitted: bool = False) -> None:
        self._post = post
        self._count = 0
        self._lid: bool | None = False if lid_fitted else None
        self.closed = False

    def shake(self) -> None:
        self._count += 1
        self._post(Event("shake_detected", {"count": self._count}))

    def set_lid(self, lifted: bool) -> None:
        if self._lid is None:
            raise RuntimeError("this shaker has no lid sensor fitted")
        if lifted != self._lid:
            self._lid = lifted
            self._post(Event("shaker_lid", {"lifted": lifted}))

    @property
    def count(self) -> int:
        return self._count

    @property
    def lid_lifted(self) -> bool | None:
        return self._lid

    def reset(self) -> None:
        self._count = 0

    def close(self) -> None:
        self.closed = True


class FakeNumberDisplay:
    def __init__(self) -> None:
        self._glyph: Glyph = " "
        self.closed = False

    @property
    def glyph(self) -> Glyph:
        return self._glyph

    def show(self, glyph: Glyph) -> None:
        if glyph not in GLYPHS:
            raise ValueError(f"display glyph {glyph!r}: expected one of {', '.join(GLYPHS)}")
        self._glyph = glyph

    def close(self) -> None:
        self.closed = True


class FakeMeterSign:
    """The meter sign of the simulated table and the tests: remembers the texts (the page draws
    them, ``drawing`` gives the seven-segment picture) and how many updates it was sent."""

    def __init__(self, modules: int = 1) -> None:
        self._modules = modules
        self._texts: tuple[str, ...] = (" " * DIGITS_PER_MODULE,) * modules
        self.updates = 0
        self.closed = False

    @property
    def modules(self) -> int:
        return self._modules

    @property
    def texts(self) -> tuple[str, ...]:
        return self._texts

    def show(self, texts: Sequence[str]) -> None:
        if len(texts) != self._modules:
            raise ValueError(f"meter sign: {len(texts)} texts for {self._modules} modules")
        for text in texts:
            cells(text)
        self._texts = tuple(texts)
        self.updates += 1

    def drawing(self) -> list[str]:
        return [draw(cells(t)) for t in self._texts]

    def close(self) -> None:
        self.closed = True
