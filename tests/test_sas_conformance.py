"""Conformance of the floor link against a SAS host nobody here wrote (sas-comm-py, a test
dependency) over a pty: the simulated table runs as a `tablectl simulate --headless --linger
--sas-link` process and every value the host reads is checked against the meters its journal
committed (read from the journal file, never from our code). Each host client gets its own pty
(reference/sas.md: a second client on one pty fails).

sas-comm-py 0.1.0 note: ``write_type_M`` reads a length byte by default; the 52 answer has none
(reference/sas.md's frame), so the 52 poll is made with ``following_length=False``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from journal_support import journal_entries
from sas_support import (
    HIT_LINE,
    bcd_value,
    drain_exceptions,
    drive_to_hit,
    exceptions_until,
    general_poll,
    hit_config,
    host,
    journal_meters,
    make_owner,
    post,
)

from controller.config import load_config

pytestmark = pytest.mark.xdist_group("sas")
TABLECTL = [sys.executable, "-m", "controller.cli"]


class Sim:
    def __init__(self, proc: subprocess.Popen[str], db: Path, link: Path) -> None:
        self.proc, self.db, self.link = proc, db, link
        self.out: list[str] = []

    def wait_line(self, needle: str, timeout: float = 120.0) -> str:
        assert self.proc.stdout is not None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            line = self.proc.stdout.readline()
            if not line:
                if self.proc.poll() is not None:
                    raise AssertionError(f"simulate exited {self.proc.returncode}: {self.out}")
                continue
            self.out.append(line)
            if needle in line:
                return line
        raise AssertionError(f"no {needle!r} in {self.out}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def start_sim(tmp: Path, rounds: int, seed: str, config: Path | None = None) -> Sim:
    db, link = tmp / "journal.db", tmp / "sas-link"
    cmd = [*TABLECTL, "simulate", "--headless", "--rounds", str(rounds), "--seed", seed]
    cmd += ["--db", str(db), "--sas-link", str(link), "--linger"]
    if config is not None:
        cmd += ["--config", str(config)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=Path(__file__).parents[1],
    )
    return Sim(proc, db, link)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    s = start_sim(tmp_path_factory.mktemp("sas"), rounds=6, seed="21")
    try:
        line = s.wait_line("SAS link:")
        assert str(s.link) in line and os.path.islink(s.link)
        s.wait_line("rounds,")  # the rounds are played: the meters no longer move
        time.sleep(0.5)
        yield s
    finally:
        start = time.monotonic()
        assert s.stop() == 0, s.out  # --linger: SIGTERM stops it cleanly...
        assert time.monotonic() - start < 5.0  # ...within a few seconds


@pytest.fixture(scope="module")
def sm(sim: Sim) -> Any:
    client = host(sim.link)
    yield client
    client.port.close()


@pytest.fixture(scope="module")
def meters(sim: Sim) -> dict[str, Any]:
    """The journal's meters of the (only) level, and the count of power-ups."""
    levels = journal_meters(sim.db)
    assert len(levels) == 1
    (level,) = levels.values()
    assert level["progressive_in"] > 0, "the seed must give progressive wagers"
    power_ups = sum(1 for _, t, _ in journal_entries(sim.db) if t == "power_up")
    return {**level, "power_ups": power_ups}


def fields(resp: Any, size: int = 4) -> list[int]:
    data = list(resp.data)
    return [bcd_value(data[i : i + size]) for i in range(0, len(data), size)]


def test_1a_current_credits_is_zero_chips_are_not_credits(sm: Any) -> None:
    resp = sm.write_type_R(0x1A, length_to_read=4)
    assert resp and fields(resp) == [0]
    assert [int(b, 16) for b in resp.raw_data] == [0x01, 0x1A, 0, 0, 0, 0, 0xC3, 0xFC]


def test_0f_meters_10_to_15_are_the_journals(sm: Any, meters: dict[str, Any]) -> None:
    resp = sm.write_type_R(0x0F, length_to_read=24)
    assert fields(resp) == [
        0,  # cancelled credits
        meters["wagered_cents"],  # coin in: progressive wagers in cents
        meters["tray_paid_cents"],  # coin out: fixed awards from the rack
        0,  # drop
        meters["meter_paid_cents"],  # jackpot: meter-funded awards
        meters["progressive_in"],  # games played: qualifying wagers
    ]


def test_1c_meters_are_the_journals(sm: Any, meters: dict[str, Any]) -> None:
    resp = sm.write_type_R(0x1C, length_to_read=32)
    assert fields(resp) == [
        meters["wagered_cents"],
        meters["tray_paid_cents"],
        0,
        meters["meter_paid_cents"],
        meters["progressive_in"],
        meters["wins"],
        0,  # door opened: no machine door
        meters["power_ups"],
    ]


def test_1f_machine_id_from_the_configuration(sm: Any, sim: Sim) -> None:
    resp = sm.write_type_R(0x1F, length_to_read=20)
    raw = bytes(int(b, 16) for b in resp.data)
    cfg = load_config(Path(__file__).parents[1] / "controller/data/simulated-table.toml")
    assert raw[0:2].decode() == cfg.sas.game_id
    assert raw[2:5].decode() == cfg.sas.additional_id
    assert raw[5] == 0x01  # denomination $0.01: credits are cents
    assert raw[6] == min(255, cfg.game.progressive_wager_cents)
    assert raw[7] == 0 and raw[8:10] == b"\x00\x00"  # group 0, options
    assert raw[10:16].decode() == cfg.sas.paytable_id
    assert raw[16:20].decode() == cfg.sas.base_percent


def test_54_version_602_and_serial_number(sm: Any) -> None:
    resp = sm.write_type_R(0x54, following_length=True)
    raw = bytes(int(b, 16) for b in resp.data)
    cfg = load_config(Path(__file__).parents[1] / "controller/data/simulated-table.toml")
    assert raw[0] == len(raw) - 1  # the length byte
    assert raw[1:4] == b"602"
    assert raw[4:].decode() == (cfg.sas.serial_number or str(cfg.table.asset_number))


def test_2f_selected_meters_for_game_0(sm: Any, meters: dict[str, Any]) -> None:
    codes = [0x00, 0x01, 0x02, 0x05, 0x06, 0x07, 0x0C]
    resp = sm.write_type_M(
        0x2F, optional_data=codes, BCD_game_number=[0, 0], add_length_binary=True,
        following_length=True,
    )  # fmt: skip
    data = [int(b, 16) for b in resp.data]
    assert data[:2] == [0, 0]
    got = {
        data[i]: bcd_value([f"{x:x}" for x in data[i + 1 : i + 5]]) for i in range(2, len(data), 5)
    }
    assert got == {
        0x00: meters["wagered_cents"],
        0x01: meters["tray_paid_cents"],
        0x02: meters["meter_paid_cents"],
        0x05: meters["progressive_in"],
        0x06: meters["wins"],
        0x07: meters["progressive_in"] - meters["wins"],
        0x0C: 0,
    }


def test_52_game_1_meters(sm: Any, meters: dict[str, Any]) -> None:
    resp = sm.write_type_M(0x52, BCD_game_number=[0, 1], length_to_read=18, following_length=False)
    data = list(resp.raw_data)[2:-2]  # an "M" Response takes its first byte for a length
    assert len(data) == 18
    assert bcd_value(data[:2]) == 1
    assert [bcd_value(data[i : i + 4]) for i in range(2, 18, 4)] == [
        meters["wagered_cents"],
        meters["tray_paid_cents"],
        meters["meter_paid_cents"],
        meters["progressive_in"],
    ]


def test_52_bad_game_number_is_nacked(sim: Sim, sm: Any) -> None:
    resp = sm.write(0x52, BCD_game_number=[0, 2], poll_type="M", response_type="ack_nack")
    assert resp.ack_nack == b"\x81"  # NACK: address | 0x80
    resp = sm.write(0x52, BCD_game_number=[0, 0x1A], poll_type="M", response_type="ack_nack")
    assert resp.ack_nack == b"\x81"  # bad BCD


def test_6f_extended_meters(sm: Any, meters: dict[str, Any]) -> None:
    resp = sm.write_type_M(
        0x6F, optional_data=[0x00, 0x00, 0x05, 0x00, 0x20, 0x00, 0x99, 0x00],
        BCD_game_number=[0, 0], add_length_binary=True, following_length=True,
    )  # fmt: skip
    data = [int(b, 16) for b in resp.data]
    assert data[:2] == [0, 0]
    i, got = 2, {}
    while i < len(data):
        code, size = data[i] | data[i + 1] << 8, data[i + 2]
        got[code] = bcd_value([f"{x:x}" for x in data[i + 3 : i + 3 + size]]) if size else None
        i += 3 + size
    assert got == {
        0x00: meters["wagered_cents"],
        0x05: meters["progressive_in"],
        0x20: meters["meter_paid_cents"],
        0x99: None,  # not carried: size 0
    }


def test_general_poll_starts_with_power_up_and_ends_empty(sm: Any) -> None:
    seen = drain_exceptions(sm)
    assert seen and seen[0] == 0x17
    assert general_poll(sm) == 0


# --------------------------------------------------------------------------- progressive hit
def test_progressive_hit_raises_51_1b_returns_it_until_validation_raises_52(tmp_path: Path) -> None:
    from controller.floor.service import pty_floor_link

    cfg = load_config(hit_config(tmp_path))
    db = tmp_path / "journal.db"
    owner = make_owner(cfg, db)
    owner.start()
    floor = pty_floor_link(cfg.sas, cfg.game, owner, db, tmp_path / "sas", serial_number="1")
    floor.start()
    sm = host(tmp_path / "sas")
    try:
        drive_to_hit(owner)
        # the queue is folded from the journal by the floor link's follower thread, after the
        # owner published: the host polls once it holds what the owner committed
        assert floor.wait_folded(owner.public.seq, 10.0)
        seen = exceptions_until(sm, 0x51)
        assert seen[-1] == 0x51, seen
        (pending,) = [
            e for _, t, d in journal_entries(db) for e in d["effects"] if e["type"] == "hit_pending"
        ]
        assert pending["line"] == HIT_LINE
        # 100% of the meter as it stands with this round's contributions: what the round's
        # hit_pending says it pays (the journal stores its meters once a round, at its end)
        display = pending["cents"]
        assert display > journal_meters(db)[pending["level"]]["display_cents"] - 1
        resp = sm.write_type_R(0x1B, length_to_read=20)
        data = list(resp.data)
        assert int(data[0], 16) == 0  # group: stand-alone
        assert int(data[1], 16) == 1  # level 1
        assert bcd_value(data[2:7]) == display  # 100% of the meter
        again = sm.write_type_R(0x1B, length_to_read=20)  # until validated
        assert bcd_value(list(again.data)[2:7]) == display
        post(owner, "hit_validated", position=1, supervisor="trainer")
        assert floor.wait_folded(owner.public.seq, 10.0)
        later = drain_exceptions(sm)
        assert 0x52 in later and 0x54 in later, later
        level = journal_meters(db)[pending["level"]]
        resp = sm.write_type_R(0x1B, length_to_read=20)
        assert bcd_value(list(resp.data)[2:7]) == 0  # reset
        resp = sm.write_type_R(0x84, length_to_read=7)
        assert bcd_value(list(resp.data)[2:7]) == level["last_hits"][-1]["amount_cents"]
        assert level["meter_paid_cents"] == display
        resp = sm.write_type_M(
            0x83, BCD_game_number=[0, 0], length_to_read=6, following_length=False
        )
        raw = list(resp.raw_data)[2:-2]
        assert bcd_value(raw[:2]) == 0 and bcd_value(raw[2:6]) == level["meter_paid_cents"]
        # every exception the host took is journaled as taken, in the order it took them
        owner.wait_idle(5.0)
        acked = [
            d["code"]
            for _, t, d in journal_entries(db)
            if t == "floor_command" and d["command"] == "exception_acked"
        ]
        assert acked == [*seen, *later]
    finally:
        sm.port.close()
        floor.stop()
        owner.stop()


KILLER = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {root!r})
sys.path.insert(0, {root!r} + "/tests")
from sas_support import make_owner, drive_to_hit, load
cfg = load(Path({cfg!r}))
owner = make_owner(cfg, Path({db!r}), training=True)  # the simulated table, killed
owner.start()
drive_to_hit(owner)
print("hit", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_kill_between_hit_and_validation_still_delivers_51_after_restart(tmp_path: Path) -> None:
    root = str(Path(__file__).parents[1])
    cfg = hit_config(tmp_path)
    db = tmp_path / "journal.db"
    script = KILLER.format(root=root, cfg=str(cfg), db=str(db))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == -signal.SIGKILL and "hit" in done.stdout, done.stderr
    types = [t for _, t, _ in journal_entries(db)]
    assert types[-1] == "progressive_outcome" and "hit_validated" not in types
    s = start_sim(tmp_path, rounds=1, seed="3", config=cfg)
    try:
        s.wait_line("SAS link:")
        s.wait_line("rounds,")
        sm = host(s.link)
        try:
            seen = drain_exceptions(sm)
        finally:
            sm.port.close()
        assert 0x51 in seen, seen
        assert seen.index(0x51) < seen.index(0x52), seen  # the handpay, then its reset
    finally:
        assert s.stop() == 0, s.out
