"""The simulated table's console narration: one line a dealer can read per event of the round.

`Narrator` is a subscriber of the journal's tail (typed committed entries, like every reader of
committed entries) and turns each new entry into words: chips and the acceptor lights, "no
more bets", the starting position, the deal, faults and their clearing, the progressive outcome,
hits and payouts, the trainer's practice deals and injected faults. Card identities are shown
only once the round is resolved (its ``round_summary``): then each seat's seven cards, the house
way's setting and how each hand did against the banker (players set by the house way, as the
scripted players do). Every line of a training journal starts with ``TRAINING``.

Simulation only. Must never read or write the journal itself, post an event or decide a game
rule: hands are set and settled by ``fsm.rules`` exactly as the dealer would.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.journal.tail import Committed, JournalTail, Subscription
from fsm.round.effects import StartingPosition
from fsm.rules.cards import Card, CardError, format_cards, parse_card
from fsm.rules.houseway import HouseWay
from fsm.rules.ranking import DEFAULT_OPTIONS, RankingOptions
from fsm.rules.settlement import settle

PREFIX = "TRAINING"


def _dollars(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def _seat(seat: int) -> str:
    return "dealer" if seat == 0 else f"area {seat}"


def lights_words(states: Sequence[str]) -> str:
    """``["lit", "off", ...]`` as ``lit 1; off 2-6``: each state with its areas."""
    groups: dict[str, list[int]] = {}
    for i, state in enumerate(states, start=1):
        groups.setdefault(str(state), []).append(i)
    return "; ".join(f"{state} {', '.join(map(str, areas))}" for state, areas in groups.items())


class Narrator:
    """Words each committed entry after ``after_seq``: `attach` it to the journal's tail (then
    `new_lines` returns the lines of the entries committed since the last call), or hand it
    entries with `take` (a finished journal: ``take(read_committed(db))``). Entries at or
    before ``after_seq`` are not worded, but the cards they dealt are noted (a round resumed
    after a restart is shown whole when it resolves)."""

    def __init__(
        self,
        way: HouseWay | None = None,
        opts: RankingOptions = DEFAULT_OPTIONS,
        *,
        after_seq: int = 0,
        training: bool = True,
    ) -> None:
        self._way = way or HouseWay.load()
        self._opts = opts
        self.after_seq = after_seq
        self.seq = 0
        self._prefix = f"{PREFIX} " if training else ""
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._rounds: dict[int, _RoundCards] = {}
        self._tail: JournalTail | None = None
        self._subscription: Subscription | None = None

    def attach(self, tail: JournalTail, from_seq: int) -> None:
        """Follow ``tail`` from ``from_seq`` on (noting cards, wording after ``after_seq``)."""
        self._tail = tail
        self._subscription = tail.subscribe("narrator", self._take, from_seq)

    def close(self) -> None:
        if self._tail is not None and self._subscription is not None:
            self._tail.unsubscribe(self._subscription)
        self._tail = self._subscription = None

    def _take(self, batch: Sequence[Committed], public: object) -> None:
        lines = self.take(batch)
        with self._lock:
            self._lines.extend(lines)

    def new_lines(self) -> list[str]:
        """The lines of every entry the tail handed since the last call."""
        with self._lock:
            lines, self._lines = self._lines, []
        return lines

    def take(self, entries: Iterable[Committed]) -> list[str]:
        """The lines of ``entries`` (in seq order)."""
        out: list[str] = []
        for c in entries:
            self.seq = c.seq
            self._note_cards(c)
            if c.seq <= self.after_seq:
                continue
            lines = self.entry_lines(c.round_id, c.type, c.data, c.effects)
            out.extend(f"{self._prefix}{line}" for line in lines)
        return out

    # ------------------------------------------------------------------ words per entry
    def entry_lines(
        self,
        round_id: int,
        etype: str,
        data: Mapping[str, Any],
        effects: Sequence[Mapping[str, Any]],
    ) -> Iterator[str]:
        kinds = {str(e.get("type")) for e in effects}
        head = f"round {round_id}: " if round_id else ""
        for e in effects:
            if e.get("type") == "rejected":
                yield f"{head}{etype} refused: {e.get('reason')}"
        if "rejected" in kinds and len(effects) == 1:
            return
        yield from self._event_lines(head, round_id, etype, data, effects)
        for e in effects:
            yield from self._effect_lines(head, round_id, etype, e)

    def _event_lines(
        self,
        head: str,
        round_id: int,
        etype: str,
        data: Mapping[str, Any],
        effects: Sequence[Mapping[str, Any]],
    ) -> Iterator[str]:
        if etype == "power_up":
            mode = "training table, " if data.get("training") else ""
            yield f"power up ({mode}resumed from journal seq {data.get('restored_seq', 0)})"
        elif etype in ("table_opened", "table_closed"):
            yield f"table {etype.split('_')[1]} by {data.get('supervisor')}"
        elif etype == "shuffle_complete":
            yield f"{head}shuffler counted {data.get('count')} cards (deck {data.get('deck_id')})"
        elif etype == "bank_accepted":
            yield f"{head}area {data.get('position')} accepts the bank"
        elif etype == "lockout_pressed":
            yield f"{head}no more bets"
        elif etype == "dealt":
            yield (
                f"{head}dealt; {data.get('remaining')} cards remain in the shoe (cards shown "
                "when the round is resolved)"
            )
        elif etype == "training":
            action = data.get("action")
            by = data.get("by") or "trainer"
            if action == "practice_deal":
                yield (
                    f"{head}practice deck: {data.get('line')} dealt to area "
                    f"{data.get('position')} (asked by {by})"
                )
            elif action == "fault_injected":
                yield f"{head}fault injected by {by}: {data.get('fault')}"
            elif action == "people":
                people = ", ".join(data.get("people") or ()) or "nobody (all scripted)"
                yield f"people at the table: {people} (set by {by})"
        elif etype == "hit_validated":
            yield f"{head}hit at area {data.get('position')} validated by {data.get('supervisor')}"

    def _effect_lines(
        self, head: str, round_id: int, etype: str, e: Mapping[str, Any]
    ) -> Iterator[str]:
        kind = e.get("type")
        if kind == "lights" and etype in (
            "shuffle_complete",
            "chip_detected",
            "lockout_pressed",
            "round_completed",
            "fault_cleared",
        ):
            yield f"{head}lights: {lights_words(e.get('states') or ())}"
        elif kind == "wagers" and etype == "chip_detected":
            positions = ", ".join(map(str, e.get("positions") or ())) or "none"
            each = _dollars(int(e["wager_cents"]))
            yield f"{head}progressive wagers at {positions} ({each} each)"
        elif kind == "meter_movement" and e.get("kind") == "contribution":
            yield (
                f"{head}{e.get('wagers')} progressive wagers counted "
                f"({_dollars(int(e.get('wagered_cents') or 0))}); meter "
                f"{e.get('level')} +{_dollars(int(e['display_cents']))}"
            )
        elif kind == "starting_position":
            order = ", ".join(_seat(int(s)) for s in e.get("order") or ())
            bank = e.get("bank")
            banks = f"; area {bank} banks" if bank else ""
            yield (
                f"{head}starting position {e.get('number')} ({e.get('by')}): first stack to "
                f"{_seat(int(e['seat']))}; order {order}{banks}"
            )
        elif kind == "display" and etype in ("rng_drawn", "dice_position_entered"):
            yield f"{head}display shows {e.get('glyph')}"
        elif kind == "side_wager_settled":
            results = e.get("results") or ()
            paid = [
                f"area {r['position']} on {r['number']}: "
                + (f"wins {_dollars(int(r['payout_cents']))}" if r.get("payout_cents") else "loses")
                for r in results
            ]
            yield f"{head}1-7 side wagers on {e.get('number')}: {'; '.join(paid) or 'none'}"
        elif kind == "dispense":
            yield f"{head}shoe deals {e.get('stacks')} stacks of {e.get('cards')}"
        elif kind == "dealer_hand":
            yield (
                f"{head}dealer's hand set by the house way {e.get('house_way')} "
                f"({e.get('rule')})"
                + ("; queen dragon: pai gow wagers push" if e.get("queen_dragon") else "")
            )
        elif kind == "outcome":
            line = e.get("line")
            yield f"{head}area {e.get('position')} progressive: {line or 'no line'}"
        elif kind == "hit_pending":
            yield (
                f"{head}HIT at area {e.get('position')}: {e.get('line')} on {e.get('level')} - "
                "a supervisor must validate it"
            )
        elif kind == "pay":
            who = f", validated by {e['supervisor']}" if e.get("supervisor") else ""
            yield (
                f"{head}pay area {e.get('position')} {_dollars(int(e['cents']))} for "
                f"{e.get('line')} from the {str(e.get('from')).replace('_', ' ')}{who}"
            )
        elif kind == "fault":
            yield (
                f"{head}FAULT {e.get('code')} ({e.get('device')}): {e.get('detail')} - display F"
            )
        elif kind == "fault_cleared":
            yield f"{head}fault cleared by {e.get('supervisor')}: round {e.get('outcome')}"
        elif kind == "alert":
            detail = e.get("detail") or ""
            yield f"{head}alert to the {e.get('to')}: {e.get('code')} {detail}".rstrip()
        elif kind == "refund":
            yield f"{head}refund area {e.get('position')} {_dollars(int(e['cents']))}"
        elif kind == "round_summary":
            yield from self._resolution(head, round_id, e)

    # ------------------------------------------------------------------ the resolved round
    def _resolution(self, head: str, round_id: int, summary: Mapping[str, Any]) -> Iterator[str]:
        if summary.get("outcome") == "voided":
            yield f"{head}round voided: {summary.get('reason') or ''}".rstrip(": ")
            return
        hands, bank = self._round_cards(round_id)
        banker_seat = bank if bank is not None else 0
        banker = None
        if banker_seat in hands:
            with contextlib.suppress(CardError, ValueError):
                banker = self._way.set(hands[banker_seat], self._opts)
        for seat in sorted(hands):
            cards = hands[seat]
            try:
                setting = self._way.set(cards, self._opts)
            except (CardError, ValueError):
                continue
            shown = f"{format_cards(setting.high)} / {format_cards(setting.low)}"
            if seat == banker_seat:
                role = "banks" if seat else "house way"
                yield f"{head}{_seat(seat)} ({role}): {format_cards(cards)} -> {shown}"
                continue
            verdict = ""
            if banker is not None:
                with contextlib.suppress(CardError, ValueError):
                    s = settle(setting, banker, 100, opts=self._opts)
                    word = {"win": "WINS", "push": "pushes", "lose": "loses"}[s.outcome]
                    verdict = f" -> {word} ({s.reason})"
            yield f"{head}{_seat(seat)}: {format_cards(cards)} -> {shown}{verdict}"
        winners = [
            f"area {p['position']} {p['line']} {_dollars(int(p.get('payout_cents') or 0))}"
            for p in summary.get("positions") or ()
            if p.get("line")
        ]
        meters = "; ".join(
            f"{m['level']} meter {_dollars(int(m['display_after_cents']))}"
            for m in summary.get("meters") or ()
        )
        yield (
            f"{head}round complete: progressive winners: {', '.join(winners) or 'none'}; {meters}"
        )

    def _note_cards(self, c: Committed) -> None:
        """Keep each round's delivery order, bank and dealt cards until it resolves."""
        rnd = self._rounds.setdefault(c.round_id, _RoundCards())
        for e in c.effects:
            if isinstance(e, StartingPosition):
                rnd.order, rnd.bank = list(e.order), e.bank
        if c.type == "dealt" and c.rejected is None:
            for seat, cards in _dealt_seats(c.data, rnd.order):
                rnd.hands.setdefault(seat, []).extend(cards)

    def _round_cards(self, round_id: int) -> tuple[dict[int, list[Card]], int | None]:
        """Each seat's seven cards from the round's ``dealt`` entries and the delivery order of
        its ``starting_position`` effect, and who banked (forgotten once worded)."""
        rnd = self._rounds.pop(round_id, None)
        if rnd is None:
            return {}, None
        return {s: c for s, c in rnd.hands.items() if len(c) == 7}, rnd.bank


@dataclass
class _RoundCards:
    order: list[int] = field(default_factory=list)
    bank: int | None = None
    hands: dict[int, list[Card]] = field(default_factory=dict)


def _card(c: object) -> Card:
    if isinstance(c, int) and not isinstance(c, bool):
        return c
    return parse_card(str(c))


def _dealt_seats(data: Mapping[str, Any], order: Sequence[int]) -> Iterator[tuple[int, list[Card]]]:
    stacks = data.get("stacks")
    if isinstance(stacks, list) and len(stacks) == len(order):
        for seat, cards in zip(order, stacks, strict=True):
            with contextlib.suppress(CardError, ValueError, TypeError):
                yield seat, [_card(c) for c in cards]
        return
    hands = data.get("hands")
    if isinstance(hands, Mapping):
        for key, cards in hands.items():
            seat = 0 if str(key) == "dealer" else int(key)
            with contextlib.suppress(CardError, ValueError, TypeError):
                yield seat, [_card(c) for c in cards]
