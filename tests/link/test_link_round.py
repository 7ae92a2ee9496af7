"""The round's side of the link (fsm/round/plan_link.py; NY 5321.18(c), NJ 13:69E-1.39B(d),(e)):
the linked wager unplayable while the controller is out of reach, a linked hit paid only the
amount the controller locked, a supervisor's corrected line of a linked hit locked by the pool,
unlinking. The real round machine, no servers."""

from __future__ import annotations

import tomllib
from typing import Any

from controller.config import SIMULATED_TABLE, parse_config
from fsm.round.effects import Effect
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

JACKPOT = "natural-royal-flush-and-pair"  # 100% of the meter
NATURAL = "natural-royal-flush"  # 10% of the meter
TRIPS = "three-of-a-kind"  # a fixed $2: from the chip tray
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


def pending_jackpot(t: T, position: int = 2) -> None:
    t.ev("link_state", up=True, confirmed_seq=1, **LINK)
    t.ev("chip_detected", position=position)
    t.ev("lockout_pressed")
    t.ev("chips_confirmed")
    t.ev("rng_activated")
    t.ev("dealt", remaining=4)
    t.ev("play_complete")
    t.ev("progressive_outcome", position=position, line=JACKPOT)
    assert t.m.state == "Open_JackpotPending"


def test_a_corrected_line_of_a_linked_hit_is_locked_by_the_pool_then_validated_k3ii() -> None:
    """NY 5324.41(k)(3)(ii): the supervisor voids the linked hit and names the right, lower line;
    that line's payout comes off the linked level's meter, the pool's: it is not paid from the
    table's own meter but becomes a pending hit of its own (``corrects`` the voided line) that
    the link controller locks and a supervisor validates ((k)(3)(iii)). A late lock of the
    voided line is refused for it."""
    t = open_table()
    pending_jackpot(t)
    own = t.m.meters()["progressive"]["display_cents"]
    t.ev("link_hit_locked", position=2, level="progressive", cents=500_000, order=1, pool="P1",
         line=JACKPOT)  # fmt: skip
    effects = t.ev("hit_voided", position=2, supervisor="trainer", reason="no pair", line=NATURAL)
    assert t.refused(effects) is None
    kinds = [e.TYPE for e in effects]
    assert "pay" not in kinds and "meter_movement" not in kinds
    (pending,) = [e.to_json() for e in effects if e.TYPE == "hit_pending"]
    assert (pending["position"], pending["line"]) == (2, NATURAL)
    assert t.m.state == "Open_JackpotPending"
    (hit,) = t.m.snapshot()["round"]["pending"]
    assert hit == {"position": 2, "level": "progressive", "line": NATURAL, "corrects": JACKPOT,
                   "lines": [NATURAL, "royal-flush"]}  # fmt: skip
    refusal = t.refused(t.ev("hit_validated", position=2, supervisor="trainer"))
    assert refusal is not None and "not locked" in refusal
    late = t.ev("link_hit_locked", position=2, level="progressive", cents=500_000, order=1,
                pool="P1", line=JACKPOT)  # fmt: skip
    assert "not natural-royal-flush-and-pair" in (t.refused(late) or "")
    t.ev("link_hit_locked", position=2, level="progressive", cents=60_000, order=2, pool="P1",
         line=NATURAL)  # fmt: skip
    effects = t.ev("hit_validated", position=2, supervisor="trainer")
    (pay,) = [e.to_json() for e in effects if e.TYPE == "pay"]
    assert (pay["cents"], pay["from"], pay["line"]) == (60_000, "meter", NATURAL)
    assert pay["voided_line"] == JACKPOT
    assert t.m.meters()["progressive"]["display_cents"] == own  # the pool's meter was paid
    assert t.m.state in ("Open_Betting", "Open_Shuffling")


def test_a_corrected_linked_line_paid_from_the_chip_tray_is_paid_at_once_k3ii() -> None:
    """A corrected line of a fixed amount under the meter threshold (NY 5324.41(k)(5)) needs
    nothing from the pool: paid from the chip tray at once, as at an unlinked table."""
    t = open_table()
    pending_jackpot(t)
    effects = t.ev("hit_voided", position=2, supervisor="trainer", reason="trips", line=TRIPS)
    (pay,) = [e.to_json() for e in effects if e.TYPE == "pay"]
    assert (pay["from"], pay["line"], pay["voided_line"]) == ("chip_tray", TRIPS, JACKPOT)
    assert t.m.state in ("Open_Betting", "Open_Shuffling")
