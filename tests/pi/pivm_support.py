"""The host side of the Raspberry Pi stand-in VM (``make pi-vm``): boots the image that
``deploy/pi-vm/build.sh`` made under ``qemu-system-aarch64`` (TCG), and drives the guest.

- `PiVM.start()` boots the kernel with systemd as PID 1 and a device tree naming a Pi 5 (or a
  Pi 4); the root image is opened with ``snapshot=on``, so the cached image never changes and a
  guest reboot inside the same QEMU keeps what the guest wrote.
- The shoe and the shuffler are QEMU ``usb-serial`` devices (an FTDI FT232, 0403:6001, driven by
  the guest's ``ftdi_sio``) with the USB serial numbers the shipped udev rules match; their QEMU
  chardevs open the ptys of the project's own device simulators (`drivers.sim.bench`).
- `Agent` talks to the guest's test agent (deploy/pi-vm/guest/pivm-agent) over a virtio serial
  port: shell commands, gpio-sim pulls (a press), line values (lights, digit segments).
- `Qmp` is QEMU's monitor: ``device_del`` / ``device_add`` pull and plug a USB serial adapter.

Must never decide a game rule: the service in the guest does; this only presses and reads back.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MACHINE_ENV = ROOT / "deploy" / "pi-vm" / "machine.env"
DEFAULT_CACHE = Path("/var/cache/paigow-pi-vm")
UNIT = "paigow-table.service"
DB = "/var/lib/paigow/journal.db"
CONF = "/etc/paigow/table.toml"
TABLECTL = "/opt/paigow/venv/bin/tablectl"

# the VM's table.toml (deploy/pi-vm/image.sh): the shipped pin plan, the digit on seven pins
PINS = {
    "lockout_button": 5,
    "panel_next": 6,
    "shaker": 7,
    "panel_void": 12,
    "supervisor_key": 13,
}
ACCEPTOR_SENSORS = [16, 17, 22, 23, 24, 25]
ACCEPTOR_LIGHTS = [18, 19, 20, 21, 26, 27]
SEGMENTS = [2, 3, 4, 8, 9, 10, 11]  # a..g
# The digits of a seven-segment display as any datasheet draws them (segments a..g lit).
SEVEN_SEGMENT = {
    "1": "bc",
    "2": "abdeg",
    "3": "abcdg",
    "4": "bcfg",
    "5": "acdfg",
    "6": "acdefg",
    "7": "abc",
    "-": "g",
    "L": "def",
    "F": "aefg",
    "P": "abefg",
    " ": "",
}


def image_dir() -> Path:
    """The built image: $PAIGOW_PI_VM_IMAGE, else <cache>/current."""
    explicit = os.environ.get("PAIGOW_PI_VM_IMAGE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("PAIGOW_PI_VM_CACHE", DEFAULT_CACHE)) / "current"


def image_ready(path: Path | None = None) -> bool:
    d = path or image_dir()
    return all((d / f).is_file() for f in ("root.img", "vmlinuz", "initrd.img", "pi5.dtb"))


def machine_env() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in MACHINE_ENV.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = shlex.split(value)[0] if value.strip() else ""
    return out


def say(text: str) -> None:
    """Progress on the terminal of `make pi-vm` (run with -s: make pi-vm), with the time."""
    print(f"pi-vm {time.strftime('%H:%M:%S')} {text}", file=sys.__stderr__, flush=True)


class GuestError(RuntimeError):
    """The guest answered with an error, or not in time."""


def _connect_unix(path: Path, timeout: float) -> socket.socket:
    end = time.monotonic() + timeout
    while True:
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(path))
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > end:
                raise
            time.sleep(0.1)


class Agent:
    """JSON lines to and from the guest's pivm-agent over the virtio port."""

    def __init__(self, path: Path) -> None:
        self.sock = _connect_unix(path, 30)
        self.buf = b""
        self.next_id = 0

    def request(self, wait_s: float = 60.0, **req: Any) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        self.sock.sendall(json.dumps({**req, "id": rid}).encode() + b"\n")
        end = time.monotonic() + wait_s
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    reply = json.loads(line)
                except ValueError:
                    continue  # a partial line from before a guest reboot
                if reply.get("id") == rid:
                    if "error" in reply:
                        raise GuestError(f"agent: {reply['error']} (request {req})")
                    return dict(reply)
            left = end - time.monotonic()
            if left <= 0:
                raise GuestError(f"agent: no answer to {req} in {wait_s} s")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                raise GuestError("agent: QEMU closed the virtio port's socket")
            self.buf += chunk

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class Qmp:
    """QEMU's machine protocol on its UNIX socket."""

    def __init__(self, path: Path) -> None:
        self.sock = _connect_unix(path, 30)
        self.buf = b""
        self.events: list[dict[str, Any]] = []
        self._message(30)  # the greeting
        self.execute("qmp_capabilities")

    def _message(self, wait_s: float) -> dict[str, Any]:
        end = time.monotonic() + wait_s
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("qmp: no message")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                raise GuestError("qmp: QEMU closed the monitor")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return dict(json.loads(line))

    def execute(self, command: str, **arguments: Any) -> Any:
        msg: dict[str, Any] = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._message(60)
            if "event" in reply:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise GuestError(f"qmp {command}: {reply['error']}")
            return reply.get("return")

    def wait_event(self, name: str, wait_s: float = 60.0) -> dict[str, Any]:
        end = time.monotonic() + wait_s
        while True:
            for ev in self.events:
                if ev.get("event") == name:
                    self.events.remove(ev)
                    return ev
            left = end - time.monotonic()
            if left <= 0:
                raise GuestError(f"qmp: no {name} event in {wait_s} s")
            try:
                self.events.append(self._message(left))
            except TimeoutError:
                continue


@dataclass
class UsbSerial:
    """One USB serial adapter of the VM: its QEMU ids, USB serial number and host tty."""

    name: str  # shoe | shuffler
    serial: str  # the USB serial number the udev rule matches
    tty: str  # the host path QEMU's chardev opens (a simulator's pty)

    @property
    def device_id(self) -> str:
        return f"usb-{self.name}"


@dataclass
class PiVM:
    image: Path
    board: str = "pi5"  # pi5 | pi4: the device tree
    usb: list[UsbSerial] = field(default_factory=list)
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="pivm-")))
    proc: subprocess.Popen[bytes] | None = None
    agent: Agent | None = None
    qmp: Qmp | None = None

    @property
    def console_log(self) -> Path:
        return self.workdir / "console.log"

    def command(self) -> list[str]:
        env = machine_env()
        img = self.image
        cmd = [
            "qemu-system-aarch64",
            "-M",
            env["QEMU_BOARD"],
            *shlex.split(env["QEMU_OPTS"]),
            "-accel",
            "tcg",
            "-display",
            "none",
            "-monitor",
            "none",
            "-serial",
            f"file:{self.console_log}",
            "-kernel",
            str(img / "vmlinuz"),
            "-initrd",
            str(img / "initrd.img"),
            "-dtb",
            str(img / f"{self.board}.dtb"),
            "-append",
            env["KERNEL_APPEND"],
            "-drive",
            f"file={img / 'root.img'},format=raw,if=virtio,snapshot=on",
            "-qmp",
            f"unix:{self.workdir / 'qmp.sock'},server=on,wait=off",
            "-device",
            "virtio-serial-device",
            "-chardev",
            f"socket,id=agent,path={self.workdir / 'agent.sock'},server=on,wait=off",
            "-device",
            "virtserialport,chardev=agent,name=org.paigow.agent",
            "-device",
            "qemu-xhci,id=xhci",
        ]
        for dev in self.usb:
            cmd += ["-chardev", f"serial,id={dev.name},path={dev.tty}"]
            cmd += ["-device", self.usb_device_args(dev)]
        return cmd

    @staticmethod
    def usb_device_args(dev: UsbSerial) -> str:
        return f"usb-serial,id={dev.device_id},bus=xhci.0,chardev={dev.name},serial={dev.serial}"

    def start(self) -> None:
        say(f"booting {self.image} ({self.board}) in {self.workdir}")
        self.proc = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=open(self.workdir / "qemu.out", "wb"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )
        self.qmp = Qmp(self.workdir / "qmp.sock")
        self.agent = Agent(self.workdir / "agent.sock")

    # ------------------------------------------------------------------------ guest commands
    def wait_agent(self, timeout: float = 600.0, not_boot: str | None = None) -> dict[str, Any]:
        """Ping the agent until it answers (from another boot than ``not_boot``)."""
        assert self.agent is not None
        end = time.monotonic() + timeout
        while True:
            self.check_alive()
            try:
                reply = self.agent.request(wait_s=5, op="ping")
                if reply["boot_id"] != not_boot:
                    say(f"guest up, {reply['uptime']:.0f} s after its boot")
                    return reply
            except GuestError:
                pass
            if time.monotonic() > end:
                raise GuestError(f"the guest's agent did not answer in {timeout} s\n{self.tail()}")
            time.sleep(1)

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            out = (self.workdir / "qemu.out").read_text(errors="replace")
            raise GuestError(f"QEMU exited ({self.proc.returncode}): {out}\n{self.tail()}")

    def sh(self, cmd: str, timeout: float = 120.0, check: bool = True) -> str:
        assert self.agent is not None
        reply = self.agent.request(wait_s=timeout + 10, op="sh", cmd=cmd, timeout=timeout)
        if check and reply["rc"] != 0:
            raise GuestError(f"guest: `{cmd}` exited {reply['rc']}\n{reply['out']}\n{reply['err']}")
        return str(reply["out"])

    def run(self, cmd: str, timeout: float = 120.0) -> tuple[int, str, str]:
        assert self.agent is not None
        reply = self.agent.request(wait_s=timeout + 10, op="sh", cmd=cmd, timeout=timeout)
        return int(reply["rc"]), str(reply["out"]), str(reply["err"])

    def press(self, pin: int, ms: int = 100) -> None:
        assert self.agent is not None
        self.agent.request(op="press", pin=pin, ms=ms)

    def pull(self, pin: int, how: str) -> None:
        assert self.agent is not None
        self.agent.request(op="pull", pin=pin, pull=how)

    def read(self, pins: list[int]) -> list[int]:
        assert self.agent is not None
        return [int(v) for v in self.agent.request(op="read", pins=pins)["values"]]

    def digit(self) -> str | None:
        """The glyph the seven segment pins show, or None for a pattern that is no glyph."""
        lit = "".join(s for s, v in zip("abcdefg", self.read(SEGMENTS), strict=True) if v)
        for glyph, segs in SEVEN_SEGMENT.items():
            if segs == lit:
                return glyph
        return None

    def prop(self, name: str, unit: str = UNIT) -> str:
        return self.sh(f"systemctl show -p {name} --value {unit}").strip()

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.console_log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def reboot(self, timeout: float = 900.0) -> dict[str, Any]:
        old = self.wait_agent(timeout=60)["boot_id"]
        say("systemctl reboot")
        with contextlib.suppress(GuestError):
            self.run("systemctl reboot", timeout=10)
        return self.wait_agent(timeout=timeout, not_boot=old)

    def unplug(self, dev: UsbSerial) -> None:
        assert self.qmp is not None
        self.qmp.execute("device_del", id=dev.device_id)
        self.qmp.wait_event("DEVICE_DELETED")

    def replug(self, dev: UsbSerial) -> None:
        assert self.qmp is not None
        args = dict(kv.split("=", 1) for kv in self.usb_device_args(dev).split(",")[1:])
        self.qmp.execute("device_add", driver="usb-serial", **args)

    def stop(self) -> None:
        if self.agent is not None:
            with contextlib.suppress(GuestError, OSError):
                self.agent.request(wait_s=20, op="sh", cmd="systemctl poweroff", timeout=5)
            self.agent.close()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def status_fields(status: str) -> dict[str, Any]:
    """The unit's STATUS= line (controller/service/notify.py service_status) as fields:
    ``Open_Betting, round 3, 2 rounds, journal seq 120 | FAULT X``."""
    head, _, fault = status.partition(" | ")
    parts = [p.strip() for p in head.split(",")]
    out: dict[str, Any] = {"state": parts[0], "fault": fault}
    for p in parts[1:]:
        words = p.split()
        if p.startswith("round "):
            out["round"] = words[1]
        elif p.endswith(" rounds"):
            out["rounds"] = int(words[0])
        elif p.startswith("journal seq"):
            out["seq"] = int(words[2])
    return out
