"""The Pi stand-in VM for tests/pi (``make pi-vm`` runs them; ``make test`` deselects the
``pi_vm`` marker): one VM for the module, booted from the image deploy/pi-vm/build.sh made, with
the shoe's and shuffler's simulators on the host side of its USB serial adapters.

PAIGOW_PI_VM_BREAK=readonly-state installs a drop-in that makes /var/lib/paigow read-only for the
service before the tests run: every test that needs the service must then fail (the proof that
`make pi-vm` can fail; shown in docs/operator-guide.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pivm_support import PiVM, UsbSerial, image_dir, image_ready

from drivers.sim.bench import SimulatedDevices

BROKEN_DROPIN = "/etc/systemd/system/paigow-table.service.d/pivm-broken.conf"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/pi/" in str(item.fspath):
            item.add_marker(pytest.mark.pi_vm)


@pytest.fixture(scope="session")
def devices() -> Iterator[SimulatedDevices]:
    sim = SimulatedDevices(card_reading=True)
    sim.start(seed=27)
    yield sim
    sim.stop()


def _usb(sim: SimulatedDevices) -> list[UsbSerial]:
    assert sim.shoe is not None and sim.shuffler is not None
    return [
        UsbSerial("shoe", "PGSHOE0001", os.path.realpath(sim.shoe.path)),
        UsbSerial("shuffler", "PGSHUF0001", os.path.realpath(sim.shuffler.path)),
    ]


@pytest.fixture(scope="session")
def vm(devices: SimulatedDevices) -> Iterator[PiVM]:
    image = image_dir()
    if not image_ready(image):
        pytest.fail(f"no Pi VM image in {image}: build it with `sudo make pi-vm`")
    machine = PiVM(image, board=os.environ.get("PAIGOW_PI_VM_BOARD", "pi5"), usb=_usb(devices))
    machine.start()
    try:
        machine.wait_agent(timeout=900)
        if os.environ.get("PAIGOW_PI_VM_BREAK") == "readonly-state":
            machine.sh(
                f"mkdir -p {os.path.dirname(BROKEN_DROPIN)} && printf "
                f"'[Service]\\nReadOnlyPaths=/var/lib/paigow\\n' >{BROKEN_DROPIN} && "
                "systemctl daemon-reload && systemctl restart --no-block paigow-table"
            )
        yield machine
    finally:
        machine.stop()
