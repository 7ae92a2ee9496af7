"""What a phase sees of the round: the `Round` context (configuration, the round's data, meters,
bank rotation, fault, deadline, key switch, the step's time) and the operations the rules share
(contribute, void, set the starting position, resolve outcomes, raise a fault, emit an effect).

The round machine (fsm/round/machine.py) owns one `Round`; the phases' guards read it
(fsm/round/phases/), their actions and state entries change it. Must never know the state
machine library, do I/O, or let a card identity into an effect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fsm.round import states as S
from fsm.round.banking import BankRotation
from fsm.round.config import GameConfig, ProgressiveLevel
from fsm.round.constants import SNAPSHOT_VERSION, STACKS
from fsm.round.effects import (
    Alert,
    Effect,
    Fault,
    HitAdjustedEffect,
    HitPending,
    MeterMovement,
    MovementKind,
    Outcome,
    Pay,
    Refund,
    RoundSummary,
    RoundVoided,
    SideWagerRefund,
    SideWagerResult,
    SideWagerSettled,
    StartingPosition,
    SummaryMeter,
    SummaryPosition,
)
from fsm.round.meters import UNIT, LevelMeters
from fsm.round.position import delivery_order, seat_for_number, three_card_number, three_card_order
from fsm.round.rounddata import RoundData
from fsm.rules.paytables import side_wager_win_cents

T = TypeVar("T")


@dataclass(frozen=True)
class Resolution:
    """How a round's progressive outcomes settle (`Round.resolution`): every outcome, the chip
    tray's payouts now, and the hits that wait for a supervisor (JackpotPending when any)."""

    outcomes: dict[int, str | None]
    tray: list[dict[str, Any]]
    pending: list[dict[str, Any]]


@dataclass
class Round:
    """The round's whole mutable state (dumped to and loaded from the snapshot) and its rules'
    shared operations. ``state`` is the machine's current leaf state (read-only for guards)."""

    config: GameConfig
    state: str = S.CLOSED
    round_id: int = 0
    round_done: bool = True  # the next Betting starts a new round id
    rounds_since_shuffle: int = 0
    r: RoundData = field(default_factory=RoundData)
    meters: dict[str, LevelMeters] = field(default_factory=dict)
    bank: BankRotation = field(default_factory=BankRotation)
    fault: dict[str, Any] | None = None
    key_on: bool = False  # the supervisor key switch of the dealer panel
    # the shaker's lid sensor said the lid is off (shakes do not count, NY (h)(8)(i), (h)(10)(i))
    lid_lifted: bool = False
    # who turned the key on, when the input that reported it identified them (None: the key
    # alone, which names no one: panel steps are journaled as `panel-key`)
    key_holder: str | None = None
    # the floor link (NJ 13:69E-1.39B(d)): progressive wagers refused while a link the
    # progressive depends on is down, or while the floor system shut them down (SAS 01)
    floor: dict[str, bool] = field(default_factory=lambda: {"link_blocks": False, "refused": False})
    # the linked progressive (docs/link.md): None for a table never linked; else the pool, the
    # linked level and whether the link controller is out of reach (NY 5321.18(c))
    link: dict[str, Any] | None = None
    # the controller compartment's door (issue 28 item 4): None for a table whose door switch
    # never reported; else {"open": bool, "opened": openings counted, "maintenance": the
    # supervisor who allowed play with it open, or None}
    door: dict[str, Any] | None = None
    deadline: list[Any] | None = None  # [ms, code, device(, detail)]
    now: int = 0
    effects: list[Effect] = field(default_factory=list)

    @classmethod
    def new(cls, config: GameConfig) -> Round:
        return cls(config, meters={lvl.name: LevelMeters.new(lvl) for lvl in config.levels})

    # --- snapshot ----------------------------------------------------------------------------

    def dump(self, hidden: bool = True) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "table_id": self.config.table_id,
            "state": self.state,
            "round_id": self.round_id,
            "round_done": self.round_done,
            "rounds_since_shuffle": self.rounds_since_shuffle,
            "round": self.r.to_json(hidden),
            "bank": self.bank.to_json(),
            "fault": None
            if self.fault is None
            else {
                "faults": [dict(f) for f in self.fault["faults"]],
                "interrupted": self.fault["interrupted"],
            },
            "deadline": None if self.deadline is None else list(self.deadline),
            "supervisor_key": self.key_on,
            **({"shaker_lid_lifted": True} if self.lid_lifted else {}),
            "key_holder": self.key_holder,
            "floor": dict(self.floor),
            **({} if self.link is None else {"link": dict(self.link)}),
            **({} if self.door is None else {"door": dict(self.door)}),
            "meters": {n: m.to_json() for n, m in self.meters.items()},
            "config": self.config.to_mapping(),
        }

    def load(self, snap: Mapping[str, Any]) -> None:
        if snap.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"snapshot.version: expected {SNAPSHOT_VERSION}")
        cfg = snap.get("config")
        if isinstance(cfg, Mapping) and cfg != self.config.to_mapping():
            self.config = GameConfig.from_mapping(cfg, "snapshot.config")
        state = str(snap["state"])
        if state not in S.LEAF_STATES:
            raise ValueError(f"state: {state!r} is not a state of the round")
        self.state = state
        self.round_id = int(snap["round_id"])
        self.round_done = bool(snap["round_done"])
        self.rounds_since_shuffle = int(snap["rounds_since_shuffle"])
        self.r = RoundData.from_json(snap["round"])
        self.bank = BankRotation.from_json(dict(snap["bank"]))
        f = snap["fault"]
        self.fault = (
            None
            if f is None
            else {"faults": [dict(x) for x in f["faults"]], "interrupted": f["interrupted"]}
        )
        self.deadline = None if snap["deadline"] is None else list(snap["deadline"])
        self.key_on = bool(snap.get("supervisor_key", False))
        self.lid_lifted = bool(snap.get("shaker_lid_lifted", False))
        holder = snap.get("key_holder")
        self.key_holder = None if holder is None else str(holder)
        floor = snap.get("floor") or {}
        self.floor = {k: bool(floor.get(k, False)) for k in ("link_blocks", "refused")}
        link = snap.get("link")
        self.link = None if not isinstance(link, Mapping) else dict(link)
        door = snap.get("door")
        self.door = (
            None
            if not isinstance(door, Mapping)
            else {
                "open": bool(door["open"]),
                "opened": int(door["opened"]),
                "maintenance": None
                if door.get("maintenance") is None
                else str(door["maintenance"]),
            }
        )
        self.meters = {n: LevelMeters.from_json(dict(m)) for n, m in snap["meters"].items()}

    def door_refusal(self) -> str | None:
        """Why play is refused for the compartment door now (open, no maintenance), or None."""
        door = self.door
        if door is None or not door["open"] or door["maintenance"] is not None:
            return None
        return (
            "the controller compartment's door is open: play is refused until it is closed, "
            "or a supervisor allows maintenance (console: door-maintenance on)"
        )

    def floor_refusal(self) -> str | None:
        """Why the floor link refuses progressive wagers now, or None."""
        if self.floor["refused"]:
            return "the floor system shut down progressive wagers (SAS long poll 01)"
        if self.floor["link_blocks"]:
            return "the floor link is down and the progressive depends on it (NJ 13:69E-1.39B(d))"
        if self.link is not None and self.link.get("down"):
            return (
                f"the link controller of pool {self.link.get('pool')} cannot be reached: the "
                "linked progressive is unplayable (NY 5321.18(c), NJ 13:69E-1.39B(d))"
            )
        return None

    def linked_level(self) -> str | None:
        """The level linked to a pool (its hits are locked by the link controller), or None."""
        return None if self.link is None else str(self.link.get("level"))

    # --- effects -----------------------------------------------------------------------------

    def emit(self, effect: Effect) -> None:
        self.effects.append(effect)

    def enter_fault(
        self, code: str, device: str, detail: str, interrupted: str, held: bool = False
    ) -> None:
        f: dict[str, Any] = {"code": code, "device": device, "detail": detail}
        if held:  # the device's own condition: cleared only once it reports healthy
            f["held"] = True
        if self.fault is None:
            self.fault = {"faults": [f], "interrupted": interrupted}
        else:
            self.fault["faults"].append(f)
        self.emit(Fault(code, device, detail, interrupted))
        self.emit(Alert("supervisor", code, detail))

    def emit_movement(
        self,
        level: str,
        kind: MovementKind,
        before: tuple[int, int, int],
        after: tuple[int, int, int],
        house_units: int,
        **extra: Any,
    ) -> None:
        self.emit(
            MeterMovement(
                level=level,
                kind=kind,
                round_id=self.round_id,
                display_cents=after[0] - before[0],
                overflow_cents=after[1] - before[1],
                reserve_cents=after[2] - before[2],
                house_cents=house_units // UNIT,
                **extra,
            )
        )

    # --- the round's life ----------------------------------------------------------------------

    def begin_round(self) -> None:
        if self.round_done:
            self.round_id += 1
            self.round_done = False
        self.r = RoundData()
        self.r.meters_at_start = {n: list(m.cents()) for n, m in self.meters.items()}

    def contribute(self) -> None:
        r = self.r
        n = len(r.wagers)
        if n == 0:
            return
        wager = self.config.progressive_wager_cents
        linked = self.linked_level()
        for lvl in self.config.levels:
            m = self.meters[lvl.name]
            before = m.cents()
            # a linked level has one meter, the pool's: the table counts the wagers it sends
            # the pool and grows nothing of its own (docs/link.md)
            c = m.count_for_pool(n, wager) if lvl.name == linked else m.contribute(lvl, n, wager)
            r.contributions.append(c)
            # the wagers and what they cost, as they stood now: reports add these up and
            # never re-derive which chips counted or what a wager cost at the time
            self.emit_movement(
                lvl.name, "contribution", before, m.cents(), 0, wagers=n, wagered_cents=n * wager
            )

    def summary(self, outcome: str, reason: str | None = None) -> RoundSummary:
        """The round's summary as it ends (positions with wagers, outcomes, payouts, refunds,
        each level's meter at the round's start and now)."""
        r = self.r
        paid: dict[int, dict[str, Any]] = {}
        for p in r.paid:
            paid[int(p["position"])] = p
        positions = []
        for area, cents in sorted(r.wagers.items()):
            pay = paid.get(area)
            positions.append(
                SummaryPosition(
                    position=area,
                    wager_cents=cents,
                    line=r.outcomes.get(area),
                    payout_cents=int(pay["cents"]) if pay else 0,
                    paid_from=pay["from"] if pay else None,
                    validated_by=pay.get("supervisor") if pay else None,
                    refund_cents=cents if outcome == "voided" else None,
                )
            )
        meters = []
        for name, m in self.meters.items():
            start = r.meters_at_start.get(name) or list(m.cents())
            now = m.cents()
            meters.append(SummaryMeter(name, start[0], now[0], sum(start), sum(now)))
        return RoundSummary(
            round_id=self.round_id,
            outcome="voided" if outcome == "voided" else "completed",
            positions=tuple(positions),
            meters=tuple(meters),
            reason=reason,
        )

    def settle_side_wagers(self) -> None:
        """NY 5324.41(j)(2)(iii)-(vi), NJ 13:69F-11.8C(b)3-6: each recorded 1-7 side wager on the
        displayed number wins at the configured odds, rounded down to the dollar; every other
        loses. Once per round; none recorded is settled as none (no effect)."""
        r = self.r
        number = int(r.start_number or 0)
        odds = self.config.side_wager_odds_fraction
        results = tuple(
            SideWagerResult(p, n, c, side_wager_win_cents(c, odds) if n == number else 0)
            for p, n, c in (r.side_bets or [])
        )
        r.side_results = [x.fields_json() for x in results]
        if results:
            self.emit(SideWagerSettled(number, results))

    def _close_side_wagers(self, reason: str) -> None:
        """A voided round's 1-7 side wagers (NY 5324.41(j)(3), NJ 13:69F-11.8C(c): no bearing on
        any other wager): settled if their number was displayed, else each returned."""
        r = self.r
        if not r.side_bets or r.side_results is not None:
            return  # none recorded, or already settled (they stand)
        if r.start_number is not None and r.rng_value is not None:
            self.settle_side_wagers()
            return
        for p, n, c in r.side_bets:
            self.emit(SideWagerRefund(p, n, c, reason))

    def void_round(self, reason: str, supervisor: str | None = None) -> None:
        r = self.r
        self._close_side_wagers(reason)
        for c in r.contributions:
            m = self.meters[c.level]
            before = m.cents()
            m.reverse(c)
            self.emit_movement(
                c.level, "reversal", before, m.cents(), 0, reason=reason, supervisor=supervisor
            )
        for area, cents in sorted(r.wagers.items()):
            self.emit(Refund(area, cents, reason))
        self.emit(RoundVoided(self.round_id, reason, supervisor))
        self.emit(self.summary("voided", reason))
        self.bank.new_game()  # the void replaces the deck: the game starts again (h)(2)
        self.round_done = True
        self.r = RoundData()

    # --- starting position and order -------------------------------------------------------------

    def set_start(self, number: int) -> None:
        r = self.r
        r.start_number = number
        r.start_seat = seat_for_number(number, self.bank.current, self.config.dealer_right_area)
        by = self.config.start_mode
        self.emit(
            StartingPosition(
                by="dice" if by == "dice" else "rng",
                number=number,
                seat=r.start_seat,
                order=tuple(delivery_order(r.start_seat, self.config.dealer_right_area)),
                bank=self.bank.current,
            )
        )

    def set_start_three_card(self) -> None:
        """NY 5324.41(n)(4): the starting position is the player position farthest to the
        dealer's left at which a pai gow wager was placed; no number is drawn or counted."""
        r = self.r
        order = self.delivery_seats()
        r.start_seat = order[0]
        r.start_number = three_card_number(order[0], self.config.dealer_right_area)
        self.emit(
            StartingPosition(
                by="three_card",
                number=r.start_number,
                seat=r.start_seat,
                order=tuple(order),
                bank=self.bank.current,
            )
        )

    def delivery_seats(self) -> list[int]:
        """The seats in the order the stacks reach them: with the three-card bonus only the pai
        gow positions, farthest left first, then the dealer ((n)(4)-(5), (n)(7)(ii)); otherwise
        every seat from the starting position, clockwise ((f)(3)(iii))."""
        r = self.r
        if self.config.three_card_bonus and r.pai_gow:
            return three_card_order(r.pai_gow, self.config.dealer_right_area)
        seat = r.start_seat if r.start_seat is not None else 0
        return delivery_order(seat, self.config.dealer_right_area)

    def hit_order(self, areas: Iterable[int]) -> list[int]:
        """Winners in the order they are paid: from the area farthest to the dealer's right,
        counter-clockwise around the table (NY 5324.41(g)(7), NJ 13:69F-11.9(i); the layout's
        ``layout.dealer_right_area``). With (k)(6) each meter payout is at the meter of its own
        moment, so this order decides the amounts; it is also the deterministic order of
        simultaneous hits (NY 5321.18(b)(3)(iii))."""
        wanted = set(areas)
        order = self.config.payment_order()
        return [a for a in order if a in wanted] + sorted(wanted - set(order))

    def candidate_lines(self, area: int, line: str) -> tuple[str, ...]:
        """The lines the hand at ``area`` may be paid on ((g)(8): the dealer resets the hand to
        the type paying the most): a card-reading shoe's hand, every line it claims; a line the
        dealer entered, that line and the lines every such hand also claims."""
        table = self.config.table
        cards = self.r.hands.get(area)
        if cards is not None:
            return tuple(table.claims(cards, self.config.ranking))
        return table.implied(line)

    def line_payout_now(self, line: str) -> int:
        """What ``line`` pays now, at its own level's meter (NY (k)(4), (k)(6))."""
        level = self.config.level_for_line(line).name
        return self.config.progressive_payout(line, self.meters[level].display_cents)

    def best_now(self, lines: Iterable[str]) -> tuple[str, int] | None:
        """The best paying of ``lines`` now, each at its level's meter of this moment."""
        cfg = self.config
        return cfg.table.best_of(tuple(lines), cfg.progressive_wager_cents, self.line_payout_now)

    def linked_meter_hit(self, area: int, line: str) -> dict[str, Any] | None:
        """The pending hit a supervisor's corrected ``line`` at ``area`` makes when the pool
        decides it (`pool_hit`, the lines ``line`` implies), else None (paid at the table)."""
        return self.pool_hit(area, line, self.config.table.implied(line))

    def pool_hit(self, area: int, line: str, lines: Iterable[str]) -> dict[str, Any] | None:
        """The pending hit the link controller decides, or None. A linked level has one meter,
        the pool's: a hand that makes a line of the linked level the pool may pay from its
        meter (a share of it, a straight flush, a fixed amount of $50 and more, NY 5324.41(k)(5))
        is sent with every line it makes at that level (``lines``: the dealer's entry and the
        lines it implies, or the card-reading shoe's claims); the pool weighs them at its meter
        when it locks ((g)(8), (k)(6)) and the table pays what it locked. None: the table is not
        linked, or the hand makes only fixed lines the chip tray pays (no meter decides them)."""
        linked = self.linked_level()
        if linked is None:
            return None
        cfg = self.config
        wager = cfg.progressive_wager_cents
        wanted = set(lines)
        mine = [
            n for n in cfg.table.line_names
            if n in wanted and cfg.level_for_line(n).name == linked
        ]  # fmt: skip
        if not any(
            cfg.table.deducted_from_meter(n, wager, cfg.progressive_payout(n, 0)) for n in mine
        ):
            return None
        key = line if line in mine else mine[0]
        return {"position": area, "level": linked, "line": key, "lines": mine}

    def payout_now(self, lines: Iterable[str]) -> tuple[str, int, ProgressiveLevel, bool]:
        """How a hit of ``lines`` would be paid at this moment: its best line, the payout, that
        line's level, and whether the payout is deducted from the meter ((k)(5)) rather than
        paid from the chip tray."""
        cfg = self.config
        best = self.best_now(lines)
        assert best is not None, "a hit has at least one line"
        line, payout = best
        deducted = cfg.table.deducted_from_meter(line, cfg.progressive_wager_cents, payout)
        return line, payout, cfg.level_for_line(line), deducted

    def pay_hit(
        self,
        area: int,
        lines: Iterable[str],
        supervisor: str | None,
        via: str | None,
        voided_line: str | None = None,
    ) -> None:
        """Pay the hit at ``area`` now: its best line of ``lines`` decided at this moment, at
        that line's level's meter ((g)(8), (k)(4), (k)(6)). A payout deducted from the meter
        ((k)(5)) takes what the meter holds and the house funds the rest (``house_cents`` of the
        pay and of its movement); the level is then reset. A payout not deducted (a low meter
        made a fixed line the best) comes from the chip tray."""
        cfg = self.config
        r = self.r
        line, payout, level, deducted = self.payout_now(lines)
        lm = self.meters[level.name]
        r.outcomes[area] = line
        if not deducted:
            lm.pay_from_tray(payout)
            self.emit(
                Pay(area, level.name, line, payout, "chip_tray", supervisor, via, None, voided_line)
            )
            r.paid.append(
                {"position": area, "level": level.name, "line": line, "cents": payout,
                 "from": "chip_tray", "supervisor": supervisor, "house_cents": 0}
            )  # fmt: skip
            return
        before = lm.cents()
        house0 = lm.house_funded
        lm.pay_from_meter(payout)
        house = (lm.house_funded - house0) // UNIT
        self.emit_movement(
            level.name,
            "payout",
            before,
            lm.cents(),
            lm.house_funded - house0,
            reason=f"hit at position {area}: {line}",
            supervisor=supervisor,
        )
        before = lm.cents()
        house0 = lm.house_funded
        fo, fr, fh = lm.reset(level)
        if fo or fr or fh:
            self.emit_movement(
                level.name,
                "reset",
                before,
                lm.cents(),
                lm.house_funded - house0,
                reason=f"reset after the hit at position {area}",
                supervisor=supervisor,
            )
        lm.record_hit(
            {
                "table": cfg.table_id,
                "position": area,
                "level": level.name,
                "line": line,
                "amount_cents": payout,
                "house_cents": house,
                "time_ms": self.now,
                "round_id": self.round_id,
                "supervisor": supervisor,
            }
        )
        self.emit(Pay(area, level.name, line, payout, "meter", supervisor, via, house, voided_line))
        r.paid.append(
            {"position": area, "level": level.name, "line": line, "cents": payout,
             "from": "meter", "supervisor": supervisor, "house_cents": house}
        )  # fmt: skip

    def hit_kind(self, area: int, line: str) -> tuple[str, int, ProgressiveLevel, bool]:
        """How the hit ``line`` at ``area`` is paid at this moment: its best line now of its
        candidate lines (`candidate_lines`), the payout, that line's level, and whether it is
        deducted from the meter ((k)(5)) rather than paid from the chip tray."""
        return self.payout_now(self.candidate_lines(area, line))

    def resolution(self, outcomes: Mapping[int, str | None]) -> Resolution:
        """How every wagered area's ``outcomes`` settle in the payment order (`hit_order`, NY
        (g)(7), NJ 11.9(i)), whatever pays them: the hits before the first payout deducted from
        the meter are fixed amounts paid from the chip tray at once; from the first deducted
        payout on, every hit waits its turn (JackpotPending): a deducted one for a supervisor
        (k)(3)(iii),(k)(5), a chip-tray one until the hits before it are paid (`advance`); each
        line is decided again when it is paid (`pay_hit`). A chip-tray payment does not move a
        meter, so the first deducted hit is the same now as when its turn comes. Reads the
        round, changes nothing (`resolve` applies it)."""
        tray: list[dict[str, Any]] = []
        pending: list[dict[str, Any]] = []
        for area in self.hit_order(outcomes):
            line = outcomes[area]
            if not line:
                continue
            pooled = self.pool_hit(area, line, self.candidate_lines(area, line))
            if pooled is not None:  # the pool decides it at its meter when it locks
                pending.append(pooled)
                continue
            paid_line, payout, level, deducted = self.hit_kind(area, line)
            if pending or deducted:
                pending.append({"position": area, "level": level.name, "line": line})
            else:
                tray.append(
                    {"position": area, "level": level.name, "line": paid_line, "cents": payout}
                )
        return Resolution(dict(outcomes), tray, pending)

    def resolve(self, res: Resolution) -> None:
        """Apply a `resolution`: the outcomes not yet journaled, the chip tray's payouts, the
        hits left pending a supervisor."""
        r = self.r
        final = res.outcomes
        for area in self.hit_order(final):
            if area not in r.outcomes:  # (entered before: its outcome effect is journaled)
                self.emit(Outcome(area, final[area]))
        r.outcomes = dict(final)
        for t in res.tray:
            self.meters[t["level"]].pay_from_tray(t["cents"])
            self.emit(Pay(t["position"], t["level"], t["line"], t["cents"], "chip_tray"))
            r.outcomes[t["position"]] = t["line"]
            r.paid.append({**t, "from": "chip_tray", "house_cents": 0})
        r.pending = [dict(p) for p in res.pending]
        for p in r.pending:
            p["unannounced"] = True
            self.announce(p)
        r.stage = "done"

    def restart_level(self, name: str, reason: str) -> None:
        """The level starts again from the amounts its configuration names (display at the
        initial amount, no overflow, no reserve), each change a recorded correction: a table
        leaving a pool takes none of the pool's money and revives none of its own (docs/link.md)."""
        if name not in self.meters:
            return
        lvl = self.config.level(name)
        m = self.meters[name]
        for meter, want in (("display", lvl.initial_cents), ("overflow", 0), ("reserve", 0)):
            held = int(getattr(m, meter))
            delta = want * UNIT - held
            if not delta:
                continue
            before = m.cents()
            setattr(m, meter, want * UNIT)
            m.corrections += delta
            m.correction_count += 1
            self.emit_movement(name, "correction", before, m.cents(), 0, reason=reason, meter=meter)

    def amounts_shown(self) -> list[dict[str, Any]]:
        """Each hit still to be paid with what it pays at the meter as it stands now
        (``pays_line``, ``pays_cents``; `RoundMachine.public_view`: the sign, the page and SAS
        show them; it is paid at the meter of its own moment, (k)(6)). A hit of the linked level:
        the link controller's locked amount once locked, else none (the pool's meter decides
        it, docs/link.md)."""
        out = []
        for hit in self.r.pending:
            if hit["level"] == self.linked_level():
                out.append({"pays_line": hit["line"], "pays_cents": hit.get("locked_cents")})
                continue
            line, payout, _, _ = self.hit_kind(hit["position"], hit["line"])
            out.append({"pays_line": line, "pays_cents": payout})
        return out

    def announce(self, hit: dict[str, Any]) -> None:
        """``hit_pending`` for a queued hit whose payout is deducted from the meter now, with
        what it pays at the meter as it stands (the sign and the page show it); once per hit."""
        if not hit.get("unannounced"):
            return
        line, payout, _, deducted = self.hit_kind(hit["position"], hit["line"])
        if not deducted and hit["level"] != self.linked_level():
            return
        del hit["unannounced"]
        if hit["level"] == self.linked_level():  # the pool's meter decides it (docs/link.md)
            self.emit(HitPending(hit["position"], hit["level"], hit["line"]))
            return
        self.emit(HitPending(hit["position"], hit["level"], hit["line"], payout, line))

    def advance(self) -> None:
        """Pay the queued hits now first in the payment order that a supervisor need not
        validate: a fixed amount not deducted from the meter, decided at the meter as it now
        stands, paid from the chip tray; stop at the first deducted one (or one of the linked
        level, which the link controller locks), announced (NY (g)(7), (k)(3)(iii), (k)(6))."""
        r = self.r
        while r.pending:
            hit = r.pending[0]
            if hit["level"] == self.linked_level():
                break
            _, _, _, deducted = self.hit_kind(hit["position"], hit["line"])
            if deducted:
                break
            r.pending.pop(0)
            self.pay_hit(
                hit["position"], self.candidate_lines(hit["position"], hit["line"]), None, None
            )
        if r.pending:
            self.announce(r.pending[0])

    def trial(self, fn: Callable[[], T]) -> T:
        """``fn``'s answer on the round as it is, the round then put back exactly (what a guard
        asks of an action: "would the round still wait after this?")."""
        data = self.r.to_json(hidden=True)
        meters = {n: m.to_json() for n, m in self.meters.items()}
        emitted = len(self.effects)
        try:
            return fn()
        finally:
            self.r = RoundData.from_json(data)
            self.meters = {n: LevelMeters.from_json(dict(m)) for n, m in meters.items()}
            del self.effects[emitted:]

    def queue_hit(self, area: int, line: str | None) -> None:
        """Put the hit ``line`` at ``area`` (none: no hit) in its place of the payment order among
        the hits still to be paid; a hit of the linked level becomes the link controller's to lock
        (`linked_meter_hit`)."""
        r = self.r
        r.pending = [p for p in r.pending if p["position"] != area]
        if not line:
            return
        hit = self.linked_meter_hit(area, line)
        if hit is None:
            _, _, level, _ = self.hit_kind(area, line)
            hit = {"position": area, "level": level.name, "line": line}
        hit["unannounced"] = True
        order = self.hit_order([*(p["position"] for p in r.pending), area])
        r.pending.insert(order.index(area), hit)

    def adjust(
        self, area: int, line: str | None, supervisor: str, reason: str, via: str | None
    ) -> None:
        """After payment, a correction of the completed round's line at ``area`` (the round's
        data is kept until the next round's betting opens) is an adjustment (NY (k)(3)(ii)): what
        the right line pays now, at the meter as it stands ((g)(8), (k)(6)), less what the
        position was paid; a positive difference is paid (from the meter when the right line's
        payout is deducted from it (k)(5), the house funding what the meter lacks, then the
        level reset; else from the chip tray), a negative one is recorded as overpaid (no money
        moves)."""
        r = self.r
        paid = sum(int(p["cents"]) for p in r.paid if p["position"] == area)
        was = r.outcomes.get(area)
        owed, level_name, source = 0, None, None
        if line:
            best, owed, level, deducted = self.hit_kind(area, line)
            level_name = level.name
            if owed > paid:
                source = "meter" if deducted else "chip_tray"
                self._pay_difference(area, best, owed - paid, level, deducted, supervisor, via, was)
        diff = owed - paid
        self.emit(
            HitAdjustedEffect(
                self.round_id, area, was, line, owed, paid, diff, supervisor, reason, level_name,
                via,
            )
        )  # fmt: skip
        if source is None:
            detail = f"round {self.round_id} position {area}: {was} corrected to {line} by "
            detail += f"{supervisor}: paid {paid} cents, owed {owed} cents"
            self.emit(Alert("supervisor", "HIT_ADJUSTED", detail[:200]))
        r.paid.append(
            {"position": area, "level": level_name, "line": line, "cents": max(diff, 0),
             "from": source, "supervisor": supervisor, "house_cents": 0, "adjusts": was}
        )  # fmt: skip
        r.outcomes[area] = line

    def _pay_difference(
        self,
        area: int,
        line: str,
        cents: int,
        level: ProgressiveLevel,
        deducted: bool,
        supervisor: str,
        via: str | None,
        was: str | None,
    ) -> None:
        lm = self.meters[level.name]
        win = not any(p["position"] == area for p in self.r.paid)
        if not deducted:
            lm.pay_from_tray(cents, win)
            self.emit(Pay(area, level.name, line, cents, "chip_tray", supervisor, via, None, was))
            return
        before, house0 = lm.cents(), lm.house_funded
        lm.pay_from_meter(cents, win)
        house = (lm.house_funded - house0) // UNIT
        self.emit_movement(
            level.name, "payout", before, lm.cents(), lm.house_funded - house0,
            reason=f"adjustment at position {area}: {was} corrected to {line}",
            supervisor=supervisor,
        )  # fmt: skip
        before, house0 = lm.cents(), lm.house_funded
        if any(lm.reset(level)):
            self.emit_movement(
                level.name, "reset", before, lm.cents(), lm.house_funded - house0,
                reason=f"reset after the adjustment at position {area}", supervisor=supervisor,
            )  # fmt: skip
        lm.record_hit(
            {"table": self.config.table_id, "position": area, "level": level.name, "line": line,
             "amount_cents": cents, "house_cents": house, "time_ms": self.now,
             "round_id": self.round_id, "supervisor": supervisor}
        )  # fmt: skip
        self.emit(Pay(area, level.name, line, cents, "meter", supervisor, via, house, was))

    # --- deadlines ---------------------------------------------------------------------------

    def deadline_for(self, state: str) -> list[Any] | None:
        c = self.config
        if state == S.SHUFFLING:
            return [self.now + c.shuffle_timeout_ms, "SHUFFLER_TIMEOUT", "shuffler"]
        if state == S.RNG and self.r.rng_value is None:
            return [self.now + c.rng_timeout_ms, "RNG_TIMEOUT", "rng"]
        if state == S.DEALING:
            return [self.now + c.dispense_timeout_ms, "SHOE_TIMEOUT", "shoe"]
        return None


__all__ = ["STACKS", "Resolution", "Round"]
