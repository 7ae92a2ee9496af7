"""Progressive meters of one level (NJ 13:69E-1.39A, NY 5320.8, NY 5324.41(k)(5),(6)).

Money on a meter is held in sub-units of 1/10000 cent (``UNIT``), so a contribution of
``wager_cents * rate_bp`` sub-units is exact: no fraction of a cent is ever lost or invented; the
meter shows whole cents (floor) and the fraction stays on it until it makes a whole cent.

Meters kept per level: progressive_in (qualifying wagers), wagered_cents, contributed (visible
rate) and reserve_contributed (hidden rate), display, overflow (above the limit), reserve, hits
(payouts deducted from the meter), wins (all winning wagers), paid_cents (all wins paid),
meter_paid_cents (deducted), tray_paid_cents (fixed amounts paid from the chip tray),
house_funded (reset or payout shortfall paid by the house), reversed (voided contributions),
corrections, and the last 25 hits.

Invariant (checked by ``balance_error``):
    display + overflow + reserve ==
        initial + contributed + reserve_contributed + house_funded + corrections
        - deducted - reversed
Display, overflow and reserve never decrease except by a payout (deducted), a reversal of a voided
round's contributions, a move between them at a reset, or a supervised correction; the counters
never decrease. Must never: read a clock, decide whether a hand wins, or round money with floats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fsm.configread import MAX_CENTS
from fsm.round.config import ProgressiveLevel

UNIT = 10_000  # sub-units per cent
CORRECTABLE_METERS = ("display", "reserve", "overflow")  # what a supervised correction may touch
HISTORY = 25  # NY 5320.8: at least the last 25 hits


@dataclass
class Contribution:
    """What one round's qualifying wagers put on one level (sub-units), kept for reversal."""

    level: str
    wagers: int = 0
    wagered_cents: int = 0
    display: int = 0
    overflow: int = 0
    reserve: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Contribution:
        return cls(**d)


@dataclass
class LevelMeters:
    name: str
    initial: int  # sub-units
    display: int
    overflow: int = 0
    reserve: int = 0
    progressive_in: int = 0
    wagered_cents: int = 0
    contributed: int = 0
    reserve_contributed: int = 0
    hits: int = 0
    wins: int = 0
    paid_cents: int = 0
    meter_paid_cents: int = 0
    tray_paid_cents: int = 0
    deducted: int = 0
    house_funded: int = 0
    reversed: int = 0
    voided_wagers: int = 0
    corrections: int = 0  # signed net, sub-units
    correction_count: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def new(cls, level: ProgressiveLevel) -> LevelMeters:
        return cls(level.name, level.initial_cents * UNIT, level.initial_cents * UNIT)

    # --- views -------------------------------------------------------------------------------

    @property
    def display_cents(self) -> int:
        return self.display // UNIT

    def cents(self) -> tuple[int, int, int]:
        return self.display // UNIT, self.overflow // UNIT, self.reserve // UNIT

    def balance_error(self) -> int:
        """0 when every sub-unit is accounted for; otherwise the difference (a bug)."""
        held = self.display + self.overflow + self.reserve
        source = (
            self.initial
            + self.contributed
            + self.reserve_contributed
            + self.house_funded
            + self.corrections
            - self.deducted
            - self.reversed
        )
        return held - source

    def report(self) -> dict[str, Any]:
        """The level's meters in whole cents (fractions of a cent reported as ``carry_units``)."""
        return {
            "progressive_in": self.progressive_in,
            "wagered_cents": self.wagered_cents,
            "contributed_cents": self.contributed // UNIT,
            "reserve_contributed_cents": self.reserve_contributed // UNIT,
            "display_cents": self.display // UNIT,
            "overflow_cents": self.overflow // UNIT,
            "reserve_cents": self.reserve // UNIT,
            "hits": self.hits,
            "wins": self.wins,
            "paid_cents": self.paid_cents,
            "meter_paid_cents": self.meter_paid_cents,
            "tray_paid_cents": self.tray_paid_cents,
            "house_funded_cents": self.house_funded // UNIT,
            "reversed_cents": self.reversed // UNIT,
            "voided_wagers": self.voided_wagers,
            "corrections_cents": self.corrections // UNIT
            if self.corrections >= 0
            else -((-self.corrections) // UNIT),
            "correction_count": self.correction_count,
            "carry_units": {
                "display": self.display % UNIT,
                "overflow": self.overflow % UNIT,
                "reserve": self.reserve % UNIT,
            },
            "last_hits": [dict(h) for h in self.history],
        }

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["history"] = [dict(h) for h in self.history]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> LevelMeters:
        d = dict(d)
        d["history"] = [dict(h) for h in d.get("history", [])]
        return cls(**d)

    # --- movements ---------------------------------------------------------------------------

    def contribute(self, level: ProgressiveLevel, wagers: int, wager_cents: int) -> Contribution:
        """``wagers`` qualifying wagers of ``wager_cents`` each: the rate of progression goes to
        the display up to the limit and the rest to overflow; the hidden rate to the reserve."""
        total = wagers * wager_cents
        visible = total * level.rate_bp
        hidden = total * level.hidden_rate_bp
        to_display = visible
        if level.limit_cents:
            room = max(0, level.limit_cents * UNIT - self.display)
            to_display = min(visible, room)
        c = Contribution(level.name, wagers, total, to_display, visible - to_display, hidden)
        self.progressive_in += wagers
        self.wagered_cents += total
        self.contributed += visible
        self.reserve_contributed += hidden
        self.display += c.display
        self.overflow += c.overflow
        self.reserve += c.reserve
        return c

    def count_for_pool(self, wagers: int, wager_cents: int) -> Contribution:
        """``wagers`` qualifying wagers sent to the linked pool: counted (progressive_in,
        wagered_cents) and nothing put on this meter (the pool's meter is the level's one)."""
        total = wagers * wager_cents
        self.progressive_in += wagers
        self.wagered_cents += total
        return Contribution(self.name, wagers, total)

    def reverse(self, c: Contribution) -> None:
        """Take back a voided round's contribution exactly (compensating movement)."""
        self.display -= c.display
        self.overflow -= c.overflow
        self.reserve -= c.reserve
        self.reversed += c.display + c.overflow + c.reserve
        self.voided_wagers += c.wagers

    def pay_from_meter(self, cents: int, win: bool = True) -> int:
        """Deduct a payout from the display (NY (k)(5)); returns the cents the display could not
        cover (paid by the house, metered as house_funded). ``win``: a winning wager not counted
        before (an adjustment of a wager already paid is not a second win)."""
        want = cents * UNIT
        take = min(want, self.display)
        self.display -= take
        self.deducted += take
        short = want - take
        # the shortfall is paid by the house: it passes through the meter's books
        self.house_funded += short
        self.deducted += short
        self.hits += 1
        self.wins += int(win)
        self.paid_cents += cents
        self.meter_paid_cents += cents
        return short // UNIT

    def pay_from_tray(self, cents: int, win: bool = True) -> None:
        """A fixed amount not deducted from the meter, paid from the chip tray (a win)."""
        self.wins += int(win)
        self.paid_cents += cents
        self.tray_paid_cents += cents

    def reset(self, level: ProgressiveLevel) -> tuple[int, int, int]:
        """Bring the display up to the reset amount after a deduction: from the overflow first,
        then the reserve, then the house. Then the rest of the overflow goes back to the display,
        up to the level's limit: the overflow holds the rate of progression's money that did not
        fit under the limit (NJ 13:69E-1.39A), and that money is the meter's which determines
        the payouts (NY 5324.41(k)(5)), so it is shown again as soon as a hit makes room.
        Returns (from_overflow, from_reserve, from_house) sub-units."""
        need = max(0, level.reset_cents * UNIT - self.display)
        from_overflow = min(need, self.overflow)
        need -= from_overflow
        from_reserve = min(need, self.reserve)
        need -= from_reserve
        self.overflow -= from_overflow
        self.reserve -= from_reserve
        self.house_funded += need
        self.display += from_overflow + from_reserve + need
        room = self.overflow
        if level.limit_cents:
            room = min(room, max(0, level.limit_cents * UNIT - self.display))
        self.overflow -= room
        self.display += room
        return from_overflow + room, from_reserve, need

    def correct(self, meter: str, delta_cents: int) -> str | None:
        """A supervised correction of display, overflow or reserve; a reason when refused."""
        if meter not in CORRECTABLE_METERS:
            return f"meter: must be display, overflow or reserve, not {meter!r}"
        current = int(getattr(self, meter))
        if current + delta_cents * UNIT < 0:
            return f"delta_cents: {meter} would go below zero ({current // UNIT} + {delta_cents})"
        if current + delta_cents * UNIT > MAX_CENTS * UNIT:  # no table's meter means this
            return (
                f"delta_cents: {meter} would exceed {MAX_CENTS} cents, the most any amount "
                f"of the table may be ({current // UNIT} + {delta_cents})"
            )
        setattr(self, meter, current + delta_cents * UNIT)
        self.corrections += delta_cents * UNIT
        self.correction_count += 1
        return None

    def record_hit(self, hit: dict[str, Any]) -> None:
        self.history.append(dict(hit))
        del self.history[:-HISTORY]
