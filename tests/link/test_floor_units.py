"""The floor page's parts without servers (issue 26, docs/link.md "The floor's page"): a tile
folds a table's shipped entries as the table journaled them (a hit pending validation with the
amount the pool locked, NY 5324.41(k)(3)(iii), NY 5321.18(b)(3)(iii); a fault until a supervisor
clears it; the linked wager unplayable, NY 5321.18(c)); a table silent past its timeout is
stale; the configuration names each bad key; the page serves other machines only over TLS; the
systemd unit runs the documented command."""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path
from typing import Any

import pytest
from link_support import ROOT

from controller.central.floor_config import FloorConfig, parse_floor_config
from controller.central.server import ServeError, serve
from controller.central.tiles import Tile, alarms_of
from controller.cli import build_parser, main
from controller.config import hash_pin
from controller.journal.format import Entry
from fsm.configread import ConfigValueError

T0 = 1_800_000_000_000


class Table:
    """Entries of one table, seq by seq, as its shipper sends them."""

    def __init__(self) -> None:
        self.tile = Tile("T1", "Pit 1")
        self.seq = 0

    def entry(self, etype: str, *effects: dict[str, Any], round_id: int = 1, **data: Any) -> None:
        self.seq += 1
        body = {**data, "effects": list(effects)}
        e = Entry(self.seq, T0 + self.seq * 1000, round_id, etype, body, "", "", "", "")
        self.tile.apply(e, T0 + self.seq * 1000)


def test_a_tile_follows_the_round_and_a_pending_hit_carries_the_pools_locked_amount() -> None:
    t = Table()
    t.entry("table_opened", {"type": "shuffle"}, supervisor="s")
    assert t.tile.state == "Open_Shuffling"
    t.entry("shuffle_complete", {"type": "acceptors", "armed": True}, count=53)
    t.entry("chip_detected", {"type": "wagers", "positions": [1, 2], "wager_cents": 100})
    view = t.tile.to_json(T0 + t.seq * 1000, 60)
    assert (view["state"], view["wagers"], view["wager_cents"]) == ("Open_Betting", [1, 2], 200)
    t.entry("chip_detected", {"type": "rejected", "event": "chip_detected", "reason": "x",
                              "cause": "already_lit"}, position=1)  # fmt: skip
    assert t.tile.wager_cents == 200  # a refused event changed nothing at the table
    t.entry("lockout_pressed")
    assert t.tile.state == "Open_LockedOut"
    pending = {"type": "hit_pending", "position": 1, "level": "progressive", "line": "royal-flush"}
    t.entry("progressive_outcome", pending, position=1, line="royal-flush")
    (alarm,) = alarms_of(t.tile, T0 + t.seq * 1000, 60)
    assert alarm["kind"] == "hit" and alarm["cents"] is None
    assert "amount not locked yet" in alarm["words"]
    t.entry("link_hit_locked", position=1, level="progressive", cents=123456, order=1, pool="P")
    (alarm,) = alarms_of(t.tile, T0 + t.seq * 1000, 60)
    assert alarm["cents"] == 123456 and "$1,234.56" in alarm["words"]
    assert t.tile.hits[-1]["cents"] == 123456
    t.entry("hit_validated", {"type": "pay", "position": 1, "level": "progressive",
                              "line": "royal-flush", "cents": 123456, "from": "meter"},
            position=1, supervisor="s")  # fmt: skip
    assert alarms_of(t.tile, T0 + t.seq * 1000, 60) == []
    summary = {"type": "round_summary", "round_id": 1, "outcome": "completed", "positions": [],
               "meters": [{"level": "progressive", "display_before_cents": 1,
                           "display_after_cents": 100000, "meter_before_cents": 1,
                           "meter_after_cents": 1}]}  # fmt: skip
    t.entry("round_completed", summary, {"type": "acceptors", "armed": True})
    assert (t.tile.meter_cents, t.tile.wager_cents, t.tile.state) == (100000, 0, "Open_Betting")
    move = {"type": "meter_movement", "level": "progressive", "kind": "contribution",
            "round_id": 2, "display_cents": 42, "overflow_cents": 0, "reserve_cents": 8,
            "house_cents": 0}  # fmt: skip
    t.entry("lockout_pressed", move)
    assert t.tile.meter_cents == 100042


def test_a_fault_is_an_alarm_until_a_supervisor_clears_it_and_the_round_resumes() -> None:
    t = Table()
    t.entry("shuffle_complete", {"type": "acceptors", "armed": True}, count=53)
    fault = {"type": "fault", "code": "SHOE_JAM", "device": "shoe", "detail": "",
             "interrupted": "Open_Dealing"}  # fmt: skip
    t.entry("fault_raised", fault, code="SHOE_JAM", device="shoe")
    (alarm,) = alarms_of(t.tile, T0 + t.seq * 1000, 60)
    assert alarm["kind"] == "fault" and "the shoe jammed" in alarm["words"]
    t.entry("fault_cleared", {"type": "fault_cleared", "supervisor": "s", "outcome": "resumed"},
            supervisor="s")  # fmt: skip
    assert t.tile.state == "Open_Dealing" and alarms_of(t.tile, T0 + t.seq * 1000, 60) == []


def test_the_linked_wager_unplayable_is_an_alarm_in_the_tables_words_ny_5321_18_c() -> None:
    t = Table()
    t.entry("link_state", {"type": "linked_wager", "pool": "P", "level": "progressive",
                           "playable": False, "linked": True},
            up=False, pool="P", level="progressive", detail="refused: chain")  # fmt: skip
    (alarm,) = alarms_of(t.tile, T0 + t.seq * 1000, 60)
    assert alarm["kind"] == "link" and "refused: chain" in alarm["words"]
    assert t.tile.to_json(T0, 60)["link"] == "link down: refused: chain"


def test_a_table_silent_past_its_timeout_is_stale_and_offline_unless_it_is_closed() -> None:
    t = Table()
    t.entry("shuffle_complete", {"type": "acceptors", "armed": True}, count=53)
    last = T0 + t.seq * 1000
    assert not t.tile.stale(last + 4000, 5.0)
    assert t.tile.stale(last + 5001, 5.0)
    assert [a["kind"] for a in alarms_of(t.tile, last + 5001, 5.0)] == ["offline"]
    t.entry("table_closed", supervisor="s")
    assert alarms_of(t.tile, T0 + t.seq * 1000 + 60_000, 5.0) == []  # closed: quiet, no alarm


def floor(**extra: Any) -> dict[str, Any]:
    return {
        "floor": {"stale_s": 30},
        "sections": [{"name": "Pit 1", "tables": ["T1", "T2"]}],
        "supervisors": {"pit": {"name": "P", "pin_hash": hash_pin("2468")}},
        **extra,
    }


def test_the_floor_configuration_names_each_bad_key() -> None:
    cfg = parse_floor_config(floor())
    assert cfg.stale_after("T1") == 30 and cfg.section_of("T2").name == "Pit 1"  # type: ignore[union-attr]
    assert "pit" in cfg.supervisors
    cases = [
        ({"floor": {"colour": 1}}, "floor.colour: unknown key"),
        ({"floor": {"host": "floor.example"}}, "floor.host"),
        ({"floor": {"tls_cert": "/c.pem"}}, "floor.tls_key"),
        ({"sections": [{"name": "A", "tables": ["T1"]}, {"name": "B", "tables": ["T1"]}]},
         "already in section A"),
        ({"sections": [{"name": "A", "tables": ["T 1"]}]}, "sections[0].tables"),
        ({"supervisors": {"pit": {"name": "P", "pin": "2468"}}}, "a plain PIN must never"),
    ]  # fmt: skip
    for change, words in cases:
        with pytest.raises(ConfigValueError) as err:
            parse_floor_config(floor(**change))
        assert words in str(err.value), (change, str(err.value))


def test_the_page_serves_another_machine_only_over_tls(tmp_path: Path) -> None:
    with pytest.raises(ServeError, match="not loopback"):
        serve(FloorConfig(host="0.0.0.0"), "host=127.0.0.1 port=1", [])
    path = tmp_path / "floor.toml"
    path.write_text('[floor]\nhost = "0.0.0.0"\n')
    assert main(["central", "serve", "--config", str(path), "--pg", "x"]) == 2
    path.write_text("[floor]\nstale = 3\n")
    assert main(["central", "serve", "--config", str(path), "--pg", "x"]) == 2


def test_the_floor_unit_runs_the_documented_serve_and_is_not_restarted_for_bad_arguments() -> None:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read_string((ROOT / "systemd" / "paigow-floor.service").read_text())
    service = parser["Service"]
    argv = shlex.split(service["ExecStart"])
    args = build_parser().parse_args(argv[1:])
    assert (args.command, args.central_command) == ("central", "serve")
    assert args.config == "/etc/paigow/floor.toml" and len(args.nats) == 3
    assert service["RestartPreventExitStatus"] == "2"


def test_a_live_entry_is_shown_only_with_its_tables_mac_issue_22(tmp_path: Path) -> None:
    """Nothing from a table counts until authenticated: the page folds a live entry only when it
    carries its table's MAC; one forged by another table's key (or none) is not shown, and
    without a keyring the page waits for central ingest (which checks the MAC) to store it."""
    from controller.central.floor import Floor
    from controller.central.store import FloorStore
    from controller.journal.format import canonical_json, entry_hash
    from controller.link.keys import Keyring, load_table_key, provision
    from controller.link.messages import MAC_HEADER

    ring = tmp_path / "ring"
    provision(ring, "T1", tmp_path / "T1.key")
    provision(ring, "T2", tmp_path / "T2.key")
    t1, t2 = (load_table_key(tmp_path / f"{t}.key", t) for t in ("T1", "T2"))
    data = {"supervisor": "s", "effects": [{"type": "shuffle"}]}
    state = "0" * 64
    digest = entry_hash(1, T0, 0, "table_opened", canonical_json(data, "d"), "g" * 64, state)
    entry = Entry(1, T0, 0, "table_opened", data, "g" * 64, digest, state, "")

    def page(keys: Keyring | None) -> Floor:
        return Floor(FloorConfig(), FloorStore("dbname=unused"), keys=keys, clock=lambda: T0)

    keyed = page(Keyring(ring))
    assert not keyed.take_live("T1", entry, {})  # no MAC
    assert not keyed.take_live("T1", entry, {MAC_HEADER: t2.entry_header(1, digest)})
    assert keyed.tile("T1").seq == 0
    assert keyed.take_live("T1", entry, {MAC_HEADER: t1.entry_header(1, digest)})
    assert keyed.tile("T1").state == "Open_Shuffling"
    unkeyed = page(None)
    assert not unkeyed.take_live("T1", entry, {MAC_HEADER: t1.entry_header(1, digest)})
    assert unkeyed.tile("T1").seq == 0
