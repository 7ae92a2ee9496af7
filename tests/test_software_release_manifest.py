"""The release's manifest, compared at install (issue 28 item 2; NY 5321.18(b)(3)(iv),
NJ 13:69E-1.39B): the manifest is made when the release is built (deploy/manifest.sh, shipped
as software-packages.manifest with one release hash), and deploy/install.sh compares what it
installed with it (`python -m controller.service.selfcheck --release-manifest`): an edited or
added file stops the install before anything is approved. The approved manifest covers the
systemd unit too, so an edited unit is named at install and at start. The whole install from a
release, with a tampered wheel refused, runs in tests/test_install_root.py.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from controller.service import selfcheck

ROOT = Path(__file__).resolve().parents[1]
UNIT = "/etc/systemd/system/paigow-table.service"


def _tree(tmp_path: Path) -> Path:
    """A copy of the release's tree: the three packages and the unit (what a wheel installs)."""
    tree = tmp_path / "tree"
    for name in ("fsm", "drivers", "controller", "systemd"):
        shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def _manifest_of(tree: Path) -> str:
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "manifest.sh"), str(tree)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


def _install_step(tree: Path, release: Path, approved: Path) -> subprocess.CompletedProcess[str]:
    """install.sh's step: the installed packages (here the copy, first on the path) against the
    release's manifest, then the approved manifest written."""
    return subprocess.run(
        [sys.executable, "-m", "controller.service.selfcheck",
         "--release-manifest", str(release), "--write", str(approved)],
        capture_output=True, text=True, cwd=tree.parent,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )  # fmt: skip


def test_the_release_manifest_lists_the_unit_and_every_package_file_in_manifest_order(
    tmp_path: Path,
) -> None:
    text = _manifest_of(_tree(tmp_path))
    lines = text.splitlines()
    paths = [line.split("  ", 1)[1] for line in lines]
    assert paths == sorted(paths) and paths[0] == UNIT
    assert "controller/config.py" in paths and "fsm/rules/cards.py" in paths
    unit_hash = hashlib.sha256((ROOT / "systemd" / "paigow-table.service").read_bytes())
    assert lines[0] == f"{unit_hash.hexdigest()}  {UNIT}"
    # sha256sum's own format: what selfcheck reads
    assert selfcheck.manifest_text(selfcheck.read_manifest(_write(tmp_path, text))) == text


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "software-packages.manifest"
    path.write_text(text)
    return path


def test_install_stops_on_an_edited_or_added_installed_file_ny_5321_18_b3iv(
    tmp_path: Path,
) -> None:
    """The installed copy equal to the release: approved. An edited pay table and an added
    module: the install step exits 1 naming both and writes no approved manifest."""
    tree = _tree(tmp_path)
    # the unit's line is the throwaway root's to check (only there is it installed at its path)
    text = "".join(line for line in _manifest_of(tree).splitlines(True) if UNIT not in line)
    release = _write(tmp_path, text)
    approved = tmp_path / "software.manifest"
    done = _install_step(tree, release, approved)
    assert done.returncode == 0, done.stderr
    assert "matches the release's manifest" in done.stdout
    written = selfcheck.read_manifest(approved)
    assert "python/interpreter" in written and "fsm/rules/paytables.py" in written
    approved.unlink()

    with (tree / "fsm" / "rules" / "paytables.py").open("a") as f:
        f.write("\n# changed on the table\n")
    (tree / "controller" / "extra.py").write_text("print('not released')\n")
    done = _install_step(tree, release, approved)
    assert done.returncode == 1
    assert "not the release's" in done.stderr
    assert "changed fsm/rules/paytables.py" in done.stderr
    assert "added controller/extra.py" in done.stderr
    assert not approved.exists()  # nothing approved


def test_the_approved_manifest_covers_the_unit_and_an_edited_unit_is_named_at_install_and_start(
    tmp_path: Path,
) -> None:
    unit = tmp_path / "paigow-table.service"
    shutil.copy(ROOT / "systemd" / "paigow-table.service", unit)
    installed = selfcheck.software_manifest(system_files=(unit,))
    assert installed[unit.as_posix()] == hashlib.sha256(unit.read_bytes()).hexdigest()
    release = {k: v for k, v in installed.items() if k.startswith(selfcheck.RELEASE_PREFIXES)}
    release_path = _write(tmp_path, selfcheck.manifest_text(release))
    approved = tmp_path / "software.manifest"
    selfcheck.write_manifest(approved, installed)
    assert selfcheck.release_problem(release_path, installed) is None

    unit.write_text(unit.read_text().replace("NoNewPrivileges=yes", "NoNewPrivileges=no"))
    now = selfcheck.software_manifest(system_files=(unit,))
    at_install = selfcheck.release_problem(release_path, now)
    assert at_install is not None and f"changed {unit.as_posix()}" in at_install
    at_start = selfcheck.approval_problem(approved, selfcheck.software_hash(now), now)
    assert at_start is not None and f"changed {unit.as_posix()}" in at_start
    # a unit removed is missing, not ignored
    unit.unlink()
    gone = selfcheck.software_manifest(system_files=(unit,))
    missing = selfcheck.approval_problem(approved, selfcheck.software_hash(gone), gone)
    assert missing is not None and f"missing {unit.as_posix()}" in missing


def test_a_release_manifest_with_a_foreign_entry_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, f"{'0' * 64}  python/interpreter\n")
    problem = selfcheck.release_problem(path, selfcheck.software_manifest())
    assert problem is not None and "not a release's entries: python/interpreter" in problem
