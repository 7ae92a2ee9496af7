"""A million bad frames on the shoe, shuffler and SAS links (issue 12, `make stress`).

The shoe and shuffler: the controller's real `Link` and real adapter (`ReferenceShoe`,
`ReferenceShuffler`) behind an in-memory transport (no port, no thread, the caller's clock), fed
by a device-side `Link`. Three kinds of frame:

- garbage: random bytes without the start-of-frame byte, a valid frame with one byte changed
  (CRC-16 catches every single-byte error), a valid frame cut short: nothing is delivered,
  nothing is posted, the adapter's status does not change;
- hostile messages with a valid CRC: random types and payloads, well framed: the adapter never
  raises and posts nothing but `fault_raised` (a protocol error is a journaled fault, never a
  crash) or the events its protocol defines.

SAS: the gaming-machine link of `drivers.sas.sas_link` with the mutations of tests/test_sas_link.py
(a valid poll with a flipped bit; random bytes that cannot start a message): no exception, no
poll delivered, nothing sent but NACKs, the link's state unchanged; and random bytes of every kind
(no exception). Pure computation: no I/O, no sleep.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from drivers.sas.sas_link import BadFrame, SasLink
from drivers.serial import protocol
from drivers.serial.frame import SOF, encode_frame
from drivers.serial.noise import NoiseConfig
from drivers.serial.serial_link import Delivered, Link, LinkConfig
from drivers.serial.shoe import ReferenceShoe, ShoeConfig
from drivers.serial.shuffler import ReferenceShuffler, ShufflerConfig
from fsm.round.events import Event
from tests.test_sas_link import _mutations, _state, answering

QUIET = LinkConfig(ack_timeout=0.05, max_retries=3, heartbeat_interval=None, silence_timeout=None)
#: What an adapter may post from a well-framed hostile message.
ALLOWED_POSTS = {"fault_raised", "device_recovered", "dealt", "shuffle_complete"}


class StressFailure(AssertionError):
    pass


class MemTransport:
    """The adapter's transport: the real link, driven by the caller (no port, no thread)."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.listener: Any = None
        self.now = 0.0

    def set_listener(self, listener: Any) -> None:
        self.listener = listener

    def send(self, msg_type: int, payload: bytes) -> int:
        return self.link.send(msg_type, payload, self.now)

    def start(self) -> None:
        self.link.start(self.now)

    def stop(self) -> None:
        pass

    def status(self) -> dict[str, object]:
        return dict(self.link.counters())

    def feed(self, data: bytes) -> list[Any]:
        """Bytes from the device; returns the link events handed to the adapter."""
        self.link.receive(data, self.now)
        self.link.poll(self.now)
        events = self.link.take_events()
        for event in events:
            self.listener.on_link_event(event, self.now)
        self.listener.on_tick(self.now)
        return events


@dataclass
class FuzzResult:
    frames: int = 0
    by_link: Counter[str] = field(default_factory=Counter)
    posted: Counter[str] = field(default_factory=Counter)


def _device_pair(
    make: Callable[[MemTransport, Callable[[Event], None]], Any],
) -> tuple[Any, MemTransport, Link, list[Event]]:
    posted: list[Event] = []
    ours = MemTransport(Link(QUIET, session=1))
    adapter = make(ours, posted.append)
    peer = Link(QUIET, session=2)
    adapter.start()
    peer.start(0.0)
    for _ in range(10):  # the handshake
        ours.feed(peer.take_output())
        peer.receive(ours.link.take_output(), ours.now)
        peer.take_events()
    posted.clear()
    return adapter, ours, peer, posted


def _valid_frame(peer: Link, rng: random.Random, now: float) -> bytes:
    msg_type = rng.choice([protocol.STATUS_RSP, protocol.SHUFFLE_RSP, protocol.DISPENSE_RSP])
    peer.send(msg_type, rng.randbytes(rng.randrange(0, 24)), now)
    return peer.take_output()


def fuzz_device(name: str, frames: int, seed: int, result: FuzzResult) -> None:
    """``frames`` bad frames on the shoe's or shuffler's link (``name``)."""
    rng = random.Random(seed)
    # every frame here is garbage on purpose: the line-noise *rate* (LINE_NOISE past
    # noise_limit in noise_window, drivers/serial/noise.py; tests/test_line_noise.py) would
    # rightly fire; what is fuzzed is that no single bad frame acts, so the limit is lifted
    quiet = NoiseConfig(limit=1_000_000)
    if name == "shoe":
        adapter, ours, peer, posted = _device_pair(
            lambda t, p: ReferenceShoe(
                t, p, replace(ShoeConfig(), noise=quiet), clock=lambda: t.now
            )
        )
    else:
        adapter, ours, peer, posted = _device_pair(
            lambda t, p: ReferenceShuffler(
                t, p, replace(ShufflerConfig(), noise=quiet), clock=lambda: t.now
            )
        )
    no_sof = bytes(b for b in range(256) if b != SOF)
    for i in range(frames):
        ours.now += 0.001
        roll = rng.random()
        if roll < 0.8:  # garbage: must change nothing
            before = adapter.status()
            if roll < 0.4:
                data = bytes(rng.choice(no_sof) for _ in range(rng.randrange(1, 40)))
            else:
                good = bytearray(
                    encode_frame(
                        rng.randrange(256),
                        rng.choice([protocol.STATUS_RSP, protocol.DISPENSE_RSP]),
                        rng.randbytes(rng.randrange(0, 24)),
                    )
                )
                if roll < 0.7:
                    j = rng.randrange(1, len(good))
                    good[j] = (good[j] + rng.randrange(1, 256)) % 256
                    data = bytes(good)
                else:
                    data = bytes(good[: rng.randrange(1, len(good))])
            try:
                events = ours.feed(data)
                ours.now += 0.1  # a quiet line: a frame cut short is dropped
                events += ours.feed(b"")
            except Exception as exc:
                raise StressFailure(f"{name} frame {i}: {data.hex()}: {exc!r}") from exc
            # a request's deadline passing is the clock's doing, not the garbage's
            posted[:] = [e for e in posted if e.data.get("code") != "RESPONSE_TIMEOUT"]
            if any(isinstance(e, Delivered) for e in events) or posted:
                raise StressFailure(f"{name} frame {i}: garbage {data.hex()} acted: {posted}")
            if adapter.status() != before:
                raise StressFailure(f"{name} frame {i}: garbage changed the adapter's status")
            ours.link.take_output()
        else:  # a well-framed hostile message: a fault at most, never an exception
            peer.receive(ours.link.take_output(), ours.now)
            peer.take_events()
            data = _valid_frame(peer, rng, ours.now)
            try:
                ours.feed(data)
                ours.now += 0.1
                ours.feed(b"")
            except Exception as exc:
                raise StressFailure(f"{name} frame {i}: {data.hex()}: raised {exc!r}") from exc
            for event in posted:
                if not isinstance(event, Event) or event.type not in ALLOWED_POSTS:
                    raise StressFailure(f"{name} frame {i}: posted {event!r}")
                result.posted[f"{name}:{event.type}"] += 1
            posted.clear()
            peer.receive(ours.link.take_output(), ours.now)
            peer.take_events()
        result.frames += 1
        result.by_link[name] += 1


def fuzz_sas(frames: int, seed: int, result: FuzzResult) -> None:
    """``frames`` bad frames on the SAS link (the harness of tests/test_sas_link.py)."""
    rng = random.Random(seed)
    link, before, t = _fresh_sas()
    for i in range(frames):
        if i % 200 == 199:  # within the link timeout: a fresh link that has seen one poll
            link, before, t = _fresh_sas()
        if rng.random() < 0.5:
            chunk = _mutations(rng)
        else:
            raw = rng.randbytes(rng.randrange(1, 40))
            chunk = bytes(b for b in raw if b not in (0, 1) and not b & 0x80) or b"\x55"
        try:
            link.receive(chunk, t)
            t += 0.02  # a gap between frames (longer than the inter-byte gap)
            link.poll(t)
        except Exception as exc:
            raise StressFailure(f"sas frame {i}: {chunk.hex()}: raised {exc!r}") from exc
        events = [e for e in link.take_events() if not isinstance(e, BadFrame)]
        if events:
            raise StressFailure(f"sas frame {i}: {chunk.hex()} delivered {events}")
        for tx in link.take_output():
            if tx.data != b"\x81":
                raise StressFailure(f"sas frame {i}: {chunk.hex()} answered {tx.data.hex()}")
        if _state(link) != before:
            raise StressFailure(f"sas frame {i}: {chunk.hex()} changed the link's state")
        result.frames += 1
        result.by_link["sas"] += 1
    # and any bytes at all, parity marks included: never an exception
    other = SasLink(1)
    other.start(0.0)
    for i in range(frames // 10):
        data = rng.randbytes(rng.randrange(1, 30))
        try:
            other.receive(data, 1.0 + i * 0.01)
            answering(other, 1.0 + i * 0.01, b"\x01")
            other.receive_marked([(b, rng.random() < 0.2) for b in data], 1.0 + i * 0.01)
            other.poll(1.0 + i * 0.01)
            other.take_output()
        except Exception as exc:
            raise StressFailure(f"sas random frame {i}: {data.hex()}: raised {exc!r}") from exc
        result.frames += 1
        result.by_link["sas-any"] += 1


def _fresh_sas() -> tuple[SasLink, tuple[object, ...], float]:
    link = SasLink(1)
    link.start(0.0)
    link.receive(b"\x81", 0.5)
    answering(link, 0.5, b"\x00")
    link.take_output()
    return link, _state(link), 1.0


def run(total: int, seed: int) -> FuzzResult:
    """``total`` frames: 35% shoe, 30% shuffler, the rest SAS (a tenth of those any bytes)."""
    result = FuzzResult()
    fuzz_device("shoe", total * 35 // 100, seed, result)
    fuzz_device("shuffler", total * 30 // 100, seed + 1, result)
    sas = total - result.frames
    fuzz_sas(sas * 10 // 11 + 1, seed + 2, result)
    return result


def main(argv: list[str]) -> int:
    """``python -m tests.stress.fuzz FRAMES SEED``: one JSON line with the counts."""
    import json

    result = run(int(argv[0]), int(argv[1]))
    print(json.dumps({"frames": result.frames, "by_link": result.by_link, "posted": result.posted}))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
