"""A fresh journal on a table that had one, begun by a procedure, never by accident (issue 23).

A table whose journal is gone, or closed (an archived period), starts a new journal only through
`start_carried_journal`: the previous journal's head and every level's complete meters are taken
from a verified source (`from_journal`: the previous file, verified by replay, seals and anchor),
two different supervisors give their PINs, and the new journal's first entry is a journaled
``meters_carried`` event, stepped by the round machine like any other (so verify replays it and
refuses a carry into a journal whose meters moved). The previous journal's anchor, which would
refuse a fresh journal as "lost or replaced", is moved aside beside it (never deleted).
`carried_problems` follows the chain across: the new journal's carry names the previous head, its
key id and exactly the meters that head left.

This module must never invent or drop a cent (the meters are copied as stored, sub-units and
counters included, and the machine checks they balance), never write to the previous journal,
and never start a journal over one that holds entries.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from controller.journal.anchor import default_anchor_path, read_anchor
from controller.journal.audit import ReplayFactory, connect_read_only, verify
from controller.journal.format import JSON, Entry, JournalError, decode_object
from controller.journal.seal import SealKeyFile
from controller.journal.store import Journal
from fsm.round.events import MetersCarried
from fsm.round.machine import RoundMachine


def has_run_marker(journal: str | Path) -> Path:
    """The file beside a live table's journal that says the table has run here
    (``<journal>.has-run``, written by the owner at its first power-up): power-up refuses a
    missing or empty journal while it exists, whether or not the anchor and sealing key are
    left."""
    p = Path(journal)
    return p.with_name(p.name + ".has-run")


class CarryError(Exception):
    """The carry cannot be made; the message says why in words. Nothing was written."""


@dataclass(frozen=True)
class CarrySource:
    """What a fresh journal takes over: the previous journal's identity, head and meters."""

    table_id: str
    seq: int
    hash: str
    key_id: str
    meters: dict[str, JSON]  # level -> its complete meters (the snapshot's, sub-units)
    source: Literal["journal", "report", "witness"]


def _read_head(path: Path) -> tuple[dict[str, str], int, str, dict[str, JSON]]:
    conn = connect_read_only(path)
    try:
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        row = conn.execute("SELECT seq, hash, snapshot FROM state WHERE id = 1").fetchone()
    finally:
        conn.close()
    if row is None:
        raise CarryError(f"{path}: holds no entry: there are no meters to carry")
    last = conn_last_seq(path)
    if int(row[0]) != last:
        raise CarryError(
            f"{path}: its stored state is of seq {row[0]}, not of its last entry {last} (the "
            "table stopped without a clean stop): start and stop the table once, then carry"
        )
    snapshot = decode_object(row[2], "state.snapshot")
    meters = snapshot.get("meters")
    if not isinstance(meters, dict) or not meters:
        raise CarryError(f"{path}: its stored state holds no meters")
    return meta, int(row[0]), str(row[1]), meters


def conn_last_seq(path: Path) -> int:
    conn = connect_read_only(path)
    try:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0])
    finally:
        conn.close()


def from_journal(
    path: str | Path,
    replay: ReplayFactory,
    *,
    verify_key: bytes | None = None,
    anchor: str | Path | None = None,
) -> CarrySource:
    """The previous journal's head and meters, once it verifies (chain, state, replay, anchor;
    seals with ``verify_key``); `CarryError` naming its first problem otherwise."""
    p = Path(path)
    if not p.is_file():
        raise CarryError(f"{p}: no such journal file")
    report = verify(p, replay, anchor=anchor, verify_key=verify_key)
    if not report.ok:
        raise CarryError(
            f"{p}: does not verify ({report.problems[0]}): its meters cannot be carried; "
            "carry from the last signed report's figures instead (docs/journal.md)"
        )
    meta, seq, digest, meters = _read_head(p)
    if (seq, digest) != (report.head_seq, report.head_hash):
        raise CarryError(f"{p}: changed while it was verified; stop the table and try again")
    return CarrySource(
        meta.get("table_id", ""), seq, digest, meta.get("key_id", ""), meters, "journal"
    )


def from_report(path: str | Path, table_id: str | None = None) -> CarrySource:
    """The head and meters a signed meters report holds (``tablectl report meters --json``, its
    ``carry`` block), when the report says its journal verified, found no problem and was taken
    at a clean stop (its stored state is of the verified head). `CarryError` names what is
    missing otherwise. Nothing here can show that the report is the one the supervisors signed
    or that its figures were not edited: that is the supervisors' check against the paper, and
    the round machine still refuses meters that do not balance."""
    p = Path(path)
    try:
        document = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CarryError(f"{p}: not a meters report's JSON: {exc}") from None
    if not isinstance(document, dict):
        raise CarryError(f"{p}: not a meters report's JSON (tablectl report meters --json)")
    check = document.get("verification")
    carry = document.get("carry")
    if not isinstance(check, dict) or not isinstance(carry, dict):
        raise CarryError(
            f"{p}: holds no verification or carry block: make it with tablectl report meters "
            "--json (this version)"
        )
    if check.get("verified") is not True:
        raise CarryError(f"{p}: its journal did not verify when the report was made")
    if document.get("problems"):
        raise CarryError(f"{p}: the report names problems: {document['problems'][0]}")
    for flag in ("training", "unapproved_bench", "as_of_seq"):
        if flag in document:
            raise CarryError(
                f"{p}: the report is of {flag.replace('_', ' ')}: not a live table's meters at "
                "a clean stop"
            )
    head = check.get("head")
    seq, digest = carry.get("seq"), carry.get("hash")
    if not isinstance(head, dict) or (head.get("seq"), head.get("hash")) != (seq, digest):
        raise CarryError(
            f"{p}: its meters are of seq {seq}, not of the verified head: the table stopped "
            "without a clean stop when the report was made"
        )
    meters, key_id = carry.get("meters"), carry.get("key_id", "")
    if not isinstance(seq, int) or seq < 1 or not isinstance(digest, str):
        raise CarryError(f"{p}: the carry block names no head (seq and hash)")
    if not isinstance(meters, dict) or not meters or not isinstance(key_id, str):
        raise CarryError(f"{p}: the carry block holds no meters")
    table = document.get("table", "")
    if not isinstance(table, str):
        raise CarryError(f"{p}: names no table")
    if table_id is not None and table and table != table_id:
        raise CarryError(f"{p}: is a report of table {table!r}, not {table_id!r}")
    return CarrySource(table, seq, digest, key_id, meters, "report")


def from_witness(conn: Any, table_id: str, replay: ReplayFactory) -> CarrySource:
    """The head central witnessed of ``table_id`` (its ``heads`` row) and the complete meters
    at it, from central's PostgreSQL ``conn`` (read only). Checked: the stored entries run from
    seq 1 to the witnessed head without a gap, each hashes to its hash and links to the one
    before, and replaying their events through the round machine (``replay``: the configured
    game) gives back every journaled effect; the meters are the replay's. Not checked: the
    state hashes (the stream carries no snapshot) and the entries' MACs (ingest checked those
    on arrival). `CarryError` names the first problem."""
    from controller.link.central import StoredReader
    from controller.link.messages import recomputed_hash

    row = conn.execute("SELECT seq, hash FROM heads WHERE table_id = %s", (table_id,)).fetchone()
    if row is None:
        raise CarryError(f"the witness holds no head of table {table_id!r}: nothing to carry")
    head_seq, head_hash = int(row[0]), str(row[1])
    replayer = replay(None)
    prev, seq = "", 0
    for entry in StoredReader(conn, table_id).entries():
        where = f"the witness's table {table_id} seq {entry.seq}"
        if entry.seq != seq + 1:
            raise CarryError(f"{where}: follows seq {seq}: the stored chain has a gap")
        if recomputed_hash(entry) != entry.hash or (seq and entry.prev_hash != prev):
            raise CarryError(f"{where}: does not hash or link to seq {seq}: not carried")
        recorded = entry.data.get("effects", [])
        try:
            replayed = replayer.step(entry)
        except Exception as exc:  # the machine's own refusal of what it cannot replay
            raise CarryError(f"{where}: replay failed: {type(exc).__name__}: {exc}") from None
        if json.dumps(replayed, sort_keys=True) != json.dumps(recorded, sort_keys=True):
            raise CarryError(f"{where}: replaying it does not give its journaled effects")
        prev, seq = entry.hash, entry.seq
        if seq == head_seq:
            break
    if (seq, prev) != (head_seq, head_hash):
        raise CarryError(
            f"the witness's stored entries of table {table_id} end at seq {seq}, not at its "
            f"witnessed head {head_seq}: not carried"
        )
    meters = replayer.snapshot().get("meters")
    if not isinstance(meters, dict) or not meters:
        raise CarryError(f"the witness's table {table_id}: the replay holds no meters")
    # the stream carries no journal meta: the previous key id is not known here
    return CarrySource(table_id, head_seq, head_hash, "", meters, "witness")


def check_supervisors(
    supervisors: Sequence[tuple[str, str]], known: Mapping[str, Any]
) -> list[str]:
    """Two different configured supervisors, each with the right PIN: their ids, or
    `CarryError` naming who was refused (never the PIN)."""
    ids = [sid for sid, _ in supervisors]
    if len(ids) != 2 or ids[0] == ids[1]:
        raise CarryError("two different supervisors must give their PINs (--supervisor twice)")
    for sid, pin in supervisors:
        sup = known.get(sid)
        if sup is None or not sup.check(pin):  # the same scrypt check as the console
            raise CarryError(f"supervisor {sid!r}: unknown id or wrong PIN; nothing was written")
    return ids


def start_carried_journal(
    path: str | Path,
    source: CarrySource,
    supervisors: Sequence[str],
    *,
    game: Any,
    table_id: str | None,
    asset_number: int | None = None,
    anchor: str | Path | None = None,
    seal_file: str | Path | None = None,
    key: bytes | None = None,
    now_ms: Callable[[], int],
    via: str = "tablectl",
) -> Entry:
    """Create the live journal at ``path`` whose seq 1 carries ``source``'s meters over.

    ``path`` must be missing or empty; ``source`` must be of ``table_id``; a sealing key must be
    a new one (it seals the new journal from seq 1: `tablectl journal setup-keys`). The anchor
    that recorded the previous journal's head is renamed ``<anchor>.before-carry-<seq>``. The
    machine refuses the carry (`CarryError`, and the new journal is left without an entry) if
    the meters do not balance or do not name exactly the configured levels."""
    p = Path(path)
    if p.exists() and p.stat().st_size > 0:
        try:
            _, seq, _, _ = _read_head(p)
        except CarryError:
            seq = 0
        except JournalError as exc:
            raise CarryError(f"{p}: exists and is not an empty journal ({exc})") from exc
        if seq:
            raise CarryError(f"{p}: holds {seq} entries: a journal is carried into a new file only")
    if table_id is not None and source.table_id and source.table_id != table_id:
        raise CarryError(
            f"the previous journal belongs to table {source.table_id!r}, not {table_id!r}"
        )
    if seal_file is not None:
        sealer = SealKeyFile(seal_file)
        try:
            if sealer.next_seq != 1:
                raise CarryError(
                    f"the sealing key {seal_file} has sealed {sealer.next_seq - 1} entries of "
                    "the previous journal: move it aside and make a new one for the new journal "
                    "(tablectl journal setup-keys; print its verification key)"
                )
        finally:
            sealer.close()
    anchor_path = Path(anchor) if anchor is not None else default_anchor_path(p)
    record = read_anchor(anchor_path)
    if record is not None and record.acked > 0:
        if record.acked > source.seq:
            raise CarryError(
                f"the anchor {anchor_path} records seq {record.acked}, after the carried head "
                f"seq {source.seq}: the carry would lose entries (carry from the newer journal)"
            )
        os.replace(
            anchor_path, anchor_path.with_name(f"{anchor_path.name}.before-carry-{record.seq}")
        )
    machine = RoundMachine(game)
    event = MetersCarried(
        meters=source.meters,
        previous_seq=source.seq,
        previous_hash=source.hash,
        source=source.source,
        supervisors=tuple(supervisors),
        previous_key_id=source.key_id,
        via=via,
    ).envelope()
    with Journal.open(
        p,
        table_id=table_id,
        created_ms=now_ms(),
        asset_number=asset_number,
        config=game.to_mapping(),
        anchor=anchor_path,
        key=key,
        seal_file=seal_file,
        mode="live",
    ) as journal:
        now = now_ms()
        data = dict(event.data)
        effects = machine.step(event, now)
        if any(e.TYPE == "rejected" for e in effects):
            raise CarryError(f"the carry was refused: {effects[0].to_json().get('reason')}")
        entry = journal.append(
            now,
            machine.entry_round_id,
            event.type,
            {**data, "effects": [e.to_json() for e in effects]},
            snapshot=machine.snapshot(),
            meters=machine.meters(),
        )
    return entry


def carried_problems(new: str | Path, previous: str | Path) -> list[str]:
    """The chain followed across a carry: the new journal's ``meters_carried`` names the
    previous journal's head (seq and hash), its key id and table, and exactly the meters that
    head left. Empty when it does."""
    problems: list[str] = []
    try:
        meta, seq, digest, meters = _read_head(Path(previous))
    except (CarryError, JournalError) as exc:
        return [f"previous journal: {exc}"]
    conn = connect_read_only(Path(new))
    try:
        row = conn.execute(
            "SELECT seq, data FROM journal WHERE type = 'meters_carried' ORDER BY seq LIMIT 1"
        ).fetchone()
        new_table = conn.execute("SELECT value FROM meta WHERE key = 'table_id'").fetchone()
    finally:
        conn.close()
    if row is None:
        return [f"{new}: carries no meters over (no meters_carried entry)"]
    data = decode_object(row[1], f"seq {row[0]}: data")
    where = f"seq {row[0]} (meters_carried)"
    if (data.get("previous_seq"), data.get("previous_hash")) != (seq, digest):
        problems.append(
            f"{where}: names the previous head {data.get('previous_seq')}:"
            f"{str(data.get('previous_hash'))[:16]}... but {previous} ends at "
            f"{seq}:{digest[:16]}..."
        )
    if data.get("previous_key_id", "") != meta.get("key_id", ""):
        problems.append(
            f"{where}: names key id {data.get('previous_key_id')!r}, the previous "
            f"journal's is {meta.get('key_id')!r}"
        )
    if new_table is not None and new_table[0] != meta.get("table_id"):
        problems.append(f"{where}: the previous journal is table {meta.get('table_id')!r}")
    if data.get("meters") != meters:
        problems.append(f"{where}: the carried meters are not those the previous head left")
    effects = data.get("effects")
    if not isinstance(effects, list) or not any(
        isinstance(e, dict) and e.get("type") == "meters_carried" for e in effects
    ):
        problems.append(f"{where}: was refused by the round machine: nothing was carried")
    return problems
