"""The controller compartment's door (issue 28 item 4; GLI-11 style door monitoring, the SAS door
exceptions 11/12 and the door-opened meter of docs/sas.md): a door switch on a spare pin posts
``door`` events, journaled with their time; play is refused while it is open unless a
supervisor allows maintenance; the floor system sees the openings and closings.

Real parts: gpiozero's MockFactory pins, the round machine, the owner with its SQLite journal,
the floor link on a pty and a SAS host nobody here wrote (sas-comm-py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory
from journal_support import journal_entries
from sas_support import drain_exceptions, hit_config, host, make_owner, post

from controller.config import SIMULATED_TABLE, load_config
from controller.journal.audit import connect_read_only
from controller.supervisor.requests import RequestError, build_event
from drivers.gpio.door import GpioDoor
from drivers.gpio.pins import PinConfig
from fsm.round.effects import Acceptors, DoorChanged, Rejected
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

pytestmark = pytest.mark.xdist_group("sas")

DOOR_PIN = 4  # the default plan's spare pin (drivers/gpio/pins.py)


def _betting() -> RoundMachine:
    m = RoundMachine(load_config(SIMULATED_TABLE).game)
    m.step(Event("table_opened", {"supervisor": "s1"}), 1)
    m.step(Event("shuffle_complete", {"count": 53}), 2)
    assert m.state == "Open_Betting"
    return m


def test_the_door_switch_posts_open_and_closed_and_a_cut_wire_reads_open() -> None:
    factory = MockFactory()
    events: list[Event] = []
    pin = factory.pin(DOOR_PIN)
    door = GpioDoor(DOOR_PIN, pin_factory=factory, post=events.append)
    try:
        assert door.open is True  # nothing closes the switch: open, the safe reading
        pin.drive_low()  # door shut: the switch closes to ground
        assert door.open is False
        pin.drive_high()  # opened (or the wire cut)
        assert door.open is True
        assert events == [Event("door", {"open": False}), Event("door", {"open": True})]
    finally:
        door.close()
        factory.reset()


def test_the_door_takes_the_spare_pin_and_not_a_used_one() -> None:
    assert PinConfig.from_mapping({"door": DOOR_PIN}).door == DOOR_PIN
    assert PinConfig.from_mapping({}).door is None  # not fitted unless wired
    with pytest.raises(ValueError, match="door"):
        PinConfig.from_mapping({"door": 4, "shaker_lid": 4})
    with pytest.raises(ValueError, match="door"):
        PinConfig.from_mapping({"door": 14})  # the SAS UART


def test_play_is_refused_while_the_door_is_open_and_the_acceptors_disarmed() -> None:
    m = _betting()
    effects = m.step(Event("door", {"open": True}), 10)
    assert DoorChanged("opened", True, 1, None) in effects
    assert Acceptors(False) in effects  # no chip is taken while the door is open
    for etype, data in (
        ("chip_detected", {"position": 2}),
        ("lockout_pressed", {}),
        ("panel_next", {}),
    ):
        (refused,) = m.step(Event(etype, data), 11)
        assert isinstance(refused, Rejected) and refused.cause == "refused"
        assert "compartment's door is open" in refused.reason
    assert m.state == "Open_Betting"
    # closing allows play again; the acceptors are armed again
    effects = m.step(Event("door", {"open": False}), 12)
    assert DoorChanged("closed", False, 1, None) in effects and Acceptors(True) in effects
    assert not any(
        isinstance(e, Rejected) for e in m.step(Event("chip_detected", {"position": 2}), 13)
    )


def test_a_supervisor_allows_maintenance_with_the_door_open_until_it_is_closed() -> None:
    m = _betting()
    (refused,) = m.step(Event("door_maintenance", {"supervisor": "s1", "allow": True}), 5)
    assert isinstance(refused, Rejected) and "door is closed" in refused.reason
    m.step(Event("door", {"open": True}), 10)
    effects = m.step(Event("door_maintenance", {"supervisor": "s1", "allow": True}), 11)
    assert DoorChanged("maintenance", True, 1, "s1") in effects and Acceptors(True) in effects
    assert not any(
        isinstance(e, Rejected) for e in m.step(Event("chip_detected", {"position": 1}), 12)
    )
    # closing ends it: the next opening refuses play again and counts
    m.step(Event("door", {"open": False}), 13)
    effects = m.step(Event("door", {"open": True}), 14)
    assert DoorChanged("opened", True, 2, None) in effects
    (refused,) = m.step(Event("lockout_pressed", {}), 15)
    assert isinstance(refused, Rejected)
    # the door survives a restart (the snapshot), and a report of the same position changes
    # nothing (the switch's state posted at start-up)
    again = RoundMachine.restore(m.config, m.snapshot())
    assert again.snapshot()["door"] == {"open": True, "opened": 2, "maintenance": None}
    assert again.step(Event("door", {"open": True}), 16) == []
    # the console's request, PIN-checked by the gate, is the typed event
    assert build_event("door-maintenance", ["on"], "s2").data == {
        "supervisor": "s2", "allow": True, "via": "console"
    }  # fmt: skip
    with pytest.raises(RequestError, match="'on' or 'off'"):
        build_event("door-maintenance", ["maybe"], "s2")


def test_a_table_without_a_door_switch_keeps_its_snapshot_as_it_was() -> None:
    m = _betting()
    assert "door" not in m.snapshot()  # journals and golden files of tables without a door


def test_door_opened_and_closed_are_journaled_with_the_time_and_reach_the_floor_sas_11_12_1c(
    tmp_path: Path,
) -> None:
    from controller.floor.service import pty_floor_link

    cfg = load_config(hit_config(tmp_path))
    db = tmp_path / "journal.db"
    owner = make_owner(cfg, db)
    owner.start()
    floor = pty_floor_link(cfg.sas, cfg.game, owner, db, tmp_path / "sas", serial_number="1")
    floor.start()
    sm = host(tmp_path / "sas")
    try:
        drain_exceptions(sm)  # the power-up's 17
        post(owner, "door", open=True)
        post(owner, "table_opened", supervisor="trainer")  # refused: the door is open
        post(owner, "door", open=False)
        assert floor.wait_folded(owner.public.seq, 10.0)
        seen = drain_exceptions(sm)
        assert seen[:2] == [0x11, 0x12], seen
        resp = sm.write_type_R(0x1C, length_to_read=32)
        data = list(resp.data)
        door_meter = int("".join(f"{int(b, 16):02x}" for b in data[24:28]))
        assert door_meter == 1  # one opening
        conn = connect_read_only(db)
        try:
            stamped = conn.execute("SELECT ts_ms FROM journal WHERE type = 'door'").fetchall()
        finally:
            conn.close()
        assert len(stamped) == 2 and all(ts > 0 for (ts,) in stamped)  # journaled with the time
        rows = journal_entries(db)
        assert [d["open"] for _, t, d in rows if t == "door"] == [True, False]
        refused = [d for _, t, d in rows if t == "table_opened"]
        (effect,) = refused[0]["effects"]
        assert effect["type"] == "rejected" and "door is open" in effect["reason"]
    finally:
        sm.port.close()
        floor.stop()
        owner.stop()


def test_the_hardware_self_test_echoes_the_door_with_its_pin_and_start_up_reads_it() -> None:
    """Self-test (tablectl selftest --hardware): the door's openings and closings are echoed
    with its BCM pin; at start-up the controller posts the door's position (a door opened
    while it was off is journaled)."""
    import io
    import time

    from controller.cli.selftest import HardwareSelfTest
    from drivers.gpio.devices import DebounceTimes
    from drivers.gpio.gpio_table import build_gpio_table
    from drivers.gpio.max7219 import SimulatedChain

    pins = PinConfig.from_mapping({"door": DOOR_PIN})
    factory = MockFactory()
    out = io.StringIO()
    test = HardwareSelfTest(pins, out, sleep=lambda s: None)
    no_bounce = DebounceTimes(button_s=0.0, chip_s=0.0, shaker_s=0.0)
    test.table = build_gpio_table(
        pins, factory, test.post, spi=SimulatedChain(pins.spi_chips), debounce=no_bounce
    )
    try:
        assert Event("door", {"open": True}) in test.table.held_switch_events()
        assert test.table.status()["door_open"] is True
        factory.pin(DOOR_PIN).drive_low()  # shut
        factory.pin(DOOR_PIN).drive_high()  # opened
        deadline = time.monotonic() + 10
        while test._events.qsize() < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        test.echo_inputs(0.3)
        text = out.getvalue()
        assert "open and close the compartment door" in text
        assert "door {'open': False} (BCM 4)" in text and "door {'open': True} (BCM 4)" in text
    finally:
        test.table.close()
        factory.reset()
