"""The pin factory is chosen explicitly (DESIGN.md "Hardware": on the Pi the lgpio factory, set
explicitly; tests and simulation MockFactory) and never falls back silently to another one."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from drivers.gpio.factory import (
    ChipInfo,
    PinFactoryError,
    find_header_chip,
    is_rp1_board,
    list_gpio_chips,
    make_pin_factory,
)
from drivers.gpio.gpio_table import build_gpio_table
from drivers.gpio.pins import PinConfig

ROOT = Path(__file__).resolve().parents[1]


def test_mock_mode_gives_gpiozero_mock_factory() -> None:
    factory = make_pin_factory("mock")
    try:
        assert isinstance(factory, MockFactory)
    finally:
        factory.close()


PI5_LISTING = [  # gpiodetect on a Pi 5 with kernel >= 6.6.45 (raspberrypi/linux#6144)
    ChipInfo(0, "pinctrl-rp1", 54),
    ChipInfo(10, "gpio-brcmstb@107d508500", 32),
    ChipInfo(11, "gpio-brcmstb@107d508520", 4),
    ChipInfo(12, "gpio-brcmstb@107d517c00", 17),
    ChipInfo(13, "gpio-brcmstb@107d517c20", 6),
]
PI5_OLD_KERNEL = [  # before 6.6.45 the header was gpiochip4
    ChipInfo(0, "gpio-brcmstb@107d508500", 32),
    ChipInfo(1, "gpio-brcmstb@107d508520", 4),
    ChipInfo(2, "gpio-brcmstb@107d517c00", 17),
    ChipInfo(3, "gpio-brcmstb@107d517c20", 6),
    ChipInfo(4, "pinctrl-rp1", 54),
]
PI4_LISTING = [ChipInfo(0, "pinctrl-bcm2711", 58), ChipInfo(1, "raspberrypi-exp-gpio", 8)]
PI3_LISTING = [ChipInfo(0, "pinctrl-bcm2835", 54), ChipInfo(1, "raspberrypi-exp-gpio", 8)]
NO_CHIP0 = [ChipInfo(10, "gpio-brcmstb@107d508500", 32), ChipInfo(13, "pinctrl-rp1", 54)]


@pytest.mark.parametrize(
    ("listing", "number"),
    [(PI5_LISTING, 0), (PI5_OLD_KERNEL, 4), (PI4_LISTING, 0), (PI3_LISTING, 0), (NO_CHIP0, 13)],
    ids=["pi5", "pi5-before-6.6.45", "pi4", "pi3", "no-gpiochip0"],
)
def test_the_header_chip_is_found_by_its_label_whatever_its_number(
    listing: list[ChipInfo], number: int
) -> None:
    assert find_header_chip(listing).number == number


def test_a_listing_without_the_header_chip_names_what_was_found() -> None:
    with pytest.raises(PinFactoryError) as err:
        find_header_chip([ChipInfo(0, "gpio-mockup-A", 8), ChipInfo(1, error="permission denied")])
    message = str(err.value)
    assert "no GPIO chip labelled pinctrl-rp1 / pinctrl-bcm2711 / pinctrl-bcm2835" in message
    assert "gpiochip0 [gpio-mockup-A] (8 lines)" in message
    assert "gpiochip1 (permission denied)" in message


def test_no_chip_at_all_and_unreadable_chips_are_told_apart() -> None:
    with pytest.raises(PinFactoryError, match="no /dev/gpiochip\\* on this machine"):
        find_header_chip([])
    with pytest.raises(PinFactoryError, match="cannot read any GPIO chip: gpiochip0 \\(perm"):
        find_header_chip([ChipInfo(0, error="permission denied: the service user needs")])


def test_the_listing_reads_dev_and_tells_a_non_gpio_device_by_its_error(tmp_path: Path) -> None:
    # /dev/null answers the chip-info ioctl with ENOTTY, as anything but a GPIO chip does
    (tmp_path / "gpiochip0").symlink_to("/dev/null")
    (tmp_path / "gpiochipX").touch()  # not a chip name
    listing = list_gpio_chips(tmp_path)
    assert len(listing) == 1
    assert listing[0].number == 0 and listing[0].label is None
    assert listing[0].error is not None and listing[0].error.startswith("not a GPIO chip")


def test_pi_mode_passes_the_found_chip_explicitly(monkeypatch: pytest.MonkeyPatch) -> None:
    """gpiozero 2.0/2.0.1 guess chip 4 on a Pi 5; the chip found by label is passed as chip=."""
    opened: list[int] = []
    stand_in = types.ModuleType("gpiozero.pins.lgpio")

    def factory(chip: int | None = None) -> str:
        assert chip is not None, "the chip must be passed explicitly"
        opened.append(chip)
        return f"factory on {chip}"

    stand_in.LGPIOFactory = factory  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", stand_in)
    monkeypatch.setitem(sys.modules, "lgpio", types.ModuleType("lgpio"))
    assert make_pin_factory("pi", chips=lambda: NO_CHIP0) == "factory on 13"
    assert make_pin_factory("pi", chip=4, chips=lambda: []) == "factory on 4"
    assert opened == [13, 4]


def test_pi_mode_without_lgpio_is_a_clear_error_not_a_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "lgpio", None)
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", None)
    with pytest.raises(PinFactoryError) as err:
        make_pin_factory("pi", chips=lambda: PI4_LISTING)
    message = str(err.value)
    assert message.startswith("pin factory 'pi': the lgpio library cannot be loaded")
    assert "refusing to fall back" in message
    assert "python3-lgpio" in message


def test_pi_mode_when_the_gpio_chip_cannot_be_opened_names_the_chip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # stand-in for gpiozero.pins.lgpio whose factory fails as lgpio does on a missing chip
    stand_in = types.ModuleType("gpiozero.pins.lgpio")

    def failing_factory(chip: int | None = None) -> None:
        raise OSError("can not open gpiochip")

    stand_in.LGPIOFactory = failing_factory  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", stand_in)
    monkeypatch.setitem(sys.modules, "lgpio", types.ModuleType("lgpio"))
    with pytest.raises(
        PinFactoryError,
        match=r"^pin factory 'pi': lgpio loaded but could not open /dev/gpiochip0 \(OSError",
    ):
        make_pin_factory("pi", chips=lambda: PI5_LISTING)


IMPORT_LGPIO = """
import os, sys
from drivers.gpio.factory import PinFactoryError, load_lgpio, callback_thread_alive
try:
    before = os.getcwd()
except OSError:
    before = None
try:
    load_lgpio()
except PinFactoryError as exc:
    print("ERROR", exc)
    sys.exit(3)
try:
    print("CWD-KEPT", os.getcwd() == before)
except OSError:
    print("CWD-KEPT", before is None)
print("ALIVE", callback_thread_alive())
print("PIPES", sorted(os.listdir(os.environ["LG_WD"]))[:1])
"""


def test_lgpio_loads_from_an_unusable_working_directory_and_leaves_it_alone(
    tmp_path: Path,
) -> None:
    """issue 9 point 7: plain ``import lgpio`` creates its pipe in the working directory
    (FileNotFoundError where it cannot) and chdirs to LG_WD; load_lgpio does neither."""
    pytest.importorskip("lgpio")  # the x86-64 wheel is in the test extra
    gone = tmp_path / "gone"
    gone.mkdir()
    workdir = tmp_path / "lgwd"
    workdir.mkdir()
    script = f"import os; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\n" + IMPORT_LGPIO
    env = {**os.environ, "LG_WD": str(workdir), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ALIVE True" in done.stdout
    assert "PIPES ['.lgd-nfy" in done.stdout


def test_lgpio_keeps_the_working_directory_when_lg_wd_is_set(tmp_path: Path) -> None:
    pytest.importorskip("lgpio")
    workdir = tmp_path / "lgwd"
    workdir.mkdir()
    env = {**os.environ, "LG_WD": str(workdir), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_LGPIO], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CWD-KEPT True" in done.stdout
    # the plain import, for contrast: lgpio chdirs the whole process to LG_WD
    script = "import os, lgpio; print(os.getcwd())"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.stdout.strip() == str(workdir)


def test_lgpio_workdir_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    pytest.importorskip("lgpio")
    env = {**os.environ, "LG_WD": str(tmp_path / "missing"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_LGPIO], capture_output=True, text=True, env=env
    )
    assert done.returncode == 3
    assert f"lgpio's work directory {tmp_path / 'missing'} (LG_WD) is missing" in done.stdout


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^pin factory mode 'rpigpio': expected 'pi' or 'mock'"):
        make_pin_factory("rpigpio")  # type: ignore[arg-type]


def test_every_device_uses_the_given_factory_and_the_global_default_stays_unset() -> None:
    saved = Device.pin_factory
    Device.pin_factory = None
    factory = MockFactory()
    try:
        table = build_gpio_table(PinConfig(), factory, lambda event: None)
        try:
            assert Device.pin_factory is None, "a device fell back to gpiozero's default factory"
            # every configured line, and SPI0's CE0, MOSI, SCLK for the MAX7219 chain
            claimed = {pin for _, pin in PinConfig().assignments()} | {8, 10, 11}
            assert {int(info.name[4:]) for info in factory.pins} == claimed
        finally:
            table.close()
    finally:
        Device.pin_factory = saved


@pytest.mark.parametrize(
    ("model", "rp1"),
    [
        ("Raspberry Pi 5 Model B Rev 1.0", True),
        ("Raspberry Pi Compute Module 5 Rev 1.0", True),
        ("Raspberry Pi Compute Module 5 Lite Rev 1.0", True),
        ("Raspberry Pi 500 Rev 1.0", True),
        ("Raspberry Pi 4 Model B Rev 1.5", False),
        ("Raspberry Pi Compute Module 4 Rev 1.1", False),
        (None, False),
    ],
)
def test_cm5_and_pi500_are_recognised_as_rp1_boards(model: str | None, rp1: bool) -> None:
    assert is_rp1_board(model) is rp1
