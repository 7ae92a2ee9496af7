"""A SAS host flooding the table with commands cannot fill the journal (issue 23, item 6).

On main c291293 host commands (01/02, 09, broadcast 7F) were journaled one entry each with no
bound: 400 entries in 1.6 s. Now at most `LIMIT` a window are journaled, the host's latest word is
journaled as soon as the window has room (the table ends in the state the host asked for last,
NJ 13:69E-1.39B(d): progressive wagers refused while the floor says so), and the next journaled
command counts those that were not (``unjournaled``).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from journal_support import journal_entries
from sas_support import hit_config, make_owner, post

from controller.config import load_config
from controller.floor.bound import CommandBound
from drivers.sas import codec
from fsm.round.events import FloorCommand


def test_the_bound_lets_limit_commands_through_holds_the_latest_and_counts_the_rest() -> None:
    bound = CommandBound(limit=3, window_s=10.0)
    cmds = [
        FloorCommand(command="refuse_progressive" if i % 2 else "accept_progressive")
        for i in range(9)
    ]
    posted = [d for i, c in enumerate(cmds) for d in bound.admit(c, 0.1 * i)]
    assert posted == cmds[:3]  # the rest held or counted
    assert bound.release(5.0) == []  # the window is still full
    late = bound.release(10.05)
    # 9 = 3 journaled + 5 counted + the last
    assert late == [dataclasses.replace(cmds[-1], unjournaled=5)]
    assert bound.release(10.1) == []
    assert bound.admit(cmds[0], 10.2) == [cmds[0]]  # no count left over


def test_a_host_command_flood_is_journaled_within_the_bound_with_a_count_of_the_rest(
    tmp_path: Path,
) -> None:
    from controller.floor.service import pty_floor_link
    from drivers.sas.host import HostPort

    cfg = load_config(hit_config(tmp_path))
    db = tmp_path / "journal.db"
    owner = make_owner(cfg, db)
    owner.start()
    floor = pty_floor_link(cfg.sas, cfg.game, owner, db, tmp_path / "sas")
    floor.bound = CommandBound(limit=10, window_s=600.0)
    floor.start()
    host = HostPort(str(tmp_path / "sas"))
    flood = 200
    try:
        post(owner, "table_opened", supervisor="trainer")

        def exchange(frame: bytes) -> bytes:
            host.send(frame)
            got = host.read_answer(0.5)
            host.send(b"\x80")
            return got

        before = len(journal_entries(db))
        for i in range(flood):  # shut down, start up, ... ending with a start-up (02)
            assert exchange(codec.s_poll(1, 0x01 if i % 2 == 0 else 0x02)) == b"\x01"
        assert len([t for _, t, _ in journal_entries(db)[before:] if t == "floor_command"]) == 10
        floor.bound.window_s = 0.2  # the window has passed (not waited for: 10 minutes)
        time.sleep(0.3)
        exchange(codec.s_poll(1, 0x02))  # a poll after the window: the held command goes in
        deadline = time.monotonic() + 5
        cmds: list[dict] = []
        while time.monotonic() < deadline:
            cmds = [d for _, t, d in journal_entries(db)[before:] if t == "floor_command"]
            if sum(d.get("unjournaled") or 0 for d in cmds) + len(cmds) >= flood + 1:
                break
            time.sleep(0.05)
        assert len(cmds) == 10 + 2  # not one entry per command: the bound, the held, the last
        assert sum(d.get("unjournaled") or 0 for d in cmds) + len(cmds) == flood + 1
        assert cmds[-1]["command"] == "accept_progressive"  # the host's last word stands
        assert any(d.get("unjournaled") for d in cmds)
        rejected = [e for d in cmds for e in d["effects"] if e.get("type") == "rejected"]
        assert rejected == []  # the count is a field the machine takes, not an invalid event
    finally:
        host.close()
        floor.stop()
        owner.stop()
