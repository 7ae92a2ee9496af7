"""``[link]`` in a table's configuration (docs/link.md): read through fsm/configread.py, every
problem named by its key; the link controller's file likewise."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from controller.config import SIMULATED_TABLE, ConfigError, parse_config
from controller.link.link_config import ControllerConfig
from fsm.configread import ConfigValueError


def problems(link: dict[str, Any], table_id: str = "SIM1") -> list[str]:
    data: dict[str, Any] = tomllib.loads(SIMULATED_TABLE.read_text())
    data["table"]["id"] = table_id
    data["link"] = link
    try:
        parse_config(data)
    except ConfigError as exc:
        return exc.problems
    return []


GOOD = {"pool": "PIT1", "servers": ["tls://nats1:4222"], "key_file": "/etc/paigow/link.key"}


@pytest.mark.parametrize(
    ("link", "table_id", "message"),
    [
        ({**GOOD, "pool": "P.1"}, "SIM1", "link.pool: must be 1-32 letters"),
        ({**GOOD, "servers": []}, "SIM1", "link.servers: must be a list of NATS server URLs"),
        ({**GOOD, "servers": ["http://x:1"]}, "SIM1", "link.servers[0]: must be a NATS URL"),
        ({**GOOD, "timeout_s": 0.1}, "SIM1", "link.timeout_s"),
        ({**GOOD, "password_file": "/p"}, "SIM1", "link.password_file: needs user"),
        ({**GOOD, "tls_ca": "ca.pem"}, "SIM1", "link.tls_ca: must be an absolute file path"),
        ({**GOOD, "colour": "red"}, "SIM1", "link.colour: unknown key"),
        ({**GOOD, "level": "mystery"}, "SIM1", "link.level: 'mystery' is not a level"),
        (GOOD, "SIM-1.A", "table.id: a linked table's id must be"),
        ({**GOOD, "key_file": "k.key"}, "SIM1", "link.key_file: must be an absolute file path"),
        (
            {k: v for k, v in GOOD.items() if k != "key_file"},
            "SIM1",
            "link.key_file: required: the table's link key",
        ),
    ],
)
def test_a_bad_link_section_names_its_key(
    link: dict[str, Any], table_id: str, message: str
) -> None:
    found = problems(link, table_id)
    assert any(p.startswith(message) for p in found), found


def test_a_good_link_section_and_a_disabled_one() -> None:
    assert problems(GOOD) == []
    assert problems({"enabled": False}) == []


def test_controller_file_refuses_a_rate_below_nothing_and_shared_asset_numbers() -> None:
    base: dict[str, Any] = {
        "link": {
            "pool": "P1",
            "servers": ["nats://127.0.0.1:4222"],
            "journal": "/x/pool.db",
            "keys": "/etc/paigow/link-keys",
        },
        "pool": {"initial_cents": 100000, "rate_bp": 2100},
        "tables": {"T1": 1, "T2": 2},
    }
    assert ControllerConfig.from_mapping(base).tables == {"T1": 1, "T2": 2}
    with pytest.raises(ConfigValueError, match="tables: two tables share an asset number"):
        ControllerConfig.from_mapping({**base, "tables": {"T1": 1, "T2": 1}})
    with pytest.raises(ConfigValueError, match=r"pool\.rate_bp"):
        ControllerConfig.from_mapping({**base, "pool": {"initial_cents": 1, "rate_bp": 0}})
    with pytest.raises(ConfigValueError, match=r"pool\.wager_cents"):
        ControllerConfig.from_mapping(
            {**base, "pool": {"initial_cents": 1, "rate_bp": 2100, "wager_cents": 200}}
        )
    assert Path("/x/pool.db") == ControllerConfig.from_mapping(base).journal
