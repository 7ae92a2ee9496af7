"""Fixtures shared by several test modules."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

# The simulated shoe keeps its undealt cards in a private directory
# (controller/sim/simulated_table.py): this session's own, not the user's ~/.local/state
# (subprocesses inherit it).
os.environ.setdefault("PAIGOW_SIM_STATE", tempfile.mkdtemp(prefix="paigow-sim-state-"))


@pytest.fixture()
def ptys() -> Iterator[tuple[str, str]]:
    """Two real pseudo-terminals (their slave paths): stand-ins for the shoe's and the
    shuffler's serial ports, closed after the test."""
    fds: list[int] = []
    names: list[str] = []
    for _ in range(2):
        master, slave = os.openpty()
        fds += [master, slave]
        names.append(os.ttyname(slave))
    yield names[0], names[1]
    for fd in fds:
        os.close(fd)
