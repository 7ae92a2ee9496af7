"""docs/conformance.md stays true: every test it cites exists, every row has a verdict, every
"implemented" row names the test that shows it, and every subdivision of the three texts has a row
(issue 8 "Done means": kept current by a test that fails when a cited test no longer exists).

The test names are collected by parsing the test files with ``ast`` (never by running pytest), so
a renamed or deleted test is found without importing anything.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOC = ROOT / "docs" / "conformance.md"
CITE = re.compile(r"`(tests/test_\w+\.py)::(test_\w+)`")
VERDICTS = ("implemented", "dealer", "operator", "reading", "in progress", "not supported")


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return {
        n.name
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test_")
    }


def _sections() -> dict[str, list[list[str]]]:
    """The rows of each text's tables: heading "## ..." -> rows split into cells."""
    out: dict[str, list[list[str]]] = {}
    current = ""
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:]
            out[current] = []
        elif line.startswith("| (") or re.match(r"^\| \([a-z]\)|^\| \w", line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] in ("subdivision",) or set(cells[0]) <= {"-"}:
                continue
            if current:
                out[current].append(cells)
    return out


def _rows() -> list[list[str]]:
    return [row for rows in _sections().values() for row in rows]


def test_every_cited_test_exists_in_its_file() -> None:
    text = DOC.read_text(encoding="utf-8")
    cited = CITE.findall(text)
    assert len(cited) > 50, "the matrix cites the tests that show each rule"
    names: dict[str, set[str]] = {}
    missing = []
    for file, name in cited:
        path = ROOT / file
        if not path.exists():
            missing.append(f"{file} (no such file)")
            continue
        if file not in names:
            names[file] = _test_names(path)
        if name not in names[file]:
            missing.append(f"{file}::{name}")
    assert not missing, "docs/conformance.md cites tests that do not exist: " + ", ".join(missing)


def test_the_checker_finds_a_test_that_does_not_exist(tmp_path: Path) -> None:
    """The check above must be able to fail: a renamed test is not among the parsed names."""
    f = tmp_path / "test_x.py"
    f.write_text(
        "def test_a():\n    pass\n\nasync def test_b():\n    pass\n\ndef helper():\n    pass\n"
    )
    assert _test_names(f) == {"test_a", "test_b"}


def test_every_row_has_a_verdict_and_implemented_rows_name_a_test() -> None:
    rows = _rows()
    assert len(rows) > 100
    for cells in rows:
        assert len(cells) == 4, f"row {cells[0]}: four cells"
        verdict = cells[2]
        assert verdict.startswith(VERDICTS), f"row {cells[0]}: {verdict!r} is no verdict"
        if verdict == "implemented":
            assert CITE.search(cells[3]), f"row {cells[0]}: 'implemented' names no test"
        if verdict.startswith("in progress"):
            assert "issue" in verdict, f"row {cells[0]}: say which issue item"


def _subdivisions(section: str) -> set[str]:
    got: set[str] = set()
    for title, rows in _sections().items():
        if title.startswith(section):
            for cells in rows:
                m = re.match(r"\(([a-z])\)|^([a-z])\b", cells[0])
                if m:
                    got.add(m.group(1) or m.group(2))
    return got


def test_every_subdivision_of_the_three_texts_has_a_row() -> None:
    """NY 5324.41 (a)-(q), NJ 13:69F-11.9 (a)-(m), NJ 13:69F-11.8C (a)-(c) and its (b)1-6."""
    assert _subdivisions("NY 9 NYCRR") == set("abcdefghijklmnopq")
    assert _subdivisions("N.J.A.C. 13:69F-11.9") == set("abcdefghijklm")
    assert _subdivisions("N.J.A.C. 13:69F-11.8C") == set("abc")
    nj8c = next(rows for t, rows in _sections().items() if t.startswith("N.J.A.C. 13:69F-11.8C"))
    assert {c[0] for c in nj8c} >= {f"(b){i}" for i in range(1, 7)}
    ny_j = {c[0] for c in _rows() if c[0].startswith("(j)")}
    assert ny_j >= {"(j)(1)", "(j)(2)(i)", "(j)(2)(iii)", "(j)(2)(vi)", "(j)(3)"}
