"""One wiring path for ``tablectl run`` and ``tablectl simulate`` (DESIGN.md "Layout":
controller/service/ holds the wiring, ONE path for run and simulate).

Checked twice: on the source (only `controller.service.wiring` builds the owner, the device
adapter, the GPIO table and the console; run and simulate call `wire`), and at run time (both
builders return a `Table` made by `wire`, on the same kinds of parts, differing only in what
`Parts` carries). The start order of the module docstring is checked on a real table with an
attachment that records what it saw.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from controller.config import SIMULATED_TABLE, load_config
from controller.service import rng, wiring
from controller.service.owner import Owner
from controller.service.wiring import Table

ROOT = Path(__file__).resolve().parents[1]
BUILDERS = ("controller/cli/run.py", "controller/sim/simulate.py")
# What only the wiring may construct: a second place building one of these is a second path.
WIRED_ONLY = {"Owner", "TableDevices", "build_gpio_table", "ConsoleServer", "InputPort"}


def calls_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
    return names


@pytest.mark.parametrize("module", BUILDERS)
def test_run_and_simulate_build_nothing_the_wiring_builds(module: str) -> None:
    calls = calls_in(ROOT / module)
    assert "wire" in calls, f"{module} must build its table with controller.service.wiring.wire"
    assert not calls & WIRED_ONLY, f"{module} builds {sorted(calls & WIRED_ONLY)} itself"


def test_both_builders_return_a_table_made_by_wire(
    tmp_path: Path, ptys: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recording wrapper around the real `wire` (it builds everything as before): each builder
    must pass through it once and hand back the Table it made."""
    from controller.cli import run
    from controller.sim import simulate

    made: list[tuple[wiring.Parts, Table]] = []
    real_wire = wiring.wire

    def recording_wire(config, journal_path, parts):  # type: ignore[no-untyped-def]
        table = real_wire(config, journal_path, parts)
        made.append((parts, table))
        return table

    monkeypatch.setattr(run, "wire", recording_wire)
    monkeypatch.setattr(simulate, "wire", recording_wire)
    base = load_config(SIMULATED_TABLE)
    shoe_port = replace(base.shoe.port, path=ptys[0])
    shuffler_port = replace(base.shuffler.port, path=ptys[1])
    serial = {
        "shoe": replace(base.serial["shoe"], driver=replace(base.shoe, port=shoe_port)),
        "shuffler": replace(
            base.serial["shuffler"], driver=replace(base.shuffler, port=shuffler_port)
        ),
    }
    config = replace(base, serial=serial, journal_path=tmp_path / "run.db")
    on_pi = run.build_service(config, pin_mode="mock")
    sim = simulate.build_service(base, tmp_path / "sim.db", seed=3)
    try:
        assert [t for _, t in made] == [on_pi, sim.table]
        for table in (on_pi, sim.table):
            assert isinstance(table, Table) and isinstance(table.owner, Owner)
            assert table.serial == [table.shoe, table.shuffler]
        (pi_parts, _), (sim_parts, _) = made
        assert pi_parts.draw is rng.draw_position  # the OS CSPRNG on a real table
        assert isinstance(sim_parts.draw, rng.SeededDraw)
        assert pi_parts.open_serial is wiring.open_configured_serial
        assert sim_parts.open_serial is not wiring.open_configured_serial
    finally:
        for adapter in on_pi.serial:
            adapter.stop()
        on_pi.gpio.close()
        sim.table.devices.close()
        if sim.sim is not None:
            sim.sim.stop()


class Recorder:
    """An attachment that records what it saw of the owner when started and stopped."""

    name = "recorder"

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def start(self, owner: Owner) -> None:
        self.log.append(f"start seq={owner.public.seq} alive={owner.alive}")

    def stop(self) -> None:
        self.log.append("stop")


class Refuses:
    name = "refuses"

    def start(self, owner: Owner) -> None:
        raise OSError("no socket here")

    def stop(self) -> None:
        raise AssertionError("an attachment that did not start is never stopped")


class Lock:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def acquire(self) -> None:
        self.log.append("acquire")

    def release(self) -> None:
        self.log.append("release")


def test_attachments_start_after_the_owner_runs_and_stop_before_it(tmp_path: Path) -> None:
    from controller.sim import simulate

    log: list[str] = []
    service = simulate.build_service(load_config(SIMULATED_TABLE), tmp_path / "j.db", seed=2)
    lock = Lock(log)
    lock.acquire()  # as wire() does with its holds (test_holds_are_taken_before_...)
    service.table.holds.append(lock)
    service.table.attach(Refuses())
    service.table.attach(Recorder(log))
    service.start()
    try:
        assert log[0] == "acquire"
        assert log[1].startswith("start seq=") and log[1].endswith("alive=True")
        assert int(log[1].split("seq=")[1].split()[0]) >= 1  # power-up already committed
        # the meter sign's reader is attached by wire() itself (the simulated pin plan has one)
        assert [a.name for a in service.table.started] == ["meter sign", "recorder"]
        assert [(a.name, str(e)) for a, e in service.table.failed] == [
            ("refuses", "no socket here")
        ]
    finally:
        service.close()
    assert log[2:] == ["stop", "release"]
    assert not service.owner.alive


class Broken:
    name = "broken"

    def start(self, owner: Owner) -> None:
        raise RuntimeError("a bug in an attachment")

    def stop(self) -> None:
        pass


def test_a_failing_start_leaves_nothing_running(tmp_path: Path) -> None:
    from controller.sim import simulate

    log: list[str] = []
    service = simulate.build_service(load_config(SIMULATED_TABLE), tmp_path / "j.db", seed=2)
    lock = Lock(log)
    lock.acquire()
    service.table.holds.append(lock)
    service.table.attach(Recorder(log))
    service.table.attach(Broken())
    try:
        with pytest.raises(RuntimeError, match="a bug in an attachment"):
            service.start()
        assert not service.owner.alive
        assert log[0] == "acquire" and log[-2:] == ["stop", "release"]
    finally:
        service.close()


class Refused:
    """A hold that cannot be taken (a journal in use by another controller)."""

    def acquire(self) -> None:
        raise RuntimeError("journal in use")

    def release(self) -> None:
        raise AssertionError("a hold never taken is never released")


def test_holds_are_taken_before_any_pin_port_or_file_is_opened(tmp_path: Path) -> None:
    """A refused hold (e.g. the journal's lock) leaves nothing opened: no pty, no port
    directory, no deck file beside the journal, the holds already taken released."""
    from controller.sim.simulate import PtySerial

    log: list[str] = []
    db = tmp_path / "j.db"
    config = load_config(SIMULATED_TABLE)
    serial = PtySerial(1, db.with_name(db.name + ".sim-shoe.json"))
    parts = wiring.Parts(pin_factory=None, open_serial=serial)
    with pytest.raises(RuntimeError, match="journal in use"):
        wiring.wire(config, db, parts, holds=[Lock(log), Refused()])
    assert log == ["acquire", "release"]
    assert serial.sim is None
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_inputs_are_armed_only_once_the_owner_runs(tmp_path: Path) -> None:
    """Issue 9: an edge before the owner thread runs has nowhere to go; the wiring claims the
    inputs unarmed and arms them in `Table.start`, for run and simulate alike."""
    from controller.sim import simulate

    service = simulate.build_service(load_config(SIMULATED_TABLE), tmp_path / "j.db", seed=2)
    try:
        assert service.table.gpio.lockout._button.when_activated is None
        service.start()
        assert service.table.gpio.lockout._button.when_activated is not None
    finally:
        service.close()
