"""``tablectl central serve --config PATH --pg DSN [--nats URL ...] [--port N]``: the floor's page
of every table, with alarms, pools and the shift, served from the centre
(`controller.central.server`; docs/link.md "The floor's page").

Parsing and printing only. Must never print a traceback for a bad file, an unreachable server or
a port in use.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from controller.cli.args import whole


def register(actions: Any) -> None:
    srv = actions.add_parser("serve", help="the floor's page of every table, with alarms")
    srv.add_argument("--config", help="the floor page's TOML file (sections, supervisors, TLS)")
    srv.add_argument("--pg", required=True, help="the PostgreSQL connection string (libpq DSN)")
    srv.add_argument("--nats", action="append", default=[], help="a NATS server URL (repeat)")
    srv.add_argument(
        "--port", type=whole(0, 65535, "a port 0-65535"), help="listen on this port (0: any free)"
    )
    srv.add_argument(
        "--keys",
        help="the tables' link keys (the keyring directory central ingest reads): a live entry "
        "is shown with its table's MAC only; without it, only what ingest stored is shown",
    )
    srv.add_argument("--tls-ca", help="CA file for tls:// NATS servers")
    srv.add_argument("--tls-cert", help="NATS client certificate (with --tls-key)")
    srv.add_argument("--tls-key", help="NATS client key")
    srv.add_argument("--user", help="the NATS user (docs/link.md: `central`)")
    srv.add_argument("--password-file", help="a file holding the NATS user's password")
    srv.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from controller.central.floor_config import FloorConfig, load_floor_config
    from controller.central.server import ServeError, serve
    from controller.cli.central import _connect_options
    from controller.link.central import CentralError
    from controller.link.keys import Keyring, LinkKeyError
    from fsm.configread import ConfigValueError

    try:
        cfg = FloorConfig() if args.config is None else load_floor_config(args.config)
        options = _connect_options(args)
        keys = None if args.keys is None else Keyring(Path(args.keys))
    except (ConfigValueError, OSError, LinkKeyError) as exc:
        print(f"central serve: {exc}", file=sys.stderr)
        return 2
    if args.port is not None:
        cfg = dataclasses.replace(cfg, port=args.port)
    try:
        return serve(cfg, args.pg, args.nats, options, keys=keys)
    except ServeError as exc:
        print(f"central serve: {exc}", file=sys.stderr)
        return 2
    except (CentralError, OSError) as exc:
        print(f"central serve: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        return 0
