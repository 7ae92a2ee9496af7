"""README.md says what the project is and how to use it (issue 11, "Done means": the two
commands, the wiring table, the configuration reference), and stays true: its wiring table is
docs/wiring.md's (which tests/test_gpio_pinplan.py checks against the code's defaults), its
configuration table the operator guide's, and every section of the example configuration is in it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def table_after(text: str, header: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_readme_gives_the_two_commands_and_the_service_steps() -> None:
    assert "make run " in README and "make test " in README
    assert "./var/paigow-simulated.db" in README
    for step in ("sudo deploy/install.sh", "--wheelhouse DIR", "systemctl start paigow-table",
                 "make lock", "make wheelhouse"):  # fmt: skip
        assert step in README, step


def test_the_readme_wiring_table_is_the_wiring_document_s() -> None:
    header = "| device | key | BCM | header pin | dir | active | pull at reset |"
    wiring = table_after((ROOT / "docs" / "wiring.md").read_text(), header)
    assert wiring and table_after(README, header) == wiring


def test_the_readme_configuration_table_is_the_operator_guide_s_and_complete() -> None:
    header = "| section | what |"
    guide = table_after((ROOT / "docs" / "operator-guide.md").read_text(), header)
    rows = table_after(README, header)
    assert guide and rows == guide
    example = tomllib.loads((ROOT / "deploy" / "config.example.toml").read_text())
    documented = " ".join(row.split("|")[1] for row in rows)
    for section in example:
        assert f"[{section}" in documented or f"[[{section}" in documented, section
