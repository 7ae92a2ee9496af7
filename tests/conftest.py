"""Fixtures shared by several test modules."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


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
