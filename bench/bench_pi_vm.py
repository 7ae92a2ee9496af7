"""Press -> light through a real kernel: the Pi stand-in VM's gpio-sim chip against MockFactory.

Runs only when the VM image exists (``sudo make pi-vm`` builds it into /var/cache/paigow-pi-vm;
$PAIGOW_PI_VM_IMAGE or $PAIGOW_PI_VM_CACHE point elsewhere). Without it the module prints a
skip line and returns no figures, so `make bench` keeps the vm_* figures of the last run that
had the image (bench/results.json says which image: ``vm_image``). With it, in one run:

- ``mock_press_to_light_p99_ms``: bench/pi_vm_press.py on the host, MockFactory;
- ``vm_press_to_light_p99_ms``: the same script in the VM (arm64, TCG) with the service
  stopped: the lock-out line pulled low on gpio-sim through sysfs, the edge through the
  kernel's GPIO uAPI v2 to lgpio, the 2 ms glitch filter, the owner thread applying the locked
  lights, their lines read back from gpio-sim;
- ``vm_python_slowdown``: a bare Python loop's time in the VM over the host's, measured in the
  same run, so ``vm_press_to_light_p99_over_slowdown_ms`` estimates the path on a CPU as fast as
  this host's (a Pi 5 is slower than that: only a real board measures it,
  `tablectl selftest --hardware`).
Must never be imported by the service.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "pi_vm_press.py"


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def run() -> dict[str, float | int | str]:
    sys.path.insert(0, str(HERE.parent / "tests" / "pi"))
    from pivm_support import PiVM, image_dir, image_ready

    image = image_dir()
    if not image_ready(image):
        print(f"bench_pi_vm: skipped: no Pi VM image in {image} (sudo make pi-vm builds it)")
        return {}
    host = json.loads(
        subprocess.run(
            [sys.executable, str(SCRIPT), "mock"], capture_output=True, text=True, check=True
        ).stdout
    )
    vm = PiVM(image.resolve())
    vm.start()
    try:
        vm.wait_agent(timeout=900)
        vm.sh("systemctl stop paigow-table.service", timeout=120)
        vm.sh(f"cat >/run/pi_vm_press.py <<'PIVM_EOF'\n{SCRIPT.read_text()}PIVM_EOF\n")
        guest = json.loads(
            vm.sh("cd /run && /opt/paigow/venv/bin/python /run/pi_vm_press.py pi", timeout=900)
        )
    finally:
        vm.stop()
    slowdown = guest["python_loop_s"] / host["python_loop_s"]
    vm_p99 = _p(guest["press_to_light_ms"], 0.99)
    mock_p99 = _p(host["press_to_light_ms"], 0.99)
    return {
        "vm_press_to_light_p99_ms": round(vm_p99, 3),
        "vm_press_to_light_p50_ms": round(_p(guest["press_to_light_ms"], 0.5), 3),
        "mock_press_to_light_p99_ms": round(mock_p99, 3),
        "mock_press_to_light_p50_ms": round(_p(host["press_to_light_ms"], 0.5), 3),
        "vm_python_slowdown": round(slowdown, 2),
        "vm_press_to_light_p99_over_slowdown_ms": round(vm_p99 / slowdown, 3),
        "vm_presses": len(guest["press_to_light_ms"]),
        "vm_gpio_chip": str(guest["chip"]),
        "vm_image": image.resolve().name,
    }


if __name__ == "__main__":
    print(run())
