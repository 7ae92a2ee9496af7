"""The fault plan of a simulated run: parsing ``--faults SPEC`` and handing out each fault once.

SPEC is comma-separated ``KIND[=VALUE]@ROUND``: ``shuffler-count=52@3`` (the shuffle for round 3
counts 52 cards), ``shoe-jam@5`` (the shoe jams dealing round 5), ``shoe-silent@7`` (the shoe
stops answering while dealing round 7), ``shuffler-silent@2``, ``garbage@4`` (garbage bytes on
the shoe's line during round 4), ``shoe-misdeal@6``, ``shoe-empty@8`` (the shoe holds no card
when round 8 deals), ``shoe-unplug@9`` / ``shuffler-unplug@3`` (the device's port disappears and
comes back when the technician repairs it). At run time a trainer (the page, the console) injects
one now with `parse_fault_now` (``KIND[=VALUE]``, also the kinds of `RUNTIME_KINDS`): it bites at
the device's next use. Responsible only for the plan: the simulated devices ask `FaultPlan.take`
whether a fault is due. Must never touch a device or the journal itself.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from fsm.rules.cards import DECK_SIZE

KINDS: dict[str, str] = {
    "shuffler-count": "the shuffler counts VALUE cards (VALUE 0..60, not 53)",
    "shoe-jam": "the shoe reports a jam while dealing",
    "shoe-silent": "the shoe stops answering while dealing",
    "shuffler-silent": "the shuffler stops answering while shuffling",
    "garbage": "garbage bytes on the shoe's serial line",
    "shoe-misdeal": "the shoe reports a misdeal (a stack short of a card) while dealing",
    "shoe-empty": "the shoe runs out of cards while dealing (it reports EMPTY)",
    "shoe-unplug": "the shoe's port disappears while dealing and returns at the repair",
    "shuffler-unplug": "the shuffler's port disappears while shuffling and returns at the repair",
    # with --tables N --linked (controller/link/simrun.py): the link's outages
    "link-down": "the link controller stops for 3 s (--tables N --linked)",
    "nats-down": "the NATS server stops for 3 s, its stream kept (--tables N --linked)",
}
#: What a trainer may inject at run time: the planned kinds and three more of the simulators.
RUNTIME_KINDS: dict[str, str] = {
    **KINDS,
    "shoe-misdeal": "the shoe reports a misdeal (a stack short of a card)",
    "shoe-unplug": "the shoe's USB adapter is pulled (the repair plugs it back)",
    "shuffler-unplug": "the shuffler's USB adapter is pulled (the repair plugs it back)",
}
_NOW = re.compile(r"^(?P<kind>[a-z-]+)(?:=(?P<value>[0-9]+))?$")
_ITEM = re.compile(r"^(?P<kind>[a-z-]+)(?:=(?P<value>[0-9]+))?@(?P<round>[0-9]+)$")


@dataclass(frozen=True)
class Fault:
    kind: str
    round: int
    value: int | None = None

    def __str__(self) -> str:
        value = "" if self.value is None else f"={self.value}"
        return f"{self.kind}{value}@{self.round}"


def parse_faults(spec: str | None, where: str = "--faults") -> list[Fault]:
    """The faults of ``spec``; ValueError naming the item and what is allowed."""
    if spec is None or not spec.strip():
        return []
    faults: list[Fault] = []
    for i, raw in enumerate(spec.split(",")):
        item = raw.strip()
        m = _ITEM.match(item)
        if m is None:
            raise ValueError(
                f"{where}[{i}]: {item!r} is not KIND[=VALUE]@ROUND (kinds: {', '.join(KINDS)})"
            )
        kind, value, rnd = m["kind"], m["value"], int(m["round"])
        if kind not in KINDS:
            raise ValueError(
                f"{where}[{i}]: unknown fault kind {kind!r} (kinds: {', '.join(KINDS)})"
            )
        if rnd < 1:
            raise ValueError(f"{where}[{i}]: round must be 1 or more, got {rnd}")
        if kind == "shuffler-count":
            if value is None:
                raise ValueError(f"{where}[{i}]: shuffler-count needs =N, e.g. shuffler-count=52@3")
            count = int(value)
            if count == DECK_SIZE or count > 60:
                raise ValueError(
                    f"{where}[{i}]: shuffler-count={count}: a wrong count is 0..60 other than "
                    f"{DECK_SIZE}"
                )
            faults.append(Fault(kind, rnd, count))
        else:
            if value is not None:
                raise ValueError(f"{where}[{i}]: {kind} takes no =VALUE")
            faults.append(Fault(kind, rnd))
    return faults


def parse_fault_now(text: str, where: str = "fault") -> Fault:
    """One fault to inject now, ``KIND[=VALUE]`` (kinds of `RUNTIME_KINDS`; round 0: now);
    ValueError naming what is allowed."""
    item = str(text).strip()
    m = _NOW.match(item)
    if m is None or m["kind"] not in RUNTIME_KINDS:
        raise ValueError(
            f"{where}: {item[:40]!r} is not KIND[=VALUE] (kinds: {', '.join(RUNTIME_KINDS)})"
        )
    kind, value = m["kind"], m["value"]
    if kind == "shuffler-count":
        if value is None:
            raise ValueError(f"{where}: shuffler-count needs =N, e.g. shuffler-count=52")
        count = int(value)
        if count == DECK_SIZE or count > 60:
            raise ValueError(
                f"{where}: shuffler-count={count}: a wrong count is 0..60 other than {DECK_SIZE}"
            )
        return Fault(kind, 0, count)
    if value is not None:
        raise ValueError(f"{where}: {kind} takes no =VALUE")
    return Fault(kind, 0)


class FaultPlan:
    """Hands out each planned fault once per process (thread-safe)."""

    def __init__(self, faults: list[Fault]) -> None:
        self._left = list(faults)
        self._lock = threading.Lock()
        self.fired: list[Fault] = []

    def take(self, kind: str, round_id: int) -> Fault | None:
        """The fault of ``kind`` planned for ``round_id`` and not yet fired in this process."""
        with self._lock:
            for fault in self._left:
                if fault.kind == kind and fault.round == round_id:
                    self._left.remove(fault)
                    self.fired.append(fault)
                    return fault
        return None

    def pending(self) -> list[Fault]:
        with self._lock:
            return list(self._left)
