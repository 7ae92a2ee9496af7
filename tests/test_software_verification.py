"""On-demand software verification (issue 28 item 3; GLI-11 style, NY 5321.18(b)(3)(iv),
NJ 13:69E-1.39B): the console, the page (signed in) and SAS long poll 21 take the asker's seed
and answer a digest over every approved file, read at the moment of asking, journaled with who
asked; `tablectl verify-software` computes the same answer on another machine.

The expected answers are computed here independently: HMAC-SHA1 with the standard library over
the files read by the test, and the SAS 21 signature with crccheck and with the CRC routine
published with SAS (nibble-wise, constant 010201 octal).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crccheck.crc import Crc16Kermit
from journal_support import journal_entries
from sas_support import hit_config, host, load, make_owner
from test_console import Rig, make_rig
from test_web_server import Browser, Served, _serve

from controller.cli import main
from controller.lab import software
from controller.service import selfcheck
from controller.web.web_config import WebSection
from fsm.round.machine import RoundMachine


@pytest.fixture()
def approved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """An approved manifest of three files (one of the software's own, two written here),
    installed where the service looks for it."""
    files = [tmp_path / "b-unit.service", tmp_path / "a-schema.toml"]
    files[0].write_bytes(b"[Service]\nExecStart=/opt/paigow/bin/tablectl run\n")
    files[1].write_bytes(bytes(range(256)) * 40)
    own = Path(software.__file__)
    manifest = {str(f): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    manifest["controller/lab/software.py"] = hashlib.sha256(own.read_bytes()).hexdigest()
    path = tmp_path / "software.manifest"
    path.write_text(selfcheck.manifest_text(manifest))
    monkeypatch.setattr(selfcheck, "APPROVED_MANIFEST", path)
    # manifest order: sorted by entry, as the manifest is written
    return [files[1], files[0], own] if str(files[1]) < str(files[0]) else [files[0], files[1], own]


def _bytes(files: list[Path]) -> bytes:
    return b"".join(f.read_bytes() for f in files)


def _rev16(x: int) -> int:
    return int(f"{x:016b}"[::-1], 2)


def _sas_crc(data: bytes, crcval: int) -> int:
    """The CRC routine published with SAS (crcval: the initial value, here the host's seed)."""
    for c in data:
        q = (crcval ^ c) & 0o17
        crcval = (crcval >> 4) ^ (q * 0o10201)
        q = (crcval ^ (c >> 4)) & 0o17
        crcval = (crcval >> 4) ^ (q * 0o10201)
    return crcval


# ------------------------------------------------------------------------------- the digests
def test_hmac_sha1_is_keyed_by_the_seed_over_every_approved_file_in_manifest_order_ny_5321_18_b3iv(
    approved: list[Path],
) -> None:
    seed = bytes.fromhex("00ff10203040")
    result = software.verify("hmac-sha1", seed.hex())
    assert result.digest == hmac.new(seed, _bytes(approved), hashlib.sha1).hexdigest()
    assert (result.files, result.approved) == (3, True)
    assert result.size == len(_bytes(approved))


def test_an_edited_approved_file_changes_the_answer_and_a_missing_one_is_named(
    approved: list[Path],
) -> None:
    before = software.verify("hmac-sha1", "a5").digest
    approved[0].write_bytes(approved[0].read_bytes() + b"\n")
    assert software.verify("hmac-sha1", "a5").digest != before
    approved[0].unlink()
    with pytest.raises(software.VerifyError, match=approved[0].name):
        software.verify("hmac-sha1", "a5")


def test_sas_21_signature_is_the_sas_crc_seeded_by_the_host_over_the_approved_files(
    approved: list[Path],
) -> None:
    data = _bytes(approved)
    for seed in (0x0000, 0x1234, 0xBEEF):
        signature, result = software.rom_signature(seed)
        assert signature == _sas_crc(data, seed)
        # crccheck takes its initial value unreflected: the SAS routine's register, reflected
        assert signature == Crc16Kermit.calc(data, initvalue=_rev16(seed))
        assert result.digest == f"{signature:04x}"


@pytest.mark.parametrize(
    ("method", "seed"),
    [("hmac-sha1", ""), ("hmac-sha1", "abc"), ("hmac-sha1", "zz"), ("hmac-sha1", "00" * 65),
     ("sas-crc16", "12"), ("sas-crc16", "123456"), ("md5", "00")],
)  # fmt: skip
def test_a_seed_that_is_not_one_is_refused_with_the_reason(method: str, seed: str) -> None:
    with pytest.raises(software.VerifyError):
        software.parse_seed(method, seed)


def test_verify_software_on_another_machine_gives_the_same_answer_ny_5321_18_b3iv(
    approved: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tablectl verify-software --seed S --manifest M`: the answer from the release's files."""
    manifest = str(selfcheck.APPROVED_MANIFEST)
    assert main(["verify-software", "--seed", "c0ffee", "--manifest", manifest, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    key = bytes.fromhex("c0ffee")
    assert doc["digest"] == hmac.new(key, _bytes(approved), hashlib.sha1).hexdigest()
    args = ["verify-software", "--seed", "1234", "--method", "sas-crc16", "--manifest", manifest]
    assert main([*args, "--json"]) == 0
    assert int(json.loads(capsys.readouterr().out)["digest"], 16) == _sas_crc(
        _bytes(approved), 0x1234
    )
    assert main(["verify-software", "--seed", "xyz"]) == 2
    assert "seed must be hex" in capsys.readouterr().err


# ---------------------------------------------------------------------------- SAS 21, a host
def test_sas_21_answered_to_an_independent_host_journaled_as_asked_by_the_floor_ny_5321_18_b3iv(
    approved: list[Path], tmp_path: Path
) -> None:
    """sas-comm-py sends 21 with the seed 0x1234 (low byte first) and checks the answer's own
    CRC; the signature is the SAS CRC over the approved files seeded 0x1234."""
    from controller.floor.service import pty_floor_link

    cfg = load(hit_config(tmp_path))
    db = tmp_path / "journal.db"
    owner = make_owner(cfg, db)
    owner.start()
    floor = pty_floor_link(cfg.sas, cfg.game, owner, db, tmp_path / "sas", serial_number="1")
    floor.start()
    sm = host(tmp_path / "sas")
    try:
        resp = sm.write_type_S(0x21, optional_data=[0x34, 0x12], length_to_read=2)
        assert not resp.error, "no answer to 21"
        signature = int(resp.data[0], 16) | int(resp.data[1], 16) << 8  # binary, LSB first
        assert signature == _sas_crc(_bytes(approved), 0x1234)
        owner.wait_idle(5.0)
        (entry,) = [d for _, t, d in journal_entries(db) if t == "software_verified"]
        assert (entry["by"], entry["via"], entry["method"]) == ("floor", "sas", "sas-crc16")
        assert (entry["seed"], entry["digest"]) == ("1234", f"{signature:04x}")
        assert entry["files"] == 3 and entry["approved"] is True
    finally:
        sm.port.close()
        floor.stop()
        owner.stop()


# ---------------------------------------------------------------------------- the console
@pytest.fixture()
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from make_rig(tmp_path)


def test_the_console_answers_a_supervisors_seed_and_journals_who_asked_ny_5321_18_b3iv(
    rig: Rig, approved: list[Path]
) -> None:
    reply = rig.ask("verify-software", "0badf00d")
    assert reply["ok"] is True, reply
    expected = hmac.new(bytes.fromhex("0badf00d"), _bytes(approved), hashlib.sha1).hexdigest()
    assert reply["digest"] == expected
    kind, data = rig.entry(reply["seq"])
    assert kind == "software_verified"
    assert (data["by"], data["via"], data["digest"]) == ("trainer", "console", expected)
    # a wrong PIN: refused and journaled as such, no digest answered
    refused = rig.ask("verify-software", "0badf00d", pin="9999")
    assert refused["ok"] is False and "digest" not in refused
    assert [k for _, k, _ in rig.entries()][-1] == "console_refused"
    # a seed that is not one: refused before the PIN is checked, nothing journaled
    count = len(rig.entries())
    assert "seed must be hex" in rig.ask("verify-software", "nothex")["error"]
    assert len(rig.entries()) == count


# ------------------------------------------------------------------------------- the page
@pytest.fixture()
def served(tmp_path: Path) -> Iterator[Served]:
    s = _serve(tmp_path, WebSection(enabled=True))
    try:
        yield s
    finally:
        s.server.stop()
        s.owner.stop()


def test_the_page_answers_a_signed_in_supervisors_seed_and_journals_it_ny_5321_18_b3iv(
    served: Served, approved: list[Path]
) -> None:
    b = Browser(served.url)
    b.get("/")
    status, reply = b.post("/api/verify-software", {"seed": "00112233"})
    assert status == 401 and "digest" not in reply
    assert b.post("/api/login", {"supervisor": "floor", "pin": "2468"})[0] == 200
    status, reply = b.post("/api/verify-software", {"seed": "00112233"})
    assert status == 200, reply
    expected = hmac.new(bytes.fromhex("00112233"), _bytes(approved), hashlib.sha1).hexdigest()
    assert reply["digest"] == expected and reply["by"] == "floor"
    rows: list[dict[str, Any]] = [
        d for s, t, d in journal_entries(served.db) if t == "software_verified"
    ]
    assert [(d["by"], d["via"], d["digest"]) for d in rows] == [("floor", "web", expected)]
    status, reply = b.post("/api/verify-software", {"seed": 12})
    assert status == 400


def test_a_signed_in_supervisor_verifies_the_software_from_the_page_in_a_browser_ny_5321_18_b3iv(
    served: Served, approved: list[Path]
) -> None:
    """The page's own form (a real browser): the seed typed in, the digest shown, journaled."""
    from playwright.sync_api import sync_playwright
    from web_support import launch, need_chromium

    executable = need_chromium()
    expected = hmac.new(bytes.fromhex("c0ffee"), _bytes(approved), hashlib.sha1).hexdigest()
    with sync_playwright() as pw:
        browser = launch(pw, executable)
        try:
            page = browser.new_page()
            page.goto(served.url)
            page.fill("#sup-id", "floor")
            page.fill("#sup-pin", "2468")
            page.click("#login-btn")
            page.wait_for_selector("#signed-in:not([hidden])", timeout=20_000)
            page.fill("#verify-seed", "c0ffee")
            page.click("#verify-btn")
            page.wait_for_selector(f"#action-result:has-text('{expected}')", timeout=20_000)
        finally:
            browser.close()
    rows = [d for _, t, d in journal_entries(served.db) if t == "software_verified"]
    assert [(d["by"], d["via"], d["digest"]) for d in rows] == [("floor", "web", expected)]


def test_sas_21_with_an_approved_file_missing_is_not_answered_and_the_problem_journaled(
    approved: list[Path],
) -> None:
    """A file the approved manifest lists and the table lacks: no signature (the host's 21
    times out), and the entry to journal names the file."""
    from types import MappingProxyType

    from controller.floor.exceptions import FloorFold
    from controller.floor.responder import Responder
    from controller.floor.sas_config import parse_sas
    from controller.service.owner import PublicSnapshot
    from drivers.sas.sas_link import Poll
    from fsm.round import GameConfig

    approved[1].unlink()
    problems: list[str] = []
    responder = Responder(parse_sas({}, problems), GameConfig(), "TBL0001")
    snap = PublicSnapshot(1, 0, "Closed", 0, 0, MappingProxyType({}), MappingProxyType({}))
    reply = responder.respond(Poll(1, 0x21, b"\x34\x12", b""), snap, FloorFold(), 0.0)
    assert reply.frame is None
    assert reply.verified is not None and approved[1].name in (reply.verified.problem or "")
    assert (reply.verified.by, reply.verified.via) == ("floor", "sas")
    assert reply.verified.digest is None
    machine = RoundMachine(GameConfig())  # the entry as the owner journals it: accepted
    assert machine.step(reply.verified.envelope(), 1) == []
