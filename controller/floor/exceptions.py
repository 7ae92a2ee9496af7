"""The SAS exception queue as a fold of committed journal entries: durable because the journal is.

Each committed entry may raise exceptions (below); an entry ``floor_command`` with command
``exception_acked`` (posted by the floor link when the host acknowledged an exception, and
journaled by the owner like any event) takes it off the queue. So the queue after a power cut is
exactly what the journal says was raised and not yet taken: nothing queued is lost, and an
exception the host took just before the cut, whose acknowledgement was not yet committed, is
delivered again (at least once, never never).

What raises what (docs/sas.md): ``power_up`` 17; ``config_changed`` 3C; a ``door_changed``
effect 11 (the controller compartment's door opened) or 12 (closed), none for a supervisor's
maintenance allowance alone; a ``fault`` effect 20,
and 86 when the table goes out of service (the first fault until a ``fault_cleared`` effect),
whoever raised it (a device, or the machine at a timeout); ``hit_pending`` 51 (handpay pending);
``pay`` 54 (progressive win), and 52 (handpay reset) when it pays a pending hit (validated, from
the meter or, a linked hit the pool locked as a fixed amount, the chip tray; whether by the
console, the page or the panel's key); a ``hit_voided`` effect 52; a
``linked_wager`` effect (the linked progressive's playability changed) 53 (no progressive
information) when it is unplayable, nothing when it is playable again, and 3C (options changed)
when the table was linked or unlinked. A rejected event raises nothing. The queue keeps
``capacity`` (at least 20) exceptions; one more is dropped and 70 (exception buffer overflow) is
queued once in its place.

The fold switches on the types of the entry's records (the journal tail's `Committed`) and reads
the facts they carry; ``power_up`` and ``floor_command`` have no effect of their own, so their
event records are read. Must never read the journal itself (the tail hands it entries) nor the
machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from controller.journal.tail import Committed
from fsm.round.effects import (
    ConfigChangedEffect,
    DoorChanged,
    Fault,
    FaultClearedEffect,
    HitPending,
    HitVoidedEffect,
    LinkedWager,
    Pay,
)
from fsm.round.events import FloorCommand, PowerUp

POWER_UP, OPTIONS_CHANGED, TILT, HANDPAY_PENDING = 0x17, 0x3C, 0x20, 0x51
HANDPAY_RESET, PROGRESSIVE_WIN, OVERFLOW, OUT_OF_SERVICE = 0x52, 0x54, 0x70, 0x86
NO_PROGRESSIVE_INFO = 0x53  # SAS: "no progressive information has been received for 5 seconds"
DOOR_OPENED, DOOR_CLOSED = 0x11, 0x12  # "slot door was opened" / "closed": the compartment door


@dataclass(frozen=True)
class Queued:
    """One exception: its ``code``, the entry that raised it and its place in that entry."""

    code: int
    source_seq: int
    index: int = 0

    @property
    def key(self) -> tuple[int, int]:
        return (self.source_seq, self.index)


@dataclass(frozen=True)
class FloorFold:
    """What the floor link derives from the journal: the exception queue and a few counters.
    Immutable: ``apply`` returns a new fold."""

    capacity: int = 20
    seq: int = 0
    queue: tuple[Queued, ...] = ()
    in_fault: bool = False
    linked: bool = False  # the table's progressive is linked (the last ``linked_wager``)
    power_ups: int = 0
    overflowed: int = 0
    clock_offset_s: float = 0.0

    def apply(self, c: Committed) -> FloorFold:
        """The fold after the committed entry ``c`` (its typed event and effects)."""
        raised: list[int] = []
        fold = replace(self, seq=c.seq)
        if c.rejected is not None:
            return fold
        event = c.event
        if isinstance(event, PowerUp):
            raised.append(POWER_UP)
            fold = replace(fold, power_ups=fold.power_ups + 1)
        elif isinstance(event, FloorCommand):
            if event.command == "exception_acked":
                return fold._ack(event.code, event.source_seq)
            offset = event.clock_offset_ms
            if event.command == "set_clock" and event.applied is True and offset is not None:
                fold = replace(fold, clock_offset_s=offset / 1000)
        for e in c.effects:
            if isinstance(e, Fault):  # any fault, raised by a device or by the machine
                raised.append(TILT)
                if not fold.in_fault:
                    raised.append(OUT_OF_SERVICE)
                fold = replace(fold, in_fault=True)
            elif isinstance(e, FaultClearedEffect):
                fold = replace(fold, in_fault=False)
            elif isinstance(e, HitPending):
                raised.append(HANDPAY_PENDING)
            elif isinstance(e, Pay):
                raised.append(PROGRESSIVE_WIN)
                # a pending hit validated: from the meter, or a linked hit the pool locked as
                # a fixed amount from the chip tray (validated all the same, docs/link.md)
                validated = e.from_ == "meter" or e.supervisor is not None
                if validated and e.voided_line is None:
                    raised.append(HANDPAY_RESET)
            elif isinstance(e, HitVoidedEffect):  # a pending hit withdrawn
                raised.append(HANDPAY_RESET)
            elif isinstance(e, ConfigChangedEffect):
                raised.append(OPTIONS_CHANGED)
            elif isinstance(e, DoorChanged) and e.changed != "maintenance":
                raised.append(DOOR_OPENED if e.changed == "opened" else DOOR_CLOSED)
            elif isinstance(e, LinkedWager):
                if e.linked != fold.linked:  # linked or unlinked: the table's options changed
                    raised.append(OPTIONS_CHANGED)
                    fold = replace(fold, linked=e.linked)
                if not e.playable:  # the link controller out of reach
                    raised.append(NO_PROGRESSIVE_INFO)
        return fold._raise(c.seq, raised)

    def _raise(self, seq: int, codes: Sequence[int]) -> FloorFold:
        queue = list(self.queue)
        overflowed = self.overflowed
        for i, code in enumerate(codes):
            if len(queue) < self.capacity:
                queue.append(Queued(code, seq, i))
            else:
                overflowed += 1
                if queue[-1].code != OVERFLOW:
                    queue.append(Queued(OVERFLOW, seq, i))
        return replace(self, queue=tuple(queue), overflowed=overflowed)

    def _ack(self, code: object, source_seq: object) -> FloorFold:
        for i, q in enumerate(self.queue):
            if q.code == code and q.source_seq == source_seq:
                return replace(self, queue=self.queue[:i] + self.queue[i + 1 :])
        return self
