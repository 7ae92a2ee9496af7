"""``[web]``: the table's page (docs/web.md lists every key), validated at load.

Responsible for the keys of ``[web]`` and their allowed values, read with ``fsm.configread``; the
messages name the key. Must never open a socket.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from fsm.configread import ConfigValueError, Reader

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
KEYS = ("enabled", "host", "port", "actions", "require_key", "session_minutes", "remote_inputs")


@dataclass(frozen=True)
class WebSection:
    """``[web]``: whether ``tablectl run`` serves the pit's status page, where, and what a
    signed-in supervisor may do there. ``tablectl simulate`` always serves the page (on
    ``--port``); ``host`` and ``require_key`` apply to both."""

    enabled: bool = False
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    #: supervisor actions (validate / void a hit, clear a fault, open / close, ...) after a
    #: sign-in with id and PIN; False: the page only shows the table
    actions: bool = True
    #: a supervisor action also needs the table's key switch turned on
    require_key: bool = False
    #: a supervisor's session ends this long after its last action
    session_minutes: int = 5
    #: the simulated table's input API (chips, buttons, training) answers other machines too;
    #: False: loopback only, whatever ``host`` the page listens on
    remote_inputs: bool = False

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str = "web") -> WebSection:
        """The validated section; `ConfigValueError` (a ValueError) names the first bad key."""
        r = Reader(data, where, KEYS)
        host = r.string("host", DEFAULT_HOST)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ConfigValueError(
                r.path("host"), f"must be an IP address such as 127.0.0.1 or 0.0.0.0, got {host!r}"
            ) from None
        return cls(
            enabled=r.boolean("enabled", False),
            host=host,
            port=r.integer("port", DEFAULT_PORT, 1, 65535),
            actions=r.boolean("actions", True),
            require_key=r.boolean("require_key", False),
            session_minutes=r.integer("session_minutes", 5, 1, 720),
            remote_inputs=r.boolean("remote_inputs", False),
        )
