"""The floor link's raw frame log for integrators: direction, time, hex and decoded name of each
frame, in a bounded ring, written now and then to a small JSON file beside the journal that
``tablectl sas log`` reads (another process).

Responsible only for keeping and storing the last N frames. Must never block the poll path (the
port thread only appends to the ring; the follower thread writes the file) nor grow unbounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from drivers.sas import codec


def describe(direction: str, data: bytes, address: int) -> str:
    """A short name for ``data``: the poll, the exception, ACK / NACK, the chirp."""
    if not data:
        return ""
    if direction == "rx":
        if len(data) == 1 and data[0] & 0x80:
            return f"general poll to {data[0] & 0x7F}"
        return codec.poll_name(data[1]) if len(data) > 1 else f"byte 0x{data[0]:02X}"
    if len(data) == 1:
        b = data[0]
        if b == address:
            return "ACK"
        if b == address | 0x80:
            return "NACK"
        return f"exception {b:02X} {codec.EXCEPTIONS.get(b, '')}".rstrip()
    return f"answer {codec.poll_name(data[1])}"


class FrameLog:
    """A bounded ring of frames; thread-safe appends, ``save`` writes it atomically."""

    def __init__(self, size: int, address: int, path: Path | None = None) -> None:
        self._ring: deque[dict[str, Any]] = deque(maxlen=size)
        self._lock = threading.Lock()
        self._dirty = False
        self.address = address
        self.path = path

    def add(self, direction: str, data: bytes, note: str = "", t: float | None = None) -> None:
        item = {
            "dir": direction,
            "t": round(time.time() if t is None else t, 6),
            "hex": data.hex(" ").upper(),
            "name": note or describe(direction, data, self.address),
        }
        with self._lock:
            self._ring.append(item)
            self._dirty = True

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._ring)

    def save(self, force: bool = False) -> None:
        if self.path is None:
            return
        with self._lock:
            if not (self._dirty or force):
                return
            items = list(self._ring)
            self._dirty = False
        tmp = self.path.with_name(self.path.name + ".tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps({"frames": items}), encoding="utf-8")
            os.replace(tmp, self.path)


def log_path_for(journal: Path) -> Path:
    return journal.with_name(journal.name + ".sas-log.json")


def read_log(path: Path) -> list[dict[str, Any]]:
    """The frames saved at ``path``; ValueError when it is not a frame log."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a SAS frame log ({exc})") from None
    frames = data.get("frames") if isinstance(data, dict) else None
    if not isinstance(frames, list):
        raise ValueError(f"{path}: not a SAS frame log (no frames)")
    return [f for f in frames if isinstance(f, dict)]
