"""What every serial device adapter shares: request tags and response deadlines, supervision of
the link (silence, port loss, recovery) and the posting of fault events.

A subclass turns the device's messages into events; this base turns link trouble into
``fault_raised`` / ``device_recovered`` events. Adapters get ``post`` in their constructor and
never decide a game rule: the round machine decides what a fault means and when it clears.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from drivers.serial import faults, protocol
from drivers.serial.noise import NoiseConfig, NoiseRate, noise_total
from drivers.serial.port import Transport
from drivers.serial.serial_link import (
    Acked,
    Delivered,
    LinkEvent,
    PeerAlive,
    PeerSilent,
    PeerSynced,
    SendFailed,
)
from fsm.round.events import JSON, DeviceRecovered, Event, FaultRaised

Post = Callable[[Event], None]


@dataclass
class _Request:
    kind: str
    msg_type: int
    deadline: float
    args: tuple[int, ...] = ()


#: While the device holds a fault it reported (a jam), its status is asked this often (seconds).
HELD_POLL_S = 1.0
#: How often the line's noise counters are compared with its rate (seconds).
NOISE_CHECK_S = 0.05


class DeviceAdapter:
    """Base of the shoe and shuffler adapters (reference protocol)."""

    device = "device"

    def __init__(
        self,
        transport: Transport,
        post: Post,
        timeouts: Mapping[str, float],
        clock: Callable[[], float] = time.monotonic,
        noise: NoiseConfig | None = None,
    ) -> None:
        self._transport = transport
        self._post = post
        self._timeouts = dict(timeouts)
        self._clock = clock
        self._lock = threading.RLock()
        self._pending: dict[int, _Request] = {}
        self._handles: dict[int, int] = {}
        self._next_tag = 1
        self._comm_fault: str | None = None
        self._device_fault: str | None = None
        #: COMMAND_NOT_DELIVERED / RESPONSE_TIMEOUT posted and held: the device is healthy
        #: again only once a message of its own arrives (a status answer, say)
        self._unanswered: set[str] = set()
        self._last_poll = 0.0
        self._noise: NoiseRate | None = None  # made at the first tick (the port's counters)
        self._noise_config = noise or NoiseConfig()
        self._last_noise_check = 0.0
        self._contact = False
        self._state = "unknown"
        transport.set_listener(self)

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self._transport.start()

    def stop(self) -> None:
        self._transport.stop()

    def request_status(self) -> None:
        """Ask the device for a STATUS_RSP (the answer updates ``status()``)."""
        self._request("status", protocol.STATUS_REQ, protocol.encode_status_req)

    def _base_status(self) -> dict[str, JSON]:
        return {
            "device": self.device,
            "connected": self._contact and self._comm_fault is None,
            "state": self._state,
            "fault": self._comm_fault or self._device_fault,
        }

    # -- requests -----------------------------------------------------------------------------

    def _request(
        self,
        kind: str,
        msg_type: int,
        encode: Callable[[int], bytes],
        args: tuple[int, ...] = (),
    ) -> int:
        with self._lock:
            tag = self._next_tag
            self._next_tag = self._next_tag % 255 + 1
            self._pending[tag] = _Request(
                kind, msg_type, self._clock() + self._timeouts[kind], args
            )
            handle = self._transport.send(msg_type, encode(tag))
            self._handles[handle] = tag
        return tag

    def _take_request(self, tag: int, kind: str) -> _Request | None:
        with self._lock:
            req = self._pending.get(tag)
            if req is None or req.kind != kind:
                return None
            del self._pending[tag]
            return req

    # -- events -------------------------------------------------------------------------------

    def _fault(self, code: str, detail: str, *, held: bool = False) -> None:
        # held: a condition of the device, this adapter reports it healthy (device_recovered)
        self._post(FaultRaised(code=code, device=self.device, detail=detail, held=held).envelope())

    def _recovered(self, code: str) -> None:
        self._post(DeviceRecovered(device=self.device, code=code).envelope())

    def _unanswered_fault(self, code: str, detail: str, *, repeat: bool = True) -> None:
        """A command not delivered or not answered: held in the fault set until the device
        sends a message again (``_answered``). ``repeat`` False: not posted again while held
        (the adapter's own status polls)."""
        with self._lock:
            if not repeat and code in self._unanswered:
                return
            self._unanswered.add(code)
        self._fault(code, detail, held=True)

    def _answered(self) -> None:
        """A message from the device: it answers again, so its held not-delivered and
        not-answered faults leave the fault set."""
        with self._lock:
            if not self._unanswered:
                return
            codes, self._unanswered = sorted(self._unanswered), set()
        for code in codes:
            self._recovered(code)

    def _comm_lost(self, code: str, detail: str) -> None:
        with self._lock:
            if self._comm_fault is not None:
                return
            self._comm_fault = code
        self._fault(code, detail, held=True)  # recovered when the link answers again

    def _device_error(
        self, error: int, detail: str, *, sticky: bool = True, answers_command: bool = False
    ) -> None:
        """Post the fault for a device error. A sticky error (jam, misdeal, empty, hardware) is
        remembered until a status shows the device ready; a repeat of it in a status report or an
        unsolicited message is not posted again, but an error answering a command always is (the
        round must learn the outcome of every command)."""
        code = self.error_code(error)
        with self._lock:
            repeat = self._device_fault == code
            if sticky:
                self._device_fault = code
        if repeat and sticky and not answers_command:
            return
        self._fault(code, detail, held=sticky)  # sticky: recovered at a READY status

    def error_code(self, error: int) -> str:
        """Fault code for a protocol error byte (subclasses map JAM to their own code)."""
        return {
            protocol.ERR_BUSY: faults.DEVICE_BUSY,
            protocol.ERR_BAD_REQUEST: faults.DEVICE_REJECTED,
            protocol.ERR_HARDWARE: faults.DEVICE_HARDWARE,
        }.get(error, faults.DEVICE_HARDWARE)

    def _status_report(self, report: protocol.StatusReport) -> None:
        self._state = protocol.STATE_NAMES[report.state]
        if report.state == protocol.STATE_ERROR and report.error != protocol.ERR_NONE:
            name = protocol.ERROR_NAMES.get(report.error, f"0x{report.error:02X}")
            self._device_error(report.error, f"status reports {name}")
        elif report.state == protocol.STATE_READY:
            with self._lock:
                cleared, self._device_fault = self._device_fault, None
            if cleared is not None:
                self._recovered(cleared)

    # -- LinkListener -------------------------------------------------------------------------

    def on_link_event(self, event: LinkEvent, now: float) -> None:
        if isinstance(event, Delivered):
            name = protocol.NAMES.get(event.type, f"type 0x{event.type:02X}")
            self._answered()
            try:
                self._on_message(event.type, event.payload)
            except protocol.ProtocolError as exc:
                self._fault(faults.PROTOCOL_ERROR, str(exc))
            except (KeyError, ValueError) as exc:
                self._fault(faults.PROTOCOL_ERROR, f"{name}: {exc}")
        elif isinstance(event, Acked):
            with self._lock:
                self._handles.pop(event.handle, None)
        elif isinstance(event, SendFailed):
            with self._lock:
                tag = self._handles.pop(event.handle, None)
                req = self._pending.pop(tag, None) if tag is not None else None
            if req is not None and req.kind != "status":
                name = protocol.NAMES.get(req.msg_type, hex(req.msg_type))
                self._unanswered_fault(
                    faults.COMMAND_NOT_DELIVERED, f"{name} not delivered: {event.reason}"
                )
        elif isinstance(event, PeerSilent):
            self._comm_lost(faults.LINK_TIMEOUT, f"no answer for {event.silent_for:.1f} s")
        elif isinstance(event, PeerAlive):
            with self._lock:
                self._contact = True
                cleared, self._comm_fault = self._comm_fault, None
            if cleared is not None:
                self._recovered(cleared)
            self.request_status()
        elif isinstance(event, PeerSynced):
            self.request_status()

    def on_port_state(self, is_open: bool, detail: str, now: float) -> None:
        if not is_open:
            self._comm_lost(faults.PORT_LOST, detail)

    def on_tick(self, now: float) -> None:
        with self._lock:
            expired = [(t, r) for t, r in self._pending.items() if now >= r.deadline]
            for tag, _ in expired:
                del self._pending[tag]
            link_down = self._comm_fault is not None
            # a held device fault (or a held unanswered command) is polled once a second until
            # a status shows it cleared: nobody else asks, and the fault set waits on that answer
            poll = (
                (self._device_fault is not None or bool(self._unanswered))
                and not link_down
                and now - self._last_poll >= HELD_POLL_S
                and not any(r.kind == "status" for r in self._pending.values())
            )
            if poll:
                self._last_poll = now
        if poll:
            self.request_status()
        if now - self._last_noise_check >= NOISE_CHECK_S:
            self._last_noise_check = now
            self._check_noise(now)

        for _tag, req in expired:
            if req.kind == "status" and link_down:
                continue  # already reported as LINK_TIMEOUT / PORT_LOST
            name = protocol.NAMES.get(req.msg_type, hex(req.msg_type))
            self._unanswered_fault(
                faults.RESPONSE_TIMEOUT,
                f"no answer to {name} within {self._timeouts[req.kind]} s",
                repeat=req.kind != "status",  # the round learns of every command it sent
            )

    def _check_noise(self, now: float) -> None:
        """``LINE_NOISE`` when the line's damaged units exceed the configured rate (a stray
        byte the link recovered from is no fault; docs/device-protocol.md "Line noise")."""
        total = noise_total(self._transport.status())
        if self._noise is None:
            self._noise = NoiseRate(self._noise_config, total)
            return
        seen = self._noise.update(total, now)
        if seen is not None:
            cfg = self._noise_config
            self._fault(
                faults.LINE_NOISE,
                f"{seen} bytes of garbage or damaged frames on the {self.device}'s serial line "
                f"within {cfg.window_s:g} s (limit {cfg.limit})",
            )

    def _on_message(self, msg_type: int, payload: bytes) -> None:
        if msg_type == protocol.STATUS_RSP:
            report = protocol.decode_status_rsp(payload)
            if report.tag:
                self._take_request(report.tag, "status")
            self._on_status(report)
        elif msg_type == protocol.ERROR_RSP:
            err = protocol.decode_error_rsp(payload)
            with self._lock:
                req = self._pending.pop(err.tag, None) if err.tag else None
            what = protocol.NAMES.get(req.msg_type, "request") if req else "unsolicited"
            name = protocol.ERROR_NAMES.get(err.error, f"error 0x{err.error:02X}")
            sticky = err.error not in (protocol.ERR_BUSY, protocol.ERR_BAD_REQUEST)
            self._device_error(
                err.error,
                f"{what}: {name} {err.detail}".strip(),
                sticky=sticky,
                answers_command=req is not None and req.kind != "status",
            )
        else:
            self._on_device_message(msg_type, payload)

    def _on_status(self, report: protocol.StatusReport) -> None:
        self._status_report(report)

    def _on_device_message(self, msg_type: int, payload: bytes) -> None:
        raise protocol.ProtocolError(
            f"unexpected message type 0x{msg_type:02X} from the {self.device}"
        )

    def _unexpected(self, name: str, tag: int) -> None:
        self._fault(faults.PROTOCOL_ERROR, f"{name} with tag {tag} answers no pending request")
