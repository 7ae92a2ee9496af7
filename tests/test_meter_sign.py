"""The progressive meter sign (NY 5324.41(a)(4) -> 5324.2(l); PA 605a.7(1); table-rules.md: a win
shown within 30 seconds): its text for each state, drawn in seven segments; the MAX7219 register
protocol as a chip chain on MockFactory's SPI pins sees it; and the reader that drives it from
the owner's published snapshot, never showing the hidden (reserve) or overflow amount."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockSPIDevice

from controller.service.meter_sign import SignReader, sign_levels
from controller.service.owner import PublicSnapshot
from drivers.gpio.font import SEGMENTS
from drivers.gpio.gpio_table import build_gpio_table
from drivers.gpio.max7219 import (
    DECODE_MODE,
    DIGIT0,
    DISPLAY_TEST,
    DP_BIT,
    INTENSITY,
    SCAN_LIMIT,
    SEGMENT_BITS,
    SHUTDOWN,
    Max7219Chain,
    Max7219MeterSign,
    SimulatedChain,
)
from drivers.gpio.pins import PinConfig
from drivers.gpio.sign import (
    Cell,
    SignLevel,
    amount_text,
    cells,
    draw,
    sign_texts,
    win_text,
)
from fsm.round.effects import Display
from fsm.round.states import BETTING, JACKPOT_PENDING, LEAF_STATES


def simulated_sign(modules: int = 1) -> Max7219MeterSign:
    """The real sign driver on the simulated table's SPI bus (the MAX7219 chain in memory)."""
    return Max7219MeterSign(Max7219Chain(SimulatedChain(modules), modules), modules)


# --- the text and its drawing ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("cents", "text"),
    [
        (100000, "  1000.00"),
        (5, "     0.05"),
        (0, "     0.00"),
        (99_999_999, "999999.99"),
        (100_000_000, " 1000000"),
        (9_999_999_999, "99999999"),
        (10_000_000_000, "--------"),
    ],
)
def test_amounts_are_dollars_and_cents_in_eight_digits(cents: int, text: str) -> None:
    assert amount_text(cents) == text
    assert len(cells(text)) == 8


def test_the_meter_amount_drawn() -> None:
    assert draw(cells(amount_text(123456))) == "\n".join(
        [
            "             _   _       _   _",
            "          |  _|  _| |_| |_  |_",
            "          | |_   _|   |. _| |_|",
        ]
    )


def test_a_pending_hit_shows_win_and_the_area_drawn() -> None:
    assert win_text([3]) == "WIN   3"
    assert draw(cells("WIN   3")) == "\n".join(
        [
            "                             _",
            "| |   | |    _               _|",
            "|_|  _| |   | |              _|",
        ]
    )


def test_two_hits_on_one_level_show_both_areas_apart() -> None:
    assert win_text([5, 3]) == "WIN  3.5"
    assert draw(cells("WIN  3.5")).splitlines()[2].endswith("_|. _|")


def test_the_digits_0_to_9_blank_and_dash_drawn() -> None:
    row = [Cell(SEGMENTS[d]) for d in "1234567"]  # type: ignore[index]
    assert draw(row) == draw(cells("1234567")[1:])  # the sign's digits are the display's


def test_a_text_the_font_cannot_draw_or_too_long_is_refused() -> None:
    with pytest.raises(ValueError, match="no seven-segment drawing for 'X'"):
        cells("X")
    with pytest.raises(ValueError, match="9 digits, the module has 8"):
        cells("123456789")


def test_each_module_shows_one_level_and_more_levels_take_turns() -> None:
    levels = [SignLevel("major", 250000), SignLevel("minor", 5000), SignLevel("mini", 100)]
    assert sign_texts(levels, 3) == ("  2500.00", "    50.00", "     1.00")
    assert sign_texts(levels, 2, page=0) == ("  2500.00", "    50.00")
    assert sign_texts(levels, 2, page=1) == ("     1.00", "        ")
    hit = [SignLevel("major", 250000), SignLevel("minor", 5000), SignLevel("mini", 100, (4,))]
    assert sign_texts(hit, 2, page=0)[0] == "WIN   4"  # a win comes first on every page turn


# --- the reader: published snapshot -> sign -------------------------------------------------

RESERVE = 777_777  # distinctive amounts that must never reach the sign
OVERFLOW = 888_888


def snapshot(
    seq: int, state: str, display: int, pending: list[dict[str, Any]] | None = None
) -> PublicSnapshot:
    meter = {"display_cents": display, "reserve_cents": RESERVE, "overflow_cents": OVERFLOW}
    view: Mapping[str, Any] = MappingProxyType({"round": {"pending": pending or []}})
    return PublicSnapshot(
        seq=seq,
        ts_ms=0,
        state=state,
        round_id=1,
        rounds_completed=0,
        view=view,
        meters=MappingProxyType({"progressive": meter}),
    )


def test_the_sign_shows_only_the_displayed_amount_never_reserve_or_overflow() -> None:
    (level,) = sign_levels(snapshot(1, BETTING, 123_45))
    assert level == SignLevel("progressive", 123_45, ())
    sign = simulated_sign()
    SignReader(_Published(snapshot(1, BETTING, 123_45)), sign).refresh(snapshot(1, BETTING, 123_45))
    assert sign.texts == ("   123.45",)
    for secret in (RESERVE, OVERFLOW):
        assert amount_text(secret).strip().replace(".", "") not in sign.texts[0].replace(".", "")


def test_win_is_shown_only_while_the_hit_is_pending() -> None:
    pending = [{"position": 2, "level": "progressive", "line": "royal_flush"}]
    assert sign_levels(snapshot(1, JACKPOT_PENDING, 100000, pending))[0].wins == (2,)
    # the same pending list outside Open_JackpotPending (paid): the reset amount again
    assert sign_levels(snapshot(2, BETTING, 100000, pending))[0].wins == ()


AMOUNT_DRAWN = "\n".join(
    [
        "         _   _   _   _   _   _",
        "         _| | | | | | | | | |_|",
        "        |_  |_| |_| |_|.|_| |_|",
    ]
)
WIN_DRAWN = "\n".join(
    [
        "                             _",
        "| |   | |    _               _|",
        "|_|  _| |   | |              _|",
    ]
)


@pytest.mark.parametrize("state", LEAF_STATES)
def test_the_sign_text_in_every_state_drawn(state: str) -> None:
    """What the players see in each state of the round, a hit pending on area 3 (at $2,000.08
    displayed): the amount everywhere but Open_JackpotPending, which shows WIN and the area."""
    pending = [{"position": 3, "level": "progressive", "line": "five_aces"}]
    sign = simulated_sign()
    snap = snapshot(1, state, 200_008, pending)
    SignReader(_Published(snap), sign).refresh(snap)
    expected = WIN_DRAWN if state == JACKPOT_PENDING else AMOUNT_DRAWN
    assert [draw(cells(t)) for t in sign.texts] == [expected], state


class _Published:
    """The owner's publication interface (``public``, ``wait_published``) over a list of
    snapshots the test publishes."""

    def __init__(self, first: PublicSnapshot) -> None:
        self.public = first
        self._cond = threading.Condition()

    def publish(self, snap: PublicSnapshot) -> None:
        with self._cond:
            self.public = snap
            self._cond.notify_all()

    def wait_published(self, after_seq: int, timeout: float | None = None) -> PublicSnapshot:
        with self._cond:
            self._cond.wait_for(lambda: self.public.seq > after_seq, timeout)
            return self.public


def _wait_for(sign: Max7219MeterSign, text: str) -> None:
    deadline = threading.Event()
    for _ in range(500):
        if sign.texts == (text,):
            return
        deadline.wait(0.01)
    raise AssertionError(f"the sign shows {sign.texts}, expected {text!r}")


def test_the_reader_follows_every_contribution_hit_payout_and_reset() -> None:
    owner = _Published(snapshot(1, BETTING, 100000))
    sign = simulated_sign()
    reader = SignReader(owner, sign)
    reader.start()
    try:
        _wait_for(sign, "  1000.00")
        owner.publish(snapshot(2, BETTING, 100021))  # a contribution (21% of $1)
        _wait_for(sign, "  1000.21")
        pending = [{"position": 5, "level": "progressive", "line": "five_aces"}]
        owner.publish(snapshot(3, JACKPOT_PENDING, 100021, pending))  # hit pending
        _wait_for(sign, "WIN   5")
        owner.publish(snapshot(4, BETTING, 100000))  # paid, reset to the reset amount
        _wait_for(sign, "  1000.00")
    finally:
        reader.stop()
    assert reader.updates == 4  # one change of the sign each


# --- MAX7219 on MockFactory's SPI0 pins --------------------------------------------------------


class Max7219Model(MockSPIDevice):
    """A chain of MAX7219s as the silicon sees SPI0: 16-bit words shift through the chain,
    the select's rising edge latches each chip's word (register 0x00: no-op)."""

    def __init__(self, chips: int, factory: MockFactory) -> None:
        super().__init__(11, 10, None, 8, pin_factory=factory)
        self.chips = chips
        self.registers: list[dict[int, int]] = [{} for _ in range(chips)]
        self.frames = 0

    def on_select(self) -> None:
        if self.select_pin.state and self.rx_buf:  # CS went high: latch
            bits = list(self.rx_buf)
            assert len(bits) == 16 * self.chips, f"frame of {len(bits)} bits"
            words = [bits[i : i + 16] for i in range(0, len(bits), 16)]
            # the last word shifted in stays in chip 0 (the one wired to the Pi)
            for chip, word in enumerate(reversed(words)):
                value = int("".join(str(int(b)) for b in word), 2)
                register, data = (value >> 8) & 0x0F, value & 0xFF
                if register != 0:
                    self.registers[chip][register] = data
            self.frames += 1
        super().on_select()

    def digits(self, chip: int) -> list[Cell]:
        """The chip's eight digits, leftmost (DIG7) first, decoded from the segment bits."""
        out = []
        for register in range(DIGIT0 + 7, DIGIT0 - 1, -1):
            byte = self.registers[chip].get(register, 0)
            segments = tuple(int(bool(byte & bit)) for bit in SEGMENT_BITS)
            out.append(Cell(segments, bool(byte & DP_BIT)))  # type: ignore[arg-type]
        return out


@pytest.fixture
def chain_table() -> Iterator[tuple[Any, Max7219Model, MockFactory]]:
    factory = MockFactory()
    pins = PinConfig(sign_modules=2, sign_intensity=5)  # the default plan, two sign modules
    model = Max7219Model(pins.spi_chips, factory)
    table = build_gpio_table(pins, factory, lambda e: None)
    yield table, model, factory
    table.close()
    model.close()


def test_the_chain_is_configured_for_no_decode_digits(
    chain_table: tuple[Any, Max7219Model, MockFactory],
) -> None:
    _, model, _ = chain_table
    for chip in range(3):
        regs = model.registers[chip]
        assert regs[DISPLAY_TEST] == 0 and regs[DECODE_MODE] == 0 and regs[SHUTDOWN] == 1
        assert regs[INTENSITY] == 5
    # chip 0 drives the single 1-7 digit (scan limit 1 digit), the sign modules all eight
    assert [model.registers[c][SCAN_LIMIT] for c in range(3)] == [0, 7, 7]


def test_the_sign_text_reaches_each_module_over_spi_as_drawn(
    chain_table: tuple[Any, Max7219Model, MockFactory],
) -> None:
    table, model, _ = chain_table
    table.sign.show(["WIN   3", "  1000.21"])
    assert draw(model.digits(1)) == draw(cells("WIN   3"))
    assert draw(model.digits(2)) == draw(cells("  1000.21"))
    assert table.sign.texts == ("WIN   3", "  1000.21")


def test_the_1_to_7_digit_on_chip_0_leaves_the_sign_alone(
    chain_table: tuple[Any, Max7219Model, MockFactory],
) -> None:
    table, model, _ = chain_table
    table.sign.show(["  1000.00", "    50.00"])
    for glyph in ("3", "L", "7"):
        table.apply(Display(glyph))
        assert model.digits(0)[-1] == Cell(SEGMENTS[glyph])  # DIG0 of chip 0
        assert draw(model.digits(1)) == draw(cells("  1000.00"))  # no-ops for the others


def test_a_text_the_sign_cannot_draw_sends_nothing(
    chain_table: tuple[Any, Max7219Model, MockFactory],
) -> None:
    table, model, _ = chain_table
    before = model.frames
    with pytest.raises(ValueError, match="no seven-segment drawing"):
        table.sign.show(["HELLO", "  1000.00"])
    assert model.frames == before


def test_closing_blanks_the_chain_and_shuts_it_down() -> None:
    factory = MockFactory()
    model = Max7219Model(2, factory)
    table = build_gpio_table(PinConfig(), factory, lambda e: None)
    table.sign.show(["  999.99"])
    table.safe_state()
    table.close()
    for chip in range(2):
        assert model.registers[chip][SHUTDOWN] == 0
        assert all(model.registers[chip][DIGIT0 + i] == 0 for i in range(8))
    model.close()


def test_a_frame_carries_one_word_per_chip() -> None:
    sent: list[list[int]] = []

    class Bus:
        def transfer(self, data: list[int]) -> list[int]:
            sent.append(list(data))
            return data

        def close(self) -> None: ...

    chain = Max7219Chain(Bus(), 3)
    chain.set_register(INTENSITY, 9, chip=0)
    # chip 2's no-op first, chip 0's word last
    assert sent == [[0x00, 0x00, 0x00, 0x00, INTENSITY, 9]]
    with pytest.raises(ValueError, match="intensity 16"):
        Max7219Chain(Bus(), 1, intensity=16)


# --- the simulated table's sign ------------------------------------------------------------------


def test_the_simulated_table_shows_its_meter_on_the_simulated_chain(tmp_path: Path) -> None:
    """On the simulated table the chain is a SimulatedChain (the page reads its glass); after a
    played round the sign shows the level's displayed amount, read from the published
    snapshot, and the 1-7 digit is on chip 0."""
    from controller.sim.simulate import build_service, load_sim_config, play

    service = build_service(load_sim_config(None), tmp_path / "sim.db", 4)
    service.start()
    try:
        assert play(service, 1, threading.Event(), None) == 0
        service.owner.wait_idle(10)
        gpio = service.devices.gpio
        cents = service.owner.public.meters["progressive"]["display_cents"]
        expected = (amount_text(cents),)
        for _ in range(500):
            if gpio.sign.texts == expected:
                break
            threading.Event().wait(0.01)
        assert gpio.sign.texts == expected
        chain = service.pins._chain
        assert draw(chain.digits(1)) == draw(cells(expected[0]))
    finally:
        service.owner.stop()
        service.close()
