"""The serial devices' configuration: ``[serial.shoe]`` and ``[serial.shuffler]`` (the port, the
link timing, the answer timeouts, the line-noise limit), read with `fsm.configread`.

Responsible only for reading and checking those sections; kept apart from the ports, the links and
the adapters (pyserial, the round's events) so that reading a configuration file
(``tablectl config check``) imports none of them. Must never open a port.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Self

from drivers.serial.noise import NoiseConfig
from fsm.configread import MAX_SECONDS, Reader

#: pyserial's ``Serial.BAUDRATES`` (tests/test_serial_adapters.py keeps them equal), the standard
#: rates a port may be opened at, without importing pyserial to read a configuration.
BAUDRATES: tuple[int, ...] = (
    50, 75, 110, 134, 150, 200, 300, 600, 1200, 1800, 2400, 4800, 9600, 19200, 38400, 57600,
    115200, 230400, 460800, 500000, 576000, 921600, 1000000, 1152000, 1500000, 2000000, 2500000,
    3000000, 3500000, 4000000,
)  # fmt: skip


@dataclass(frozen=True)
class PortConfig:
    """Where and how to open one device's port (seconds for all times)."""

    path: str
    baudrate: int = 115200
    write_timeout: float = 0.5
    read_tick: float = 0.02
    backoff_initial: float = 0.1
    backoff_max: float = 5.0

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str) -> PortConfig:
        keys = ("path", "baudrate", "write_timeout", "read_tick", "backoff_initial", "backoff_max")
        r = Reader(data, where, keys)
        path = r.string("path", what="a device path such as /dev/paigow-shoe")
        baud = r.raw("baudrate", 115200)
        if isinstance(baud, bool) or baud not in BAUDRATES:
            raise r.error("baudrate", f"{baud!r} is not a standard baud rate")
        assert isinstance(baud, int)
        times = {
            key: r.seconds(key, default)
            for key, default in (
                ("write_timeout", 0.5),
                ("read_tick", 0.02),
                ("backoff_initial", 0.1),
                ("backoff_max", 5.0),
            )
        }
        if times["backoff_max"] < times["backoff_initial"]:
            raise r.error("backoff_max", "must be at least backoff_initial")
        return cls(path=path, baudrate=baud, **times)


@dataclass(frozen=True)
class LinkConfig:
    """Timing of one link, in seconds. ``None`` disables the heartbeat / silence detection."""

    ack_timeout: float = 0.2
    max_retries: int = 3
    heartbeat_interval: float | None = 1.0
    silence_timeout: float | None = 3.0
    idle_flush: float = 0.05
    nak_holdoff: float = 0.02
    queue_limit: int = 16

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str) -> LinkConfig:
        keys = (
            "ack_timeout", "max_retries", "heartbeat_interval", "silence_timeout", "idle_flush",
            "nak_holdoff", "queue_limit",
        )  # fmt: skip
        r = Reader(data, where, keys)
        d = cls()
        heartbeat = r.number("heartbeat_interval", 1.0, 0.001, MAX_SECONDS, unit="seconds")
        silence = r.number("silence_timeout", 3.0, 0.001, MAX_SECONDS, unit="seconds")
        cfg = cls(
            ack_timeout=r.number("ack_timeout", d.ack_timeout, 0.001, MAX_SECONDS, unit="seconds"),
            max_retries=r.integer("max_retries", d.max_retries, 0, 20),
            heartbeat_interval=heartbeat,
            silence_timeout=silence,
            idle_flush=r.number("idle_flush", d.idle_flush, 0.0, MAX_SECONDS, unit="seconds"),
            nak_holdoff=r.number("nak_holdoff", d.nak_holdoff, 0.0, MAX_SECONDS, unit="seconds"),
            queue_limit=r.integer("queue_limit", d.queue_limit, 1, 1000),
        )
        if silence <= heartbeat:
            raise r.error(
                "silence_timeout", f"{silence} must exceed heartbeat_interval {heartbeat}"
            )
        return cfg


@dataclass(frozen=True)
class DeviceConfig:
    """What the shoe's and the shuffler's sections share: the port, the link timing, the status
    answer timeout and the answer timeout of the device's own command (``ANSWER``: the key and
    its default, e.g. ``dispense_timeout`` 30 s), all in seconds. A subclass names its device,
    its default port and its command; ``from_mapping`` reads every key with `fsm.configread`."""

    DEVICE: ClassVar[str] = "device"
    DEFAULT_PATH: ClassVar[str] = "/dev/paigow-device"
    ANSWER: ClassVar[tuple[str, float]] = ("answer_timeout", 1.0)

    port: PortConfig = field(default_factory=lambda: PortConfig("/dev/paigow-device"))
    link: LinkConfig = field(default_factory=LinkConfig)
    status_timeout: float = 1.0
    noise: NoiseConfig = field(default_factory=NoiseConfig)

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str) -> Self:
        """``[serial.<device>]`` without its ``model`` (the controller picks the adapter)."""
        answer, default = cls.ANSWER
        r = Reader(data, where, ("port", "link", "status_timeout", answer, *NoiseConfig.KEYS))
        port = dict(r.mapping("port"))
        port.setdefault("path", cls.DEFAULT_PATH)
        return cls(
            port=PortConfig.from_mapping(port, r.path("port")),
            link=LinkConfig.from_mapping(r.mapping("link"), r.path("link")),
            status_timeout=r.seconds("status_timeout", 1.0),
            noise=NoiseConfig.read(r),
            **{answer: r.seconds(answer, default)},
        )

    def answer_timeouts(self) -> dict[str, float]:
        """Request kind -> seconds to wait for its answer (``status`` and the device's command)."""
        answer = self.ANSWER[0]
        return {
            "status": self.status_timeout,
            answer.removesuffix("_timeout"): getattr(self, answer),
        }


@dataclass(frozen=True)
class ShoeConfig(DeviceConfig):
    """``[serial.shoe]``: the port, the link timing and the answer timeouts (seconds); the keys
    and their reading are `DeviceConfig`'s, shared with the shuffler."""

    DEVICE: ClassVar[str] = "shoe"
    DEFAULT_PATH: ClassVar[str] = "/dev/paigow-shoe"
    ANSWER: ClassVar[tuple[str, float]] = ("dispense_timeout", 30.0)

    port: PortConfig = field(default_factory=lambda: PortConfig("/dev/paigow-shoe"))
    dispense_timeout: float = 30.0


@dataclass(frozen=True)
class ShufflerConfig(DeviceConfig):
    """``[serial.shuffler]``: the port, the link timing and the answer timeouts (seconds); the keys
    and their reading are `DeviceConfig`'s, shared with the shoe."""

    DEVICE: ClassVar[str] = "shuffler"
    DEFAULT_PATH: ClassVar[str] = "/dev/paigow-shuffler"
    ANSWER: ClassVar[tuple[str, float]] = ("shuffle_timeout", 90.0)

    port: PortConfig = field(default_factory=lambda: PortConfig("/dev/paigow-shuffler"))
    shuffle_timeout: float = 90.0
