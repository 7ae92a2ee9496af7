"""Power-up self-check: the software's SHA-256 manifest and the storage check.

table-rules.md: the controller checks itself at power-up, including an authentication of its own
software (a SHA-256 manifest), and refuses play if the check fails; it goes unplayable on a
memory/storage failure (NJ 13:69E-1.39B(d)). Expected digests here come from hashlib over the files
read directly, or from coreutils' sha256sum, never from the module under test.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

import controller
from controller.journal.store import Journal
from controller.service.selfcheck import (
    SelfCheckError,
    check_storage,
    software_hash,
    software_manifest,
)


@pytest.fixture
def fake_software(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two small importable packages (one with a subpackage and a __pycache__) on sys.path."""
    root = tmp_path / "site"
    (root / "pgfake_a" / "sub").mkdir(parents=True)
    (root / "pgfake_a" / "__pycache__").mkdir()
    (root / "pgfake_b").mkdir()
    (root / "pgfake_a" / "__init__.py").write_text('"""a"""\n')
    (root / "pgfake_a" / "rules.py").write_text("RESET = 100_000\n")
    (root / "pgfake_a" / "sub" / "__init__.py").write_text("")
    (root / "pgfake_a" / "sub" / "x.py").write_text("X = 1\n")
    (root / "pgfake_a" / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"\x00\x01")
    (root / "pgfake_a" / "notes.txt").write_text("not code\n")
    (root / "pgfake_a" / "sub" / "paytable.toml").write_text("flush = 300\n")
    (root / "pgfake_b" / "__init__.py").write_text("B = 2\n")
    monkeypatch.syspath_prepend(str(root))
    return root


def test_manifest_lists_every_python_and_data_file_with_its_sha256(fake_software: Path) -> None:
    manifest = software_manifest(("pgfake_a", "pgfake_b"), None)
    expected_paths = [
        "pgfake_a/__init__.py",
        "pgfake_a/rules.py",
        "pgfake_a/sub/__init__.py",
        "pgfake_a/sub/paytable.toml",
        "pgfake_a/sub/x.py",
        "pgfake_b/__init__.py",
    ]
    assert list(manifest) == expected_paths
    for rel in expected_paths:
        assert manifest[rel] == hashlib.sha256((fake_software / rel).read_bytes()).hexdigest()


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="coreutils sha256sum not present")
def test_software_hash_is_reproducible_with_coreutils(fake_software: Path) -> None:
    """A test lab can authenticate the installed software without our code."""
    listing = subprocess.run(
        "find pgfake_a pgfake_b \\( -name '*.py' -o -name '*.toml' \\) "
        "-not -path '*/__pycache__/*' | LC_ALL=C sort "
        "| xargs sha256sum | sha256sum",
        shell=True,
        cwd=fake_software,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[0]
    assert software_hash(software_manifest(("pgfake_a", "pgfake_b"), None)) == listing


def test_one_changed_byte_changes_the_software_hash(fake_software: Path) -> None:
    before = software_hash(software_manifest(("pgfake_a", "pgfake_b"), None))
    rules = fake_software / "pgfake_a" / "rules.py"
    rules.write_text("RESET = 100_001\n")
    after = software_hash(software_manifest(("pgfake_a", "pgfake_b"), None))
    assert after != before
    rules.write_text("RESET = 100_000\n")
    assert software_hash(software_manifest(("pgfake_a", "pgfake_b"), None)) == before
    (fake_software / "pgfake_b" / "extra.py").write_text("")
    assert software_hash(software_manifest(("pgfake_a", "pgfake_b"), None)) != before


def test_installed_manifest_covers_fsm_drivers_and_controller() -> None:
    manifest = software_manifest()
    here = Path(controller.__file__).parent / "service" / "selfcheck.py"
    assert (
        manifest["controller/service/selfcheck.py"] == hashlib.sha256(here.read_bytes()).hexdigest()
    )
    assert "fsm/rules/cards.py" in manifest
    assert "drivers/__init__.py" in manifest
    assert {p.split("/")[0] for p in manifest} == {"fsm", "drivers", "controller", "python"}
    assert len(software_hash()) == 64


def test_the_manifest_names_each_runtime_dependency_at_its_version_with_its_record() -> None:
    """One release everywhere (issue 11): the hash covers the dependencies' versions and files,
    so a table with another tornado has another software hash. Expected digests from the
    distribution's RECORD file read directly."""
    import importlib.metadata

    manifest = software_manifest()
    lines = {k: v for k, v in manifest.items() if k.startswith("python/")}
    dist = importlib.metadata.distribution("tornado")
    key = f"python/tornado=={dist.version}/RECORD"
    record = Path(str(dist.locate_file(f"tornado-{dist.version}.dist-info/RECORD")))
    assert lines[key] == hashlib.sha256(record.read_bytes()).hexdigest()
    for name in ("gpiozero", "colorzero", "pyserial", "transitions", "sqlite-utils", "six"):
        assert any(k.startswith(f"python/{name}==") for k in lines), name
    assert not any(k.startswith(("python/pytest==", "python/mypy==")) for k in lines)


def test_missing_package_is_a_clear_error() -> None:
    with pytest.raises(SelfCheckError, match="software package 'pgfake_missing' is not installed"):
        software_manifest(("pgfake_missing",))


def test_storage_check_passes_for_a_sound_journal_and_a_new_one(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    assert check_storage(path) == []  # not created yet: power-up will create it
    with Journal.open(path, created_ms=0) as journal:
        journal.append(1, None, "power_up", {"software": software_hash()}, {}, {})
    assert check_storage(path) == []
    assert check_storage(path, full=False) == []


def test_storage_check_reports_a_damaged_or_foreign_file(tmp_path: Path) -> None:
    """A storage failure makes the table unplayable (NJ 13:69E-1.39B(d)): it must be reported."""
    path = tmp_path / "journal.db"
    with Journal.open(path, created_ms=0) as journal:
        for i in range(300):
            journal.append(i, 1, "chip_detected", {"position": i % 6 + 1}, {"n": i}, {})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert check_storage(path)
    path.write_bytes(b"garbage" * 1000)
    problems = check_storage(path)
    assert problems and "not a database" in problems[-1]
    assert check_storage(tmp_path / "no-such-dir" / "journal.db") == [
        f"{tmp_path / 'no-such-dir'}: journal directory does not exist"
    ]


def test_storage_check_reports_a_full_disk(tmp_path: Path) -> None:
    problems = check_storage(tmp_path / "journal.db", min_free_bytes=2**62)
    assert len(problems) == 1 and "bytes free, need" in problems[0]


def test_a_changed_pay_table_changes_the_software_hash(fake_software: Path) -> None:
    """Pay tables are certified with the code: paying less must not go unnoticed."""
    before = software_hash(software_manifest(("pgfake_a", "pgfake_b"), None))
    (fake_software / "pgfake_a" / "sub" / "paytable.toml").write_text("flush = 299\n")
    assert software_hash(software_manifest(("pgfake_a", "pgfake_b"), None)) != before
