"""Configuration at restart: the table configuration file compared with the journal's.

At power-up the owner compares the game configuration of the file (``[game]``, as `GameConfig`
maps it) with the one the journal carries (the restored snapshot's). This module says which keys
differ, as the dotted keys ``config_changed`` takes (``levels[0].rate_bp``, ``side_wager.odds``),
and builds the events that journal the change: with the table closed, ``maintenance_entered``,
``config_changed`` and ``maintenance_exited`` in the name of ``config-file`` with ``"via":
"file"`` (each key old -> new in the effect); with the table open, one ``config_pending`` naming
every differing key, applied when the table next closes. Pure: it must never read a file or touch
the journal, and never decide whether a value is allowed (the round machine validates it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsm.round.events import (
    ConfigChanged,
    ConfigPending,
    Event,
    MaintenanceEntered,
    MaintenanceExited,
)

#: The name the configuration file's changes are journaled in.
FILE_SUPERVISOR = "config-file"


def config_differences(journaled: Any, file: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """``[(dotted key, journaled value, file value), ...]`` for every leaf that differs; a list
    of another length (levels added) differs as a whole."""
    if isinstance(journaled, Mapping) and isinstance(file, Mapping):
        out: list[tuple[str, Any, Any]] = []
        for key in sorted(set(journaled) | set(file)):
            name = f"{prefix}.{key}" if prefix else str(key)
            if key not in journaled or key not in file:
                out.append((name, journaled.get(key), file.get(key)))
            else:
                out.extend(config_differences(journaled[key], file[key], name))
        return out
    if (
        isinstance(journaled, list)
        and isinstance(file, list)
        and len(journaled) == len(file)
        and all(isinstance(v, Mapping) for v in [*journaled, *file])
    ):
        out = []
        for i, (old, new) in enumerate(zip(journaled, file, strict=True)):
            out.extend(config_differences(old, new, f"{prefix}[{i}]"))
        return out
    return [] if journaled == file else [(prefix, journaled, file)]


def change_events(differences: list[tuple[str, Any, Any]]) -> list[Event]:
    """The entries that apply the file's configuration to a closed table."""
    who = {"supervisor": FILE_SUPERVISOR, "via": "file"}
    changes = {key: new for key, _, new in differences}
    return [
        MaintenanceEntered(**who).envelope(),
        ConfigChanged(**who, changes=changes).envelope(),
        MaintenanceExited(**who).envelope(),
    ]


def pending_event(differences: list[tuple[str, Any, Any]]) -> Event:
    """The entry that says the file differs while the table is open (applied at the close)."""
    return ConfigPending(
        keys=tuple(key for key, _, _ in differences),
        changes=[{"key": key, "journal": old, "file": new} for key, old, new in differences],
        via="file",
    ).envelope()
