"""The software check can fail (issue 8 item 9; issue 12: the manifest detects a modified
installed file).

NY 5321.18(b)(3)(iv) asks for a self-check with software authentication and NJ 13:69E-1.39B(e)
for the equipment to go unplayable when a check fails (summarised in shared/reference/
table-rules.md: "refuses play if the check fails"). The power-up's software hash is compared with
the approved manifest install.sh writes (``python -m controller.service.selfcheck --write``); a
mismatch is journaled as ``fault_raised SOFTWARE_UNAPPROVED`` naming the changed file, shown in
the published status, and every later event is refused (no play, so no progressive play) until a
restart with the approved software.

The software here is really installed: ``pip install --target`` of this source tree into a
throwaway directory (no index, no dependency), which ``tablectl run`` then imports instead of
the checkout; the test changes one installed file.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cmd_run import ROOT, entry_rows, write_config

from controller.service.owner import SOFTWARE_FAULT_CODE
from controller.service.selfcheck import (
    SelfCheckError,
    approval_problem,
    read_manifest,
    software_hash,
    write_manifest,
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This source tree installed (not editable) into a directory of its own."""
    site = tmp_path_factory.mktemp("installed") / "site"
    build = tmp_path_factory.mktemp("build")
    source = build / "source"  # a copy: pip builds in the tree, the checkout stays clean
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "tests", "var", "build"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
         "--no-build-isolation", "--no-compile", "--target", str(site), str(source)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "TMPDIR": str(build)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return site


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}


def _python(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=_env(site), cwd=cwd,
        timeout=120,
    )  # fmt: skip


def _run_until_power_up(
    site: Path, config: Path, manifest: Path, db: Path, count: int, cwd: Path
) -> tuple[int, str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config),
         "--pin-factory", "mock", "--approved-manifest", str(manifest)],
        cwd=cwd, env=_env(site), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        give_up = time.monotonic() + 60
        while [t for t, _ in entry_rows(db)].count("power_up") < count:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < give_up, "no power-up"
            time.sleep(0.05)
        time.sleep(1.0)  # the held switches' positions are posted once the inputs are armed
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


def test_a_modified_installed_file_is_a_fault_that_refuses_play(
    installed: Path, tmp_path: Path, ptys: tuple[str, str]
) -> None:
    """NY 5321.18(b)(3)(iv), NJ 13:69E-1.39B(e): the approved release passes; the same release
    with one installed file changed journals SOFTWARE_UNAPPROVED naming that file, and nothing
    after it is stepped."""
    work = tmp_path / "cwd"  # not the checkout: python -m must import the installed copy
    work.mkdir()
    manifest = tmp_path / "software.manifest"
    wrote = _python(installed, "-m", "controller.service.selfcheck", "--write", str(manifest),
                    cwd=work)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    assert "python/tornado==" in manifest.read_text()  # the locked versions are named
    config = write_config(tmp_path, *ptys)
    db = tmp_path / "journal.db"

    check = [sys.executable, "-m", "controller.cli", "run", "--config", str(config),
             "--pin-factory", "mock", "--approved-manifest", str(manifest), "--check"]  # fmt: skip
    checked = subprocess.run(check, capture_output=True, text=True, env=_env(installed), cwd=work)
    assert checked.returncode == 0 and "approved (" in checked.stdout, checked.stderr

    code, _, err = _run_until_power_up(installed, config, manifest, db, 1, work)
    assert code == 0, err
    assert "software not approved" not in err
    first = entry_rows(db)
    assert first[0][0] == "power_up"
    assert not [d for t, d in first if t == "fault_raised"]
    assert [t for t, _ in first].count("supervisor_key") == 1  # play goes on: inputs stepped

    target = installed / "fsm" / "rules" / "settlement.py"
    target.write_text(target.read_text() + "\n# changed after approval\n")
    checked = subprocess.run(check, capture_output=True, text=True, env=_env(installed), cwd=work)
    assert "NOT APPROVED" in checked.stdout and "changed fsm/rules/settlement.py" in checked.stdout
    assert "play will be refused" in checked.stderr
    code, _, err = _run_until_power_up(installed, config, manifest, db, 2, work)
    assert code == 0, err
    assert "software not approved, play refused" in err
    rows = entry_rows(db)[len(first) :]
    assert [t for t, _ in rows] == ["power_up", "fault_raised"]  # the key's position: refused
    fault = rows[1][1]
    assert fault["code"] == SOFTWARE_FAULT_CODE and fault["device"] == "software"
    assert "changed fsm/rules/settlement.py" in fault["detail"]
    assert rows[0][1]["software_hash"] != first[0][1]["software_hash"]

    target.write_text(target.read_text().replace("\n# changed after approval\n", ""))
    code, _, err = _run_until_power_up(installed, config, manifest, db, 3, work)
    assert code == 0 and "software not approved" not in err  # the approved release again


def test_the_approval_names_what_differs_and_fails_on_a_missing_manifest(tmp_path: Path) -> None:
    approved = {"fsm/a.py": "1" * 64, "fsm/b.py": "2" * 64, "python/x==1/RECORD": "3" * 64}
    path = tmp_path / "software.manifest"
    digest = write_manifest(path, approved)
    assert read_manifest(path) == approved and digest == software_hash(approved)
    assert approval_problem(path, digest, approved) is None
    now = {"fsm/a.py": "9" * 64, "python/x==2/RECORD": "3" * 64}
    problem = approval_problem(path, software_hash(now), now)
    assert problem is not None
    assert "changed fsm/a.py" in problem and "missing fsm/b.py, python/x==1/RECORD" in problem
    assert "added python/x==2/RECORD" in problem
    missing = approval_problem(tmp_path / "none.manifest", digest, approved)
    assert missing is not None and "cannot be read" in missing
    path.write_text("not a manifest\n")
    with pytest.raises(SelfCheckError, match="line 1 is not a manifest line"):
        read_manifest(path)


def test_every_event_after_an_unapproved_power_up_is_refused_and_published(
    tmp_path: Path, ptys: tuple[str, str]
) -> None:
    """The real table's owner (``tablectl run``'s wiring, MockFactory pins): after the fault a
    supervisor's open is never stepped (no play, so no progressive play, NJ 13:69E-1.39B(e)),
    its poster is told why, and the published snapshot shows the fault."""
    from controller.cli.run import build_service
    from controller.config import load_config
    from fsm.round.events import Event

    config = load_config(write_config(tmp_path, *ptys))
    table = build_service(config, pin_mode="mock")
    table.owner.software_approval = lambda digest: f"software {digest[:12]} is not the approved"
    try:
        table.start()
        public = table.owner.public
        assert public.state == "Fault" and public.software_fault is not None
        receipt = table.owner.post_tracked(Event("table_opened", {"supervisor": "trainer"}))
        assert receipt.wait(10)
        assert receipt.seq is None
        assert receipt.error is not None and receipt.error.startswith("software not approved")
    finally:
        table.stop()
        table.gpio.close()
    types = [t for t, _ in entry_rows(tmp_path / "journal.db")]
    assert types == ["power_up", "fault_raised"]
