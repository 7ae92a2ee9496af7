"""The MAX7219 display chain on SPI0: the progressive meter sign and, optionally, the 1-7 digit.

Responsible for the MAX7219 register protocol (16-bit words: register address, then data; a
chain of chips shifts words through, so one frame carries one word per chip and the chip
nearest the Pi receives the *last* word; register 0x00 is a no-op for the chips a frame does
not address), for the segment bit order of no-decode mode (D7 = dp, D6..D0 = a..g), and for
:class:`Max7219MeterSign` and :class:`Max7219NumberDisplay` on top of it. The SPI bus is any
object with ``transfer(list[int])``, opened by :func:`open_spi`: gpiozero's
``pin_factory.spi(port=0, device=0)`` on the Pi (lgpio's ``spi_*`` on ``/dev/spidev0.0``), and
on ``MockFactory`` :class:`PinSpi`, SPI mode 0 bit-banged on the mock SPI0 pins, where tests read
it with gpiozero's ``MockSPIDevice`` (gpiozero's own software SPI cannot be built there: its
``SPISoftwareBus`` calls ``Device.__init__`` without the pin factory and so needs a global
default factory, which we never set). Must never decide what to show (``drivers.gpio.sign`` and
the owner do) and never hold the bus lock while waiting on anything else.

Why no luma.led_matrix or spidev: gpiozero (already a dependency) gives the SPI bus, over lgpio
on the Pi, and the protocol is six registers; luma would add pillow, smbus2 and cbor2 for a
canvas we do not need, and spidev would be a second SPI path that MockFactory cannot exercise.

Chip order: chip 0 is wired to the Pi (DIN on MOSI, BCM 10); with ``number_display =
"max7219"`` it drives the 1-7 digit on its DIG0, and the sign's modules are chips 1..n (module 1
first). On a module, digit 0 of the text (the leftmost) is DIG7 (register 8), as on the common
8-digit modules whose DIG0 is the rightmost.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

from drivers.gpio.font import SEGMENTS
from drivers.gpio.interfaces import GLYPHS, Glyph
from drivers.gpio.sign import DIGITS_PER_MODULE, Cell, cells

NOOP = 0x00
DIGIT0 = 0x01  # digit registers 0x01..0x08
DECODE_MODE = 0x09
INTENSITY = 0x0A
SCAN_LIMIT = 0x0B
SHUTDOWN = 0x0C
DISPLAY_TEST = 0x0F

#: bit of each segment a..g in no-decode mode (dp is 0x80).
SEGMENT_BITS = (0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01)
DP_BIT = 0x80


class SpiBus(Protocol):
    def transfer(self, data: list[int]) -> Any: ...

    def close(self) -> None: ...


def cell_byte(cell: Cell) -> int:
    """The no-decode data byte of one digit."""
    value = DP_BIT if cell.dp else 0
    for lit, bit in zip(cell.segments, SEGMENT_BITS, strict=True):
        if lit:
            value |= bit
    return value


class PinSpi:
    """SPI mode 0 (clock idle low, data read on the rising edge), MSB first, write-only,
    bit-banged on three gpiozero outputs of ``pin_factory``: the bus of the MAX7219 chain on
    ``MockFactory``."""

    def __init__(
        self, pin_factory: Any, *, clock_pin: int = 11, mosi_pin: int = 10, select_pin: int = 8
    ) -> None:
        from gpiozero import OutputDevice

        self._devices: list[Any] = []
        try:
            self._select = OutputDevice(
                select_pin, active_high=False, initial_value=False, pin_factory=pin_factory
            )
            self._devices.append(self._select)
            self._clock = OutputDevice(clock_pin, initial_value=False, pin_factory=pin_factory)
            self._devices.append(self._clock)
            self._mosi = OutputDevice(mosi_pin, initial_value=False, pin_factory=pin_factory)
            self._devices.append(self._mosi)
        except BaseException:
            self.close()
            raise

    def transfer(self, data: list[int]) -> list[int]:
        self._select.on()
        try:
            for byte in data:
                for bit in range(7, -1, -1):
                    self._mosi.value = (byte >> bit) & 1
                    self._clock.on()
                    self._clock.off()
        finally:
            self._select.off()
        return [0] * len(data)

    def close(self) -> None:
        for device in reversed(self._devices):
            device.close()


def open_spi(pin_factory: Any) -> SpiBus:
    """SPI0 CE0 of ``pin_factory``: hardware SPI through gpiozero on the Pi, :class:`PinSpi` on
    gpiozero's ``MockFactory``."""
    from gpiozero.pins.mock import MockFactory

    if isinstance(pin_factory, MockFactory):
        return PinSpi(pin_factory)
    spi: SpiBus = pin_factory.spi(port=0, device=0)
    return spi


class Max7219Chain:
    """``chips`` MAX7219s daisy-chained on one SPI chip select; thread-safe."""

    def __init__(self, spi: SpiBus, chips: int, *, intensity: int = 8) -> None:
        if chips < 1:
            raise ValueError("a MAX7219 chain has at least one chip")
        if not 0 <= intensity <= 15:
            raise ValueError(f"MAX7219 intensity {intensity}: expected 0..15")
        self._spi = spi
        self.chips = chips
        self._intensity = intensity
        self._scan = [7] * chips
        self._lock = threading.Lock()
        self.frames = 0  # frames sent (the self-test reads it)

    def frame(self, words: Sequence[tuple[int, int] | None]) -> None:
        """One latch of the chain: ``words[i]`` (register, data) for chip i, None = no-op."""
        if len(words) != self.chips:
            raise ValueError(f"MAX7219 frame: {len(words)} words for {self.chips} chips")
        data: list[int] = []
        for word in reversed(words):  # the last word shifted in stays in chip 0
            register, value = word if word is not None else (NOOP, 0)
            data.extend((register & 0x0F, value & 0xFF))
        with self._lock:
            self._spi.transfer(data)
            self.frames += 1

    def set_register(self, register: int, value: int, chip: int | None = None) -> None:
        """``register`` = ``value`` on one chip (the others get a no-op) or, None, on all."""
        self.frame([(register, value) if chip in (None, i) else None for i in range(self.chips)])

    def set_scan_limit(self, chip: int, digits: int) -> None:
        self._scan[chip] = digits - 1
        self.set_register(SCAN_LIMIT, digits - 1, chip)

    def configure(self) -> None:
        """The registers that make the chips show no-decode digits (sent at start and again on
        every sign update: a chip that browned out or caught a spike recovers; shutdown is not
        cycled, so nothing flickers)."""
        self.set_register(DISPLAY_TEST, 0)
        self.set_register(DECODE_MODE, 0)
        self.frame([(SCAN_LIMIT, s) for s in self._scan])
        self.set_register(INTENSITY, self._intensity)
        self.set_register(SHUTDOWN, 1)

    def write_digits(self, chip: int, data: Sequence[int]) -> None:
        """The eight digit registers of one chip: ``data[0]`` is DIG7 (the leftmost)."""
        if len(data) != DIGITS_PER_MODULE:
            raise ValueError(f"MAX7219 digits: expected 8 bytes, got {len(data)}")
        for i, value in enumerate(data):
            self.set_register(DIGIT0 + (DIGITS_PER_MODULE - 1 - i), value, chip)

    def blank(self) -> None:
        for i in range(DIGITS_PER_MODULE):
            self.set_register(DIGIT0 + i, 0)

    def close(self) -> None:
        """Blank every digit and put the chips in shutdown (a stopped service shows no stale
        meter), then release the bus."""
        try:
            self.blank()
            self.set_register(SHUTDOWN, 0)
        finally:
            self._spi.close()


class Max7219MeterSign:
    """The progressive meter sign: one 8-digit module per shown level, chips ``first_chip`` on."""

    def __init__(self, chain: Max7219Chain, modules: int, first_chip: int = 0) -> None:
        if first_chip + modules > chain.chips:
            raise ValueError(f"meter sign: {modules} modules from chip {first_chip} do not fit")
        self._chain = chain
        self._first = first_chip
        self.modules = modules
        self._texts: tuple[str, ...] = (" " * DIGITS_PER_MODULE,) * modules
        self._lock = threading.Lock()

    @property
    def texts(self) -> tuple[str, ...]:
        with self._lock:
            return self._texts

    def show(self, texts: Sequence[str]) -> None:
        if len(texts) != self.modules:
            raise ValueError(f"meter sign: {len(texts)} texts for {self.modules} modules")
        rows = [cells(t) for t in texts]  # validates every text before anything is sent
        with self._lock:
            self._chain.configure()
            for i, row in enumerate(rows):
                self._chain.write_digits(self._first + i, [cell_byte(c) for c in row])
            self._texts = tuple(texts)

    def close(self) -> None:
        pass  # the chain is closed by its owner (it may also carry the digit)


class Max7219NumberDisplay:
    """The 1-7 digit on DIG0 of one chip of the chain (scan limit 1 digit), font of
    ``drivers.gpio.font``; the decimal point stays dark."""

    def __init__(self, chain: Max7219Chain, chip: int = 0) -> None:
        self._chain = chain
        self._chip = chip
        self._glyph: Glyph = " "  # blank
        chain.set_scan_limit(chip, 1)

    @property
    def glyph(self) -> Glyph:
        return self._glyph

    def show(self, glyph: Glyph) -> None:
        if glyph not in GLYPHS:
            raise ValueError(f"display glyph {glyph!r}: expected one of {', '.join(GLYPHS)}")
        self._chain.set_register(DIGIT0, cell_byte(Cell(SEGMENTS[glyph])), self._chip)
        self._glyph = glyph

    def close(self) -> None:
        pass


class SimulatedChain:
    """A MAX7219 chain in memory, as the simulated table's SPI bus: decodes each frame into
    the registers of ``chips`` chips, so the simulation and the page read what the glass would
    show (:meth:`digits`) without bit-banging mock pins. Simulation and tests only."""

    def __init__(self, chips: int) -> None:
        self.chips = chips
        self.registers: list[dict[int, int]] = [{} for _ in range(chips)]
        self._lock = threading.Lock()
        self.closed = False

    def transfer(self, data: list[int]) -> list[int]:
        if len(data) != 2 * self.chips:
            raise ValueError(f"MAX7219 frame of {len(data)} bytes for {self.chips} chips")
        with self._lock:
            words = [(data[i] & 0x0F, data[i + 1]) for i in range(0, len(data), 2)]
            for chip, (register, value) in enumerate(reversed(words)):
                if register != NOOP:
                    self.registers[chip][register] = value
        return [0] * len(data)

    def digits(self, chip: int) -> tuple[Cell, ...]:
        """The chip's eight digits, leftmost (DIG7) first; all dark while shut down."""
        with self._lock:
            regs = dict(self.registers[chip])
        lit = regs.get(SHUTDOWN, 0) == 1
        out = []
        for register in range(DIGIT0 + DIGITS_PER_MODULE - 1, DIGIT0 - 1, -1):
            byte = regs.get(register, 0) if lit else 0
            segments = tuple(int(bool(byte & bit)) for bit in SEGMENT_BITS)
            out.append(Cell(segments, bool(byte & DP_BIT)))  # type: ignore[arg-type]
        return tuple(out)

    def close(self) -> None:
        self.closed = True
