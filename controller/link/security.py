"""The NATS server's configuration for many tables (docs/link.md "Security"): TLS on every
connection, one user per table that may publish only on its own journal subject and the link
controller's request subjects of its pool, read the pool's value, and nothing else; one user for
the link controller; one for central ingest (read-only on the stream).

Writes text only (the installer or a test saves it). Must never open a connection or choose a
password itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from controller.link.messages import KV_BUCKET, STREAM, confirm_subject, hit_subject

KV_STREAM = f"KV_{KV_BUCKET}"


def table_permissions(table_id: str, pool: str) -> dict[str, object]:
    """What a table's user may do: publish its journal, ask its pool's controller, watch the
    pool's value (an ordered consumer on the key-value bucket), receive its replies."""
    return {
        "publish": {
            "allow": [
                f"table.{table_id}.journal",
                confirm_subject(pool),
                hit_subject(pool),
                f"$JS.API.STREAM.INFO.{KV_STREAM}",
                f"$JS.API.CONSUMER.CREATE.{KV_STREAM}",
                f"$JS.API.CONSUMER.CREATE.{KV_STREAM}.>",
                f"$JS.API.CONSUMER.DELETE.{KV_STREAM}.>",
                f"$JS.API.CONSUMER.INFO.{KV_STREAM}.>",
                "$JS.FC.>",
            ]
        },
        "subscribe": {"allow": ["_INBOX.>"]},
    }


def nats_server_conf(
    *,
    pool: str,
    controller_password: str,
    tables: Mapping[str, str],
    cert: Path,
    key: Path,
    ca: Path,
    central_password: str | None = None,
) -> str:
    """The server configuration: ``tls {}`` (TLS required), ``authorization { users }``."""
    users: list[dict[str, object]] = [
        {"user": f"link-{pool}", "password": controller_password,
         "permissions": {"publish": ">", "subscribe": ">"}},
    ]  # fmt: skip
    if central_password is not None:
        users.append(
            {
                "user": "central",
                "password": central_password,
                "permissions": {
                    "publish": {"allow": ["$JS.API.>", f"$JS.ACK.{STREAM}.>"]},
                    "subscribe": {"allow": ["_INBOX.>"]},
                },
            }
        )
    for table_id, password in sorted(tables.items()):
        users.append(
            {
                "user": f"table-{table_id}",
                "password": password,
                "permissions": table_permissions(table_id, pool),
            }
        )
    # the server's format accepts JSON values (a superset of its own syntax)
    return (
        "tls {\n"
        f"  cert_file: {json.dumps(str(cert))}\n"
        f"  key_file: {json.dumps(str(key))}\n"
        f"  ca_file: {json.dumps(str(ca))}\n"
        "  timeout: 2\n"
        "}\n"
        f"authorization {{\n  users: {json.dumps(users, indent=2)}\n}}\n"
    )
