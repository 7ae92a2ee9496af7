"""``deploy/install.sh`` for real, offline, in a throwaway Debian root (issue 11: "tested ... for
real in a throwaway Debian root").

The root is this Debian 12 machine seen through an overlay (``mount -t overlay`` with ``/`` as
the read-only lower layer and a temporary upper layer) inside a private mount and network
namespace (``unshare --mount --net``): every file the installer writes (/etc/paigow, /opt/paigow,
/var/lib/paigow, /etc/passwd, the unit) lands in the upper layer and is thrown away with it, and
the namespace has no network, so the install must come from the wheelhouse alone. (debootstrap of
a fresh Bookworm would need a Debian mirror and minutes per run; the overlay gives the same
Debian 12 userland — Raspberry Pi OS Bookworm's base — in seconds.) Inside it, ``chroot`` runs
``install.sh --no-boot --wheelhouse DIR`` as root with a clean environment and Debian's own
``python3``, from the artefacts of ``make release`` (its source tarball, its wheel in the
wheelhouse); then the test checks what it installed: the release's version (``tablectl
--version``), the locked versions, the approved manifest,
the unit (``systemd-analyze verify`` with the installed ExecStart), the modes, and that the
manifest detects a modified installed file.

Needs root and permission to mount (CI runs as root on this machine): skipped otherwise, never
under CI=true.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_release import LOCK, ROOT, locked

IN_CI = os.environ.get("CI") == "true"

pytestmark = pytest.mark.slow


def _can_overlay(tmp_path: Path) -> str | None:
    """Why a throwaway root cannot be made here (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (mount, chroot)"
    for tool in ("unshare", "chroot", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} is missing"
    if not Path("/usr/bin/python3").exists() or not Path("/etc/debian_version").exists():
        return "not a Debian machine with /usr/bin/python3"
    for part in ("u", "w", "m"):
        (tmp_path / "probe" / part).mkdir(parents=True)
    probe = tmp_path / "probe"
    done = subprocess.run(
        ["unshare", "--mount", "--net", "--fork", "sh", "-c",
         f"mount -t overlay overlay -o lowerdir=/,upperdir={probe}/u,workdir={probe}/w "
         f"{probe}/m && test -x {probe}/m/usr/bin/python3"],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        return f"overlay mount in a new namespace refused: {done.stderr.strip()[:200]}"
    return None


INSIDE = r"""
set -euo pipefail
M="$1"; U="$2"; W="$3"; SRC="$4"; WHEELS="$5"; TAMPERED="$6"
mount -t overlay overlay -o "lowerdir=/,upperdir=$U,workdir=$W" "$M"
mount --rbind /dev "$M/dev"
mount -t proc proc "$M/proc"
mount -t tmpfs tmpfs "$M/run"
mount -t tmpfs tmpfs "$M/tmp"
mkdir -p "$M/srv/src" "$M/srv/wheels" "$M/srv/tampered"
mount --bind "$SRC" "$M/srv/src"
mount --bind "$WHEELS" "$M/srv/wheels"
mount --bind "$TAMPERED" "$M/srv/tampered"
in_root() { chroot "$M" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
echo "=== install"
in_root bash /srv/src/deploy/install.sh --no-boot --wheelhouse /srv/wheels
echo "=== freeze"
in_root /opt/paigow/venv/bin/python -m pip freeze --all
echo "=== hash"
in_root /opt/paigow/venv/bin/python -m controller.service.selfcheck | tail -n 1
echo "=== version"
in_root /opt/paigow/venv/bin/tablectl --version
echo "=== approved"
in_root /opt/paigow/venv/bin/python -c 'from controller.service.selfcheck import *
print(software_hash(read_manifest("/etc/paigow/software.manifest")))'
echo "=== unit line"
grep -c '  /etc/systemd/system/paigow-table.service$' "$M/etc/paigow/software.manifest" || true
echo "=== modes"
in_root stat -c '%n %a %U:%G' /etc/paigow/software.manifest /var/lib/paigow/journal.seal \
    /etc/paigow/table.toml /var/lib/paigow /etc/systemd/system/paigow-table.service
in_root getent passwd paigow
in_root id -nG paigow
echo "=== verify"
in_root systemd-analyze verify /etc/systemd/system/paigow-table.service 2>&1 || echo "verify rc=$?"
echo "=== config check"
in_root /opt/paigow/venv/bin/tablectl config check /etc/paigow/table.toml || echo "check rc=$?"
echo "=== modified"
site=$(in_root /opt/paigow/venv/bin/python -c \
    'import fsm, os; print(os.path.dirname(fsm.__path__[0]))')
printf '\n# changed on the table\n' >> "$M$site/fsm/rules/paytables.py"
in_root /opt/paigow/venv/bin/python -c 'from controller.service.selfcheck import *
print(approval_problem("/etc/paigow/software.manifest", software_hash()))'
echo "=== tampered"
sha256sum "$M/etc/paigow/software.manifest" | cut -d' ' -f1
in_root bash /srv/src/deploy/install.sh --no-boot --wheelhouse /srv/tampered 2>&1 \
    || echo "install rc=$?"
sha256sum "$M/etc/paigow/software.manifest" | cut -d' ' -f1
echo "=== end"
"""


def _section(out: str, name: str) -> str:
    found = re.search(rf"=== {name}\n(.*?)(?:\n=== |\Z)", out, re.S)
    assert found is not None, f"no section {name} in:\n{out[-3000:]}"
    return found.group(1)


def test_install_sh_installs_offline_into_a_throwaway_debian_root(tmp_path: Path) -> None:
    why = _can_overlay(tmp_path)
    if why is not None:
        if IN_CI:
            pytest.fail(f"throwaway root impossible under CI: {why}")
        pytest.skip(why)
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        ["bash", str(ROOT / "deploy" / "wheelhouse.sh"), "--native", str(wheels)],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHON": "/usr/bin/python3"},
    )  # fmt: skip
    if built.returncode != 0 and not IN_CI and "connection" in built.stderr.lower():
        pytest.skip(f"the package index is out of reach: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stderr
    # the release's artefacts as copied to a table (make release, issue 29): its source tarball
    # and its wheel in the wheelhouse (the wheelhouses themselves: this machine's wheels)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    release = subprocess.run(
        ["bash", str(clone / "deploy" / "release.sh"), "--no-wheelhouse", str(tmp_path / "rel")],
        cwd=clone, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHON": sys.executable},
    )  # fmt: skip
    assert release.returncode == 0, release.stdout + release.stderr
    (wheel,) = (tmp_path / "rel").glob("paigow_table_controller-*.whl")
    version = wheel.name.split("-")[1]
    shutil.copy(wheel, wheels)
    # the release's manifest ships in its wheelhouse (release.sh): install.sh compares with it
    shutil.copy(tmp_path / "rel" / "software-packages.manifest", wheels)
    tampered = tmp_path / "tampered"
    shutil.copytree(wheels, tampered)
    _tamper(tampered / wheel.name, "fsm/rules/paytables.py")
    (tarball,) = (tmp_path / "rel").glob("paigow-table-controller-*.tar.gz")
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(tmp_path)], check=True)
    source = tmp_path / tarball.name.removesuffix(".tar.gz")
    layers = {name: tmp_path / name for name in ("m", "u", "w")}
    for layer in layers.values():
        layer.mkdir()
    done = subprocess.run(
        ["unshare", "--mount", "--net", "--fork", "bash", "-c", INSIDE, "inside",
         str(layers["m"]), str(layers["u"]), str(layers["w"]), str(source), str(wheels),
         str(tampered)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 0, out[-4000:] + done.stderr[-4000:]

    install = _section(out, "install")
    assert "==> done" in install
    assert "matches the release's manifest /srv/wheels/software-packages.manifest" in install
    assert _section(out, "unit line").strip() == "1"  # the unit is approved with the code
    assert "pip install --no-index" not in install  # not a dry run: the commands ran
    freeze = dict(
        line.split("==", 1) for line in _section(out, "freeze").splitlines() if "==" in line
    )
    installed = {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in freeze.items()}
    freeze_text = _section(out, "freeze")
    for name, (pinned, _) in locked().items():
        assert installed.get(name) == pinned, (name, pinned, freeze)
    # the release's wheel, not a build of the source tree
    assert "paigow-table-controller @ file:///srv/wheels/paigow_table_controller-" in freeze_text
    assert _section(out, "version").startswith(f"tablectl {version}\nsoftware ")
    hash_line = _section(out, "hash").strip()
    approved = _section(out, "approved").strip()
    assert hash_line == f"software hash {approved}"  # the installer approved what it installed

    modes = _section(out, "modes")
    assert "/etc/paigow/software.manifest 444 root:paigow" in modes
    # forward-secure seals by default (issue 23): the sealing key made as the service user, who
    # overwrites it after every entry; its verification key printed once, kept off the Pi
    assert "/var/lib/paigow/journal.seal 600 paigow:paigow" in modes
    assert "VERIFICATION KEY" in install
    assert re.search(r"\n\s+pgvk1-[0-9a-f-]+\n", install), install[-2000:]
    assert "journal.key" not in install
    assert "/etc/paigow/table.toml 640 root:paigow" in modes
    assert "/var/lib/paigow 750 paigow:paigow" in modes
    assert "/usr/sbin/nologin" in modes and {"gpio", "spi", "dialout"} <= set(
        modes.strip().splitlines()[-1].split()
    )
    verify = _section(out, "verify")
    assert "rc=" not in verify and "Unknown" not in verify, verify
    assert "rc=" not in _section(out, "config check")
    modified = _section(out, "modified")
    assert "is not the approved" in modified and "changed fsm/rules/paytables.py" in modified
    # a wheel whose pay table was edited after the release was built: the install stops, names
    # the file and approves nothing (issue 28 item 2)
    before, *said, after = _section(out, "tampered").strip().splitlines()
    said_text = "\n".join(said)
    assert "install rc=1" in said_text and "changed fsm/rules/paytables.py" in said_text
    assert "nothing approved" in said_text and before == after
    # nothing leaked out of the throwaway root
    assert not Path("/etc/paigow/software.manifest").exists() or _was_there_before()
    assert LOCK.exists() and sys.executable


def _tamper(wheel: Path, member: str) -> None:
    """Rewrite ``wheel`` with one line added to ``member`` (its RECORD left as it was)."""
    import zipfile

    staged = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as old, zipfile.ZipFile(staged, "w") as new:
        for item in old.infolist():
            data = old.read(item)
            if item.filename == member:
                data += b"\n# edited after the release was built\n"
            new.writestr(item, data)
    staged.replace(wheel)


def _was_there_before() -> bool:
    """A machine that really is a table (never CI) may have its own /etc/paigow."""
    return not IN_CI
