"""The round's side of the link (fsm/round/plan_link.py; NY 5321.18(c), NJ 13:69E-1.39B(d),(e)):
the linked wager unplayable while the controller is out of reach, a linked hit paid only the
amount the controller locked, unlinking. The real round machine, no servers."""

from __future__ import annotations

import tomllib
from typing import Any

from controller.config import SIMULATED_TABLE, parse_config
from fsm.round.effects import Effect
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

JACKPOT = "natural-royal-flush-and-pair"
LINK = {"pool": "P1", "level": "progressive"}


class T:
    def __init__(self) -> None:
        data: dict[str, Any] = tomllib.loads(SIMULATED_TABLE.read_text())
        data["game"].update(card_reading_shoe=False, side_wager={"offered": False})
        self.m = RoundMachine(parse_config(data).game)
        self.t = 1000

    def ev(self, etype: str, **data: Any) -> list[Effect]:
        self.t += 10
        effects = self.m.step(Event(etype, data), self.t)
        for e in effects:
            if e.TYPE == "post":
                inner = e.event  # type: ignore[attr-defined]
                effects += self.ev(inner.type, **dict(inner.data))
            if e.TYPE == "draw_rng":
                effects += self.ev("rng_drawn", value=3)
        return effects

    def refused(self, effects: list[Effect]) -> str | None:
        r = [e.to_json() for e in effects if e.TYPE == "rejected"]
        return None if not r else f"{r[0]['cause']}: {r[0]['reason']}"

    def armed(self, effects: list[Effect]) -> bool | None:
        a = [e for e in effects if e.TYPE == "acceptors"]
        return None if not a else bool(a[-1].armed)  # type: ignore[attr-defined]


def open_table() -> T:
    t = T()
    t.ev("table_opened", supervisor="trainer")
    t.ev("shuffle_complete", count=53)
    assert t.m.state == "Open_Betting"
    return t


def test_controller_lost_linked_wager_unplayable_base_game_goes_on() -> None:
    t = open_table()
    effects = t.ev("link_state", up=False, detail="no confirmation", **LINK)
    assert t.armed(effects) is False
    refusal = t.refused(t.ev("chip_detected", position=1))
    assert refusal is not None and refusal.startswith("not_armed") and "5321.18(c)" in refusal
    assert t.m.public_view()["link"]["down"] is True
    # the base game goes on: no progressive wager this round
    assert t.refused(t.ev("lockout_pressed")) is None
    t.ev("chips_confirmed")
    t.ev("rng_activated")  # the dealer activates the RNG (NY 5324.41(h)(8)(ii))
    t.ev("dealt", remaining=4)
    t.ev("play_complete")
    assert t.m.state in ("Open_Betting", "Open_Shuffling")
    if t.m.state == "Open_Shuffling":
        t.ev("shuffle_complete", count=53)
    effects = t.ev("link_state", up=True, confirmed_seq=40, **LINK)
    assert t.armed(effects) is True
    assert t.refused(t.ev("chip_detected", position=1)) is None


def test_a_linked_hit_is_paid_the_locked_amount_only_once_locked() -> None:
    t = open_table()
    t.ev("link_state", up=True, confirmed_seq=1, **LINK)
    t.ev("chip_detected", position=2)
    t.ev("lockout_pressed")
    t.ev("chips_confirmed")
    t.ev("rng_activated")  # the dealer activates the RNG (NY 5324.41(h)(8)(ii))
    t.ev("dealt", remaining=4)
    t.ev("play_complete")
    t.ev("progressive_outcome", position=2, line=JACKPOT)
    assert t.m.state == "Open_JackpotPending"
    own = t.m.meters()["progressive"]["display_cents"]
    refusal = t.refused(t.ev("hit_validated", position=2, supervisor="trainer"))
    assert refusal is not None and "not locked" in refusal
    t.ev("link_hit_locked", position=2, level="progressive", cents=123_456, order=7, pool="P1")
    effects = t.ev("hit_validated", position=2, supervisor="trainer")
    (pay,) = [e.to_json() for e in effects if e.TYPE == "pay"]
    assert pay["cents"] == 123_456 and pay["from"] == "meter"
    assert t.m.meters()["progressive"]["display_cents"] == own  # the pool's meter was paid


def test_unlinked_the_progressive_is_the_tables_own_again() -> None:
    t = open_table()
    t.ev("link_state", up=False, **LINK)
    effects = t.ev("link_state", up=True, linked=False, **LINK)
    assert "link" not in t.m.snapshot() and t.armed(effects) is True
    assert t.refused(t.ev("chip_detected", position=1)) is None


def test_the_linked_wagers_playability_is_one_effect_on_each_change_only() -> None:
    """NY 5321.18(c), NJ 13:69E-1.39B(d),(e): the linked wager's playability is a typed fact
    (``linked_wager``) for its readers (the floor link's SAS exception 53), stated when it
    changes — first linked, down after up, up after down, unlinked — and never repeated."""
    t = open_table()

    def said(effects: list[Effect]) -> list[dict[str, Any]]:
        return [e.to_json() for e in effects if e.TYPE == "linked_wager"]

    fact = {"type": "linked_wager", **LINK}
    assert said(t.ev("link_state", up=True, confirmed_seq=3, **LINK)) == [
        {**fact, "playable": True, "linked": True}
    ]
    assert said(t.ev("link_state", up=True, confirmed_seq=9, **LINK)) == []  # still playable
    assert said(t.ev("link_state", up=False, detail="no confirmation", **LINK)) == [
        {**fact, "playable": False, "linked": True}
    ]
    assert said(t.ev("link_state", up=False, detail="still none", **LINK)) == []
    assert said(t.ev("link_state", up=True, confirmed_seq=12, **LINK)) == [
        {**fact, "playable": True, "linked": True}
    ]
    assert said(t.ev("link_state", up=False, **LINK)) == [
        {**fact, "playable": False, "linked": True}
    ]
    assert said(t.ev("link_state", up=True, linked=False, **LINK)) == [
        {**fact, "playable": True, "linked": False}
    ]
    assert said(t.ev("link_state", up=True, linked=False, **LINK)) == []  # already its own


def test_a_table_first_linked_while_the_controller_is_out_of_reach_is_unplayable() -> None:
    t = open_table()
    effects = t.ev("link_state", up=False, detail="no confirmation", **LINK)
    assert [e.to_json() for e in effects if e.TYPE == "linked_wager"] == [
        {"type": "linked_wager", **LINK, "playable": False, "linked": True}
    ]
    assert t.armed(effects) is False
