"""The linked wager's playability reported to the casino floor system over SAS (docs/sas.md,
docs/link.md; NY 5321.18(c), NJ 13:69E-1.39B(d),(e)): a linked table that loses its link
controller raises exception 53 ("no progressive information received") on the general poll of a
host nobody here wrote (sas-comm-py over a pty), once per loss, and nothing when the controller
confirms it again. Real nats-server, link controller, owner, journal and floor link.
"""

from __future__ import annotations

import json
from pathlib import Path

from link_support import InProcessController, LinkedTable, NatsServer, controller_toml, wait_for
from sas_support import drain_exceptions, general_poll, host

from controller.floor.exceptions import NO_PROGRESSIVE_INFO, OPTIONS_CHANGED, POWER_UP
from controller.floor.service import pty_floor_link
from controller.journal.audit import connect_read_only


def linked_wager_effects(db: Path) -> list[dict]:  # type: ignore[type-arg]
    conn = connect_read_only(db)
    try:
        rows = conn.execute("SELECT data FROM journal ORDER BY seq").fetchall()
    finally:
        conn.close()
    return [
        e
        for (data,) in rows
        for e in json.loads(data).get("effects", [])
        if e.get("type") == "linked_wager"
    ]


def test_a_linked_table_losing_its_link_controller_raises_53_over_sas(
    tmp_path: Path,
    nats: NatsServer,
    controllers: list,  # type: ignore[type-arg]
    tables: list,  # type: ignore[type-arg]
) -> None:
    ctl = InProcessController(controller_toml(tmp_path / "link.toml", nats.url, {"T1": 70001}))
    ctl.start()
    controllers.append(ctl)
    t = LinkedTable(tmp_path, "T1", 70001, nats.url)
    t.start()
    tables.append(t)
    wait_for(lambda: not t.link_down(), 15, what="T1 confirmed by the link controller")
    floor = pty_floor_link(t.config.sas, t.config.game, t.owner, t.db, tmp_path / "sas")
    floor.start()
    sm = host(tmp_path / "sas")
    try:
        assert floor.wait_folded(t.owner.public.seq, 5)
        # power-up; linked (its options changed), unplayable until the controller's first
        # confirmation (53); playable once confirmed (nothing)
        assert drain_exceptions(sm) == [POWER_UP, OPTIONS_CHANGED, NO_PROGRESSIVE_INFO]
        assert linked_wager_effects(t.db)[-1] == {
            "type": "linked_wager",
            "pool": "POOL1",
            "level": "progressive",
            "playable": True,
            "linked": True,
        }

        ctl.stop()  # the link controller lost: the linked wager unplayable after timeout_s
        wait_for(t.link_down, 10, what="T1 to see the controller lost")
        assert floor.wait_folded(t.owner.public.seq, 5)
        assert general_poll(sm) == NO_PROGRESSIVE_INFO
        assert drain_exceptions(sm) == []  # once per loss
        assert linked_wager_effects(t.db)[-1]["playable"] is False

        ctl.start()  # confirmed again: playable, and nothing is raised for it
        wait_for(lambda: not t.link_down(), 15, what="T1 confirmed again")
        assert floor.wait_folded(t.owner.public.seq, 5)
        assert general_poll(sm) == 0
        assert linked_wager_effects(t.db)[-1]["playable"] is True
    finally:
        sm.port.close()
        floor.stop()
