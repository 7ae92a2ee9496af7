"""One release everywhere (issue 11): the lock file, the wheelhouse, and the manifest naming the
locked versions, so two tables cannot run different software without it showing.

``deploy/requirements.lock`` pins every runtime dependency (the ``pi`` extra included) with the
SHA-256 of each of its files, the aarch64 wheels of the Pi among them (pi-release.md: the lock
must carry the aarch64 wheels' hashes as well as the build machine's). ``make`` and
``deploy/install.sh`` install from it with ``--require-hashes``; ``deploy/wheelhouse.sh`` downloads
exactly those files for an offline table; ``install.sh --wheelhouse`` refuses another release's.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from controller.service.selfcheck import dependency_manifest

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "deploy" / "requirements.lock"
INSTALL = ROOT / "deploy" / "install.sh"
WHEELHOUSE = ROOT / "deploy" / "wheelhouse.sh"
IN_CI = os.environ.get("CI") == "true"


def locked() -> dict[str, tuple[str, list[str]]]:
    """``{name: (version, [sha256, ...])}`` of the lock."""
    out: dict[str, tuple[str, list[str]]] = {}
    current = ""
    for line in LOCK.read_text().splitlines():
        pinned = re.match(r"^([A-Za-z0-9._-]+)==(\S+)", line)
        if pinned:
            current = canonicalize_name(pinned.group(1))
            out[current] = (pinned.group(2), [])
            continue
        digest = re.search(r"--hash=sha256:([0-9a-f]{64})", line)
        if digest and current:
            out[current][1].append(digest.group(1))
    return out


def test_the_lock_pins_every_runtime_dependency_with_its_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = [*project["dependencies"], *project["optional-dependencies"]["pi"]]
    lock = locked()
    for spec in runtime:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{name} is not in {LOCK.name}: run make lock"
        version, hashes = lock[name]
        assert requirement.specifier.contains(version, prereleases=True), (spec, version)
    for name, (version, hashes) in lock.items():
        assert hashes, f"{name}=={version} has no hash"
    # the Pi's platform-specific wheels are there as well as this machine's (several files)
    assert len(lock["lgpio"][1]) > 2 and len(lock["tornado"][1]) > 2


def test_the_software_manifest_names_the_locked_versions() -> None:
    """The manifest the power-up hash covers names each installed runtime dependency at its
    version; ``make`` installed them from the lock, so each is the locked version."""
    lock = locked()
    names = {}
    for key in dependency_manifest():
        found = re.fullmatch(r"python/([^=]+)==([^/]+)/RECORD", key)
        assert found is not None, key
        names[found.group(1)] = found.group(2)
    assert {"gpiozero", "tornado", "pyserial", "transitions", "sqlite-utils"} <= set(names)
    for name, version in names.items():
        assert name in lock, f"{name} is installed as a runtime dependency but not locked"
        assert lock[name][0] == version, f"{name}: installed {version}, locked {lock[name][0]}"


def test_make_installs_the_runtime_dependencies_from_the_lock_with_hashes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install --quiet --require-hashes -r $(LOCK)" in makefile
    assert "LOCK   := deploy/requirements.lock" in makefile
    assert "uv pip compile pyproject.toml --extra pi --generate-hashes --universal" in makefile


def test_make_run_journals_under_var_of_the_checkout_and_serves_the_page_port() -> None:
    """Issue 11: ``make run`` on a fresh clone keeps its journal in ./var/ of the checkout
    (never a shared /tmp file another user's run has filled) and asks for the page on 8080."""
    done = subprocess.run(
        ["make", "-n", "-W", ".venv/.installed", "run"], cwd=ROOT, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    command = next(line for line in done.stdout.splitlines() if "tablectl simulate" in line)
    assert f"--db {ROOT}/var/paigow-simulated.db" in command
    assert "--port 8080" in command
    assert "mkdir -p var" in done.stdout
    assert "/var/" in (ROOT / ".gitignore").read_text().splitlines()


def test_install_refuses_a_wheelhouse_of_another_release(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    shutil.copy(LOCK, wheels / "requirements.lock")
    ok = subprocess.run(
        ["bash", str(INSTALL), "--dry-run", "--no-boot", "--wheelhouse", str(wheels)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    (wheels / "requirements.lock").write_text(LOCK.read_text() + "extra==1.0\n")
    done = subprocess.run(
        ["bash", str(INSTALL), "--dry-run", "--no-boot", "--wheelhouse", str(wheels)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1
    assert "is not a wheelhouse of this release" in done.stderr
    assert done.stdout == ""  # refused before any step


@pytest.mark.skipif(
    shutil.which("shellcheck") is None and not IN_CI,
    reason="shellcheck missing (.ci/system-deps installs it; never skipped under CI=true)",
)
def test_the_wheelhouse_script_is_shellcheck_clean() -> None:
    done = subprocess.run(["shellcheck", str(WHEELHOUSE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_the_wheelhouse_holds_the_locked_aarch64_wheels(tmp_path: Path) -> None:
    """pi-release.md: a wheelhouse built on any machine for Bookworm on a Pi (aarch64, CPython
    3.11); pip checks every downloaded file against the lock's hashes (--require-hashes)."""
    out = tmp_path / "wheelhouse"
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", str(WHEELHOUSE), str(out)], capture_output=True, text=True, env=env, timeout=600
    )
    if done.returncode != 0 and not IN_CI and "connection" in done.stderr.lower():
        pytest.skip(f"the package index is out of reach: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr
    wheels = sorted(p.name for p in out.glob("*.whl"))
    assert len(wheels) == len(locked())
    assert any(re.match(r"lgpio-.*-cp311-cp311-manylinux_2_\d+_aarch64\.whl", w) for w in wheels)
    assert any(re.match(r"tornado-.*-abi3-.*aarch64.*\.whl", w) for w in wheels)
    assert (out / "requirements.lock").read_text() == LOCK.read_text()
    sums = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True)
    assert sums.returncode == 0


# --- make release (issue 29) ---------------------------------------------------------------------


def _clone(tmp_path: Path) -> Path:
    """A clean clone of this checkout's HEAD (what `make release` is run on)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    for key, value in (("user.email", "release@example.invalid"), ("user.name", "release")):
        subprocess.run(["git", "-C", str(clone), "config", key, value], check=True)
    return clone


def _release(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(clone / "deploy" / "release.sh"), "--no-wheelhouse", *args],
        cwd=clone, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHON": sys.executable},
    )  # fmt: skip


def _changelog_release(clone: Path, version: str) -> None:
    log = clone / "CHANGELOG.md"
    text = log.read_text().replace(
        "## [Unreleased]",
        f"## [Unreleased]\n\n## [{version}] - 2026-12-02\n\n- a test release\n",
        1,
    )
    log.write_text(text)
    subprocess.run(["git", "-C", str(clone), "commit", "-qam", f"release {version}"], check=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_tagged_commit_releases_its_version_with_notes_manifest_and_checksums(
    tmp_path: Path,
) -> None:
    clone = _clone(tmp_path)
    _changelog_release(clone, "7.3.1")
    subprocess.run(["git", "-C", str(clone), "tag", "v7.3.1"], check=True)
    done = _release(clone)
    assert done.returncode == 0, done.stdout + done.stderr
    out = clone / "build" / "release" / "7.3.1"
    wheel = out / "paigow_table_controller-7.3.1-py3-none-any.whl"
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        assert 'VERSION__ = "7.3.1"' in archive.read("controller/version.py").decode().upper()
        assert any(n.endswith("licenses/LICENSE") for n in archive.namelist())
    notes = (out / "RELEASE-NOTES.md").read_text()
    assert notes.startswith("# paigow-table-controller 7.3.1") and "- a test release" in notes
    assert "Development build" not in notes
    # the manifest: every .py and .toml of the three packages, hashed as the table hashes them
    manifest = (out / "software-packages.manifest").read_text().splitlines()
    names = [line.split("  ", 1)[1] for line in manifest]
    assert names == sorted(names) and "fsm/rules/cards.py" in names
    assert "controller/version.py" in names and len(names) > 100
    digest = hashlib.sha256((out / "software-packages.manifest").read_bytes()).hexdigest()
    assert digest in notes
    sums = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True)
    assert sums.returncode == 0 and sums.stdout.count(b": OK") == 4


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_untagged_is_a_development_build_and_a_dirty_tree_or_unlogged_tag_is_refused(
    tmp_path: Path,
) -> None:
    clone = _clone(tmp_path)
    head = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "--short=12", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    done = _release(clone)
    assert done.returncode == 0, done.stderr
    built = [p.name for p in (clone / "build" / "release").iterdir()]
    assert len(built) == 1 and built[0].endswith(f".g{head}"), built
    assert "UNTAGGED" in done.stdout
    notes = next((clone / "build" / "release").glob("*/RELEASE-NOTES.md")).read_text()
    assert notes.startswith("> **Development build, not a release:**")

    (clone / "README.md").write_text("changed\n")
    dirty = _release(clone)
    assert dirty.returncode == 1 and "uncommitted changes" in dirty.stderr
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "README.md"], check=True)
    subprocess.run(["git", "-C", str(clone), "tag", "v8.0.0"], check=True)
    unlogged = _release(clone)
    assert unlogged.returncode == 1 and 'no "## [8.0.0]" section' in unlogged.stderr
