"""Test support for the round machine: a table driven the way the owner loop drives it.

Events go through the real RoundMachine.step; ``post`` effects are posted back like the owner does;
every event is kept as a journal-like entry (type, data, ts_ms) so tests can replay them.
"""

from __future__ import annotations

from typing import Any

from fsm.round.config import GameConfig
from fsm.round.effects import Effect, Post, Rejected
from fsm.round.events import Event
from fsm.round.machine import RoundMachine

SUP = "sup-1"


def config(**game: Any) -> GameConfig:
    return GameConfig.from_mapping(game, "game")


class Table:
    def __init__(self, cfg: GameConfig | None = None, **game: Any) -> None:
        self.cfg = cfg if cfg is not None else config(**game)
        self.m = RoundMachine(self.cfg)
        self.t = 1_000
        self.entries: list[dict[str, Any]] = []
        self.all_effects: list[Effect] = []

    @property
    def state(self) -> str:
        return self.m.state

    def ev(self, etype: str, follow: bool = True, **data: Any) -> list[Effect]:
        """Step one event (and, like the owner, any event the machine asks to be posted)."""
        self.t += 10
        effects = self.m.step(Event(etype, data), self.t)
        journal_form = [e.to_json() for e in effects]
        self.entries.append(
            {"type": etype, "data": {**data, "effects": journal_form}, "ts_ms": self.t}
        )
        self.all_effects.extend(effects)
        out = list(effects)
        if follow:
            for e in effects:
                if isinstance(e, Post):
                    out.extend(self.ev(e.event.type, **e.event.data))
        return out

    # --- common stretches of a round -----------------------------------------------------------

    def open(self) -> None:
        self.ev("table_opened", supervisor=SUP)
        self.ev("shuffle_complete", count=53)
        assert self.state == "Open_Betting", self.state

    def lock(self, *areas: int, side: list[dict[str, int]] | None = None) -> list[Effect]:
        """Chips, "no more bets", the count and, with an RNG, the side wagers closed (``side``,
        none by default) and the RNG activated by the dealer: the effects of the count and the
        activation."""
        for a in areas:
            self.ev("chip_detected", position=a)
        self.ev("lockout_pressed")
        if self.cfg.side_wager_offered:
            self.ev("side_wagers", bets=list(side or []))
        out = self.ev("chips_confirmed")
        return out + self.activate()

    def activate(self) -> list[Effect]:
        """The dealer activates the RNG (an RNG start only; NY 5324.41(h)(8)(ii))."""
        if self.state != "Open_LockedOut" or self.cfg.start_mode != "rng":
            return []
        return self.ev("rng_activated")

    def start(self, number: int = 1) -> list[Effect]:
        if self.cfg.start_mode == "rng":
            return self.ev("rng_drawn", value=number)
        for _ in range(3):
            self.ev("shake_detected")
        return self.ev("dice_position_entered", total=number if number >= 3 else number + 7)

    def deal(self, **extra: Any) -> list[Effect]:
        if self.state == "Open_SideWagers":
            self.ev("side_wagers_settled")
        return self.ev("dealt", remaining=4, **extra)

    def round_to_settlement(self, *areas: int, number: int = 1) -> None:
        if self.state != "Open_Betting":
            raise AssertionError(self.state)
        self.lock(*areas)
        self.start(number)
        self.deal()
        self.ev("play_complete")

    def outcomes(self, lines: dict[int, str | None]) -> list[Effect]:
        out: list[Effect] = []
        for area, line in lines.items():
            out.extend(self.ev("progressive_outcome", position=area, line=line))
        return out


def of_type(effects: list[Effect], etype: str) -> list[Effect]:
    return [e for e in effects if e["type"] == etype]


def refusal(effects: list[Effect]) -> Rejected | None:
    """The step's refusal, if it refused the event. An internal error (a bug of the machine) is
    never a rule: it fails the test."""
    rej = [e for e in effects if isinstance(e, Rejected)]
    if not rej:
        return None
    if rej[0].cause == "internal":
        raise AssertionError(f"internal error, not a rule: {rej[0].reason}")
    return rej[0]


def rejection(effects: list[Effect]) -> str | None:
    """The reason the step refused the event (None: accepted); fails on an internal error."""
    rej = refusal(effects)
    return None if rej is None else rej.reason


def reach(state: str, **game: Any) -> Table:
    """A table driven by ordinary events into ``state`` (with a wager at area 2)."""
    if state == "Open_StartingPosition_Dice":
        game.setdefault("start_mode", "dice")
    if state == "Open_SideWagers":
        game.setdefault("side_wager", {"offered": True})
    t = Table(**game)
    if state == "Closed":
        return t
    if state == "Maintenance":
        t.ev("maintenance_entered", supervisor=SUP)
        return t
    if state == "Fault":
        t.ev("fault_raised", code="SELF_TEST", device="controller", detail="")
        return t
    t.ev("table_opened", supervisor=SUP)
    if state == "Open_Shuffling":
        return t
    t.ev("shuffle_complete", count=53)
    if state == "Open_Betting":
        t.ev("chip_detected", position=2)
        return t
    t.ev("chip_detected", position=2)
    t.ev("lockout_pressed")
    if state == "Open_LockedOut":
        return t
    if t.cfg.side_wager_offered:
        t.ev("side_wagers", bets=[])
    t.ev("chips_confirmed")
    t.activate()
    if state in ("Open_StartingPosition_Rng", "Open_StartingPosition_Dice"):
        return t
    t.ev("rng_drawn", value=3)
    if state in ("Open_SideWagers", "Open_Dealing"):
        return t
    t.ev("dealt", remaining=4)
    if state == "Open_Play":
        return t
    t.ev("play_complete")
    if state == "Open_Settlement":
        return t
    if state == "Open_JackpotPending":
        t.ev("progressive_outcome", position=2, line="straight-flush")
        return t
    if state == "Open_RoundComplete":
        t.ev("progressive_outcome", position=2, line=None, follow=False)
        return t
    raise AssertionError(f"no way to reach {state}")
