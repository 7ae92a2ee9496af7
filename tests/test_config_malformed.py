"""A table of malformed configuration files, each with the message it must produce (issue 12):
values no table could mean are refused at load, naming the key. NaN and infinity in every
number of every section (each serial timing key, where a NaN timeout would never fire); money
within `MAX_CENTS` ($1,000,000,000.00); times within `MAX_SECONDS`; a meter reset below what NY
5324.41(k)(4)(ii) pays a lower hand; control characters in a path; nesting the TOML parser
cannot follow.

Each case is a real file (the example configuration with one line changed) read by
``load_config``, the loader ``tablectl config check``, ``run`` and ``simulate`` use.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.config import ConfigError, load_config
from fsm.configread import MAX_CENTS, MAX_SECONDS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = (ROOT / "deploy" / "config.example.toml").read_text()

SERIAL_TIMES = {
    "serial.shoe": ("status_timeout", "dispense_timeout"),
    "serial.shuffler": ("status_timeout", "shuffle_timeout"),
    "serial.shoe.port": ("write_timeout", "read_tick", "backoff_initial", "backoff_max"),
    "serial.shuffler.port": ("write_timeout", "read_tick", "backoff_initial", "backoff_max"),
    "serial.shoe.link": (
        "ack_timeout", "heartbeat_interval", "silence_timeout", "idle_flush", "nak_holdoff",
    ),
    "serial.shuffler.link": (
        "ack_timeout", "heartbeat_interval", "silence_timeout", "idle_flush", "nak_holdoff",
    ),
}  # fmt: skip


def with_line(section: str, key: str, value: str) -> str:
    """The example file with ``key = value`` in ``[section]`` (replacing the key's line there,
    or added as the section's first key)."""
    header = f"[{section}]\n"
    if header not in EXAMPLE:
        return EXAMPLE + f"\n{header}{key} = {value}\n"
    start = EXAMPLE.index(header) + len(header)
    end = EXAMPLE.find("\n[", start)
    end = len(EXAMPLE) if end < 0 else end + 1
    body = EXAMPLE[start:end]
    pattern = re.compile(rf"^{re.escape(key)}\s*=.*$", re.M)
    if pattern.search(body):
        body = pattern.sub(lambda _: f"{key} = {value}", body, count=1)
    else:
        body = f"{key} = {value}\n" + body
    return EXAMPLE[:start] + body + EXAMPLE[end:]


def problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value.problems


def test_the_example_file_itself_loads() -> None:
    assert load_config(ROOT / "deploy" / "config.example.toml").table.id


TIMING_CASES = [
    (section, key, value)
    for section, keys in SERIAL_TIMES.items()
    for key in keys
    for value in ("nan", "inf", "-inf", "1e308")
]


@pytest.mark.parametrize(("section", "key", "value"), TIMING_CASES)
def test_nan_infinity_and_timeouts_that_never_fire_are_refused_in_every_serial_timing_key(
    tmp_path: Path, section: str, key: str, value: str
) -> None:
    found = problems(tmp_path, with_line(section, key, value))
    assert len(found) == 1, found
    shown = {"1e308": "1e+308"}.get(value, value)
    assert found[0].startswith(f"{section}.{key}: must be a finite number of seconds")
    assert found[0].endswith(f"got float {shown}")
    assert f"{MAX_SECONDS:g}" in found[0]


#: (section, key, TOML value, the message's beginning)
CASES = [
    ("game.levels", "initial_cents", "99999999999999999999999",
     f"game.levels[0].initial_cents: must be an integer 0..{MAX_CENTS}, got int 9999"),
    ("game.levels", "initial_cents", str(MAX_CENTS + 1),
     f"game.levels[0].initial_cents: must be an integer 0..{MAX_CENTS}, got int {MAX_CENTS + 1}"),
    ("game.levels", "reset_cents", "1",
     "game.levels[0].reset_cents: 1 is below 20000, the least NY 5324.41(k)(4)(ii) pays"),
    ("game.levels", "initial_cents", "100",
     "game.levels[0].initial_cents: 100 is below 20000, the least NY 5324.41(k)(4)(ii) pays"),
    ("game.levels", "limit_cents", str(10 * MAX_CENTS),
     f"game.levels[0].limit_cents: must be an integer 0..{MAX_CENTS}"),
    ("game.levels", "limit_cents", "50000",
     "game.levels[0].limit_cents: limit 50000 is below the initial or reset amount"),
    ("game.levels", "rate_bp", "nan", "game.levels[0].rate_bp: must be an integer"),
    ("sas", "inter_byte_gap", "nan", "sas.inter_byte_gap: must be a finite number of seconds"),
    ("sas", "inter_byte_gap", "inf", "sas.inter_byte_gap: must be a finite number of seconds"),
    ("sas", "address", "inf", "sas.address: must be an integer 1..127, got float inf"),
    ("sas", "port", '"/dev/tty\\u0000AMA0"', "sas.port: control characters are not allowed"),
    ("journal", "path", '"/var/lib/paigow/j\\u0000.db"',
     "journal.path: control characters are not allowed"),
    ("journal", "path", '"/var/lib/paigow/j\\n.db"',
     "journal.path: control characters are not allowed"),
    ("journal", "anchor", '"/var/lib/\\u0000anchor"', "journal.anchor: must be an absolute file"),
    ("console", "socket", '"/run/paigow/\\u0000.sock"', "console.socket: must be an absolute"),
    ("serial.shoe.port", "path", '"/dev/paigow\\u0000-shoe"', "serial.shoe.port.path: must be"),
    ("pins", "glitch_filter_ms", "nan", "pins.glitch_filter_ms:"),
    ("table", "asset_number", "inf", "table.asset_number: must be an integer"),
    ("table", "deep", "[" * 5000 + "]" * 5000, "not valid TOML: nested too deeply"),
]  # fmt: skip


@pytest.mark.parametrize(("section", "key", "value", "message"), CASES)
def test_each_malformed_file_gives_its_message(
    tmp_path: Path, section: str, key: str, value: str, message: str
) -> None:
    text = with_line(section, key, value)
    if section == "game.levels":  # the first [[game.levels]] table of the example
        text = with_line("[game.levels]", key, value)
    found = problems(tmp_path, text)
    assert any(p.startswith(message) for p in found), (message, found)
