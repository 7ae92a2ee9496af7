"""A technician at the Pi stand-in's table: reads the service's state from its systemd STATUS=
line, presses the table's inputs on gpio-sim and reads its outputs back (tests/pi).

It never decides a rule: each press is what a dealer or supervisor would do in that state, and
the service in the guest accepts or refuses it.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from pivm_support import (
    ACCEPTOR_LIGHTS,
    ACCEPTOR_SENSORS,
    CONF,
    DB,
    PINS,
    TABLECTL,
    UNIT,
    GuestError,
    PiVM,
    say,
    status_fields,
)

WAITING = {
    "Open_Shuffling",
    "Open_StartingPosition_Rng",
    "Open_Dealing",
    "Open_Settlement",
    "Open_RoundComplete",
    "starting",
}


class NotReady(AssertionError):
    """The unit did not reach READY (active/running) under systemd: the reason in words."""


def unit_state(vm: PiVM) -> dict[str, str]:
    out = vm.sh(
        "systemctl show -p ActiveState,SubState,StatusText,NRestarts,MainPID,Result,"
        f"ExecMainStatus,WatchdogTimestampMonotonic {UNIT}"
    )
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def wait_ready(vm: PiVM, timeout: float = 300.0, restarts_at_least: int = 0) -> dict[str, str]:
    """Until the unit is active (READY=1 sent: Type=notify) with a STATUS line, after at least
    ``restarts_at_least`` restarts; NotReady with the unit's journal otherwise."""
    end = time.monotonic() + timeout
    seen: dict[str, str] = {}
    while time.monotonic() < end:
        seen = unit_state(vm)
        if (
            seen.get("ActiveState") == "active"
            and seen.get("SubState") == "running"
            and seen.get("StatusText")
            and int(seen.get("NRestarts", "0")) >= restarts_at_least
        ):
            say(f"READY: {seen.get('StatusText')} (restarts {seen.get('NRestarts')})")
            return seen
        time.sleep(2)
    log = vm.sh(f"journalctl -u {UNIT} -n 25 --no-pager", check=False)
    raise NotReady(f"{UNIT} not READY in {timeout:g} s: {seen}\n{log}")


def wait_failed_start(vm: PiVM, old_pid: str, timeout: float = 120.0) -> dict[str, str]:
    """Until a start of the unit after its process OLD_PID has failed (systemd waiting to restart
    it, or given up): the unit's state then. AssertionError if a new process reaches READY
    instead, NotReady if neither happens."""
    end = time.monotonic() + timeout
    seen: dict[str, str] = {}
    while time.monotonic() < end:
        seen = unit_state(vm)
        running = seen.get("ActiveState") == "active" and seen.get("SubState") == "running"
        if running and seen.get("MainPID") != old_pid:
            raise AssertionError(f"{UNIT} reached READY: {seen}")
        if seen.get("SubState") == "auto-restart" or seen.get("ActiveState") == "failed":
            say(f"start failed: {seen}")
            return seen
        time.sleep(0.5)
    log = vm.sh(f"journalctl -u {UNIT} -n 25 --no-pager", check=False)
    raise NotReady(f"{UNIT} neither failed nor became READY in {timeout:g} s: {seen}\n{log}")


def status(vm: PiVM) -> dict[str, Any]:
    return status_fields(vm.prop("StatusText"))


def wait_state(vm: PiVM, states: set[str], timeout: float = 120.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    st: dict[str, Any] = {}
    while time.monotonic() < end:
        st = status(vm)
        if st["state"] in states:
            return st
        time.sleep(0.5)
    raise AssertionError(f"the table did not reach {sorted(states)} in {timeout:g} s: {st}")


def key_step(vm: PiVM, button: str = "panel_next") -> None:
    """A supervisor's step at the panel: the key switch on, NEXT (or VOID), the key off."""
    vm.pull(PINS["supervisor_key"], "down")
    time.sleep(0.4)
    vm.press(PINS[button])
    time.sleep(0.4)
    vm.pull(PINS["supervisor_key"], "up")
    time.sleep(0.3)


def lights(vm: PiVM) -> list[int]:
    return vm.read(ACCEPTOR_LIGHTS)


def drop_chips(vm: PiVM, positions: list[int]) -> None:
    for p in positions:
        vm.press(ACCEPTOR_SENSORS[p - 1], ms=60)
        time.sleep(0.15)


def steady_lights(vm: PiVM, reads: int = 4) -> list[int]:
    """The lights that stayed on over several reads (the attract chase moves every 125 ms)."""
    seen = [1] * 6
    for _ in range(reads):
        seen = [a & b for a, b in zip(seen, lights(vm), strict=True)]
        time.sleep(0.13)
    return seen


def play_round(vm: PiVM, positions: list[int], timeout: float = 600.0) -> dict[str, Any]:
    """One whole round from wherever the table stands, by its inputs alone; returns what was
    read back: lights after the chips and after the lock-out, the digit of the starting
    position."""
    start = status(vm)
    target = start.get("rounds", 0) + 1
    seen: dict[str, Any] = {"states": []}
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = status(vm)
        state = st["state"]
        if st.get("rounds", 0) >= target:
            seen["status"] = st
            return seen
        if not seen["states"] or seen["states"][-1] != state:
            seen["states"].append(state)
            say(f"table: {state}, round {st.get('round')}, seq {st.get('seq')}")
        if state in ("Closed", "Fault", "Open_JackpotPending"):
            key_step(vm)
            wait_change(vm, st)
        elif state == "Open_Betting":
            drop_chips(vm, positions)
            # each chip is accepted once its debounce and the owner's commit are done: under
            # emulation on a loaded host that can take seconds, so wait for the lights (bounded)
            until = time.monotonic() + 20
            while True:
                seen["lights_betting"] = steady_lights(vm)
                lit = all(seen["lights_betting"][p - 1] for p in positions)
                if lit or time.monotonic() > until:
                    break
            vm.press(PINS["lockout_button"])
            wait_state(vm, {"Open_LockedOut"}, 60)
            time.sleep(0.3)
            seen["lights_locked"] = lights(vm)
        elif state in ("Open_LockedOut", "Open_Play"):
            if state == "Open_Play" and "digit" not in seen:
                seen["digit"] = vm.digit()  # the starting position, on the segment pins
            vm.press(PINS["panel_next"])
            wait_change(vm, st)
        elif state in WAITING:
            if state == "Open_Dealing" and "digit" not in seen:
                seen["digit"] = vm.digit()
            time.sleep(0.5)
        else:
            log = vm.sh(f"journalctl -u {UNIT} -n 40 --no-pager", check=False)
            raise AssertionError(f"no technician's step for state {state!r}: {st} {seen}\n{log}")
    raise AssertionError(f"no round completed in {timeout:g} s: {seen} {status(vm)}")


def wait_change(vm: PiVM, before: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
    """Until the state or the journal's seq moves on from ``before`` (a press was taken)."""
    end = time.monotonic() + timeout
    st: dict[str, Any] = {}
    while time.monotonic() < end:
        st = status(vm)
        if st["state"] != before["state"] or st.get("seq") != before.get("seq"):
            return st
        time.sleep(0.3)
    return st


def journal_entries(vm: PiVM) -> list[dict[str, Any]]:
    out = vm.sh(f"{TABLECTL} journal export --db {DB} --format jsonl", timeout=300)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def verification_key(vm: PiVM) -> str:
    """The verification key install.sh printed once for the back office (its log beside the
    image): it is not kept on the Pi, so the check is the back office's, not the table's own."""
    log = (vm.image / "install.log").read_text()
    keys = set(re.findall(r"pgvk1-[0-9a-f-]+", log))
    if len(keys) != 1:
        raise AssertionError(f"install.log names {len(keys)} verification keys, not one")
    return keys.pop()


def journal_verify(vm: PiVM) -> str:
    """Every entry's forward-secure seal checked with the printed verification key."""
    rc, out, err = vm.run(
        f"runuser -u paigow -- {TABLECTL} journal verify --db {DB} "
        f"--verify-key {verification_key(vm)}",
        timeout=300,
    )
    if rc != 0:
        raise AssertionError(f"journal verify failed ({rc}):\n{out}\n{err}")
    return out


__all__ = ["CONF", "GuestError", "NotReady"]
