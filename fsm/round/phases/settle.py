"""The settle phase: Settlement, JackpotPending and RoundComplete. Progressive outcomes the
dealer enters, hits validated or voided by a supervisor in the payment order at the meter of the
moment, the linked pool's locked payouts, and the round's completion
(NY 5324.41(g)(7)-(8), (k)(3)-(6); NY 5321.18(b)(3); docs/link.md).

``round_completed``: when a round is done the machine enters Open_RoundComplete and emits
``post {"event": {"type": "round_completed", "data": {"round_id": n}}}``. The owner posts that
event like any input (ahead of the queue); it is journaled as an entry of type ``round_completed``
(the journal counts those as rounds) with the ``round_summary`` effect and moves the round on to
Open_Betting, or Open_Shuffling when the deck is due. After a restart in Open_RoundComplete
``outputs()`` asks for it again.

Must never pay a hit out of the payment order, nor a hit of the linked level before the link
controller locked its amount.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fsm.round.context import Resolution, Round
from fsm.round.effects import (
    Alert,
    Effect,
    HitCorrectedEffect,
    HitPending,
    HitVoidedEffect,
    Outcome,
    PaidFrom,
    Pay,
    Post,
    PostedEvent,
)
from fsm.round.events import (
    HitAdjusted,
    HitCorrected,
    HitValidated,
    HitVoided,
    LinkHitLocked,
    ProgressiveOutcome,
)
from fsm.round.phase import Action, Guard, Phase, StateSpec, Step, Transition, as_event
from fsm.round.phases.shared import (
    LOCKED_IN,
    PANEL,
    a_hit_pending,
    first_pending,
    glyph,
    glyph_start,
    key_turned,
    lights_locked,
    panel_supervisor,
)
from fsm.round.states import BETTING, JACKPOT_PENDING, ROUND_COMPLETE, SETTLEMENT, SHUFFLING
from fsm.round.vocabulary import PENDING, LightState


def lights_pending(c: Round) -> list[LightState]:
    lights = lights_locked(c)
    for p in c.r.pending:
        lights[p["position"] - 1] = "blink"
    return lights


def request_round_completed(c: Round) -> list[Effect]:
    return [Post(PostedEvent("round_completed", {"round_id": c.round_id}))]


# --- progressive outcomes entered by the dealer


def wagered(s: Step) -> bool:
    area = s.e.position
    return area in s.c.r.wagers or s.refuse(
        f"position {area}: no progressive wager (acceptor light not lit, (k)(3)(i))"
    )


def not_entered(s: Step) -> bool:
    area = s.e.position
    return area not in s.c.r.outcomes or s.refuse(f"position {area}: outcome already entered")


def line_of_table(s: Step) -> bool:
    line = s.e.line or None
    names = s.c.config.table.line_names
    return (
        line is None
        or line in names
        or s.refuse(f"line: not a line of the pay table; lines: {', '.join(names)}", "invalid")
    )


def outcomes_outstanding(s: Step) -> bool:
    return len(s.c.r.outcomes) + 1 < len(s.c.r.wagers)


def record_outcome(s: Step) -> None:
    e: ProgressiveOutcome = s.e
    line = e.line or None
    s.c.r.outcomes[e.position] = line
    s.c.emit(Outcome(e.position, line))


def _last_outcome(s: Step) -> Resolution:
    e: ProgressiveOutcome = s.e
    return s.c.resolution({**s.c.r.outcomes, e.position: e.line or None})


def entered_hits_pending(s: Step) -> bool:
    return bool(s.once("resolution", lambda: _last_outcome(s)).pending)


def settle_entered_outcomes(s: Step) -> None:
    s.c.resolve(s.once("resolution", lambda: _last_outcome(s)))


_OUTCOME = [wagered, not_entered, line_of_table]

# --- hits validated or voided by a supervisor


def first_in_order(what: str) -> Guard:
    """The hit at the event's position is the next to be paid (NY 5324.41(g)(7), (k)(6))."""

    def first(s: Step) -> bool:
        area, pending = s.e.position, s.c.r.pending
        if pending and pending[0]["position"] == area:
            return True
        if any(p["position"] == area for p in pending):
            return s.refuse(
                f"{what} position {pending[0]['position']} first: winners are paid from the "
                "dealer's right, counter-clockwise (NY 5324.41(g)(7)), each at the meter of its "
                "moment (k)(6)"
            )
        return s.refuse(f"position {area}: no hit awaits validation")

    first.__name__ = f"first_in_order_to_{what.split()[0]}"
    return first


def of_linked_level(s: Step) -> bool:
    return bool(s.c.r.pending[0]["level"] == s.c.linked_level())


def lock_known(s: Step) -> bool:
    """NY 5321.18(b)(3): a hit of the linked level is paid the amount the link controller locked
    from the pool's meter, never before it is journaled."""
    return "locked_cents" in s.c.r.pending[0] or s.refuse(
        f"position {s.e.position}: the link controller has not locked the linked pool's payout yet"
    )


def pay(s: Step) -> None:
    """NY (g)(8), (k)(6): the best line decided now, at the meter of the time of payment."""
    e: HitValidated = s.e
    c = s.c
    hit = c.r.pending[0]
    c.pay_hit(e.position, c.candidate_lines(e.position, hit["line"]), e.supervisor, e.via)
    c.r.pending.pop(0)
    c.advance()


def pay_linked(s: Step) -> None:
    """Exactly what the link controller locked: its line (the best of the hand's lines at the
    pool's meter, NY 5324.41(g)(8)) and amount, from the pool's meter (which the lock deducted
    and reset) or, for a fixed amount (k)(5) keeps off the meter, from the chip tray. The
    table's own meter of the level is never deducted (the pool's is the level's one meter)."""
    e: HitValidated = s.e
    c, r = s.c, s.c.r
    hit = r.pending[0]
    payout = int(hit["locked_cents"])
    line = str(hit.get("locked_line") or hit["line"])
    source: PaidFrom = "chip_tray" if hit.get("locked_from") == "chip_tray" else "meter"
    lm = c.meters[hit["level"]]
    r.outcomes[e.position] = line
    if source == "chip_tray":
        lm.pay_from_tray(payout)
    else:
        lm.hits += 1
        lm.wins += 1
        lm.paid_cents += payout
        lm.meter_paid_cents += payout
        lm.record_hit(
            {
                "table": c.config.table_id,
                "position": e.position,
                "level": hit["level"],
                "line": line,
                "amount_cents": payout,
                "time_ms": c.now,
                "round_id": c.round_id,
                "supervisor": e.supervisor,
                "pool": (c.link or {}).get("pool"),
                "order": hit.get("lock_order"),
            }
        )
    corrects = hit.get("corrects")  # a corrected line's pay names the voided line
    c.emit(Pay(e.position, hit["level"], line, payout, source, e.supervisor, e.via, None, corrects))
    r.paid.append(
        {**hit, "line": line, "cents": payout, "from": source, "supervisor": e.supervisor}
    )
    r.pending.pop(0)
    c.advance()


JP, RC = JACKPOT_PENDING, ROUND_COMPLETE


def settles_round(*actions: Action) -> Guard:
    """After ``actions`` (the row's own) nothing waits: the round is complete. Tried on the round
    and put back (`Round.trial`): a payment moves the meter, which decides how the hits after it
    are paid (NY (k)(6))."""

    def done(s: Step) -> bool:
        def after() -> bool:
            for act in actions:
                act(s)
            return not s.c.r.pending

        return bool(s.once(f"settles:{actions[0].__name__}", lambda: s.c.trial(after)))

    done.__name__ = f"settles_round_after_{actions[0].__name__}"
    return done


def validation_rows(
    trigger: str, pre: Sequence[Guard] = (), prepare: Sequence[Action] = ()
) -> list[Transition]:
    first = [*pre, first_in_order("validate")]
    linked = [*first, of_linked_level, lock_known]
    own, pool = [pay], [pay_linked]
    return [
        Transition(trigger, JP, RC, [*first, settles_round(pay)], [of_linked_level], own, prepare),
        Transition(trigger, JP, None, first, [of_linked_level], own, prepare),
        Transition(
            trigger, JP, RC, [*linked, settles_round(pay_linked)], before=pool, prepare=prepare
        ),
        Transition(trigger, JP, None, linked, before=pool, prepare=prepare),
    ]


def void_allowed(s: Step) -> bool:
    """A supervisor voids a pending hit: not a winner, or (``line``) a winner of the right line,
    higher or lower, which is paid at once in the supervisor's name at the meter as it stands
    (NY (k)(3)(ii), (k)(6)): a payment, so only for the hit next in the payment order. A
    corrected line paid from the meter of the linked level is the pool's money: it becomes a
    pending hit of its own at the position (``corrects`` the voided line), which the link
    controller locks and a supervisor validates as any linked hit ((k)(3)(iii),
    NY 5321.18(b)(3)(iii))."""
    e: HitVoided = s.e
    corrected = e.line or None
    pending = s.c.r.pending
    if corrected is None:
        found = next((i for i, p in enumerate(pending) if p["position"] == e.position), None)
        if found is None:
            return s.refuse(f"position {e.position}: no hit awaits validation")
        s.memo["void"] = (found, None)
        return True
    if not first_in_order("void (with a corrected line)")(s):
        return False
    names = s.c.config.table.line_names
    if corrected not in names:
        return s.refuse(f"line: not a line of the pay table; lines: {', '.join(names)}", "invalid")
    if corrected == pending[0]["line"]:
        return s.refuse(
            f"line: {corrected} is the line voided: a corrected line is another line of the pay "
            "table, higher or lower (NY 5324.41(k)(3)(ii))"
        )
    s.memo["void"] = (0, s.c.linked_meter_hit(e.position, corrected))
    return True


def hit_stays(s: Step) -> bool:
    """JackpotPending lasts while another hit waits, or the corrected line awaits a lock."""
    return not settles_round(void_hit)(s)


def void_hit(s: Step) -> None:
    e: HitVoided = s.e
    c, r = s.c, s.c.r
    idx, relock = s.memo["void"]
    corrected = e.line or None
    hit = r.pending.pop(idx)
    r.outcomes[e.position] = corrected
    c.emit(
        HitVoidedEffect(
            e.position, hit["level"], hit["line"], e.supervisor, e.reason, e.via, corrected
        )
    )
    to = f"; pays {corrected}" if corrected else ""
    if relock is not None:
        to = f"; {corrected} awaits the link controller's lock"
    detail = f"position {e.position} {hit['line']} voided by {e.supervisor}: {e.reason}{to}"
    c.emit(Alert("supervisor", "HIT_VOIDED", detail[:200]))
    if relock is not None:
        r.pending.insert(0, {**relock, "corrects": hit["line"]})
        c.emit(HitPending(e.position, relock["level"], relock["line"]))
    elif corrected is not None:
        lines = c.config.table.implied(corrected)
        c.pay_hit(e.position, lines, e.supervisor, e.via, voided_line=hit["line"])
    c.advance()


def void_rows(
    trigger: str, pre: Sequence[Guard] = (), prepare: Sequence[Action] = ()
) -> list[Transition]:
    guards = [*pre, void_allowed]
    return [
        Transition(
            trigger, JACKPOT_PENDING, None, [*guards, hit_stays], before=[void_hit], prepare=prepare
        ),
        Transition(
            trigger, JACKPOT_PENDING, ROUND_COMPLETE, guards, before=[void_hit], prepare=prepare
        ),
    ]


# --- corrections before payment, adjustments after (NY (k)(3)(ii))


def correctable(s: Step) -> bool:
    """A position's line may be corrected until it is paid: a wagered position whose outcome is
    entered and not yet paid (Settlement: entered; JackpotPending: waiting its turn, or lost)."""
    e: HitCorrected = s.e
    c, area = s.c, s.e.position
    if area not in c.r.wagers:
        return s.refuse(
            f"position {area}: no progressive wager (acceptor light not lit, (k)(3)(i))"
        )
    if area not in c.r.outcomes:
        return s.refuse(f"position {area}: no outcome entered yet; enter it (progressive_outcome)")
    if any(p["position"] == area for p in c.r.paid):
        return s.refuse(
            f"position {area}: already paid; a correction after payment is an adjustment "
            "(hit_adjusted, once the round is complete, NY 5324.41(k)(3)(ii))"
        )
    line = e.line or None
    names = c.config.table.line_names
    if line is not None and line not in names:
        return s.refuse(f"line: not a line of the pay table; lines: {', '.join(names)}", "invalid")
    if line == c.r.outcomes.get(area):
        return s.refuse(f"line: position {area} is already {line or 'no win'}")
    return True


def correct_entered(s: Step) -> None:
    """Settlement: the entered outcome is replaced (nothing is paid before the last one)."""
    e: HitCorrected = s.e
    r = s.c.r
    was = r.outcomes.get(e.position)
    r.outcomes[e.position] = e.line or None
    s.c.emit(HitCorrectedEffect(e.position, was, e.line or None, e.supervisor, e.reason, e.via))


def correct_queued(s: Step) -> None:
    """JackpotPending: the hit takes its place in the payment order with its right line (or
    leaves it: no win); the hits first in the order that need no validation are paid."""
    e: HitCorrected = s.e
    c = s.c
    was = c.r.outcomes.get(e.position)
    line = e.line or None
    c.r.outcomes[e.position] = line
    c.emit(HitCorrectedEffect(e.position, was, line, e.supervisor, e.reason, e.via))
    c.queue_hit(e.position, line)
    c.advance()


def adjustable(s: Step) -> bool:
    """After payment: a position of the round just completed, while its data is kept (Shuffling,
    before the next round's betting opens)."""
    e: HitAdjusted = s.e
    c = s.c
    if not c.round_done:  # (the machine refuses a round_id that is not c.round_id)
        return s.refuse("no round was completed since the table opened: nothing to adjust")
    if e.position not in c.r.wagers:
        return s.refuse(f"position {e.position}: no progressive wager in round {e.round_id}")
    line = e.line or None
    names = c.config.table.line_names
    if line is not None and line not in names:
        return s.refuse(f"line: not a line of the pay table; lines: {', '.join(names)}", "invalid")
    if line == c.r.outcomes.get(e.position):
        return s.refuse(f"line: position {e.position} was settled as {line or 'no win'}")
    return True


def adjust(s: Step) -> None:
    e: HitAdjusted = s.e
    s.c.adjust(e.position, e.line or None, e.supervisor, e.reason, e.via)


def _validation_by_panel(s: Step) -> HitValidated:
    return HitValidated(first_pending(s.c), panel_supervisor(s.c), PANEL)


def _void_by_panel(s: Step) -> HitVoided:
    return HitVoided(first_pending(s.c), panel_supervisor(s.c), "voided at the dealer panel", PANEL)


# --- the linked pool's lock of a pending hit


def lock_matches(s: Step) -> bool:
    """The pool's amount for a pending hit of the linked level, locked once by the controller."""
    e: LinkHitLocked = s.e
    c = s.c
    if c.link is None or c.link.get("level") != e.level or c.link.get("pool") != e.pool:
        return s.refuse(f"level {e.level!r} is not linked to pool {e.pool!r} at this table")
    hit = next((p for p in c.r.pending if p["position"] == e.position), None)
    if hit is None or hit["level"] != e.level:
        return s.refuse(f"position {e.position}: no pending hit of level {e.level}")
    if e.line is not None and e.line != hit["line"]:  # a lock of the hit a supervisor voided
        return s.refuse(f"position {e.position}: the hit pending is {hit['line']}, not {e.line}")
    if "locked_cents" in hit:
        return s.refuse(f"position {e.position}: already locked at {hit['locked_cents']} cents")
    lines = hit.get("lines") or c.config.table.implied(hit["line"])
    if e.paid_line is not None and e.paid_line not in lines:
        return s.refuse(
            f"position {e.position}: the pool locked {e.paid_line}, not a line this hand makes "
            f"({', '.join(lines)})"[:200]
        )
    s.memo["hit"] = hit
    return True


def lock(s: Step) -> None:
    """The pool's decision, as locked: amount, order, the line it paid and from where."""
    e: LinkHitLocked = s.e
    hit: dict[str, Any] = s.memo["hit"]
    hit["locked_cents"] = e.cents
    hit["lock_order"] = e.order
    if e.paid_line is not None:
        hit["locked_line"] = e.paid_line
    if e.paid_from is not None:
        hit["locked_from"] = e.paid_from


# --- the round's completion


def deck_lasts(s: Step) -> bool:
    """The deck deals another round; once ``rounds_per_shuffle`` rounds are done it is due."""
    return s.c.rounds_since_shuffle + 1 < s.c.config.rounds_per_shuffle


def complete(s: Step) -> None:
    c = s.c
    c.emit(c.summary("completed"))
    c.bank.round_finished()
    c.rounds_since_shuffle += 1
    c.round_done = True


def next_round(s: Step) -> None:
    s.c.begin_round()


PHASE = Phase(
    name="settle",
    states={
        SETTLEMENT: LOCKED_IN,
        JACKPOT_PENDING: StateSpec(lights_pending, glyph(PENDING)),
        ROUND_COMPLETE: StateSpec(
            lights_locked,
            glyph_start,
            on_enter=request_round_completed,
            waiting=request_round_completed,
        ),
    },
    transitions=[
        Transition(
            "progressive_outcome",
            SETTLEMENT,
            None,
            [*_OUTCOME, outcomes_outstanding],
            before=[record_outcome],
        ),
        Transition(
            "progressive_outcome",
            SETTLEMENT,
            JACKPOT_PENDING,
            [*_OUTCOME, entered_hits_pending],
            before=[settle_entered_outcomes],
        ),
        Transition(
            "progressive_outcome",
            SETTLEMENT,
            ROUND_COMPLETE,
            _OUTCOME,
            before=[settle_entered_outcomes],
        ),
        *validation_rows("hit_validated"),
        *validation_rows(
            "panel_next",
            [key_turned("NEXT", "validates the pending hit"), a_hit_pending],
            [as_event(_validation_by_panel)],
        ),
        *void_rows("hit_voided"),
        *void_rows(
            "panel_void",
            [key_turned("VOID", "voids the pending hit"), a_hit_pending],
            [as_event(_void_by_panel)],
        ),
        Transition("link_hit_locked", JACKPOT_PENDING, None, [lock_matches], before=[lock]),
        Transition("hit_corrected", SETTLEMENT, None, [correctable], before=[correct_entered]),
        Transition(
            "hit_corrected",
            JACKPOT_PENDING,
            ROUND_COMPLETE,
            [correctable, settles_round(correct_queued)],
            before=[correct_queued],
        ),
        Transition("hit_corrected", JACKPOT_PENDING, None, [correctable], before=[correct_queued]),
        Transition("hit_adjusted", SHUFFLING, None, [adjustable], before=[adjust]),
        # (step refuses a round_id that is not the round in play: "wrong_round")
        Transition(
            "round_completed", ROUND_COMPLETE, BETTING, [deck_lasts], before=[complete, next_round]
        ),
        Transition("round_completed", ROUND_COMPLETE, SHUFFLING, before=[complete]),
    ],
)
