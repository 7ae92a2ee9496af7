"""``tablectl verify-software --seed S``: the on-demand software digest computed here, from the
release installed on this machine (docs/software-verification.md).

A lab or the floor installs the same release on another machine and compares this answer with the
one the table gave its console, its page or SAS long poll 21 for the same seed. Responsible only
for arguments and printing; the digest is `controller.lab.software.verify`. Never writes a file
or a journal.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_BAD_INPUT = 2


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "verify-software", help="the software digest for a seed (HMAC-SHA1, or SAS 21's CRC-16)"
    )
    parser.add_argument(
        "--seed",
        required=True,
        metavar="HEX",
        help="hmac-sha1: 1-64 bytes in hex; sas-crc16: 4 hex",
    )
    parser.add_argument("--method", choices=("hmac-sha1", "sas-crc16"), default="hmac-sha1")
    parser.add_argument(
        "--manifest",
        metavar="PATH",
        help="the approved manifest listing the files (default /etc/paigow/software.manifest "
        "when it exists, else the installed software's own list)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.lab.software import VerifyError, verify

    try:
        result = verify(args.method, args.seed, Path(args.manifest) if args.manifest else None)
    except VerifyError as exc:
        print(f"verify-software: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    print(f"{result.method} seed {result.seed}: {result.digest}")
    print(f"  over {result.files} files, {result.size:,} bytes, listed by {result.manifest}")
    return 0
