"""``tablectl --version``: the version and the software hash of this installation.

Responsible for printing what an inspector compares with the release's notes and the approved
manifest: the version (``controller.version``), the software hash power-up journals (SHA-256 of
the manifest of every file of the controller and of each runtime dependency, exactly what
``deploy/install.sh`` writes as ``/etc/paigow/software.manifest``) and the Python running it. Must
never write anything.
"""

from __future__ import annotations

import platform
import sys


def print_version() -> int:
    from controller.service.selfcheck import SelfCheckError, software_hash
    from controller.version import __version__

    print(f"tablectl {__version__}")
    try:
        print(f"software {software_hash()}")
    except SelfCheckError as exc:
        print(f"software hash unavailable: {exc}", file=sys.stderr)
        return 1
    print(f"python {platform.python_version()} ({platform.machine()})")
    return 0
