"""docs/conformance.md stays true: every test it cites exists, every row has a verdict, every
"implemented" row names the test that shows it and the mutant that breaks its rule (a mutant of
tests/conformance/mutants.py whose patches still apply to this tree), and every subdivision of the
three texts has a row (issue 8 "Done means"; issue 24 item 8: a matrix whose every row can fail).

The test names are collected by parsing the test files with ``ast`` (never by running pytest), so
a renamed or deleted test is found without importing anything. Whether each mutant is killed is
`make conformance`'s (tests/conformance); here only that each one exists and applies.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest
from conformance.matrix import CITE, DOC, HEADER, ROOT, VERDICTS, rows
from conformance.mutants import MUTANTS, Mutant, Patch, apply


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
    for row in rows():
        cells = [row.subdivision, row.requirement, row.verdict, row.mutant or "-", row.evidence]
        out.setdefault(row.text, []).append(cells[: row.cells])
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


def test_every_row_has_a_verdict_and_implemented_rows_name_a_test_and_a_mutant() -> None:
    table_heads = [
        ln for ln in DOC.read_text(encoding="utf-8").splitlines() if ln.startswith("| subdivision")
    ]
    assert table_heads and all(
        [c.strip() for c in ln.strip().strip("|").split("|")] == list(HEADER) for ln in table_heads
    ), f"every table's columns: {' | '.join(HEADER)}"
    all_rows = rows()
    assert len(all_rows) > 100
    for row in all_rows:
        assert row.cells == len(HEADER), f"row {row.subdivision}: {len(HEADER)} cells"
        verdict = row.verdict
        assert verdict.startswith(VERDICTS), f"row {row.subdivision}: {verdict!r} is no verdict"
        if verdict == "implemented":
            assert row.tests, f"row {row.subdivision}: 'implemented' names no test"
            assert row.mutant in MUTANTS, (
                f"row {row.label}: 'implemented' names no mutant of tests/conformance/mutants.py "
                f"({row.mutant!r})"
            )
        if verdict.startswith("in progress"):
            assert "issue" in verdict, f"row {row.subdivision}: say which issue item"


def test_every_mutant_breaks_an_implemented_row_or_a_reading() -> None:
    used = {r.mutant for r in rows() if r.verdict.startswith(("implemented", "reading"))}
    assert set(MUTANTS) <= used, f"mutants no row names: {sorted(set(MUTANTS) - used)}"


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_applies_to_this_tree(name: str, tmp_path: Path) -> None:
    """Each patch's text is found exactly once (the code has not drifted from the mutant) and
    the patched file compiles; applied to a copy of the files it touches, then restored."""
    mutant = MUTANTS[name]
    for file in {p.file for p in mutant.patches}:
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / file, tmp_path / file)
    before = {f: (tmp_path / f).read_text() for f in {p.file for p in mutant.patches}}
    restore = apply(mutant, tmp_path)
    for file, text in before.items():
        assert (tmp_path / file).read_text() != text, f"{name}: {file} unchanged"
    restore()
    assert {f: (tmp_path / f).read_text() for f in before} == before


def test_a_patch_whose_text_drifted_is_refused_not_applied(tmp_path: Path) -> None:
    """The check above must be able to fail: a patch whose text is gone (or found twice) raises
    and leaves the file as it was."""
    f = tmp_path / "m.py"
    f.write_text("a = 1\nb = 1\n")
    gone = Mutant("x", (Patch("m.py", "a = 1", "a = 2"), Patch("m.py", "c = 1", "c = 2")))
    with pytest.raises(ValueError, match="not found"):
        apply(gone, tmp_path)
    twice = Mutant("x", (Patch("m.py", "= 1", "= 2"),))
    with pytest.raises(ValueError, match="found 2 times"):
        apply(twice, tmp_path)
    broken = Mutant("x", (Patch("m.py", "a = 1", "a = ("),))
    with pytest.raises(ValueError, match="does not compile"):
        apply(broken, tmp_path)
    assert f.read_text() == "a = 1\nb = 1\n"


def _subdivisions(section: str) -> set[str]:
    got: set[str] = set()
    for title, section_rows in _sections().items():
        if title.startswith(section):
            for cells in section_rows:
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
