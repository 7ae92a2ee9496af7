"""The centre's installation (docs/link.md): the link controller's unit runs the documented
command, is not restarted for a bad configuration, and verifies; the example configuration
loads; the server configuration the docs give has a user per table limited to its own subject."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from link_support import ROOT

from controller.link.link_config import load_controller_config
from controller.link.security import nats_server_conf, table_permissions

UNIT = ROOT / "systemd" / "paigow-link.service"


def test_link_unit_runs_link_serve_and_is_not_restarted_for_a_bad_configuration() -> None:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read_string(UNIT.read_text())
    service = parser["Service"]
    assert service["ExecStart"] == (
        "/opt/paigow/venv/bin/tablectl link serve --config /etc/paigow/link.toml"
    )
    assert service["Restart"] == "on-failure" and service["RestartPreventExitStatus"] == "2"


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None and os.environ.get("CI") != "true",
    reason="systemd-analyze missing (never skipped under CI=true)",
)
def test_systemd_analyze_verifies_the_link_unit(tmp_path: Path) -> None:
    tablectl = shutil.which("tablectl") or str(Path(sys.executable).parent / "tablectl")
    unit = tmp_path / "paigow-link.service"
    unit.write_text(UNIT.read_text().replace("/opt/paigow/venv/bin/tablectl", tablectl))
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "Unknown key" not in done.stderr and "Unknown lvalue" not in done.stderr


def test_example_link_config_loads() -> None:
    cfg = load_controller_config(ROOT / "deploy" / "link" / "link.example.toml")
    assert cfg.level.rate_bp >= 2100  # NY 5324.41(k)(5): at least 21% of a $1 wager
    assert all(url.startswith("tls://") for url in cfg.connection.servers)


def test_a_table_user_may_publish_only_its_own_journal_and_its_pool_requests() -> None:
    allowed = table_permissions("PG-01", "PIT1")["publish"]["allow"]  # type: ignore[index]
    assert "table.PG-01.journal" in allowed
    assert not any(a.startswith("table.") and a != "table.PG-01.journal" for a in allowed)
    assert not any(a in (">", "table.>", "table.*.journal") for a in allowed)
    conf = nats_server_conf(
        pool="PIT1", controller_password="a", tables={"PG-01": "b"},
        cert=Path("/c"), key=Path("/k"), ca=Path("/ca"),
    )  # fmt: skip
    assert conf.startswith("tls {") and "table-PG-01" in conf
