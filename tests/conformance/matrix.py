"""The rows of docs/conformance.md as data: text, subdivision, verdict, mutant and cited tests.

The one parser of the matrix: tests/test_conformance_doc.py checks the document with it and
`python -m tests.conformance` runs its mutants. It reads the file only; it never runs a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "conformance.md"
CITE = re.compile(r"`(tests/test_\w+\.py)::(test_\w+)`")
MUTANT = re.compile(r"`(\w+)`")
HEADER = ("subdivision", "requirement", "verdict", "mutant", "evidence / note")
VERDICTS = (
    "implemented",
    "reading to confirm",
    "not supported",
    "dealer",
    "operator",
    "in progress",
)


@dataclass(frozen=True)
class Row:
    text: str  # the section heading after "## ", e.g. "NY 9 NYCRR § 5324.41 Pai gow poker"
    subdivision: str  # "(a)(4)", "(b)1", "lab: RNG scaling"
    requirement: str
    verdict: str
    mutant: str | None  # the mutant's name in tests/conformance/mutants.py, None for "-"
    evidence: str
    cells: int  # how many cells the line had (the header has five)

    @property
    def tests(self) -> list[str]:
        """The cited tests as pytest node ids, in the order the row names them (no repeats)."""
        out: list[str] = []
        for file, name in CITE.findall(self.evidence):
            node = f"{file}::{name}"
            if node not in out:
                out.append(node)
        return out

    @property
    def label(self) -> str:
        short = self.text.split(" ")[0] if self.text.startswith(("NY", "N.J.A.C.")) else ""
        if self.text.startswith("N.J.A.C. 13:69F-11.9"):
            short = "NJ 11.9"
        elif self.text.startswith("N.J.A.C. 13:69F-11.8C"):
            short = "NJ 11.8C"
        elif self.text.startswith("NY"):
            short = "NY"
        return f"{short} {self.subdivision}".strip()


def rows(doc: Path = DOC) -> list[Row]:
    """Every row of every table under a "## " heading (header and rule lines left out)."""
    out: list[Row] = []
    current = ""
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:]
            continue
        if not line.startswith("| ") or not current:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "subdivision" or set(cells[0]) <= {"-", " ", ":"}:
            continue
        padded = [*cells, "", "", "", "", ""]
        m = MUTANT.fullmatch(padded[3])
        out.append(
            Row(
                text=current,
                subdivision=padded[0],
                requirement=padded[1],
                verdict=padded[2],
                mutant=m.group(1) if m else None,
                evidence=padded[4],
                cells=len(cells),
            )
        )
    return out


def mutated(doc: Path = DOC) -> list[Row]:
    """The rows `make conformance` runs: every implemented row, and any other row naming a
    mutant (a reading to confirm that the controller follows)."""
    return [r for r in rows(doc) if r.verdict == "implemented" or r.mutant is not None]
