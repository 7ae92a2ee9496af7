"""The wire format of many tables (docs/link.md "The message format"): the journal stream's
subject, headers and body, the link controller's request/reply subjects and its key-value bucket,
and the check every consumer makes of a table's entry on arrival.

Pure definitions and small helpers shared by the shipper, the link controller and central ingest.
Must never open a connection, read a journal or hold a game rule.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.journal.format import Entry, canonical_json, completes_a_round, entry_hash

STREAM = "TABLES"
STREAM_SUBJECTS = "table.*.journal"
#: JetStream drops a message whose Nats-Msg-Id it has seen within this window (seconds).
DUPLICATE_WINDOW_S = 600.0
KV_BUCKET = "LINK"
ASSET_HEADER = "Paigow-Asset"
#: the entry's MAC under the table's link key, ``<key id>:<hex>`` (controller.link.keys)
MAC_HEADER = "Paigow-Mac"
MSG_ID_HEADER = "Nats-Msg-Id"
#: Entry data fields that carry card identities (controller.cli.journal.CardRedactor).
CARD_FIELDS = ("stacks", "hands", "cards")


class MessageError(ValueError):
    """A message that is not a journal entry of the stream; the text says what is wrong."""


def journal_subject(table_id: str) -> str:
    return f"table.{table_id}.journal"


def table_of_subject(subject: str) -> str | None:
    parts = subject.split(".")
    if len(parts) == 3 and parts[0] == "table" and parts[2] == "journal":
        return parts[1]
    return None


def msg_id(table_id: str, seq: int, mac: str = "") -> str:
    """The stream's dedupe id: the same entry resent after a crash is kept once; another entry
    at the same seq (a rolled-back or wiped table) carries another id and reaches the consumers,
    which raise the fork alarm. ``mac``: the entry's MAC header; the id holds the first 16 hex
    digits of the MAC itself, so nobody without the table's key can know the id of an entry
    before it is shipped (a forger that took it first would make the stream drop the real
    entry as a duplicate)."""
    code = mac.partition(":")[2] or mac
    return f"{table_id}:{seq}:{code[:16]}" if code else f"{table_id}:{seq}"


def confirm_subject(pool: str) -> str:
    return f"link.{pool}.confirm"


def hit_subject(pool: str) -> str:
    return f"link.{pool}.hit"


def encode_entry(entry: Entry) -> bytes:
    """The body: the entry's ``journal export --format jsonl`` row, without its newline."""
    return json.dumps(entry.to_json(), separators=(",", ":")).encode("utf-8")


def headers_for(table_id: str, asset_number: int, seq: int, mac: str = "") -> dict[str, str]:
    """The headers of one shipped entry (``mac``: its `MAC_HEADER` value)."""
    headers = {MSG_ID_HEADER: msg_id(table_id, seq, mac), ASSET_HEADER: str(asset_number)}
    if mac:
        headers[MAC_HEADER] = mac
    return headers


def decode_entry(body: bytes) -> Entry:
    """The entry a body carries; `MessageError` naming the field when it is not one."""
    try:
        obj = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MessageError(f"body is not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise MessageError("body is not a JSON object")
    try:
        seq, ts, rnd, typ = obj["seq"], obj["ts"], obj["round"], obj["type"]
        data, prev, s_hash, digest = obj["data"], obj["prev_hash"], obj["state_hash"], obj["hash"]
        mac = obj.get("mac", "")
    except KeyError as exc:
        raise MessageError(f"body lacks {exc.args[0]!r}") from None
    ints = (seq, ts) if rnd is None else (seq, ts, rnd)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in ints) or seq < 1:
        raise MessageError("seq, ts and round must be integers (seq from 1)")
    texts = (typ, prev, s_hash, digest, mac)
    if not all(isinstance(v, str) for v in texts) or not isinstance(data, dict):
        raise MessageError("type and the hashes must be strings, data an object")
    return Entry(seq, ts, rnd, typ, data, prev, digest, s_hash, mac)


def recomputed_hash(entry: Entry) -> str:
    data = canonical_json(entry.data, f"seq {entry.seq}: data")
    return entry_hash(
        entry.seq, entry.ts_ms, entry.round_id, entry.type, data, entry.prev_hash, entry.state_hash
    )


@dataclass(frozen=True)
class Head:
    """The last entry a consumer holds of one table's chain."""

    seq: int
    hash: str


def check_next(table: str, head: Head | None, entry: Entry) -> tuple[str, str | None]:
    """What to do with ``entry`` of ``table`` given the ``head`` held: ``("take", None)``,
    ``("duplicate", None)`` (seq already held: drop it), or ``("refuse", why)`` (a forged,
    rewritten or gapped chain; ``why`` names the table and seq)."""
    where = f"table {table} seq {entry.seq}"
    held = 0 if head is None else head.seq
    if entry.seq <= held:
        return "duplicate", None
    try:
        digest = recomputed_hash(entry)
    except ValueError as exc:
        return "refuse", f"{where}: {exc}"
    if digest != entry.hash:
        return "refuse", f"{where}: the entry does not match its hash (forged or altered)"
    if entry.seq != held + 1:
        return "refuse", f"{where}: gap, the last entry held is seq {held}"
    if head is not None and entry.prev_hash != head.hash:
        return "refuse", f"{where}: does not chain to seq {held} (prev_hash differs)"
    return "take", None


def carries_cards(entry: Entry) -> bool:
    return any(k in entry.data for k in CARD_FIELDS)


def resolved_round(entry: Entry) -> int | None:
    """The round an entry resolves (an accepted round_completed, a round_voided effect)."""

    if completes_a_round(entry.type, entry.data):
        rid = entry.data.get("round_id", entry.round_id)
        return rid if isinstance(rid, int) else entry.round_id
    for e in effects_of(entry):
        if e.get("type") == "round_voided" and isinstance(e.get("round_id"), int):
            return int(e["round_id"])
    return None


def effects_of(entry: Entry) -> list[Mapping[str, Any]]:
    raw = entry.data.get("effects")
    return [e for e in raw if isinstance(e, dict)] if isinstance(raw, list) else []


def movements(entry: Entry, level: str) -> list[Mapping[str, Any]]:
    """The entry's meter movements of ``level`` that the pool follows: contributions (with
    ``wagers`` and ``wagered_cents``) and reversals of a voided round."""
    return [
        e
        for e in effects_of(entry)
        if e.get("type") == "meter_movement"
        and e.get("level") == level
        and e.get("kind") in ("contribution", "reversal")
    ]


async def ensure_stream(js: Any, replicas: int = 1) -> None:
    """The tables' journal stream (`STREAM`), made as the shippers expect when it is missing:
    the one definition the link controller and central ingest share."""
    from nats.js import api
    from nats.js.errors import NotFoundError

    try:
        await js.stream_info(STREAM)
    except NotFoundError:
        await js.add_stream(
            api.StreamConfig(
                name=STREAM,
                subjects=[STREAM_SUBJECTS],
                storage=api.StorageType.FILE,
                retention=api.RetentionPolicy.LIMITS,
                duplicate_window=DUPLICATE_WINDOW_S,
                num_replicas=replicas,
            )
        )
