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


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """One throwaway PostgreSQL cluster per test session (pg_support.py)."""
    import shutil
    import tempfile

    from pg_support import PostgresCluster

    base = Path(tempfile.mkdtemp(prefix="paigow-pg-"))  # not under pytest's 0700 root dir
    cluster = PostgresCluster(base)
    try:
        cluster.start()
        yield cluster
        cluster.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture()
def pg(pg_cluster: Any) -> str:
    """A fresh database of the session's cluster: its DSN."""
    return str(pg_cluster.new_database())
