"""The start phase: StartingPosition (Rng, Dice) and SideWagers. The RNG's activation by the
dealer or the bank, the draw and its supervised void, the dice shaker (three shakes with the lid
on, a re-shake when the lid is lifted early or by the bank), the dealer's dice total, and the 1-7
side wagers: recorded before the RNG is activated, settled on the displayed number before any card
(NY 5324.41(h)(8), (h)(10), (j); NJ 13:69F-11.8C; NJ 13:69E-1.28G).

Must never draw a random number itself (the owner's CSPRNG draw arrives as ``rng_drawn``), accept
or change a side wager once the RNG is activated, or void a displayed number a side wager rides on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsm.round.catalogue import IN_ROUND_AFTER_LOCKOUT
from fsm.round.constants import AREAS
from fsm.round.context import Round
from fsm.round.effects import Alert, DrawRng, Effect
from fsm.round.events import (
    DicePositionEntered,
    RngActivated,
    RngDrawn,
    RngVoid,
    ShakerLid,
    SideWagers,
)
from fsm.round.phase import Phase, StateSpec, Step, Transition, Untimely, as_event
from fsm.round.phases.shared import (
    LOCKED_IN,
    PANEL,
    deadline,
    glyph_start,
    key_turned,
    lights_locked,
    panel_supervisor,
    player_banks,
)
from fsm.round.position import dice_number
from fsm.round.states import (
    DEALING,
    DICE,
    EVERYWHERE,
    FAULT,
    LOCKED_OUT,
    RNG,
    SIDE_WAGERS,
)


def request_draw(c: Round) -> list[Effect]:
    return [DrawRng()] if c.r.rng_value is None else []


# --- the RNG


def counted(s: Step) -> bool:
    return s.c.r.counted or s.refuse(
        "the chip count is not confirmed: confirm it before the RNG is activated (NY 5324.41(k)(2))"
    )


def is_counted(s: Step) -> bool:
    """(NEXT in LockedOut activates the RNG once the chip count is confirmed.)"""
    return s.c.r.counted


def side_wagers_closed(s: Step) -> bool:
    """With the 1-7 side wager the RNG is activated only once the side wagers are closed (an
    explicit list, possibly empty), since they are made before it ((j)(2)(i), NJ 11.8C(b)1)."""
    open_ = s.c.config.side_wager_offered and s.c.r.side_bets is None
    return not open_ or s.refuse(
        "the 1-7 side wagers are open: enter them (side_wagers, an empty list when none) "
        "before the RNG is activated (NY 5324.41(j)(2)(i), NJ 13:69F-11.8C(b)1)"
    )


def activator_may(s: Step) -> bool:
    """NY 5324.41(h)(8)(ii), (h)(10)(ii): the dealer, or the player bank, activates the RNG."""
    e: RngActivated = s.e
    return (
        e.by != "bank"
        or s.c.bank.current is not None
        or s.refuse("by: no player banks this round; the dealer activates the RNG")
    )


def activate(s: Step) -> None:
    s.c.r.rng_activated_by = s.e.by


def side_wager_offered(s: Step) -> bool:
    return s.c.config.side_wager_offered


def no_side_wager(s: Step) -> bool:
    return not s.c.config.side_wager_offered


def one_draw(s: Step) -> bool:
    return s.c.r.rng_value is None or s.refuse(
        "one draw per round: a redraw only after a supervisor's rng_void"
    )


def drawn(s: Step) -> None:
    e: RngDrawn = s.e
    r = s.c.r
    r.rng_value = e.value
    r.rng_draws += 1
    s.c.set_start(e.value)


def draw_outstanding(s: Step) -> bool:
    """A draw the fault interrupted may still arrive while the table is in fault."""
    c = s.c
    cut = c.fault is not None and c.fault["interrupted"] == RNG and c.r.rng_value is None
    return cut or s.refuse("no random number draw is outstanding")


def keep_draw(s: Step) -> None:
    s.c.r.rng_value = s.e.value
    s.c.r.rng_draws += 1


def number_not_ridden(s: Step) -> bool:
    """Never a void of a number displayed while 1-7 side wagers are recorded: it decides them,
    and is final (NY 5324.41(j)(2)(iii), NJ 13:69F-11.8C(b)3, NJ 13:69E-1.28G(c))."""
    r = s.c.r
    return not (r.side_bets and r.start_number is not None) or s.refuse(
        f"the number {r.start_number} is displayed and {len(r.side_bets or [])} 1-7 side "
        "wager(s) ride on it: a displayed number is final (NY 5324.41(j)(2)(iii), "
        "NJ 13:69F-11.8C(b)3, NJ 13:69E-1.28G(c))"
    )


def void_draw(s: Step) -> None:
    """The supervisor's void of a draw, so it is drawn again."""
    e: RngVoid = s.e
    r = s.c.r
    r.rng_voids.append({"value": r.rng_value, "supervisor": e.supervisor, "reason": e.reason})
    r.rng_value = None
    r.start_number = None
    r.start_seat = None


# --- the dice


def lid_on(s: Step) -> bool:
    """NY 5324.41(h)(8)(i), (h)(10)(i): the shaker is shaken covered; a shake with the lid off
    (the lid sensor said it was lifted and not yet put back) does not count."""
    return not s.c.lid_lifted or s.refuse(
        "the shaker's lid is off: a shake counts only with the lid on; cover the shaker "
        "(NY 5324.41(h)(8)(i), (h)(10)(i))"
    )


def shaken(s: Step) -> None:
    s.c.r.shakes += 1


def lid_moved(s: Step) -> None:
    """The lid sensor's report, kept in every state (the lid stays off across rounds until it
    is put back)."""
    e: ShakerLid = s.e
    s.c.lid_lifted = bool(e.lifted)


def bank_lifted_lid(s: Step) -> None:
    s.c.r.shakes = 0
    s.c.emit(
        Alert(
            "dealer",
            "RESHAKE_REQUIRED",
            "the bank lifted the lid: cover and re-shake (NY 5324.41(h)(8)(i))",
        )
    )


def lid_lifted_early(s: Step) -> bool:
    e: ShakerLid = s.e
    return e.lifted and s.c.r.shakes < 3


def reshake(s: Step) -> None:
    lid_moved(s)
    shakes = s.c.r.shakes
    s.c.r.shakes = 0
    s.c.emit(
        Alert(
            "dealer",
            "RESHAKE_REQUIRED",
            f"lid lifted after {shakes} shake(s): cover and shake at least three "
            "times (NY 5324.41(h)(8)(i))",
        )
    )


def three_shakes(s: Step) -> bool:
    n = s.c.r.shakes
    return n >= 3 or s.refuse(
        f"the shaker was shaken {n} time(s); at least three before the lid is "
        "removed (NY 5324.41(h)(8)(i), (h)(10)(i))"
    )


def dice_total(s: Step) -> None:
    e: DicePositionEntered = s.e
    s.c.set_start(dice_number(e.total))


# --- the 1-7 side wagers


def side_wager_at_table(s: Step) -> bool:
    return s.c.config.side_wager_offered or s.refuse(
        "the 1-7 side wager is not offered at this table (game.side_wager)"
    )


def _bet_int(b: Mapping[str, Any], i: int, key: str, lo: int, hi: int | None) -> int | str:
    """The integer at ``key`` of bet ``i``, or why it is not one."""
    if key not in b:
        return f"bets[{i}].{key}: required"
    v = b[key]
    if isinstance(v, bool) or not isinstance(v, int):
        return f"bets[{i}].{key}: must be an integer, not {v!r}"[:120]
    if v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        return f"bets[{i}].{key}: must be {rng}, not {v}"
    return v


def _bet(b: Any, i: int) -> list[int] | str:
    if not isinstance(b, Mapping):
        return f"bets[{i}]: must be a mapping with position, number, cents"
    extra = set(b) - {"position", "number", "cents"}
    if extra:
        return f"bets[{i}].{sorted(extra)[0]}: unknown key"
    out: list[int] = []
    for key, lo, hi in (("position", 1, AREAS), ("number", 1, 7), ("cents", 1, None)):
        v = _bet_int(b, i, key, lo, hi)
        if isinstance(v, str):
            return v
        out.append(v)
    return out


def bets_valid(s: Step) -> bool:
    """Each bet names a position, a number 1-7 and its cents (an empty list: none placed)."""
    e: SideWagers = s.e
    raw: Any = e.bets
    if not isinstance(raw, list):
        return s.refuse("bets: must be a list of {position, number, cents}", "invalid")
    bets: list[list[int]] = []
    bonus = s.c.config.bonus
    for i, b in enumerate(raw):
        bet = _bet(b, i)
        if isinstance(bet, str):
            return s.refuse(bet, "invalid")
        if bonus is not None and "side-1-7" in bonus.tables:
            try:  # the table's least wager ([bonus] min_wager_cents), checked at every bet
                bonus.check_wager("side-1-7", bet[2])
            except ValueError as why:
                return s.refuse(f"bets[{i}].cents: {why}")
        bets.append(bet)
    s.memo["bets"] = bets
    return True


def record_bets(s: Step) -> None:
    """Recorded in LockedOut, replaceable until the RNG's activation closes them ((j)(2)(i))."""
    s.c.r.side_bets = s.memo["bets"]


def side_wagers_recorded(s: Step) -> bool:
    return s.c.r.side_bets is not None or s.refuse(
        "no 1-7 side wagers were recorded before the RNG was activated: nothing to settle "
        "(NY 5324.41(j)(2)(i))"
    )


def settle_side_wagers(s: Step) -> None:
    """The dealer collected the losers and paid the winners (NY (j)(2)(iv)-(v))."""
    s.c.settle_side_wagers()


def _activation_by_panel(s: Step) -> RngActivated:
    return RngActivated("dealer", PANEL)


def _void_by_panel(s: Step) -> RngVoid:
    return RngVoid(panel_supervisor(s.c), "draw voided at the dealer panel", PANEL)


_ACTIVATION = [counted, side_wagers_closed, activator_may]
_LATE_SIDE_WAGER = (
    "late side wager: the 1-7 side wagers are closed when the RNG is activated; none is accepted "
    "or changed after (NY 5324.41(j)(2)(i), NJ 13:69F-11.8C(b)1)"
)

PHASE = Phase(
    name="start",
    states={
        RNG: StateSpec(
            lights_locked,
            glyph_start,
            on_enter=request_draw,
            waiting=request_draw,
            deadline=deadline(RNG),
        ),
        DICE: LOCKED_IN,
        SIDE_WAGERS: LOCKED_IN,
    },
    transitions=[
        Transition("rng_activated", LOCKED_OUT, RNG, _ACTIVATION, before=[activate]),
        # the dealer panel's NEXT in LockedOut once the chip count is confirmed (betting.py)
        Transition(
            "panel_next",
            LOCKED_OUT,
            RNG,
            [is_counted, *_ACTIVATION],
            prepare=[as_event(_activation_by_panel)],
            before=[activate],
        ),
        Transition("rng_drawn", RNG, SIDE_WAGERS, [side_wager_offered, one_draw], before=[drawn]),
        Transition("rng_drawn", RNG, DEALING, [no_side_wager, one_draw], before=[drawn]),
        Transition("rng_drawn", FAULT, None, [draw_outstanding], before=[keep_draw]),
        Transition("rng_void", SIDE_WAGERS, RNG, [number_not_ridden], before=[void_draw]),
        Transition(
            "panel_void",
            SIDE_WAGERS,
            RNG,
            [key_turned("VOID", "voids the RNG draw"), number_not_ridden],
            prepare=[as_event(_void_by_panel)],
            before=[void_draw],
        ),
        Transition("shake_detected", DICE, None, [lid_on], before=[shaken]),
        Transition("lid_lifted_by_bank", DICE, None, [player_banks], before=[bank_lifted_lid]),
        # the shaker's lid sensor, reported in every state: in Dice a lift before three shakes
        # requires a re-shake; anywhere else (and any other lift) it changes nothing
        Transition("shaker_lid", DICE, None, [lid_lifted_early], before=[reshake]),
        Transition("shaker_lid", EVERYWHERE, before=[lid_moved]),
        Transition("dice_position_entered", DICE, DEALING, [three_shakes], before=[dice_total]),
        Transition(
            "side_wagers", LOCKED_OUT, None, [side_wager_at_table, bets_valid], before=[record_bets]
        ),
        Transition(
            "side_wagers_settled",
            SIDE_WAGERS,
            DEALING,
            [side_wagers_recorded],
            before=[settle_side_wagers],
        ),
        Transition(
            "panel_next",
            SIDE_WAGERS,
            DEALING,
            [side_wagers_recorded],
            before=[settle_side_wagers],
        ),
    ],
    untimely=[Untimely("side_wagers", IN_ROUND_AFTER_LOCKOUT, "late", _LATE_SIDE_WAGER)],
)
