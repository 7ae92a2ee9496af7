"""The link keys (docs/link.md "Keys and the threat model"): one secret per table, held by the
table (``[link] key_file``), the link controller and central (a keyring directory, one
``<table>.keys`` file per table), under which the table's shipper MACs every entry it ships and
the pool's client every request it sends. A table's NATS user can publish on its own subject,
but without the table's key it cannot make an entry or a request the pool or central accept; a
table's key makes nothing another table's.

Responsible for the MACs (HMAC-SHA256, domain-separated: an entry's MAC can never pass as a
request's), the key files (made 0600, a group- or world-readable one refused), the keyring
(several keys per table while a key is rotated) and `provision` / `retire` (``tablectl link
keys``). Must never log, print or return a secret outside these files, or open a connection.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.link.link_config import TOKEN
from controller.link.messages import MAC_HEADER

__all__ = ["MAC_HEADER", "Keyring", "LinkKeyError", "TableKey"]
#: the field of a request body (``link.<pool>.confirm`` / ``.hit``) holding its MAC
REQUEST_MAC = "mac"
KEY_BYTES = 32
#: an unknown key id makes the keyring read its file again, at most this often (seconds)
RELOAD_S = 1.0


class LinkKeyError(OSError):
    """A key file or keyring that cannot be used; the text names the file and why."""


def key_id(secret: bytes) -> str:
    """Names a key without revealing it (16 hex digits)."""
    return hashlib.sha256(b"paigow-link-key:" + secret).hexdigest()[:16]


def entry_mac(secret: bytes, table: str, seq: int, digest: str) -> str:
    """The MAC of one shipped entry: over the table, the seq and the entry's hash (which covers
    the whole entry and, through ``prev_hash``, its history)."""
    text = f"paigow-link-entry\n{table}\n{seq}\n{digest}".encode()
    return hmac.digest(secret, text, "sha256").hex()  # OpenSSL's one-shot HMAC


def request_mac(secret: bytes, subject: str, body: Mapping[str, Any]) -> str:
    """The MAC of a request: over its subject and its body's canonical JSON without ``mac``."""
    fields = {k: v for k, v in body.items() if k != REQUEST_MAC}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(
        secret, f"paigow-link-request\n{subject}\n{text}".encode(), hashlib.sha256
    ).hexdigest()


@dataclass(frozen=True)
class TableKey:
    """The table's own key (its ``[link] key_file``)."""

    table: str
    secret: bytes

    @property
    def id(self) -> str:
        return key_id(self.secret)

    def entry_header(self, seq: int, digest: str) -> str:
        return f"{self.id}:{entry_mac(self.secret, self.table, seq, digest)}"

    def sign(self, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with its ``mac`` (``<key id>:<hex>``)."""
        return {**body, REQUEST_MAC: f"{self.id}:{request_mac(self.secret, subject, body)}"}


def _check_private(path: Path) -> None:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise LinkKeyError(
            f"{path}: mode {stat.S_IMODE(mode):04o}: a link key must be readable by its owner "
            "only (chmod 600)"
        )


def _parse_line(path: Path, n: int, line: str) -> tuple[str, bytes]:
    parts = line.split()
    if len(parts) != 2 or len(parts[1]) != 2 * KEY_BYTES:
        raise LinkKeyError(f"{path} line {n}: expected '<key id> <{2 * KEY_BYTES} hex digits>'")
    try:
        secret = bytes.fromhex(parts[1])
    except ValueError:
        raise LinkKeyError(f"{path} line {n}: the key is not hexadecimal") from None
    if key_id(secret) != parts[0]:
        raise LinkKeyError(f"{path} line {n}: the key id does not match the key")
    return parts[0], secret


def read_key_lines(path: Path) -> list[tuple[str, bytes]]:
    try:
        _check_private(path)
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise LinkKeyError(f"{path}: no such key file (tablectl link keys new)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LinkKeyError(f"{path}: cannot read: {exc}") from None
    lines = [(n, raw.strip()) for n, raw in enumerate(text.splitlines(), 1)]
    return [_parse_line(path, n, s) for n, s in lines if s and not s.startswith("#")]


def load_table_key(path: Path, table: str) -> TableKey:
    """The table's key file: exactly one key."""
    keys = read_key_lines(Path(path))
    if len(keys) != 1:
        raise LinkKeyError(f"{path}: holds {len(keys)} keys; a table's key file holds one")
    return TableKey(table, keys[0][1])


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def keyring_file(directory: Path, table: str) -> Path:
    if not TOKEN.match(table):
        raise LinkKeyError(f"table id {table!r} is not one NATS subject token")
    return Path(directory) / f"{table}.keys"


def provision(directory: Path, table: str, out: Path) -> str:
    """A new key for ``table``: added to the keyring (the keys there stay valid: a rotation),
    written alone to ``out`` for the table (0600). Returns its id."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    ring = keyring_file(directory, table)
    held = read_key_lines(ring) if ring.exists() else []
    secret = secrets.token_bytes(KEY_BYTES)
    kid = key_id(secret)
    line = f"{kid} {secret.hex()}\n"
    _write_private(ring, "".join(f"{k} {s.hex()}\n" for k, s in held) + line)
    _write_private(Path(out), line)
    return kid


def retire(directory: Path, table: str, kid: str) -> None:
    """Remove key ``kid`` of ``table`` from the keyring (never its last key)."""
    ring = keyring_file(Path(directory), table)
    held = read_key_lines(ring)
    kept = [(k, s) for k, s in held if k != kid]
    if len(kept) == len(held):
        raise LinkKeyError(f"{ring}: holds no key {kid}")
    if not kept:
        raise LinkKeyError(f"{ring}: {kid} is the table's only key (provision its successor first)")
    _write_private(ring, "".join(f"{k} {s.hex()}\n" for k, s in kept))


def listing(directory: Path) -> dict[str, list[str]]:
    """Table -> its key ids (never the keys)."""
    out: dict[str, list[str]] = {}
    for path in sorted(Path(directory).glob("*.keys")):
        out[path.name[: -len(".keys")]] = [k for k, _ in read_key_lines(path)]
    return out


class Keyring:
    """The keys of every table, as the link controller and central hold them (a directory of
    ``<table>.keys`` files). A key id it does not know makes it read the table's file again (a
    rotation needs no restart); a retired key is gone at the next read."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise LinkKeyError(f"{self.directory}: no such keyring directory (tablectl link keys)")
        self._keys: dict[str, dict[str, bytes]] = {}
        self._read_at: dict[str, float] = {}
        self._lock = threading.Lock()

    def _keys_of(self, table: str, kid: str) -> dict[str, bytes]:
        keys = self._keys.get(table)
        if keys is not None and kid in keys:
            return keys  # the common case, without the lock
        with self._lock:
            keys = self._keys.get(table)
            fresh = time.monotonic() - self._read_at.get(table, -RELOAD_S) >= RELOAD_S
            if (keys is None or kid not in keys) and fresh:
                self._read_at[table] = time.monotonic()
                try:
                    keys = dict(read_key_lines(keyring_file(self.directory, table)))
                except LinkKeyError:
                    keys = {}
                self._keys[table] = keys
            return keys or {}

    def _secret(self, table: str, header: str | None) -> tuple[bytes | None, str, str | None]:
        if not header:
            return None, "", "no MAC (not made with the table's link key)"
        kid, _, mac = header.partition(":")
        secret = self._keys_of(table, kid).get(kid)
        if secret is None:
            return None, mac, f"MAC under key {kid[:16]!r}, which is not a key of table {table}"
        return secret, mac, None

    def check_entry(self, table: str, seq: int, digest: str, header: str | None) -> str | None:
        """Why the entry's MAC header is not the table's (None: it is)."""
        secret, mac, why = self._secret(table, header)
        if secret is None:
            return why
        if not hmac.compare_digest(mac, entry_mac(secret, table, seq, digest)):
            return "the MAC does not match (forged or altered: not made with the table's key)"
        return None

    def check_request(self, table: str, subject: str, body: Mapping[str, Any]) -> str | None:
        """Why a request is not the table's (None: it is)."""
        raw = body.get(REQUEST_MAC)
        secret, mac, why = self._secret(table, raw if isinstance(raw, str) else None)
        if secret is None:
            return why
        if not hmac.compare_digest(mac, request_mac(secret, subject, body)):
            return "the request's MAC does not match (not made with the table's key)"
        return None
