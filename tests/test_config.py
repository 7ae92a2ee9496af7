"""The table configuration file: every kind of mistake is reported with its key, never a crash.

DESIGN.md "Configuration": one TOML file validated at load, messages naming the key and the
allowed values, supervisor PINs hashed, unknown keys errors. The shipped files (the deployment
example and the simulated table) must pass ``tablectl config check``.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.config import (
    SIMULATED_TABLE,
    ConfigError,
    check_pin,
    hash_pin,
    load_config,
    parse_config,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "deploy" / "config.example.toml"
TABLECTL = [sys.executable, "-m", "controller.cli"]

# One valid hash made once for the tests (scrypt is deliberately slow).
PIN_HASH = hash_pin("4321", salt=b"test-salt-16byte")


def minimal() -> dict[str, Any]:
    return {
        "table": {"id": "T7", "asset_number": 77},
        "game": {},
        "supervisors": {"ana": {"name": "Ana", "pin_hash": PIN_HASH}},
    }


def problems_of(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(data, "test.toml")
    return info.value.problems


def test_minimal_config_takes_documented_defaults() -> None:
    config = parse_config(minimal(), "test.toml")
    assert config.table.id == "T7"
    assert config.game.table_id == "T7"  # the round and the journal carry the [table] id
    assert config.sas.address == 1
    assert config.pins.acceptor_sensors == (16, 17, 22, 23, 24, 25)
    assert str(config.journal_path) == "/var/lib/paigow/journal.db"


def test_unknown_section_is_an_error_naming_it() -> None:
    data = minimal()
    data["tabel"] = {}
    assert any(p.startswith("tabel: unknown section") for p in problems_of(data))


def test_unknown_key_in_our_section_names_key_and_allowed_keys() -> None:
    data = minimal()
    data["table"]["colour"] = "red"
    (p,) = problems_of(data)
    assert p.startswith("table.colour: unknown key")
    assert "asset_number" in p  # the allowed keys are listed


def test_unknown_key_in_a_delegated_section_names_the_full_path() -> None:
    data = minimal()
    data["game"]["progresive_wager_cents"] = 100
    (p,) = problems_of(data)
    assert p.startswith("game.progresive_wager_cents: unknown key")


def test_wrong_type_names_key_and_type() -> None:
    data = minimal()
    data["table"]["asset_number"] = "77"
    (p,) = problems_of(data)
    assert p.startswith("table.asset_number: must be an integer 1..4294967295")
    assert "str" in p


def test_missing_required_sections_and_keys_are_listed() -> None:
    problems = problems_of({"table": {"id": "T1"}})
    assert "game: required section [game] is missing" in problems
    assert "supervisors: required section [supervisors] is missing" in problems
    assert any(p.startswith("table.asset_number: required") for p in problems)


def test_sas_address_outside_1_to_127_is_refused() -> None:
    for bad in (0, 128, True):
        data = minimal()
        data["sas"] = {"address": bad}
        (p,) = problems_of(data)
        assert p.startswith("sas.address: must be an integer 1..127")
    data = minimal()
    data["sas"] = {"address": 127}
    assert parse_config(data).sas.address == 127


def test_pin_of_the_sas_uart_is_refused_by_the_gpio_section() -> None:
    data = minimal()
    data["pins"] = {"acceptor_sensors": [5, 6, 14, 8, 9, 10]}
    (p,) = problems_of(data)
    assert p.startswith("pins.acceptor_sensors[2]: pin 14 is reserved for the SAS UART")


def test_serial_port_baud_and_model_are_checked_and_ports_unique() -> None:
    data = minimal()
    data["serial"] = {
        "shoe": {"port": {"path": "/dev/ttyUSB0"}, "model": "acme"},
        "shuffler": {"port": {"path": "/dev/ttyUSB0"}},
        "printer": {},
    }
    problems = problems_of(data)
    assert any(
        p.startswith("serial.printer: unknown key (allowed: shoe, shuffler)") for p in problems
    )
    assert any(p.startswith("serial.shoe.model: must be one of reference") for p in problems)
    assert "serial.shuffler.port.path: /dev/ttyUSB0 is also used by serial.shoe" in problems


def test_serial_driver_section_is_delegated_with_its_key_path() -> None:
    data = minimal()
    data["serial"] = {"shoe": {"port": {"path": "/dev/paigow-shoe", "baudrate": 1234}}}
    (p,) = problems_of(data)
    assert p.startswith("serial.shoe.port.baudrate:")
    data["serial"] = {"shuffler": {"port": {"path": "COM3"}}}
    (p,) = problems_of(data)
    assert p.startswith("serial.shuffler.port.path: must be a device path under /dev/")


def test_serial_link_timing_is_delegated_with_its_key_path() -> None:
    data = minimal()
    data["serial"] = {"shoe": {"link": {"heartbeat_interval": 2.0, "silence_timeout": 1.0}}}
    (p,) = problems_of(data)
    assert p.startswith("serial.shoe.link.silence_timeout:")


def test_progressive_wager_other_than_1_or_5_dollars_is_refused_k1() -> None:
    """NY 5324.41(k)(1): the progressive payout wager is $1 or $5."""
    data = minimal()
    data["game"]["progressive_wager_cents"] = 200
    (p,) = problems_of(data)
    assert p.startswith("game.progressive_wager_cents:")
    assert "(k)(1)" in p


def test_rate_of_progression_below_21_percent_is_refused_k5() -> None:
    """NY 5324.41(k)(5): at least 21% of a $1 wager goes to the progressive."""
    data = minimal()
    data["game"]["levels"] = [
        {"name": "progressive", "initial_cents": 100000, "rate_bp": 2000, "hidden_rate_bp": 500}
    ]
    (p,) = problems_of(data)
    assert p.startswith("game.levels")
    assert "(k)(5)" in p


def test_ranking_option_names_the_allowed_values() -> None:
    data = minimal()
    data["game"]["joker_flush"] = "lowest"
    (p,) = problems_of(data)
    assert p.startswith("game.joker_flush:")
    assert "highest-missing" in p and "ace" in p


def test_unknown_house_way_lists_the_shipped_ways() -> None:
    data = minimal()
    data["game"]["house_way"] = "atlantis"
    (p,) = problems_of(data)
    assert p.startswith("game.house_way:")
    assert "reference" in p


def test_incompatible_bonus_wagers_are_refused_l1() -> None:
    """NY 5324.41(l)(1): the fortune bonus is not offered with the three-card bonus."""
    data = minimal()
    data["bonus"] = {"offered": ["fortune-bonus", "three-card"]}
    (p,) = problems_of(data)
    assert p.startswith("bonus.offered:")
    assert "(l)(1)" in p


def test_side_wager_offering_must_agree_with_the_game_option_j() -> None:
    """NY 5324.41(j): the 1-7 side wager offered in [bonus] needs the round to settle it."""
    data = minimal()
    data["bonus"] = {"offered": ["side-1-7"], "tables": {"side-1-7": "side-1-7-6"}}
    (p,) = problems_of(data)
    assert p.startswith("bonus.offered: 'side-1-7' is offered but game.side_wager.offered")
    data["game"]["side_wager"] = {"offered": True, "odds": "6:1"}
    assert parse_config(data).bonus.offered == ("side-1-7",)


def test_plain_pin_is_an_error_and_never_echoed() -> None:
    data = minimal()
    data["supervisors"]["bob"] = {"name": "Bob", "pin": "98765"}
    (p,) = problems_of(data)
    assert p.startswith("supervisors.bob.pin: a plain PIN must never be stored")
    assert "98765" not in p


def test_plain_pin_in_pin_hash_is_an_error() -> None:
    data = minimal()
    data["supervisors"]["bob"] = {"name": "Bob", "pin_hash": "98765"}
    (p,) = problems_of(data)
    assert p.startswith("supervisors.bob.pin_hash: looks like a plain PIN")
    assert "98765" not in p


def test_weak_scrypt_parameters_are_refused() -> None:
    weak = PIN_HASH.replace("n=16384", "n=1024")
    data = minimal()
    data["supervisors"]["ana"]["pin_hash"] = weak
    (p,) = problems_of(data)
    assert p.startswith("supervisors.ana.pin_hash: scrypt n=1024")


def test_at_least_one_supervisor_is_required() -> None:
    data = minimal()
    data["supervisors"] = {}
    assert problems_of(data) == [
        "supervisors: at least one supervisor is required (faults, hits, closing)"
    ]


def test_every_problem_is_listed_not_only_the_first() -> None:
    data = minimal()
    data["table"]["id"] = "bad id!"
    data["sas"] = {"address": 0}
    data["pins"] = {"shaker": 99}
    data["supervisors"]["ana"] = {"pin": "1234"}
    problems = problems_of(data)
    keys = {p.split(":")[0] for p in problems}
    assert {"table.id", "sas.address", "pins.shaker", "supervisors.ana.pin"} <= keys


def test_hashed_pin_checks_only_the_right_pin() -> None:
    assert check_pin(PIN_HASH, "4321")
    assert not check_pin(PIN_HASH, "4320")
    assert not check_pin("scrypt$garbage", "4321")
    assert hash_pin("4321") != hash_pin("4321")  # a fresh salt each time
    with pytest.raises(ValueError, match="4 to 12 digits"):
        hash_pin("12a4")


def test_missing_file_bad_toml_and_binary_file_give_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[table]\nid = \n")
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line 2"):
        load_config(bad)
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(binary)
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)


def test_example_config_documents_every_pin_key_with_its_default() -> None:
    config = load_config(EXAMPLE)
    text = EXAMPLE.read_text()
    for key, _pin in config.pins.assignments():
        assert key.split(".")[1].split("[")[0] in text
    # the defaults written in the example are the defaults of the code
    data = tomllib.loads(text)
    assert parse_config({**data, "pins": {}}).pins == config.pins


def test_shipped_configs_pass_config_check() -> None:
    for path in (EXAMPLE, SIMULATED_TABLE):
        done = subprocess.run(
            [*TABLECTL, "config", "check", str(path)], capture_output=True, text=True, cwd=ROOT
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("ok")  # the example's placeholders: "ok, with 2 warnings"
        assert "table " in done.stdout


def test_config_check_lists_problems_and_exits_non_zero(tmp_path: Path) -> None:
    bad = tmp_path / "t.toml"
    bad.write_text('[table]\nid = "T1"\nasset_number = 5\n[sas]\naddress = 300\n')
    done = subprocess.run(
        [*TABLECTL, "config", "check", str(bad)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 1
    assert "sas.address: must be an integer 1..127" in done.stderr
    assert "game: required section [game] is missing" in done.stderr
    assert "Traceback" not in done.stderr


def test_hash_pin_command_output_is_accepted_by_the_loader(tmp_path: Path) -> None:
    done = subprocess.run(
        [*TABLECTL, "config", "hash-pin"], input="24680\n", capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert "24680" not in line
    stored = tomllib.loads(line)["pin_hash"]
    assert check_pin(stored, "24680")
    refused = subprocess.run(
        [*TABLECTL, "config", "hash-pin"], input="12\n", capture_output=True, text=True, cwd=ROOT
    )
    assert refused.returncode == 2
    assert "4 to 12 digits" in refused.stderr


def test_example_config_shows_every_key_the_loaders_accept() -> None:
    """deploy/config.example.toml documents every key (set or commented) of every section."""
    import re

    from drivers.gpio.pins import PinConfig
    from drivers.serial.serial_link import LinkConfig
    from fsm.round.config import GameConfig, ProgressiveLevel

    text = EXAMPLE.read_text()
    keys: set[str] = set()
    keys |= {f for f in PinConfig.__dataclass_fields__}
    keys |= {f for f in LinkConfig.__dataclass_fields__}
    keys |= {"path", "baudrate", "write_timeout", "read_tick", "backoff_initial", "backoff_max"}
    keys |= {"status_timeout", "dispense_timeout", "shuffle_timeout", "model"}
    # levels: [[game.levels]] tables; bonus: the [bonus] section
    keys |= set(GameConfig.KEYS) - {"table_id", "levels", "bonus"}
    assert "[[game.levels]]" in text and "\n[bonus]\n" in text
    keys |= set(ProgressiveLevel.KEYS)
    keys |= {"offered", "odds", "royal_match", "tables", "limits_cents", "min_wager_cents"}
    keys |= {"id", "asset_number", "location", "enabled", "address", "port", "name"}
    keys |= {"pin_hash", "house_way", "ez_pai_gow"}
    missing = sorted(
        k for k in keys if not re.search(rf"(^|[\s{{,#]){re.escape(k)}\s*=", text, re.M)
    )
    assert missing == []


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=True),
    st.text(max_size=8),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_KEYS = st.sampled_from(
    ["id", "asset_number", "port", "path", "address", "levels", "pin_hash", "pin", "offered", "x"]
)


@settings(max_examples=150, deadline=None)
@given(
    section=st.sampled_from(
        ["table", "pins", "serial", "sas", "game", "bonus", "journal", "supervisors"]
    ),
    body=st.one_of(_VALUES, st.dictionaries(_KEYS, _VALUES, max_size=4)),
)
def test_any_section_content_gives_config_error_never_a_crash(section: str, body: Any) -> None:
    """Bad input of any kind: the loader answers with ConfigError naming keys, nothing else."""
    data = minimal()
    data[section] = body
    try:
        parse_config(data, "fuzz.toml")
    except ConfigError as exc:
        assert exc.problems
        assert all(isinstance(p, str) and p for p in exc.problems)


def test_config_check_names_where_the_page_listens_and_what_it_allows(tmp_path: Path) -> None:
    """``tablectl config check`` shows every section it read, [web] included (docs/web.md)."""
    text = EXAMPLE.read_text().replace("enabled = false\nhost", "enabled = true\nhost", 1)
    text = text.replace("port = 8080", "port = 8181", 1).replace(
        "require_key = false", "require_key = true", 1
    )
    path = tmp_path / "t.toml"
    path.write_text(text)
    done = subprocess.run(
        [*TABLECTL, "config", "check", str(path)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.strip().startswith("web:"))
    assert "http://127.0.0.1:8181/" in line
    assert "key switch" in line
    off = subprocess.run(
        [*TABLECTL, "config", "check", str(EXAMPLE)], capture_output=True, text=True, cwd=ROOT
    )
    assert "web: disabled" in off.stdout
