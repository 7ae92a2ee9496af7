"""Journals written by the real round machine for the report and journal-command tests.

Drives ``fsm.round.RoundMachine`` and ``controller.journal.store.Journal`` the way the owner thread
does (step, then ONE append of the entry with its effects, the snapshot and the meters; ``post`` and
``draw_rng`` effects processed next, in order). Not a test module: a helper the tests import.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from controller.journal.store import Journal
from fsm.round import GameConfig, RoundMachine
from fsm.round.events import Event


class TableDriver:
    """One table: a real machine, a real journal file, an injected clock and RNG sequence."""

    def __init__(
        self,
        path: Path,
        config: GameConfig | None = None,
        *,
        start_ms: int = 1_790_000_000_000,
        draws: list[int] | None = None,
        key: bytes | None = None,
        seal_file: Path | None = None,
        state_per_round: bool = False,
    ) -> None:
        self.config = config or GameConfig(table_id="T9")
        self.machine = RoundMachine(self.config)
        self.journal = Journal.open(
            path,
            table_id=self.config.table_id,
            created_ms=start_ms,
            config=self.config.to_mapping(),
            key=key,
            seal_file=seal_file,
            state_per_round=state_per_round,
        )
        self.now = start_ms
        self.draws = deque(draws or [3, 5, 1, 7, 2, 6, 4])
        self.log: list[tuple[str, list[dict[str, Any]]]] = []

    def close(self) -> None:
        self.journal.close()

    def tick(self, ms: int = 1000) -> None:
        self.now += ms

    def send(self, type_: str, **data: Any) -> list[dict[str, Any]]:
        """Process one input and whatever it posts; returns the input's own effects."""
        pending: deque[Event] = deque([Event(type_, data)])
        first: list[dict[str, Any]] | None = None
        while pending:
            event = pending.popleft()
            # the machine sees the data exactly as journaled (canonical JSON: sorted keys)
            event = Event(event.type, json.loads(json.dumps(dict(event.data), sort_keys=True)))
            self.tick(10)
            effects = [e.to_json() for e in self.machine.step(event, self.now)]
            self.journal.append(
                self.now,
                self.machine.entry_round_id,
                event.type,
                {**event.data, "effects": effects},
                self.machine.snapshot(),
                self.machine.meters(),
            )
            self.log.append((event.type, effects))
            if first is None:
                first = effects
            for effect in effects:
                if effect["type"] == "post":
                    posted = effect["event"]
                    pending.append(Event(posted["type"], posted.get("data", {})))
                elif effect["type"] == "draw_rng":
                    value = self.draws[0]
                    self.draws.rotate(-1)
                    pending.append(Event("rng_drawn", {"value": value}))
        assert first is not None
        return first

    # ---------------------------------------------------------------- scripted rounds
    def open_table(self, supervisor: str = "ana") -> None:
        self.send("table_opened", supervisor=supervisor)
        self.send("shuffle_complete", count=53)

    def play_round(
        self,
        wagers: list[int],
        outcomes: dict[int, str | None] | None = None,
        *,
        validate_by: str = "ana",
        late_chip: int | None = None,
    ) -> None:
        """One round from Betting: chips, lock-out, count, (RNG drawn by the driver), deal,
        outcomes, hits validated; ends back in Betting or Shuffling (then shuffled)."""
        outcomes = outcomes or {}
        for area in wagers:
            self.send("chip_detected", position=area)
        self.send("lockout_pressed")
        if late_chip is not None:
            self.send("chip_detected", position=late_chip)
        self.close_side_wagers()
        self.send("chips_confirmed")
        self.activate_rng()
        if self.config.side_wager_offered:
            self.send("side_wagers_settled")
        self.send("dealt", remaining=4)
        self.send("play_complete")
        for area in wagers:
            self.send("progressive_outcome", position=area, line=outcomes.get(area))
        while self.machine.state == "Open_JackpotPending":
            pending = self.machine.snapshot()["round"]["pending"]
            self.tick(60_000)
            self.send("hit_validated", position=pending[0]["position"], supervisor=validate_by)
        self.after_round()

    def close_side_wagers(self, bets: list[dict[str, int]] | None = None) -> None:
        """The dealer enters the 1-7 side wagers (none by default) before the RNG is activated
        (NY 5324.41(j)(2)(i)); only where the table offers them."""
        if self.config.side_wager_offered:
            self.send("side_wagers", bets=list(bets or []))

    def activate_rng(self) -> None:
        """The dealer activates the RNG after the count (NY 5324.41(h)(8)(ii))."""
        if self.machine.state == "Open_LockedOut" and self.config.start_mode == "rng":
            self.send("rng_activated")

    def after_round(self) -> None:
        if self.machine.state == "Open_Shuffling":
            self.send("shuffle_complete", count=53)

    def void_round_by_fault(self, wagers: list[int], supervisor: str = "ana") -> None:
        """Chips, lock-out, count (contributions), then a shoe fault cleared with a void."""
        for area in wagers:
            self.send("chip_detected", position=area)
        self.send("lockout_pressed")
        self.close_side_wagers()
        self.send("chips_confirmed")
        self.activate_rng()
        self.send("fault_raised", code="SHOE_JAM", device="shoe", detail="card jammed at exit")
        self.send("fault_cleared", supervisor=supervisor, void=True)
        self.after_round()

    def close_table(self, supervisor: str = "ana") -> None:
        self.send("table_closed", supervisor=supervisor)


def standard_journal(
    path: Path, key: bytes | None = None, seal_file: Path | None = None
) -> TableDriver:
    """A small shift: 5 played rounds (a meter hit validated by 'bob', fixed pays from the chip
    tray, a late chip), the table closed, a supervised meter correction in maintenance, the table
    opened again and a round voided by a shoe fault. The driver is returned closed (its log and
    clock stay readable)."""
    d = TableDriver(path, key=key, seal_file=seal_file)
    d.open_table()
    d.play_round([1, 2, 3], {2: "flush"})
    d.play_round([4], {}, late_chip=5)
    d.play_round([1, 6], {6: "natural-royal-flush", 1: "straight"}, validate_by="bob")
    d.play_round([1, 2, 3, 4, 5, 6], {3: "four-of-a-kind"})
    d.play_round([5], {})
    d.close_table()
    d.send("maintenance_entered", supervisor="ana")
    d.send(
        "meter_corrected",
        level="progressive",
        meter="display",
        delta_cents=250,
        reason="display short by $2.50 after a power cut (test)",
        supervisor="ana",
    )
    d.send("maintenance_exited", supervisor="ana")
    d.open_table()
    d.void_round_by_fault([2, 3, 5])
    d.close()
    return d
