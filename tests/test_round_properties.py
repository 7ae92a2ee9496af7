"""Property tests of the round machine over random event sequences (hypothesis).

- meters never decrease except by a payout, a voided round's reversal or a supervised correction,
  every sub-unit is accounted for, and the meter movements in the effects add up to the meters
  (NJ 13:69D-1.52(f); a journal that reconciles to the cent);
- snapshot -> JSON -> restore behaves exactly like the machine that kept running;
- replaying the journaled events reproduces the snapshot and the meters (``journal verify``);
- no effect and no public view ever carries a card identity (table-rules.md, shoe section);
- a step that fails inside (a bug injected at any point of its action or of the states' entry
  and exit) leaves the round exactly as before, so the same event then behaves as if the failed
  attempt never happened (NJ 13:69E-1.39B(h): recover to the prior state).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from round_support import SUP

from fsm.round.config import GameConfig
from fsm.round.effects import Effect
from fsm.round.events import Event
from fsm.round.machine import RoundMachine, replay
from fsm.round.meters import UNIT

PRESETS: list[dict[str, Any]] = [
    {},
    {"start_mode": "dice", "player_banking": True},
    {"side_wager": {"offered": True, "odds": "5.5:1"}, "player_banking": True},
    {"card_reading_shoe": True, "three_card_bonus": True},
    {
        "card_reading_shoe": True,
        "progressive_wager_cents": 500,
        "levels": [
            {
                "name": "major",
                "initial_cents": 5000,
                "reset_cents": 4000,
                "rate_bp": 2777,
                "hidden_rate_bp": 333,
                "limit_cents": 6000,
                "lines": ["natural-royal-flush-and-pair", "five-aces-and-pair"],
            },
            {"name": "minor", "initial_cents": 300, "rate_bp": 2701, "hidden_rate_bp": 11},
        ],
    },
]
CONFIGS = [GameConfig.from_mapping(p, "game") for p in PRESETS]
LINES = [None, None, None, *CONFIGS[0].table.line_names]
MONOTONE = (
    "progressive_in",
    "wagered_cents",
    "contributed",
    "reserve_contributed",
    "hits",
    "wins",
    "paid_cents",
    "meter_paid_cents",
    "tray_paid_cents",
    "house_funded",
    "reversed",
    "voided_wagers",
    "correction_count",
    "deducted",
)


def _next_event(draw: Any, m: RoundMachine) -> tuple[str, dict[str, Any]]:
    """A plausible next event for the state (mostly legal, sometimes not, sometimes garbage)."""
    snap = m.snapshot()
    r = snap["round"]
    state = m.state
    pos = st.integers(1, 6)
    c: list[tuple[str, dict[str, Any]]] = []
    if state == "Closed":
        c += [("table_opened", {"supervisor": SUP})] * 4 + [
            ("maintenance_entered", {"supervisor": SUP})
        ]
    elif state == "Maintenance":
        level = next(iter(snap["meters"]))
        c += [
            ("maintenance_exited", {"supervisor": SUP}),
            (
                "meter_corrected",
                {
                    "level": level,
                    "meter": draw(st.sampled_from(["display", "reserve", "overflow"])),
                    "delta_cents": draw(st.integers(-2000, 2000)),
                    "reason": "test",
                    "supervisor": SUP,
                },
            ),
            ("config_changed", {"supervisor": SUP, "changes": {"table_id": "T9"}}),
            ("light_test", {}),
        ]
    elif state == "Open_Shuffling":
        c += [("shuffle_complete", {"count": 53})] * 6 + [("shuffle_complete", {"count": 52})]
    elif state == "Open_Betting":
        c += [("chip_detected", {"position": draw(pos)})] * 4 + [
            ("lockout_pressed", {}),
            ("lockout_pressed", {}),
            ("bank_accepted", {"position": draw(pos)}),
            ("table_closed", {"supervisor": SUP}),
        ]
        if m.config.three_card_bonus:  # NY (n)(4): the dealer enters the pai gow positions
            lit = {int(k) for k in r["wagers"]}
            more = set(draw(st.lists(pos, max_size=6)))
            c += [("pai_gow_wagers", {"positions": sorted(lit | more)})] * 2
    elif state == "Open_LockedOut":
        lit = [int(k) for k in r["wagers"]]
        if m.config.three_card_bonus and r["pai_gow"] is None:
            more = set(draw(st.lists(pos, min_size=1, max_size=6)))
            c += [("pai_gow_wagers", {"positions": sorted(set(lit) | more)})] * 6
        c += [("chips_confirmed", {})] * 4 + [
            # the side wagers closed (none), then the RNG activated (NY (j)(2)(i), (h)(8)(ii))
            *[("side_wagers", {"bets": []})] * 2,
            *[("rng_activated", {})] * 4,
            ("chips_mismatch", {"counted": draw(st.integers(0, 7))}),
            ("chips_resolved", {"supervisor": SUP, "positions": lit[: draw(st.integers(0, 6))]}),
            ("chip_detected", {"position": draw(pos)}),
            (
                "side_wagers",
                {
                    "bets": [
                        {"position": draw(pos), "number": draw(st.integers(1, 7)), "cents": 300}
                    ]
                },
            ),
        ]
    elif state == "Open_StartingPosition_Rng":
        c += [("rng_drawn", {"value": draw(st.integers(1, 7))})] * 3
    elif state == "Open_StartingPosition_Dice":
        c += [("shake_detected", {})] * 3 + [
            ("dice_position_entered", {"total": draw(st.integers(3, 18))}),
            ("lid_lifted_by_bank", {}),
        ]
    elif state == "Open_SideWagers":
        bets = [
            {"position": draw(pos), "number": draw(st.integers(1, 7)), "cents": 100 * draw(pos)}
            for _ in range(draw(st.integers(0, 3)))
        ]
        c += [("side_wagers", {"bets": bets})] * 2 + [
            ("side_wagers_settled", {}),
            ("rng_void", {"supervisor": SUP, "reason": "test"}),
        ]
    elif state == "Open_Dealing":
        # NY (n)(4)-(5), (n)(7)(ii): p pai gow positions and the dealer get the stacks
        seats = len(r["pai_gow"]) + 1 if r["pai_gow"] else 7
        size = {"three": 3, "four": 4}.get(r["stage"], 7)
        data: dict[str, Any] = {"remaining": 53 - seats * (7 if r["stage"] == "four" else size)}
        if m.config.card_reading_shoe:
            deck = draw(st.permutations(list(range(53))))
            if r["stage"] == "four":  # cards not among the stacks of three already read
                seen = {c for h in snap["round"]["threes"].values() for c in h}
                deck = [c for c in deck if c not in seen]
            data["stacks"] = [deck[i * size : i * size + size] for i in range(seats)]
        c += [("dealt", data)] * 4 + [
            ("three_card_settled", {}),
            ("dealt", {"remaining": draw(st.integers(0, 53))}),
        ]
    elif state == "Open_Play":
        c += [("play_complete", {})]
    elif state == "Open_Settlement":
        open_areas = [int(k) for k in r["wagers"] if k not in r["outcomes"]] or [1]
        c += [
            (
                "progressive_outcome",
                {
                    "position": draw(st.sampled_from(open_areas)),
                    "line": draw(st.sampled_from(LINES)),
                },
            )
        ] * 3
    elif state == "Open_JackpotPending":
        first = r["pending"][0]["position"] if r["pending"] else 1
        c += [("hit_validated", {"position": first, "supervisor": SUP})] * 3 + [
            ("hit_validated", {"position": draw(pos), "supervisor": SUP}),
            ("hit_voided", {"position": draw(pos), "supervisor": SUP, "reason": "x"}),
        ]
    elif state == "Open_RoundComplete":
        c += [("round_completed", {"round_id": m.round_id})]
    elif state == "Fault":
        c += [("fault_cleared", {"supervisor": SUP, "void": draw(st.booleans())})] * 3 + [
            ("rng_drawn", {"value": draw(st.integers(1, 7))})
        ]
    if c and draw(st.integers(0, 9)):  # one event in ten is a fault, a deadline or junk
        picked: tuple[str, dict[str, Any]] = draw(st.sampled_from(c))
        return picked
    c = [
        ("fault_raised", {"code": "TEST", "device": "shoe", "detail": ""}),
        ("deadline", {}),
        (
            draw(st.sampled_from(["chip_detected", "dealt", "hit_validated", "nonsense"])),
            draw(st.sampled_from([{}, {"position": "1"}, {"remaining": None}, {"x": [1]}])),
        ),
    ]
    other: tuple[str, dict[str, Any]] = draw(st.sampled_from(c))
    return other


def _run(data: Any, steps: int) -> tuple[GameConfig, list[dict[str, Any]], list[list[Effect]], Any]:
    cfg = data.draw(st.sampled_from(CONFIGS))
    m = RoundMachine(cfg)
    entries: list[dict[str, Any]] = []
    all_effects: list[list[Effect]] = []
    now = 0
    posted: list[tuple[str, dict[str, Any]]] = []
    for _ in range(steps):
        if posted:
            etype, ev_data = posted.pop(0)
        else:
            etype, ev_data = _next_event(data.draw, m)
        now += data.draw(st.integers(0, 200_000))
        before = m.snapshot()["meters"]
        effects = m.step(Event(etype, ev_data), now)
        for e in effects:  # every route a planner takes is a transition of the machine
            assert not (e.TYPE == "rejected" and e["cause"] == "internal"), e
        _check_meters(before, m.snapshot()["meters"], effects)
        journal_form = [e.to_json() for e in effects]
        entries.append({"type": etype, "data": {**ev_data, "effects": journal_form}, "ts_ms": now})
        all_effects.append(effects)
        posted += [(e["event"]["type"], e["event"]["data"]) for e in effects if e["type"] == "post"]
    return cfg, entries, all_effects, m


def _check_meters(before: dict[str, Any], after: dict[str, Any], effects: list[Effect]) -> None:
    kinds = {e["kind"] for e in effects if e["type"] == "meter_movement"}
    for name, a in after.items():
        b = before.get(name)
        assert (
            a["display"]
            + a["overflow"]
            + a["reserve"]
            - (
                a["initial"]
                + a["contributed"]
                + a["reserve_contributed"]
                + a["house_funded"]
                + a["corrections"]
                - a["deducted"]
                - a["reversed"]
            )
            == 0
        ), "a sub-unit is unaccounted for"
        if b is None:
            continue
        for k in MONOTONE:
            assert a[k] >= b[k], f"{name}.{k} decreased"
        for meter in ("display", "overflow", "reserve"):
            if a[meter] < b[meter]:
                assert kinds & {"payout", "reset", "reversal", "correction"}, (
                    f"{name}.{meter} decreased without a payout, reversal or correction"
                )
        moved = [e for e in effects if e["type"] == "meter_movement" and e["level"] == name]
        for meter in ("display", "overflow", "reserve"):
            delta = a[meter] // UNIT - b[meter] // UNIT
            assert sum(e[f"{meter}_cents"] for e in moved) == delta, "movements != meters"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_meters_never_decrease_without_payout_or_correction_and_reconcile(data: Any) -> None:
    _run(data, 60)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_replay_of_journal_reproduces_snapshot_and_meters(data: Any) -> None:
    cfg, entries, _, m = _run(data, 60)
    snap, meters = replay(cfg, entries)
    assert snap == m.snapshot()
    assert meters == m.meters()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_snapshot_restore_behaves_the_same(data: Any) -> None:
    cfg, entries, effects, m = _run(data, 40)
    cut = data.draw(st.integers(0, len(entries)))
    head, tail = entries[:cut], entries[cut:]
    a = RoundMachine(cfg)
    for e in head:
        a.step(Event(e["type"], {k: v for k, v in e["data"].items() if k != "effects"}), e["ts_ms"])
    b = RoundMachine.restore(cfg, json.loads(json.dumps(a.snapshot())))
    assert b.snapshot() == a.snapshot() and b.next_deadline_ms() == a.next_deadline_ms()
    assert b.outputs() == a.outputs()
    for e, expected in zip(tail, effects[cut:], strict=True):
        ev = Event(e["type"], {k: v for k, v in e["data"].items() if k != "effects"})
        assert b.step(ev, e["ts_ms"]) == expected
    assert b.snapshot() == m.snapshot()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_step_that_fails_inside_is_rolled_back_exactly_nj_39b_h(data: Any) -> None:
    """NJ 13:69E-1.39B(h): after a failure the table recovers to its prior state. A bug is
    injected at a random effect of a random step (the n-th ``emit`` raises: in the planned
    action, in a state's entry, in a meter movement); the step must answer one ``rejected``
    with cause ``internal``, the snapshot must be unchanged, and the same event stepped again
    must give exactly what an untouched copy of the machine gives."""
    cfg, entries, _effects, _m = _run(data, 30)
    cut = data.draw(st.integers(0, len(entries) - 1))
    m = RoundMachine(cfg)
    for e in entries[:cut]:
        m.step(Event(e["type"], {k: v for k, v in e["data"].items() if k != "effects"}), e["ts_ms"])
    e = entries[cut]
    ev = Event(e["type"], {k: v for k, v in e["data"].items() if k != "effects"})
    twin = RoundMachine.restore(cfg, json.loads(json.dumps(m.snapshot())))
    expected = twin.step(ev, e["ts_ms"])
    before = m.snapshot()
    fail_at = data.draw(st.integers(0, 8))
    context = m._c
    real_emit = context.emit
    calls = [0]
    raised = [False]

    def emit(effect: Effect) -> None:
        if calls[0] == fail_at:
            raised[0] = True
            raise RuntimeError("injected")
        calls[0] += 1
        real_emit(effect)

    context.emit = emit  # type: ignore[method-assign]
    got = m.step(ev, e["ts_ms"])
    if not raised[0]:  # refused before acting, or fewer effects than the failure point
        assert got == expected
        return
    assert len(got) == 1 and got[0].TYPE == "rejected" and got[0]["cause"] == "internal", got
    assert m.snapshot() == before
    assert m.step(ev, e["ts_ms"]) == expected
    assert m.snapshot() == twin.snapshot()


def _card_lists(obj: Any) -> list[list[int]]:
    found: list[list[int]] = []
    if isinstance(obj, dict):
        for v in obj.values():
            found += _card_lists(v)
    elif isinstance(obj, list):
        if len(obj) >= 3 and all(isinstance(x, int) and not isinstance(x, bool) for x in obj):
            found.append(list(obj))
        for v in obj:
            found += _card_lists(v)
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_no_effect_or_public_view_reveals_cards(data: Any) -> None:
    _cfg, entries, effects, m = _run(data, 60)
    hands: list[list[int]] = []
    for e in entries:
        if e["type"] == "dealt" and "stacks" in e["data"]:
            hands += [list(s) for s in e["data"]["stacks"]]
    for effs in effects:
        for lst in _card_lists(effs):
            # the only int lists effects carry are seat orders (7 distinct seats 0..6)
            assert sorted(lst) == list(range(7)) or lst not in hands, "a hand reached an effect"
        text = json.dumps([e.to_json() for e in effs])
        assert '"hands"' not in text and '"stacks": [' not in text and '"cards": [' not in text
    view = m.public_view()
    assert "hands" not in view["round"]
    for lst in _card_lists(view):
        assert lst not in hands
