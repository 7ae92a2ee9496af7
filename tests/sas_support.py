"""Test support for the floor link: a host (sas-comm-py, never copied) on a fresh pty, the
journal's own meters and entries read through a read-only connection, and a table run by the real
owner, round machine and journal, driven to a progressive hit by the events its people would post.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from controller.config import SIMULATED_TABLE, TableConfig, load_config
from controller.journal.audit import connect_read_only
from controller.service.owner import Owner
from controller.service.rng import SeededDraw
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

HIT_LINE = "natural-royal-flush-and-pair"  # 100% of the meter: paid from the meter, hand paid


def hit_config(tmp: Path, **sas: Any) -> Path:
    """The simulated table's file with outcomes entered by the dealer (no card-reading shoe),
    so a test can enter a progressive hit; extra ``[sas]`` keys appended."""
    text = SIMULATED_TABLE.read_text(encoding="utf-8")
    text = text.replace("card_reading_shoe = true", "card_reading_shoe = false")
    extra = "".join(f"{k} = {json.dumps(v)}\n" for k, v in sas.items())
    text = text.replace("[sas]\n", "[sas]\n" + extra, 1)
    path = tmp / "table.toml"
    path.write_text(text, encoding="utf-8")
    return path


class Devices:
    """The device side of a table with no hardware: effects are only recorded (the floor link
    is what is tested; the owner, machine and journal are the real ones)."""

    def __init__(self) -> None:
        self.applied: list[dict[str, Any]] = []

    def apply(self, effect: Any) -> None:
        self.applied.append(dict(effect))

    def safe_state(self, glyph: str = " ") -> None:
        pass

    def close(self) -> None:
        pass


def make_owner(config: TableConfig, db: Path, *, training: bool = False) -> Owner:
    """An owner of ``config``'s table on ``db`` (``training``: the simulated training table's
    owner, whose journal `tablectl simulate` may resume; a live journal it refuses)."""
    game = config.game

    def machine(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    return Owner(
        db,
        machine,
        Devices(),
        draw=SeededDraw(1),
        table_id=config.table.id,
        software_hash=lambda: "f" * 64,
        storage_check=lambda p: [],
        training=training,
    )


def post(owner: Owner, etype: str, **data: Any) -> None:
    receipt = owner.post_tracked(Event(etype, data))
    receipt.wait(10.0)
    owner.wait_idle(10.0)


def drive_to_hit(owner: Owner, position: int = 1) -> None:
    """Open, one progressive wager at ``position``, deal, and enter a hit paid from the meter:
    the table waits in JackpotPending for the supervisor."""
    post(owner, "table_opened", supervisor="trainer")
    post(owner, "shuffle_complete", count=53)
    post(owner, "chip_detected", position=position)
    post(owner, "lockout_pressed")
    if (owner.public.view.get("config") or {}).get("side_wager", {}).get("offered"):
        post(owner, "side_wagers", bets=[])  # closed before the RNG is activated (j)(2)(i)
    post(owner, "chips_confirmed")
    if owner.public.state == "Open_LockedOut":
        post(owner, "rng_activated")  # the dealer activates the RNG (h)(8)(ii)
    if owner.public.state == "Open_SideWagers":
        post(owner, "side_wagers_settled")
    post(owner, "dealt", remaining=4)
    post(owner, "play_complete")
    post(owner, "progressive_outcome", position=position, line=HIT_LINE)
    assert owner.public.state == "Open_JackpotPending", owner.public.state


def load(path: Path) -> TableConfig:
    return load_config(path)


# ------------------------------------------------------------------------------ the journal
def journal_meters(db: Path) -> dict[str, dict[str, Any]]:
    """The meters the journal committed last (its ``meters`` table), per level."""
    conn = connect_read_only(db)
    try:
        rows = conn.execute('SELECT level, "values" FROM meters').fetchall()
    finally:
        conn.close()
    return {level: json.loads(values) for level, values in rows}


def bcd_value(raw: list[str]) -> int:
    """The number in BCD bytes as sas-comm-py returns them (hex strings)."""
    return int("".join(f"{int(b, 16):02X}" for b in raw))


# ------------------------------------------------------------------------------ the host
def host(link: Path | str) -> Any:
    """sas-comm-py's SlotMachine on the pty at ``link`` (its 0.1.0 constructor calls a missing
    method: reference/sas.md). Chirps sent while nobody polled are flushed first."""
    from sas_comm_py import SlotMachine

    SlotMachine.get_serial_number = lambda self: ""  # type: ignore[attr-defined]
    sm = SlotMachine(os.path.realpath(link), baudrate=19200, address=1)
    sm.port.reset_input_buffer()
    return sm


def general_poll(sm: Any) -> int:
    """One general poll to address 1 and its exception byte; then a poll to address 0, which
    acknowledges it (implied ACK). sas-comm-py has no general poll of its own. Bytes that came
    while the host asked nothing (chirps, sent after 5 s unpolled) are no answer: flushed first."""
    sm.port.reset_input_buffer()
    sm.port.write(b"\x81")
    got = sm.port.read(1)
    sm.port.write(b"\x80")
    time.sleep(0.01)
    assert len(got) == 1, "no answer to the general poll"
    return int(got[0])


def exceptions_until(sm: Any, wanted: int, limit: int = 40) -> list[int]:
    """General polls until ``wanted`` comes (or 00 / ``limit``): the codes seen in order."""
    seen: list[int] = []
    for _ in range(limit):
        code = general_poll(sm)
        seen.append(code)
        if code == wanted:
            break
    return seen


def drain_exceptions(sm: Any, limit: int = 60) -> list[int]:
    seen: list[int] = []
    for _ in range(limit):
        code = general_poll(sm)
        if code == 0:
            break
        seen.append(code)
    return seen
