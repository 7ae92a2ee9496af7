"""Floor-wide reporting (docs/link.md "Central ingest"): every table's journal stream, shipped by
the real shipper through a real nats-server, consumed into a real PostgreSQL by ``tablectl central
ingest``; the floor's reports equal each table's own report and the link controller's pool to the
cent; a forged or gapped stream is refused at ingest with the table and seq named (NY 5321.18(b):
the link's records identify each table; NJ 13:69E-1.39B); an ingest killed mid-stream resumes
without duplicates.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
from link_support import JACKPOT, ROOT, NatsServer, keyring, table_key, wait_for
from test_link_pool import effects, start_linked

from controller.cli import main
from controller.journal import reports
from controller.journal.audit import connect_read_only
from controller.journal.format import Entry
from controller.link.central import Ingest, ensure_stream, open_refusals
from controller.link.keys import load_table_key
from controller.link.messages import encode_entry, headers_for, journal_subject, recomputed_hash
from fsm.round.meters import UNIT


def stored(dsn: str, table: str) -> list[tuple[int, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT seq, hash FROM entries WHERE table_id = %s ORDER BY seq", (table,)
        ).fetchall()
    return [(int(s), str(h)) for s, h in rows]


def refused(dsn: str) -> list[tuple[str, int, str, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT table_id, seq, kind, reason FROM refused ORDER BY id"
        ).fetchall()
    return [(str(t), int(s), str(k), str(r)) for t, s, k, r in rows]


def journal_entries(db: Path) -> list[Entry]:
    conn = connect_read_only(db)
    try:
        rows = conn.execute(
            "SELECT seq, ts_ms, round_id, type, data, prev_hash, hash, state_hash, mac"
            " FROM journal ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    return [Entry(s, ts, r, t, json.loads(d), p, h, sh, m) for s, ts, r, t, d, p, h, sh, m in rows]


def publish(url: str, table: str, entries: list[Entry], where: Path, msg_ids: bool = True) -> None:
    """Put entries on the stream as a table's shipper would, MAC'd with the table's key (its
    key file and the keyring in ``where``), or without the ids JetStream dedupes on."""
    import nats

    key = load_table_key(table_key(where, table), table)

    async def go() -> None:
        nc = await nats.connect(url)
        js = nc.jetstream()
        await ensure_stream(js)
        for e in entries:
            headers = headers_for(table, 71001, e.seq, key.entry_header(e.seq, e.hash))
            if not msg_ids:
                headers.pop("Nats-Msg-Id")
            await js.publish(journal_subject(table), encode_entry(e), headers=headers)
        await nc.close()

    asyncio.run(go())


def ingest(url: str, dsn: str, where: Path, idle: float = 1.5) -> Ingest:
    run = Ingest([url], dsn, say=lambda text: None, keys=keyring(where))
    run.run(until_idle=idle)
    return run


def played_journal(tmp_path: Path, nats: NatsServer, controllers: list, tables: list) -> Path:  # type: ignore[type-arg]
    """A real journal: linked table T1 (of three) played two rounds, stopped."""
    _, made = start_linked(tmp_path, nats, controllers, tables)
    for _ in range(2):
        made[0].play((1, 2))
    for t in made:
        t.stop()
    tables.clear()
    return made[0].db


def test_floor_totals_in_postgresql_equal_each_tables_report_and_the_pool(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,  # type: ignore[type-arg]
    tables: list,  # type: ignore[type-arg]
) -> None:
    """Three linked tables shipped and ingested: the floor's shift and hits in PostgreSQL equal
    each table's own report (controller/journal/reports.py) to the cent, and the linked pool's
    meter equals the contributions less payouts identically in PostgreSQL and in the link
    controller's journal (NY 5321.18(b))."""
    ctl, made = start_linked(tmp_path, nats, controllers, tables)
    for n in range(2):
        for i, t in enumerate(made):
            positions = (1, 2, 3)[: i + 1]
            lines: dict[int, str | None] = dict.fromkeys(positions)
            if n == 1 and i == 0:
                lines[1] = JACKPOT
            t.play(positions, lines)
    for t in made:  # a clean stop sends everything committed
        t.stop()
    tables.clear()
    ctl.stop()
    run = ingest(nats.url, pg, tmp_path)
    assert run.stats.refused == 0
    with psycopg.connect(pg, autocommit=True) as conn:
        from controller.link.central import floor_hits, floor_shift

        floor = floor_shift(conn)
        hits = floor_hits(conn, limit=0)
    by_table = {t["table"]: t for t in floor["tables"]}  # type: ignore[union-attr,index]
    assert sorted(by_table) == ["T1", "T2", "T3"]
    total_contributed = total_paid = 0
    for t in made:
        tid = t.config.table.id
        assert [s for s, _ in stored(pg, tid)] == [e.seq for e in journal_entries(t.db)]
        with reports.JournalReader(t.db) as reader:
            own = reports.shift_report(reader)
            own_hits = reports.hits_report(reader, limit=0)
        mine = by_table[tid]
        for key in ("rounds", "voided_rounds", "faults", "hits", "adjustments"):
            assert mine[key] == own[key], key  # type: ignore[index]
        for key in (
            "wagers", "wagered_cents", "contributed_cents", "paid_from_meter_cents",
            "house_funded_cents",
        ):  # fmt: skip
            assert mine["progressive"][key] == own["progressive"][key], key  # type: ignore[index]
        own_moved = own["progressive"]["meter_end_cents"] - own["progressive"]["meter_start_cents"]  # type: ignore[index,operator]
        assert mine["progressive"]["meter_end_cents"] == own_moved  # type: ignore[index]
        assert hits["tables"][tid] == own_hits  # type: ignore[index]
        total_contributed += own["progressive"]["contributed_cents"]  # type: ignore[index,operator]
        total_paid += own["progressive"]["paid_from_meter_cents"]  # type: ignore[index,operator]
    assert floor["total"]["progressive"]["contributed_cents"] == total_contributed  # type: ignore[index]
    assert floor["total"]["progressive"]["paid_from_meter_cents"] == total_paid  # type: ignore[index]
    assert "house_funded_cents" in floor["total"]["progressive"]  # type: ignore[operator]
    # the pool: its contributions (sub-cent units) and its locked hits, from PostgreSQL's rows
    with psycopg.connect(pg) as conn:
        rows = conn.execute(
            "SELECT m FROM entries, jsonb_array_elements(data->'effects') m"
            " WHERE m->>'type' = 'meter_movement' AND m->>'kind' = 'contribution'"
            " AND m->>'level' = 'progressive'"
        ).fetchall()
    pg_units = sum(int(m["wagered_cents"]) * (2100 + 500) * UNIT // 10_000 for (m,) in rows)
    pg_paid = sum(int(h["cents"]) for h in hits["floor"] if h["from"] == "meter")  # type: ignore[union-attr,index]
    pool_db = tmp_path / "pool.db"
    assert pg_units == sum(e["units"] for e in effects(pool_db, "pool_contribution")) > 0
    pool_paid = sum(h["cents"] for h in effects(pool_db, "hit_locked") if h["from"] == "meter")
    assert pg_paid == pool_paid > 0
    # issue 22: the floor's shift counts the pool's payments of the linked level (its own
    # meter moved for none of them: it showed 0 paid while the pool paid)
    assert floor["total"]["progressive"]["paid_by_pool_cents"] == pool_paid  # type: ignore[index]
    (linked,) = [lvl for lvl in floor["total"]["levels"] if lvl["level"] == "progressive"]  # type: ignore[index,union-attr]
    assert linked["paid_by_pool_cents"] == pool_paid
    assert main(["central", "report", "shift", "--pg", pg, "--json"]) == 0
    assert main(["central", "report", "meters", "--pg", pg]) == 0
    assert main(["central", "report", "hits", "--pg", pg]) == 0


def test_forged_entries_are_refused_at_ingest_with_the_table_and_seq_named(
    tmp_path: Path,
    nats: NatsServer,
    pg: str,
    controllers: list,  # type: ignore[type-arg]
    tables: list,  # type: ignore[type-arg]
    capsys: Any,
) -> None:
    """An altered entry (its hash does not match), a rewritten entry at a held seq (a valid hash,
    another content) and an entry that does not chain are refused, recorded in ``refused`` with
    the table and seq, printed, never inserted; the table's later entries wait."""
    entries = journal_entries(played_journal(tmp_path, nats, controllers, tables))
    assert (
        main(
            [
                "central",
                "ingest",
                "--nats",
                nats.url,
                "--pg",
                pg,
                "--until-idle",
                "1.5",
                "--keys",
                str(keyring(tmp_path)),
            ]
        )
        == 0
    )
    held = len(stored(pg, "T1"))
    assert held == len(entries)
    capsys.readouterr()
    n = len(entries) + 1
    last = entries[-1]
    altered = replace(last, seq=n, prev_hash=last.hash, data={**last.data, "x": 1})
    rewritten = replace(entries[1], data={**entries[1].data, "position": 5})
    rewritten = replace(rewritten, hash=recomputed_hash(rewritten))
    unchained = replace(last, seq=n, prev_hash="0" * 64)
    unchained = replace(unchained, hash=recomputed_hash(unchained))
    publish(nats.url, "T1", [altered, rewritten], tmp_path, msg_ids=False)
    publish(nats.url, "T1", [unchained], tmp_path, msg_ids=False)
    assert (
        main(
            [
                "central",
                "ingest",
                "--nats",
                nats.url,
                "--pg",
                pg,
                "--until-idle",
                "1.5",
                "--keys",
                str(keyring(tmp_path)),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert f"table T1 seq {n}: the entry does not match its hash" in err
    assert "table T1 seq 2: a different hash at a held seq" in err
    assert f"table T1 seq {n}: does not chain to seq {n - 1}" in err
    assert [(t, s, k) for t, s, k, _ in refused(pg)] == [
        ("T1", n, "forged"), ("T1", 2, "forged"), ("T1", n, "forged"),
    ]  # fmt: skip
    assert stored(pg, "T1") == [(e.seq, e.hash) for e in entries]


def test_a_gapped_stream_is_refused_until_the_gap_fills(
    tmp_path: Path, nats: NatsServer, pg: str
) -> None:
    """Entries after a missing seq are refused (the table and seq named) and not inserted; once
    the missing entry arrives they are taken, in order."""
    entries = _plain_journal(tmp_path)
    publish(nats.url, "G1", entries[:3] + entries[4:], tmp_path)
    run = ingest(nats.url, pg, tmp_path)
    assert [s for s, _ in stored(pg, "G1")] == [1, 2, 3]
    gaps = [(t, s, k, r) for t, s, k, r in refused(pg)]
    assert gaps[0][:3] == ("G1", 5, "gap") and "table G1 seq 5: gap" in gaps[0][3]
    assert [s for _, s, _, _ in gaps] == [e.seq for e in entries[4:]]
    assert run.stats.refused == len(gaps)  # each once, however often it is redelivered
    publish(nats.url, "G1", [entries[3]], tmp_path)
    ingest(nats.url, pg, tmp_path)
    assert stored(pg, "G1") == [(e.seq, e.hash) for e in entries]
    with psycopg.connect(pg) as conn:
        assert open_refusals(conn) == []


def test_ingest_killed_mid_stream_resumes_without_duplicates(
    tmp_path: Path, nats: NatsServer, pg: str
) -> None:
    """``central ingest`` killed (SIGKILL) in the middle of a table's stream: the next run takes
    up where the durable consumer was; copies of entries already held (a shipper that lost its
    cursor sends them again, without the ids JetStream would drop) are dropped on (table, seq);
    every entry is held exactly once."""
    entries = _plain_journal(tmp_path, rounds=4)
    half = len(entries) // 2
    publish(nats.url, "K1", entries[:half], tmp_path)
    cmd = [sys.executable, "-m", "controller.cli", "central", "ingest", "--nats", nats.url,
           "--pg", pg, "--keys", str(keyring(tmp_path))]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: _count(pg) == half, 60, what="the first half stored")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    publish(nats.url, "K1", entries[half:], tmp_path)
    publish(nats.url, "K1", entries[:half], tmp_path, msg_ids=False)
    run = ingest(nats.url, pg, tmp_path, idle=2.0)
    assert stored(pg, "K1") == [(e.seq, e.hash) for e in entries]
    assert run.stats.taken == len(entries) - half
    assert run.stats.duplicates >= half
    assert refused(pg) == []


def _count(dsn: str) -> int:
    try:
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT count(*) FROM entries").fetchone()
    except psycopg.Error:
        return 0  # the schema is not made yet
    return int(row[0]) if row else 0


def _plain_journal(tmp_path: Path, rounds: int = 2) -> list[Entry]:
    """A real journal of a table without a link (owner, machine, journal) played ``rounds``."""
    import tomllib

    from link_support import LinkedTable, Recorder

    from controller.config import SIMULATED_TABLE, parse_config
    from controller.journal.lock import owner_journal_options
    from controller.service.owner import Owner
    from fsm.round.machine import RoundMachine

    data: dict[str, Any] = tomllib.loads(SIMULATED_TABLE.read_text())
    data["game"].update(card_reading_shoe=False, side_wager={"offered": False})
    data["journal"]["path"] = str(tmp_path / "plain.db")
    data["sas"]["enabled"] = False
    config = parse_config(data, "plain.toml")
    game = config.game

    def make(snapshot: Any) -> RoundMachine:
        return RoundMachine(game) if snapshot is None else RoundMachine.restore(game, snapshot)

    t = LinkedTable.__new__(LinkedTable)
    t.config, t.db, t.devices = config, config.journal_path, Recorder()
    t.owner = Owner(t.db, make, t.devices, draw=lambda: 3, **owner_journal_options(config))
    t.owner.start()
    try:
        t.open()
        for _ in range(rounds):
            t.play((1, 2))
    finally:
        t.owner.stop()
    time.sleep(0)
    return journal_entries(t.db)


def test_central_unit_runs_the_documented_ingest_and_is_not_restarted_for_bad_arguments(
    tmp_path: Path,
) -> None:
    """systemd/paigow-central.service (docs/link.md): ExecStart parses as `central ingest` with
    every option it names, and exit 2 (bad arguments) is not restarted."""
    import configparser
    import shlex

    from controller.cli import build_parser

    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read_string((ROOT / "systemd" / "paigow-central.service").read_text())
    service = parser["Service"]
    argv = shlex.split(service["ExecStart"])
    assert argv[0] == "/opt/paigow/venv/bin/tablectl"
    args = build_parser().parse_args(argv[1:])
    assert (args.command, args.central_command) == ("central", "ingest")
    assert len(args.nats) == 3 and args.user == "central" and "paigow_floor" in args.pg
    assert service["Restart"] == "on-failure" and service["RestartPreventExitStatus"] == "2"
    assert main(["central", "ingest", "--nats", "nats://127.0.0.1:1", "--pg", "x", "--keys",
                 str(tmp_path), "--password-file", str(tmp_path / "missing")]) == 2  # fmt: skip


def test_ingest_says_a_nats_outage_in_one_line_and_takes_up_again(
    tmp_path: Path, nats: NatsServer, pg: str
) -> None:
    """Issue 22 item 4: ``central ingest`` running while its NATS server goes away says so in
    one line (no traceback), says when it is back, and stores what was shipped meanwhile."""
    entries = _plain_journal(tmp_path)
    half = len(entries) // 2
    publish(nats.url, "O1", entries[:half], tmp_path)
    cmd = [sys.executable, "-m", "controller.cli", "central", "ingest", "--nats", nats.url,
           "--pg", pg, "--keys", str(keyring(tmp_path))]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        wait_for(lambda: _count(pg) == half, 60, what="the first half stored")
        nats.kill()
        time.sleep(2.0)
        nats.start()
        publish(nats.url, "O1", entries[half:], tmp_path)
        wait_for(lambda: _count(pg) == len(entries), 60, what="the rest stored")
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert "Traceback" not in err, err
    down = [line for line in err.splitlines() if "NATS unreachable" in line]
    assert len(down) == 1 and down[0].startswith("central ingest: NATS unreachable: "), err
    assert "central ingest: NATS reachable again" in err
    assert stored(pg, "O1") == [(e.seq, e.hash) for e in entries]
