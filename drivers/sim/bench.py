"""The whole simulated serial side of a table: a shuffler and a card-reading shoe on real ptys,
sharing one deck, with fault injection by name.

    sim = SimulatedDevices()
    shoe_path, shuffler_path = sim.start(seed=7)
    sim.inject("shuffler-count", 52); sim.clear("shuffler-count"); sim.stop()

Fault kinds: ``shuffler-count=N``, ``shoe-jam``, ``shoe-misdeal``, ``shoe-silent``,
``shuffler-silent``, ``garbage`` (value: "shoe", "shuffler" or None for both), ``shoe-unplug``,
``shuffler-unplug`` (clearing replugs). This module must never be used on a real table.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

from drivers.sim.deck import SimDeck
from drivers.sim.pty_device import PtyDevice
from drivers.sim.shoe_sim import ShoeSim
from drivers.sim.shuffler_sim import ShufflerSim

FAULT_KINDS = (
    "shuffler-count",
    "shoe-jam",
    "shoe-misdeal",
    "shoe-silent",
    "shuffler-silent",
    "garbage",
    "shoe-unplug",
    "shuffler-unplug",
)


def parse_fault_spec(spec: str) -> list[tuple[str, int | str | None]]:
    """``"shuffler-count=52,shoe-jam"`` -> [("shuffler-count", 52), ("shoe-jam", None)].

    ValueError names the item that is not a fault kind or has a bad value."""
    out: list[tuple[str, int | str | None]] = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        kind, _, raw = item.partition("=")
        kind = kind.strip()
        if kind not in FAULT_KINDS:
            raise ValueError(f"fault {item!r}: unknown kind (allowed: {', '.join(FAULT_KINDS)})")
        value: int | str | None = None
        if kind == "shuffler-count":
            if not raw.strip().isdigit() or not 0 <= int(raw) <= 255:
                raise ValueError(f"fault {item!r}: shuffler-count needs a card count 0..255")
            value = int(raw)
        elif kind == "garbage" and raw:
            if raw not in ("shoe", "shuffler"):
                raise ValueError(f"fault {item!r}: garbage takes shoe or shuffler")
            value = raw
        elif raw:
            raise ValueError(f"fault {item!r}: {kind} takes no value")
        out.append((kind, value))
    return out


class SimulatedDevices:
    """A shuffler and a shoe simulator on ptys named ``<directory>/paigow-shoe`` and
    ``<directory>/paigow-shuffler`` (stand-ins for the udev names)."""

    def __init__(self, card_reading: bool = True) -> None:
        self.deck = SimDeck()
        self.card_reading = card_reading
        self.shoe_logic = ShoeSim(self.deck, card_reading=card_reading)
        self.shuffler_logic: ShufflerSim | None = None
        self.shoe: PtyDevice | None = None
        self.shuffler: PtyDevice | None = None
        self.directory = ""
        self._own_directory = False

    def start(self, seed: int, directory: str | None = None) -> tuple[str, str]:
        """Start both simulators; returns (shoe port name, shuffler port name)."""
        if directory is None:
            directory = tempfile.mkdtemp(prefix="paigow-sim-")
            self._own_directory = True
        self.directory = directory
        self.shuffler_logic = ShufflerSim(self.deck, seed)
        self.shoe = PtyDevice(
            "shoe", os.path.join(directory, "paigow-shoe"), self.shoe_logic, seed=seed * 2 + 1
        )
        self.shuffler = PtyDevice(
            "shuffler",
            os.path.join(directory, "paigow-shuffler"),
            self.shuffler_logic,
            seed=seed * 2 + 2,
        )
        self.shoe.start()
        self.shuffler.start()
        return self.shoe.path, self.shuffler.path

    def _devices(self) -> tuple[PtyDevice, PtyDevice, ShufflerSim]:
        if self.shoe is None or self.shuffler is None or self.shuffler_logic is None:
            raise RuntimeError("simulated devices are not started")
        return self.shoe, self.shuffler, self.shuffler_logic

    def inject(self, kind: str, value: int | str | None = None) -> None:
        """Start the fault ``kind`` (see FAULT_KINDS); ValueError for an unknown kind/value."""
        self._set(kind, value, on=True)

    def clear(self, kind: str) -> None:
        """End the fault ``kind``."""
        self._set(kind, None, on=False)

    def inject_spec(self, spec: str) -> None:
        for kind, value in parse_fault_spec(spec):
            self.inject(kind, value)

    def _set(self, kind: str, value: int | str | None, *, on: bool) -> None:
        shoe, shuffler, shuffler_logic = self._devices()
        if kind == "shuffler-count":
            if not on:
                shuffler_logic.count = None
            elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 255:
                shuffler_logic.count = value
            else:
                raise ValueError(f"shuffler-count: needs a card count 0..255, got {value!r}")
        elif kind == "shoe-jam":
            self.shoe_logic.jam = on
        elif kind == "shoe-misdeal":
            self.shoe_logic.misdeal = on
        elif kind == "shoe-silent":
            shoe.silent = on
        elif kind == "shuffler-silent":
            shuffler.silent = on
        elif kind == "garbage":
            if value not in (None, "shoe", "shuffler"):
                raise ValueError(f"garbage: value must be shoe, shuffler or None, got {value!r}")
            if value in (None, "shoe"):
                shoe.garbage = on
            if value in (None, "shuffler"):
                shuffler.garbage = on
        elif kind in ("shoe-unplug", "shuffler-unplug"):
            device = shoe if kind == "shoe-unplug" else shuffler
            if on:
                device.unplug()
            else:
                device.replug()
        else:
            raise ValueError(f"unknown fault kind {kind!r} (allowed: {', '.join(FAULT_KINDS)})")

    def stop(self) -> None:
        for device in (self.shoe, self.shuffler):
            if device is not None:
                device.stop()
        if self._own_directory and self.directory:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.directory)
