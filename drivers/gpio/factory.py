"""Choosing gpiozero's pin factory: lgpio on the header's GPIO chip on the Pi, MockFactory in
simulation and tests.

Responsible for making the choice explicit and for naming the real cause when it fails.
gpiozero, left to itself, tries lgpio, then RPi.GPIO, then pigpio, then native, and quietly takes
the first that loads; and its ``LGPIOFactory`` guesses the chip (2.0/2.0.1 hard-code chip 4 on a
Pi 5 and ignore ``chip=``; the kernel moved the Pi 5 header chip from gpiochip4 to gpiochip0 in
6.6.45, and later kernels may have no gpiochip0 at all). So in "pi" mode we find the header chip
by its label (:data:`HEADER_CHIP_LABELS`: ``pinctrl-rp1`` on a Pi 5, Pi 500 and CM5,
``pinctrl-bcm2711`` on a Pi 4, ``pinctrl-bcm2835`` earlier) from a listing of
``/dev/gpiochip*`` (injectable, so tests feed listings), load lgpio with a writable work
directory without letting it move ours, and build ``LGPIOFactory(chip=N)`` (gpiozero >=
2.0.1.post3 honours it). Must never fall back to another factory, and never set gpiozero's global
default (every device is given the factory explicitly).
"""

from __future__ import annotations

import errno
import fcntl
import importlib
import os
import struct
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

PinMode = Literal["pi", "mock"]

#: Labels of the chip that drives the 40-pin header, in order of preference.
HEADER_CHIP_LABELS = ("pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835")

# linux/gpio.h: struct gpiochip_info { char name[32]; char label[32]; __u32 lines; }
_CHIPINFO_FORMAT = "32s32sI"
GPIO_GET_CHIPINFO_IOCTL = 0x8044B401  # _IOR(0xB4, 0x01, struct gpiochip_info)


class PinFactoryError(RuntimeError):
    """The requested pin factory cannot be used (and no other will be tried)."""


@dataclass(frozen=True)
class ChipInfo:
    """One ``/dev/gpiochipN``: its number, label and line count, or why it could not be read."""

    number: int
    label: str | None = None
    lines: int | None = None
    error: str | None = None

    def describe(self) -> str:
        if self.error is not None:
            return f"gpiochip{self.number} ({self.error})"
        return f"gpiochip{self.number} [{self.label}] ({self.lines} lines)"


ChipListing = Callable[[], Sequence[ChipInfo]]


def list_gpio_chips(dev: Path = Path("/dev")) -> list[ChipInfo]:
    """Every GPIO character device under ``dev``, with the label the kernel gives its chip
    (``GPIO_GET_CHIPINFO_IOCTL``, what ``gpiodetect`` prints). A symlink (gpiochip4 ->
    gpiochip0 on some Pi 5 kernels) is listed once, under the device it names."""
    seen: set[str] = set()
    out: list[ChipInfo] = []
    for path in sorted(dev.glob("gpiochip*"), key=lambda p: _chip_number(p.name)):
        number = _chip_number(path.name)
        if number < 0:
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        real_number = _chip_number(Path(real).name)
        out.append(_read_chip(Path(real), real_number if real_number >= 0 else number))
    return out


def _chip_number(name: str) -> int:
    digits = name[len("gpiochip") :]
    return int(digits) if digits.isdigit() else -1


def _read_chip(path: Path, number: int) -> ChipInfo:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        hint = ""
        if exc.errno in (errno.EACCES, errno.EPERM):
            hint = ": the service user needs the group gpio (deploy/install.sh adds it)"
        return ChipInfo(number, error=f"{os.strerror(exc.errno or 0).lower()}{hint}")
    try:
        buf = bytearray(struct.calcsize(_CHIPINFO_FORMAT))
        fcntl.ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, buf)
    except OSError as exc:
        return ChipInfo(number, error=f"not a GPIO chip ({os.strerror(exc.errno or 0).lower()})")
    finally:
        os.close(fd)
    _name, label, lines = struct.unpack(_CHIPINFO_FORMAT, bytes(buf))
    return ChipInfo(number, label.split(b"\0", 1)[0].decode(errors="replace"), lines)


def find_header_chip(chips: Sequence[ChipInfo]) -> ChipInfo:
    """The chip of the 40-pin header among ``chips``; PinFactoryError naming the real cause
    (no GPIO chip at all, chips that cannot be read and why, or the labels that were found)."""
    if not chips:
        raise PinFactoryError(
            "pin factory 'pi': no /dev/gpiochip* on this machine (not a Raspberry Pi, or a "
            "container without the GPIO devices)"
        )
    for wanted in HEADER_CHIP_LABELS:
        for chip in chips:
            if chip.label == wanted:
                return chip
    unreadable = [c for c in chips if c.error is not None]
    listing = "; ".join(c.describe() for c in chips)
    if unreadable and len(unreadable) == len(chips):
        raise PinFactoryError(f"pin factory 'pi': cannot read any GPIO chip: {listing}")
    raise PinFactoryError(
        f"pin factory 'pi': no GPIO chip labelled {' / '.join(HEADER_CHIP_LABELS)} (the 40-pin "
        f"header of a Raspberry Pi 5/CM5, 4, or earlier) among: {listing}; set pins.gpio_chip "
        "only if this board's header chip has another label"
    )


def lgpio_workdir() -> Path:
    """Where lgpio may create its notification pipes (``.lgd-nfy*``): ``LG_WD`` if set, else
    systemd's ``RUNTIME_DIRECTORY``, else a private temporary directory."""
    for name in ("LG_WD", "RUNTIME_DIRECTORY"):
        value = os.environ.get(name)
        if value:
            return Path(value.split(":")[0])
    return Path(tempfile.mkdtemp(prefix="paigow-lgpio-"))


def load_lgpio() -> ModuleType:
    """Import lgpio so that it works from any working directory and leaves ours alone.

    lgpio creates its notification pipe at import in ``LG_WD`` (else the working directory:
    ``FileNotFoundError`` / ``PermissionError`` where that is not writable) and, when ``LG_WD``
    is set, ``chdir``s the whole process there. So: point ``LG_WD`` at :func:`lgpio_workdir`,
    import, and change back. Raises PinFactoryError naming the directory or the missing
    library."""
    if "lgpio" in sys.modules and sys.modules["lgpio"] is not None:
        return sys.modules["lgpio"]
    workdir = lgpio_workdir()
    if not workdir.is_dir() or not os.access(workdir, os.W_OK | os.X_OK):
        raise PinFactoryError(
            f"pin factory 'pi': lgpio's work directory {workdir} (LG_WD) is missing or not "
            "writable; lgpio creates its notification pipes there"
        )
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    os.environ["LG_WD"] = str(workdir)
    try:
        return importlib.import_module("lgpio")
    except ImportError as exc:
        raise PinFactoryError(
            f"pin factory 'pi': the lgpio library cannot be loaded ({exc}); install it "
            "(pip install '.[pi]': aarch64 wheels, or apt install python3-lgpio); refusing to "
            "fall back to another pin factory"
        ) from exc
    except OSError as exc:
        raise PinFactoryError(
            f"pin factory 'pi': lgpio could not create its notification pipe in {workdir} "
            f"({type(exc).__name__}: {exc})"
        ) from exc
    finally:
        if cwd is not None and os.getcwd() != cwd:
            os.chdir(cwd)


def make_pin_factory(
    mode: PinMode,
    *,
    chip: int | None = None,
    chips: ChipListing = list_gpio_chips,
) -> Any:
    """Return a gpiozero pin factory: ``LGPIOFactory(chip=N)`` on the header chip for "pi"
    (``chip`` forces N; else it is found by label in ``chips()``), ``MockFactory`` for "mock".

    Raises PinFactoryError naming the cause, and ValueError for any other mode."""
    if mode == "mock":
        from gpiozero.pins.mock import MockFactory

        return MockFactory()
    if mode != "pi":
        raise ValueError(f"pin factory mode {mode!r}: expected 'pi' or 'mock'")
    number = chip if chip is not None else find_header_chip(chips()).number
    load_lgpio()
    try:
        module = importlib.import_module("gpiozero.pins.lgpio")
    except ImportError as exc:
        raise PinFactoryError(
            f"pin factory 'pi': the lgpio library cannot be loaded ({exc}); install it "
            "(pip install '.[pi]', or apt install python3-lgpio); refusing to fall back to "
            "another pin factory"
        ) from exc
    try:
        return module.LGPIOFactory(chip=number)
    except Exception as exc:
        raise PinFactoryError(
            f"pin factory 'pi': lgpio loaded but could not open /dev/gpiochip{number} "
            f"({type(exc).__name__}: {exc}); refusing to fall back to another pin factory"
        ) from exc


def callback_thread_alive() -> bool | None:
    """Whether lgpio's notification thread (the one that runs every pin callback) still runs;
    None when lgpio is not loaded (MockFactory calls handlers in the thread that drives the
    pin). The service exits when this turns False, so that systemd restarts it."""
    module = sys.modules.get("lgpio")
    thread = getattr(module, "_notify_thread", None) if module is not None else None
    if thread is None:
        return None
    return bool(thread.is_alive())


def board_model(path: Path = Path("/proc/device-tree/model")) -> str | None:
    """The board's model string (``Raspberry Pi 5 Model B Rev 1.0``, ``Raspberry Pi Compute
    Module 5 Rev 1.0`` ...), None where there is none."""
    try:
        return path.read_bytes().rstrip(b"\0").decode(errors="replace")
    except OSError:
        return None


def is_rp1_board(model: str | None) -> bool:
    """A board whose header is on the RP1 (Pi 5, Pi 500, Compute Module 5)."""
    if model is None:
        return False
    return any(k in model for k in ("Raspberry Pi 5", "Raspberry Pi 500", "Compute Module 5"))
