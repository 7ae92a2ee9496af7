"""A throwaway PostgreSQL 15 cluster for the tests of central ingest (test-servers.md): ``initdb``
in a temporary directory (as ``nobody`` through ``runuser`` when the tests run as root, since
initdb refuses root), ``pg_ctl start`` listening on 127.0.0.1 on a free port, a database per
test; skipped when PostgreSQL is missing, except under CI=true."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from link_support import free_port


def pg_tool(name: str) -> str:
    versions = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))  # Debian's layout
    found = shutil.which(name) or (str(versions[-1]) if versions else None)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL's {name} is not installed (.ci/system-deps installs it)")
        pytest.skip(f"PostgreSQL's {name} is not installed (make system-deps)")
    return found


class PostgresCluster:
    def __init__(self, base: Path) -> None:
        self.initdb, self.pg_ctl = pg_tool("initdb"), pg_tool("pg_ctl")
        self.base = base
        self.data = base / "pg"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        self._n = 0

    def _run(self, *cmd: str) -> None:
        argv = ["runuser", "-u", "nobody", "--", *cmd] if self.as_root else list(cmd)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {done.stdout}{done.stderr}")

    def start(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        if self.as_root:
            os.chmod(self.base, 0o777)
            shutil.chown(self.base, "nobody")
        self._run(self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "-N")
        opts = f"-k {self.base} -c listen_addresses=127.0.0.1 -p {self.port} -c fsync=off"
        self._run(self.pg_ctl, "-D", str(self.data), "-o", opts, "-l", str(self.base / "log"),
                  "-w", "start")  # fmt: skip

    def stop(self) -> None:
        self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"

    def new_database(self) -> str:
        import psycopg

        self._n += 1
        name = f"floor{self._n}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)
