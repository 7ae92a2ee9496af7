"""End to end on real pseudo-terminals: the shoe and shuffler adapters (controller side, pyserial
on the pty slave through its stable name) against the simulators (device side), with every
injected fault. Timeouts in ``wait_for`` only bound a failing test; nothing asserts on time.

Rules checked: NY 5324.41(b) one 53-card deck (52 + joker) -> a shuffler count other than 53 is
a DECK_COUNT_n fault; 7 stacks of 7 leave exactly 4 cards; a silent or vanished device is a
fault and its return is reported.
"""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import serial

from drivers.serial import faults
from drivers.serial.port import LinkPort, PortConfig
from drivers.serial.serial_link import LinkConfig
from drivers.serial.shoe import ReferenceShoe, ShoeConfig
from drivers.serial.shuffler import ReferenceShuffler, ShufflerConfig
from drivers.sim.bench import SimulatedDevices, parse_fault_spec
from fsm.round.events import Event
from fsm.rules.cards import DECK_SIZE

LINK = LinkConfig(
    ack_timeout=0.1, max_retries=3, heartbeat_interval=0.2, silence_timeout=1.0, idle_flush=0.02
)


def port(path: str) -> PortConfig:
    return PortConfig(path, read_tick=0.01, backoff_initial=0.01, backoff_max=0.1)


class Sink:
    """The owner's event queue, as the adapters see it."""

    def __init__(self) -> None:
        self.queue: queue.Queue[Event] = queue.Queue()
        self.seen: list[Event] = []

    def post(self, event: Event) -> None:
        self.queue.put(event)

    def wait_for(self, pred: Callable[[Event], bool], what: str, limit: float = 10.0) -> Event:
        while True:
            try:
                event = self.queue.get(timeout=limit)
            except queue.Empty:
                raise AssertionError(f"no {what}; events seen: {self.seen}") from None
            self.seen.append(event)
            if pred(event):
                return event

    def wait_type(self, type_: str, **data: object) -> Event:
        def match(e: Event) -> bool:
            return e.type == type_ and all(e.data.get(k) == v for k, v in data.items())

        return self.wait_for(match, f"{type_} {data}")


@dataclass
class Table:
    sim: SimulatedDevices
    shoe: ReferenceShoe
    shuffler: ReferenceShuffler
    shoe_port: LinkPort
    shuffler_port: LinkPort
    events: Sink


@pytest.fixture
def table() -> Iterator[Table]:
    sim = SimulatedDevices(card_reading=True)
    shoe_path, shuffler_path = sim.start(seed=7)
    events = Sink()
    shoe_port = LinkPort("shoe", port(shoe_path), LINK, session=1)
    shuffler_port = LinkPort("shuffler", port(shuffler_path), LINK, session=2)
    shoe = ReferenceShoe(shoe_port, events.post, ShoeConfig(status_timeout=1, dispense_timeout=2))
    shuffler = ReferenceShuffler(
        shuffler_port, events.post, ShufflerConfig(status_timeout=1, shuffle_timeout=2)
    )
    shoe.start()
    shuffler.start()
    t = Table(sim, shoe, shuffler, shoe_port, shuffler_port, events)
    try:
        wait_ready(t)
        yield t
    finally:
        shoe.stop()
        shuffler.stop()
        sim.stop()


def wait_ready(t: Table) -> None:
    """Both devices answered a status request (the adapters ask on first contact)."""
    for _ in range(500):
        if all(
            a.status()["connected"] and a.status()["state"] == "ready" for a in (t.shoe, t.shuffler)
        ):
            return
        time.sleep(0.01)
    raise AssertionError(f"devices not ready: {t.shoe.status()} {t.shuffler.status()}")


def test_shuffle_then_seven_stacks_of_seven_leave_four_cards_5324_41_b(table: Table) -> None:
    table.shuffler.shuffle()
    done = table.events.wait_type("shuffle_complete")
    assert done.data["count"] == DECK_SIZE == 53
    table.shoe.dispense(7, 7)
    dealt = table.events.wait_type("dealt")
    hands = dealt.data["stacks"]  # the round's dealt: the stacks as read, in dispense order
    assert len(hands) == 7 and all(len(h) == 7 for h in hands)
    cards = [c for h in hands for c in h]
    assert len(set(cards)) == 49 and all(0 <= c <= 52 for c in cards)
    assert dealt.data["remaining"] == 4
    assert table.shoe.cards_remaining == 4
    # The 49 cards dealt are the first 49 of the deck the shuffler handed over.
    assert table.sim.deck.remaining == 4


def test_same_seed_gives_same_deck_order_simulation_only() -> None:
    orders = []
    for _ in range(2):
        sim = SimulatedDevices()
        sim.start(seed=3)
        try:
            assert sim.shuffler_logic is not None
            sim.shuffler_logic.handle(0x11, b"\x01")
            taken = sim.deck.take(53)
            assert taken is not None
            orders.append(taken)
        finally:
            sim.stop()
    assert orders[0] == orders[1]
    assert sorted(orders[0]) == list(range(53))


@pytest.mark.parametrize("count", [52, 54])
def test_wrong_deck_count_is_a_deck_count_fault_5324_41_b(table: Table, count: int) -> None:
    table.sim.inject("shuffler-count", count)
    table.shuffler.shuffle()
    fault = table.events.wait_type("fault_raised", device="shuffler", code=f"DECK_COUNT_{count}")
    assert str(count) in str(fault.data["detail"])
    assert not [e for e in table.events.seen if e.type == "shuffle_complete"]
    table.sim.clear("shuffler-count")
    table.shuffler.shuffle()
    assert table.events.wait_type("shuffle_complete").data["count"] == 53


def test_shoe_jam_is_a_fault_and_its_clearing_is_reported(table: Table) -> None:
    table.shuffler.shuffle()
    table.events.wait_type("shuffle_complete")
    table.sim.inject("shoe-jam")
    table.shoe.dispense(7, 7)
    fault = table.events.wait_type("fault_raised", device="shoe", code=faults.SHOE_JAM)
    assert "jam" in str(fault.data["detail"])
    table.sim.clear("shoe-jam")
    table.shoe.request_status()
    table.events.wait_type("device_recovered", device="shoe", code=faults.SHOE_JAM)
    table.shoe.dispense(7, 7)
    assert table.events.wait_type("dealt").data["remaining"] == 4


def test_dispense_into_a_known_jam_still_gets_its_answer(table: Table) -> None:
    table.sim.inject("shoe-jam")
    table.shoe.request_status()
    table.events.wait_type("fault_raised", device="shoe", code=faults.SHOE_JAM)
    table.shoe.request_status()  # the same jam in a status report is not posted twice
    table.shoe.dispense(7, 7)  # but the dispense command gets its own outcome
    fault = table.events.wait_type("fault_raised", device="shoe", code=faults.SHOE_JAM)
    assert "DISPENSE_REQ" in str(fault.data["detail"])
    faults_seen = [e for e in table.events.seen if e.type == "fault_raised"]
    assert len(faults_seen) == 2


def test_shoe_misdeal_is_a_fault(table: Table) -> None:
    table.shuffler.shuffle()
    table.events.wait_type("shuffle_complete")
    table.sim.inject("shoe-misdeal")
    table.shoe.dispense(7, 7)
    table.events.wait_type("fault_raised", device="shoe", code=faults.SHOE_MISDEAL)


def test_empty_shoe_is_a_fault(table: Table) -> None:
    table.shoe.dispense(7, 7)  # nothing shuffled into the shoe yet
    table.events.wait_type("fault_raised", device="shoe", code=faults.SHOE_EMPTY)


def test_silent_shoe_times_out_then_recovers_when_it_answers(table: Table) -> None:
    table.sim.inject("shoe-silent")
    table.events.wait_type("fault_raised", device="shoe", code=faults.LINK_TIMEOUT)
    assert table.shoe.status()["connected"] is False
    table.sim.clear("shoe-silent")
    table.events.wait_type("device_recovered", device="shoe", code=faults.LINK_TIMEOUT)
    table.shuffler.shuffle()
    table.events.wait_type("shuffle_complete")
    table.shoe.dispense(7, 7)
    assert table.events.wait_type("dealt").data["remaining"] == 4


def test_silent_shuffler_times_out_and_a_shuffle_is_not_delivered(table: Table) -> None:
    table.sim.inject("shuffler-silent")
    table.shuffler.shuffle()
    codes: set[str] = set()
    while not {faults.LINK_TIMEOUT, faults.COMMAND_NOT_DELIVERED} <= codes:
        e = table.events.wait_type("fault_raised", device="shuffler")
        codes.add(str(e.data["code"]))
    table.sim.clear("shuffler-silent")
    table.events.wait_type("device_recovered", device="shuffler")
    table.shuffler.shuffle()
    assert table.events.wait_type("shuffle_complete").data["count"] == 53


def test_garbage_on_the_line_is_skipped_and_commands_still_work(table: Table) -> None:
    table.sim.inject("garbage")
    for _ in range(3):
        table.shuffler.shuffle()
        table.events.wait_type("shuffle_complete")
        table.shoe.dispense(7, 7)
        assert table.events.wait_type("dealt").data["remaining"] == 4
    table.sim.clear("garbage")
    assert table.shoe_port.status()["garbage_bytes"] > 0  # type: ignore[operator]
    assert table.shuffler_port.status()["garbage_bytes"] > 0  # type: ignore[operator]
    assert not [e for e in table.events.seen if e.type == "fault_raised"]


def test_vanished_port_is_reopened_with_backoff_and_recovery_reported(table: Table) -> None:
    table.sim.inject("shoe-unplug")
    table.events.wait_type("fault_raised", device="shoe", code=faults.PORT_LOST)
    assert not os.path.exists(table.sim.shoe.path if table.sim.shoe else "")
    failures_before = table.shoe_port.open_failures
    for _ in range(1000):  # the port keeps retrying while the name is missing
        if table.shoe_port.open_failures >= failures_before + 2:
            break
        time.sleep(0.005)
    assert table.shoe_port.open_failures >= failures_before + 2
    table.sim.clear("shoe-unplug")  # a new pty appears under the same name
    table.events.wait_type("device_recovered", device="shoe", code=faults.PORT_LOST)
    assert table.shoe_port.opens == 2
    table.shuffler.shuffle()
    table.events.wait_type("shuffle_complete")
    table.shoe.dispense(7, 7)
    assert table.events.wait_type("dealt").data["remaining"] == 4


def test_port_is_opened_exclusively(table: Table) -> None:
    assert table.sim.shoe is not None
    with pytest.raises(serial.SerialException, match="exclusively lock"):
        serial.Serial(table.sim.shoe.path, exclusive=True)


def test_fault_spec_parses_and_names_a_bad_item() -> None:
    assert parse_fault_spec("shuffler-count=52, shoe-jam,garbage=shoe") == [
        ("shuffler-count", 52),
        ("shoe-jam", None),
        ("garbage", "shoe"),
    ]
    with pytest.raises(ValueError, match="'shoe-explode'"):
        parse_fault_spec("shoe-explode")
    with pytest.raises(ValueError, match="shuffler-count needs"):
        parse_fault_spec("shuffler-count=lots")
