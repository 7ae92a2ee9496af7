"""Line noise is a rate over a window, and a device's fault clears only when the device reports
healthy: the per-device fault set, as gaming platforms keep one (issue 12; docs/device-protocol.md
"Faults"). The rate is `drivers.serial.noise.NoiseRate` on a given clock; the fault set is the
round machine's (fsm/round/plan_faults.py), fed by the real serial adapters on real ptys.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from round_support import Table

from controller.config import ConfigError, parse_config
from drivers.serial.noise import NoiseConfig, NoiseRate
from fsm.round.events import Event
from fsm.round.machine import RoundMachine


def test_one_garbage_byte_the_link_recovered_from_is_no_fault() -> None:
    rate = NoiseRate(NoiseConfig())  # the default: 32 units in 10 s
    assert rate.update(1, 0.0) is None  # one byte between frames: the link resynchronised
    assert rate.update(2, 1.0) is None  # one damaged frame: NAKed and sent again


def test_line_noise_only_when_the_rate_exceeds_the_configured_limit_within_the_window() -> None:
    rate = NoiseRate(NoiseConfig(limit=10, window_s=5.0))
    assert rate.update(10, 0.0) is None  # at the limit: not past it
    assert rate.update(11, 1.0) == 11  # past it within the window: LINE_NOISE
    assert rate.update(11, 2.0) is None  # reported: the window starts afresh
    slow = NoiseRate(NoiseConfig(limit=10, window_s=5.0))
    for second in range(60):  # 60 units in a minute, but never more than 5 in 5 s
        assert slow.update(second + 1, float(second) * 1.0) is None


def _config(**shoe: Any) -> dict[str, Any]:
    import tomllib

    from controller.config import SIMULATED_TABLE

    data = tomllib.loads(SIMULATED_TABLE.read_text())
    data.setdefault("serial", {}).setdefault("shoe", {}).update(shoe)
    return data


def test_the_noise_rate_is_configured_per_device_and_checked() -> None:
    config = parse_config(_config(noise_limit=5, noise_window=2.5), "t")
    assert config.shoe.noise == NoiseConfig(limit=5, window_s=2.5)
    assert config.shuffler.noise == NoiseConfig()
    for bad, message in (
        ({"noise_window": float("nan")}, "serial.shoe.noise_window: must be a finite number"),
        ({"noise_limit": -1}, "serial.shoe.noise_limit: must be an integer 0..1000000"),
    ):
        with pytest.raises(ConfigError) as info:
            parse_config(_config(**bad), "t")
        assert any(p.startswith(message) for p in info.value.problems), info.value.problems


# ------------------------------------------------------------------------ the per-device fault set
def _jammed(t: Table) -> None:
    t.open()
    t.ev("fault_raised", code="SHOE_JAM", device="shoe", detail="jam", held=True)
    assert t.state == "Fault"


def test_a_shoe_jam_cannot_be_cleared_while_the_shoe_still_reports_it() -> None:
    t = Table()
    _jammed(t)
    effects = t.ev("fault_cleared", supervisor="s1")
    assert t.state == "Fault"
    assert any("SHOE_JAM: the shoe still reports it" in str(e) for e in effects)
    t.ev("device_recovered", device="shuffler", code="SHUFFLER_JAM")  # another device: no
    t.ev("fault_cleared", supervisor="s1")
    assert t.state == "Fault"
    t.ev("device_recovered", device="shoe", code="SHOE_JAM")  # the shoe reports healthy
    assert t.state == "Fault"  # a supervisor still clears it
    t.ev("fault_cleared", supervisor="s1")
    assert t.state != "Fault"


def test_a_fault_no_device_holds_is_cleared_by_the_supervisor_as_before() -> None:
    t = Table()
    t.open()
    t.ev("fault_raised", code="LINE_NOISE", device="shoe", detail="noisy")
    t.ev("fault_cleared", supervisor="s1")
    assert t.state != "Fault"


def test_the_fault_set_survives_a_restart_from_the_snapshot() -> None:
    t = Table()
    _jammed(t)
    t.m = RoundMachine.restore(t.cfg, t.m.snapshot())  # power-up: the stored snapshot
    t.ev("fault_cleared", supervisor="s1")
    assert t.state == "Fault"
    t.ev("device_recovered", device="shoe")  # no code: every fault the shoe holds
    t.ev("fault_cleared", supervisor="s1")
    assert t.state != "Fault"


def test_the_real_shoe_adapter_holds_a_jam_until_its_status_shows_it_cleared(
    tmp_path: Path,
) -> None:
    """Through the pty simulator and the real adapter: the jam is journaled as held, the shoe is
    polled while it holds it, and only after the jam is fixed does ``device_recovered`` come."""
    from drivers.serial.shoe import ReferenceShoe, ShoeConfig
    from drivers.sim.bench import SimulatedDevices

    sim = SimulatedDevices(card_reading=False)
    shoe_path, _ = sim.start(seed=3, directory=str(tmp_path))
    posted: list[Event] = []
    cfg = ShoeConfig.from_mapping({"port": {"path": shoe_path}}, "serial.shoe")
    shoe = ReferenceShoe.open(cfg, posted.append)
    try:
        shoe.start()
        sim.inject("shoe-jam")
        shoe.request_status()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(e.type == "fault_raised" for e in posted):
            time.sleep(0.05)
        jam = [e for e in posted if e.type == "fault_raised"]
        assert jam and jam[0].data["code"] == "SHOE_JAM" and jam[0].data.get("held") is True
        time.sleep(1.5)  # polled while jammed: still jammed, nothing recovered
        assert not any(e.type == "device_recovered" for e in posted)
        sim.clear("shoe-jam")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(e.type == "device_recovered" for e in posted):
            time.sleep(0.05)
        recovered = [e for e in posted if e.type == "device_recovered"]
        assert recovered and recovered[0].data == {"device": "shoe", "code": "SHOE_JAM"}
    finally:
        shoe.stop()
        sim.stop()
