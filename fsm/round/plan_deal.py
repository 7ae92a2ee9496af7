"""Planners for dealing, play and settlement: the shoe's report (cards remaining, a reading shoe's
hidden hands), the three-card stacks, play complete (the dealer's hand by the house way, the EZ
pai gow queen dragon), progressive outcomes, hits validated or voided
at the meter of the moment, and the round's completion (NY 5324.41(f)(3), (k)(3)-(6), (n)).

Must never let a card identity into an effect.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fsm.round import states as S
from fsm.round.checks import Plan, _invalid, _Reject
from fsm.round.constants import CARDS_PER_HAND, STACKS
from fsm.round.context import Round
from fsm.round.effects import (
    Alert,
    DealerHand,
    Dispense,
    HitPending,
    HitVoidedEffect,
    Outcome,
    Pay,
)
from fsm.round.events import (
    Dealt,
    HitValidated,
    HitVoided,
    ProgressiveOutcome,
    RoundCompleted,
)
from fsm.round.plan_start import _SEAT_KEYS
from fsm.rules.cards import DECK_SIZE, JOKER, CardError, parse_card
from fsm.rules.settlement import is_queen_dragon


def _read_card(seat: int, c: Any) -> int:
    if isinstance(c, bool):
        raise _invalid(f"hands: seat {seat} holds something that is not a card")
    if isinstance(c, int) and 0 <= c <= JOKER:
        return c
    if isinstance(c, str):
        try:
            return parse_card(c)
        except CardError:
            raise _invalid(f"hands: seat {seat} holds something that is not a card") from None
    raise _invalid(f"hands: seat {seat} holds something that is not a card")


def _parse_hands(
    m: Round, d: Dealt, size: int, seen: Iterable[int] = ()
) -> dict[int, list[int]] | None:
    """The cards of one dispense from a card-reading shoe, keyed by seat: ``hands`` maps each
    seat dealt to ``size`` cards, or ``stacks`` lists the stacks in the order dispensed, mapped
    by the delivery order (every seat from the starting position; with the three-card bonus the
    pai gow positions farthest left first, then the dealer). Cards already ``seen`` (the
    three-card stacks) may not appear again. Reasons never name a card."""
    hands_raw = d.hands
    stacks_raw = d.stacks
    if hands_raw is None and stacks_raw is None:
        return None
    order = m.delivery_seats()
    seats: dict[int, Any] = {}
    if hands_raw is not None:
        if not isinstance(hands_raw, Mapping):
            raise _invalid(f"hands: must map positions 1..6 and 'dealer' to {size} cards")
        for k, v in hands_raw.items():
            key = str(k)
            seat = _SEAT_KEYS.get(key)
            if seat is None:
                raise _invalid(f"hands: key {key[:10]!r} is not a position 1..6 or 'dealer'")
            seats[seat] = v
        if set(seats) != set(order):
            if len(order) == STACKS:
                raise _invalid("hands: need all 7 seats (dealer and areas 1..6)")
            raise _invalid(
                f"hands: need exactly the seats dealt: {', '.join(map(str, order[:-1]))} and "
                "'dealer' (NY 5324.41(n)(5))"
            )
    else:
        if not isinstance(stacks_raw, list) or len(stacks_raw) != len(order):
            raise _invalid(f"stacks: must be the {len(order)} stacks in the order dispensed")
        seats = dict(zip(order, stacks_raw, strict=True))
    out: dict[int, list[int]] = {}
    known: set[int] = set(seen)
    for seat, cards in sorted(seats.items()):
        if not isinstance(cards, list) or len(cards) != size:
            raise _invalid(f"hands: seat {seat} must have {size} cards")
        hand: list[int] = []
        for c in cards:
            card = _read_card(seat, c)
            if card in known:
                raise _invalid("hands: a card appears twice")
            known.add(card)
            hand.append(card)
        out[seat] = hand
    return out


def _p_dealt(m: Round, d: Dealt) -> Plan:
    """The shoe's report of a dispense. Without the three-card bonus 7 stacks of 7 leave 4 cards.
    With it the stacks go to the p pai gow positions and the dealer: 53 - 3(p + 1) cards remain
    after the threes ((n)(4)-(5)), 53 - 7(p + 1) after the fours ((n)(7)(ii)): 4 only with six
    players. Any other count is a misdeal fault."""
    remaining = d.remaining
    r = m.r
    if r.stage == "three_dealt":
        raise _Reject("the three-card stacks await three_card_settled")
    if r.stage in ("three", "four"):
        per = 3 if r.stage == "three" else CARDS_PER_HAND
        expected = DECK_SIZE - per * len(m.delivery_seats())
    else:
        expected = DECK_SIZE - STACKS * CARDS_PER_HAND
    if remaining != expected:

        def fault() -> None:
            m.enter_fault(
                f"MISDEAL_REMAINING_{remaining}",
                "shoe",
                f"{remaining} cards remain in the shoe, {expected} expected",
                S.DEALING,
            )

        return S.FAULT, fault
    if r.stage == "three":
        threes = _parse_hands(m, d, 3)

        def three() -> None:
            r.stage = "three_dealt"
            r.threes = threes or {}
            m.deadline = None  # the dealer settles the three-card bonus: no device to wait on

        return S.INTERNAL, three
    if r.stage == "four":
        seen = [c for cards in r.threes.values() for c in cards]
        fours = _parse_hands(m, d, CARDS_PER_HAND - 3, seen)
        hands = (
            {seat: r.threes[seat] + cards for seat, cards in fours.items()}
            if fours is not None and r.threes
            else None
        )
    else:
        hands = _parse_hands(m, d, CARDS_PER_HAND)

    def act() -> None:
        r.stage = "dealt"
        r.threes = {}
        if hands is not None:
            r.hands = hands

    return S.PLAY, act


def _p_three_card_settled(m: Round, d: object) -> Plan:
    if m.r.stage != "three_dealt":
        raise _Reject("no three-card stacks have been dealt")

    def act() -> None:
        m.r.stage = "four"
        m.deadline = [m.now + m.config.dispense_timeout_ms, "SHOE_TIMEOUT", "shoe"]
        # NY 5324.41(n)(7)(ii): stacks of four to the same seats, farthest left first, dealer last
        stacks = len(m.delivery_seats())
        m.emit(Dispense(stacks, CARDS_PER_HAND - 3))

    return S.INTERNAL, act


def _dealer_hand(m: Round) -> DealerHand | None:
    """With a card-reading shoe the dealer's seven cards are known when play completes: the
    dealer's hand set by the configured house way (NY 5324.41(g)(1), NJ 13:69F-11.9(c)) and,
    with EZ pai gow, whether the banking hand's seven cards (the dealer's, or the player bank's)
    are a queen dragon, which pushes every pai gow wager (NJ 13:69F-11.9(h)3). The effect names
    the house way and the rule applied, never a card."""
    hands = m.r.hands
    cards = hands.get(0)
    if cards is None:
        return None
    cfg = m.config
    decision = cfg.way.explain(cards, cfg.ranking)
    bank = m.bank.current
    banking = hands.get(bank) if bank is not None else cards
    dragon = cfg.ez_pai_gow and banking is not None and is_queen_dragon(banking)
    return DealerHand(
        house_way=cfg.house_way,
        rule=decision.rule.split(":")[0],
        ez_pai_gow=cfg.ez_pai_gow,
        bank=bank,
        queen_dragon=dragon,
        pai_gow_wagers="push" if dragon else "settle",
    )


def _p_play_complete(m: Round, d: object) -> Plan:
    r = m.r
    dealer = _dealer_hand(m) if r.hands else None

    def emit_dealer() -> None:
        if dealer is not None:
            m.emit(dealer)

    if not r.wagers:
        return S.ROUND_COMPLETE, emit_dealer
    if not r.hands:
        return S.SETTLEMENT, lambda: None
    outcomes: dict[int, str | None] = {}
    for area in r.wagers:
        # the best line now, each line at its own level's meter (NY (g)(8), (k)(6)); decided
        # again when the hit is paid
        best = m.best_now(m.config.table.claims(r.hands[area], m.config.ranking))
        outcomes[area] = None if best is None else best[0]
    route, act = m.resolution(outcomes)

    def apply() -> None:
        emit_dealer()
        act()

    return route, apply


def _p_progressive_outcome(m: Round, d: ProgressiveOutcome) -> Plan:
    area = d.position
    r = m.r
    if area not in r.wagers:
        raise _Reject(f"position {area}: no progressive wager (acceptor light not lit, (k)(3)(i))")
    if area in r.outcomes:
        raise _Reject(f"position {area}: outcome already entered")
    line = d.line or None
    if line is not None and line not in m.config.table.line_names:
        raise _invalid(
            f"line: not a line of the pay table; lines: {', '.join(m.config.table.line_names)}"
        )
    if len(r.outcomes) + 1 < len(r.wagers):

        def one() -> None:
            r.outcomes[area] = line
            m.emit(Outcome(area, line))

        return S.INTERNAL, one
    return m.resolution({**r.outcomes, area: line})


def _first_in_order(m: Round, area: int, what: str) -> dict[str, Any]:
    """The pending hit at ``area`` when it is the next to be paid; refused otherwise."""
    r = m.r
    if not r.pending or r.pending[0]["position"] != area:
        if any(p["position"] == area for p in r.pending):
            first = r.pending[0]["position"]
            raise _Reject(
                f"{what} position {first} first: winners are paid from the dealer's right, "
                "counter-clockwise (NY 5324.41(g)(7)), each at the meter of its moment (k)(6)"
            )
        raise _Reject(f"position {area}: no hit awaits validation")
    return r.pending[0]


def _p_hit_validated(m: Round, d: HitValidated) -> Plan:
    area = d.position
    sup = d.supervisor
    r = m.r
    hit = _first_in_order(m, area, "validate")
    if hit["level"] == m.linked_level():
        return _pay_linked(m, d, hit)

    def act() -> None:
        # NY (g)(8), (k)(6): the best line decided now, at the meter of the time of payment
        m.pay_hit(area, m.candidate_lines(area, hit["line"]), sup, d.via)
        r.pending.pop(0)

    return (S.INTERNAL if len(r.pending) > 1 else S.ROUND_COMPLETE), act


def _pay_linked(m: Round, d: HitValidated, hit: dict[str, Any]) -> Plan:
    """A hit of the linked level: paid the amount the link controller locked from the pool's
    meter (docs/link.md), which also reset the pool; the table's own meter of the level is not
    deducted (the pool's is). Refused until the lock is journaled (NY 5321.18(b)(3))."""
    area, sup, r = d.position, d.supervisor, m.r
    if "locked_cents" not in hit:
        raise _Reject(
            f"position {area}: the link controller has not locked the linked pool's payout yet"
        )
    payout = int(hit["locked_cents"])

    def act() -> None:
        lm = m.meters[hit["level"]]
        lm.hits += 1
        lm.wins += 1
        lm.paid_cents += payout
        lm.meter_paid_cents += payout
        lm.record_hit(
            {
                "table": m.config.table_id,
                "position": area,
                "level": hit["level"],
                "line": hit["line"],
                "amount_cents": payout,
                "time_ms": m.now,
                "round_id": m.round_id,
                "supervisor": sup,
                "pool": (m.link or {}).get("pool"),
                "order": hit.get("lock_order"),
            }
        )
        corrects = hit.get("corrects")  # a corrected line's pay names the voided line
        m.emit(Pay(area, hit["level"], hit["line"], payout, "meter", sup, d.via, None, corrects))
        r.paid.append({**hit, "cents": payout, "from": "meter", "supervisor": sup})
        r.pending.pop(0)

    return (S.INTERNAL if len(r.pending) > 1 else S.ROUND_COMPLETE), act


def _p_hit_voided(m: Round, d: HitVoided) -> Plan:
    """A supervisor voids a pending hit: not a winner, or (``line``) a winner of the right,
    lower line, which is paid at once in the supervisor's name (NY (k)(3)(ii)): a payment, so
    only for the hit next in the payment order. A corrected line paid from the meter of the
    linked level is the pool's money: it becomes a pending hit of its own at the position
    (``corrects`` the voided line), which the link controller locks and a supervisor validates
    as any linked hit ((k)(3)(iii), NY 5321.18(b)(3)(iii))."""
    area, sup, reason = d.position, d.supervisor, d.reason
    r = m.r
    corrected = d.line or None
    table = m.config.table
    if corrected is not None:
        hit = _first_in_order(m, area, "void (with a corrected line)")
        if corrected not in table.line_names:
            lines = ", ".join(table.line_names)
            raise _invalid(f"line: not a line of the pay table; lines: {lines}")
        if table.line_names.index(corrected) <= table.line_names.index(hit["line"]):
            raise _Reject(
                f"line: {corrected} is not below {hit['line']} in the pay table: a corrected "
                "line is the right, lower line (NY 5324.41(k)(3)(ii))"
            )
        idx = 0
        relock = m.linked_meter_hit(area, corrected)
    else:
        relock = None
        found = next((i for i, p in enumerate(r.pending) if p["position"] == area), None)
        if found is None:
            raise _Reject(f"position {area}: no hit awaits validation")
        idx = found

    def act() -> None:
        hit = r.pending.pop(idx)
        r.outcomes[area] = corrected
        m.emit(HitVoidedEffect(area, hit["level"], hit["line"], sup, reason, d.via, corrected))
        to = f"; pays {corrected}" if corrected else ""
        if relock is not None:
            to = f"; {corrected} awaits the link controller's lock"
        m.emit(
            Alert(
                "supervisor",
                "HIT_VOIDED",
                f"position {area} {hit['line']} voided by {sup}: {reason}{to}"[:200],
            )
        )
        if relock is not None:
            r.pending.insert(0, {**relock, "corrects": hit["line"]})
            m.emit(HitPending(area, relock["level"], relock["line"]))
        elif corrected is not None:
            m.pay_hit(area, table.implied(corrected), sup, d.via, voided_line=hit["line"])

    stays = len(r.pending) > 1 or relock is not None
    return (S.INTERNAL if stays else S.ROUND_COMPLETE), act


def _p_round_completed(m: Round, d: RoundCompleted) -> Plan:
    # (step has refused a round_id that is not the round in play: "wrong_round")
    due = m.rounds_since_shuffle + 1 >= m.config.rounds_per_shuffle

    def act() -> None:
        m.emit(m.summary("completed"))
        m.bank.round_finished()
        m.rounds_since_shuffle += 1
        m.round_done = True
        if not due:
            m.begin_round()

    return (S.SHUFFLING if due else S.BETTING), act
