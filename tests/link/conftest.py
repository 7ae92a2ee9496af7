"""Fixtures of the tests of many tables: a nats-server with JetStream on loopback per test, the
link controllers and the linked tables a test made, stopped after it (link_support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from link_support import LinkedTable, NatsServer


@pytest.fixture()
def nats(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture()
def controllers() -> Iterator[list[Any]]:
    made: list[Any] = []
    yield made
    for c in made:
        c.stop()


@pytest.fixture()
def tables() -> Iterator[list[LinkedTable]]:
    made: list[LinkedTable] = []
    yield made
    for t in made:
        t.stop()
