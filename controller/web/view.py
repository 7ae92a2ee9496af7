"""What the page shows: frames built from the owner's published snapshot and committed journal
entries, in a dealer's words.

Responsible for the page's vocabulary (a state in a dealer's words, a fault code in words, the
acceptor lights and the display's 7-segment drawing from the drivers' own table) and for keeping
card identities off the page until their round resolves: a journal entry reaches the page only
through `entry_line`, which drops every card field; the seven hands of a round are shown only
by `Hands.summary`, once a ``round_summary`` effect has resolved that round. Pure: no I/O, no
clock, no threads; must never decide a game rule (the house-way setting shown is the house way's
own `explain`, the same call the round machine makes).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from drivers.gpio.font import SEGMENTS
from fsm.round.catalogue import FAULT_CODES
from fsm.round.position import three_card_order
from fsm.round.vocabulary import GLYPH_MEANINGS, LIGHT_MEANINGS
from fsm.rules.cards import format_card

JSONDict = dict[str, Any]

#: The round's states as a dealer says them.
STATE_WORDS: dict[str, str] = {
    "": "starting up",
    "Closed": "Table closed",
    "Maintenance": "Maintenance: supervisor only",
    "Fault": "Fault: call a supervisor",
    "Open_Shuffling": "Shuffling: wait for the shuffler",
    "Open_Betting": "Place your bets",
    "Open_LockedOut": "No more bets: enter the 1-7 side wagers (if offered), count the chips, "
    "NEXT; with the RNG, NEXT again activates it",
    "Open_StartingPosition_Rng": "Drawing the starting position",
    "Open_StartingPosition_Dice": "Shake the dice (at least three times)",
    "Open_SideWagers": "1-7 side wagers: NEXT when settled",
    "Open_Dealing": "Dealing",
    "Open_Play": "Players set their hands: NEXT when all are set",
    "Open_Settlement": "Settling the progressive wagers",
    "Open_JackpotPending": "Jackpot! A supervisor must validate it",
    "Open_RoundComplete": "Round complete",
}

#: Fault codes in words (the machine's own codes; a device's code is shown with its detail).
FAULT_WORDS: dict[str, str] = {
    "SHUFFLER_TIMEOUT": "the shuffler did not answer in time",
    "RNG_TIMEOUT": "the starting-position draw did not come in time",
    "SHOE_TIMEOUT": "the shoe did not finish dealing in time",
    "DEAL_INTERRUPTED": "the controller restarted while the shoe was dealing; the round is void",
    "DEVICE_STALLED": "a device made no progress",
    "DEVICE_OUTPUT": "a light, the display or a device could not be driven",
    "RNG_FAILURE": "the random number generator failed",
}

#: Fields of a journal entry that carry card identities (``dealt`` events): never on the page.
CARD_FIELDS = frozenset({"stacks", "hands", "cards", "threes", "fours", "deck"})
#: How many journal entries a frame carries.
ENTRY_LINES = 30
ENTRY_TEXT = 160


def state_words(state: str) -> str:
    return STATE_WORDS.get(state, state.replace("Open_", "").replace("_", " "))


def fault_words(code: str) -> str:
    if code in FAULT_WORDS:
        return FAULT_WORDS[code]
    if code.startswith("DECK_COUNT_"):
        return f"the shuffler counted {code.removeprefix('DECK_COUNT_')} cards, not 53"
    if code.startswith("MISDEAL_REMAINING_"):
        return f"misdeal: {code.removeprefix('MISDEAL_REMAINING_')} cards left in the shoe"
    return FAULT_CODES.get(code, "device fault")


def thaw(value: Any) -> Any:
    """A published (read-only) value as plain JSON."""
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _without_cards(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_cards(v) for k, v in value.items() if k not in CARD_FIELDS}
    if isinstance(value, list | tuple):
        return [_without_cards(v) for v in value]
    return value


def entry_line(seq: int, ts_ms: int, round_id: int | None, etype: str, data: JSONDict) -> JSONDict:
    """One journal entry as the page lists it: no card field, its effects by type, short."""
    effects = data.get("effects") or []
    facts = {k: v for k, v in data.items() if k != "effects"}
    text = json.dumps(_without_cards(facts), separators=(",", ":"), sort_keys=True)
    if text == "{}":
        text = ""
    if len(text) > ENTRY_TEXT:
        text = text[: ENTRY_TEXT - 3] + "..."
    kinds = [str(e.get("type")) for e in effects if isinstance(e, Mapping)]
    shown = [k for k in kinds if k not in ("acceptors", "lights", "display")]
    return {
        "seq": seq,
        "ts_ms": ts_ms,
        "round_id": round_id,
        "type": etype,
        "text": text,
        "effects": shown,
    }


def _seat_name(seat: int) -> str:
    return "dealer" if seat == 0 else f"area {seat}"


class Hands:
    """The cards of the rounds in play, kept off the page until each round resolves.

    `note` takes every committed entry in order: a ``starting_position`` effect (or, with the
    three-card bonus, the ``pai_gow_wagers`` positions) gives the order the stacks reach the
    seats, a ``dealt`` event the stacks or hands (card codes); all of it stays here. A
    ``round_summary`` effect resolves its round: `summary` then gives the seven hands with the
    house way's setting and each position's outcome, and the round's cards are forgotten."""

    def __init__(self, way: Any = None, ranking: Any = None) -> None:
        self._way = way
        self._ranking = ranking
        self._order: dict[int, list[int]] = {}
        self._pai_gow: dict[int, list[int]] = {}
        self._seats: dict[int, dict[int, list[int]]] = {}
        self.last: JSONDict | None = None

    def note(self, round_id: int | None, etype: str, data: JSONDict) -> JSONDict | None:
        """Take one committed entry; returns the summary of the round it resolved, if any."""
        rid = int(round_id or 0)
        if etype == "pai_gow_wagers" and isinstance(data.get("positions"), list):
            self._pai_gow[rid] = [int(p) for p in data["positions"]]
        if etype == "dealt":
            self._dealt(rid, data)
        resolved = None
        for effect in data.get("effects") or []:
            if not isinstance(effect, Mapping):
                continue
            if effect.get("type") == "starting_position" and isinstance(effect.get("order"), list):
                self._order[rid] = [int(s) for s in effect["order"]]
            if effect.get("type") == "round_summary":
                resolved = self._resolve(int(effect.get("round_id", rid)), effect)
        return resolved

    def _dealt(self, rid: int, data: JSONDict) -> None:
        """A dispense's cards by seat: ``hands`` by seat name, or ``stacks`` in the order the
        stacks reach the seats (with the three-card bonus: the pai gow positions, farthest left
        first, then the dealer; the fours complete the threes)."""
        seats: dict[int, list[int]] = {}
        raw_hands, raw_stacks = data.get("hands"), data.get("stacks")
        try:
            if isinstance(raw_hands, Mapping):
                for key, cards in raw_hands.items():
                    seat = 0 if str(key) == "dealer" else int(key)
                    seats[seat] = [int(c) for c in cards]
            elif isinstance(raw_stacks, list):
                if rid in self._pai_gow:
                    order = three_card_order(self._pai_gow[rid])
                else:
                    order = self._order.get(rid, list(range(len(raw_stacks))))
                for seat, cards in zip(order, raw_stacks, strict=False):
                    seats[seat] = [int(c) for c in cards]
        except (TypeError, ValueError):
            return  # the machine refused such a dispense; nothing to show
        held = self._seats.setdefault(rid, {})
        for seat, cards in seats.items():
            held[seat] = held.get(seat, []) + cards

    def _resolve(self, rid: int, summary: Mapping[str, Any]) -> JSONDict:
        by_seat = self._seats.pop(rid, {})
        for book in (self._seats, self._order, self._pai_gow):
            for old in [r for r in book if r <= rid]:
                del book[old]
        outcomes = {
            int(p["position"]): p for p in summary.get("positions") or () if isinstance(p, Mapping)
        }
        if not by_seat:  # no card-reading shoe: the wagered positions and their outcomes
            by_seat = {seat: [] for seat in outcomes}
        hands: list[JSONDict] = []
        for seat in sorted(by_seat, key=lambda s: (s != 0, s)):
            cards = by_seat[seat]
            hand: JSONDict = {
                "seat": seat,
                "name": _seat_name(seat),
                "cards": [format_card(c) for c in cards],
            }
            setting = self._setting(cards)
            if setting is not None:
                hand.update(setting)
            outcome = outcomes.get(seat)
            if outcome is not None:
                hand["wager_cents"] = outcome.get("wager_cents")
                hand["line"] = outcome.get("line")
                hand["payout_cents"] = outcome.get("payout_cents")
            hands.append(hand)
        self.last = {
            "round_id": rid,
            "outcome": summary.get("outcome"),
            "reason": summary.get("reason"),
            "hands": hands,
            "positions": thaw(summary.get("positions") or []),
            "meters": thaw(summary.get("meters") or []),
        }
        return self.last

    def _setting(self, cards: list[int]) -> JSONDict | None:
        if self._way is None or len(cards) != 7:
            return None
        try:
            decision = (
                self._way.explain(cards)
                if self._ranking is None
                else self._way.explain(cards, self._ranking)
            )
        except ValueError:
            return None
        return {
            "high": [format_card(c) for c in decision.setting.high],
            "low": [format_card(c) for c in decision.setting.low],
            "rule": str(decision.rule).split(":")[0],
        }


def segments(glyph: str) -> list[int]:
    """The display's segments a..g for ``glyph`` (the driver's own font)."""
    return list(SEGMENTS.get(glyph, SEGMENTS[" "]))  # type: ignore[call-overload]


def _devices(state: str, view: Mapping[str, Any]) -> JSONDict:
    faults = ((view.get("fault") or {}).get("faults")) or []
    bad = {str(f.get("device")) for f in faults if isinstance(f, Mapping)}
    deadline = view.get("deadline") or []
    waiting = str(deadline[2]) if len(deadline) > 2 else ""

    def word(device: str, busy_state: str, busy: str) -> str:
        if device in bad:
            return "fault"
        if state == busy_state or waiting == device:
            return busy
        return "ready"

    stage = str((view.get("round") or {}).get("stage") or "")
    return {
        "shuffler": word("shuffler", "Open_Shuffling", "shuffling"),
        "shoe": word("shoe", "Open_Dealing", "dealing" if stage != "three_dealt" else "paused"),
    }


def frame(
    public: Any,
    entries: Iterable[JSONDict],
    hands: JSONDict | None,
    *,
    mode: str,
    extra: Mapping[str, Any] | None = None,
) -> JSONDict:
    """The page's frame for one published snapshot (`controller.service.owner.PublicSnapshot`):
    everything the page draws. The snapshot's view holds no card (the machine's public view);
    entries come through `entry_line`, hands through `Hands`."""
    view: Mapping[str, Any] = public.view
    state = str(public.state)
    rnd: Mapping[str, Any] = view.get("round") or {}
    glyph = str(view.get("display", " "))
    lights = [str(x) for x in view.get("lights") or ["off"] * 6]
    fault = view.get("fault") or None
    faults = []
    if isinstance(fault, Mapping):
        for f in fault.get("faults") or []:
            code = str(f.get("code", ""))
            faults.append(
                {
                    "code": code,
                    "device": f.get("device"),
                    "detail": f.get("detail"),
                    "words": fault_words(code),
                }
            )
    meters = []
    for name, m in (public.meters or {}).items():
        meters.append(
            {
                "name": name,
                "display_cents": int(m.get("display_cents", 0)),
                "hits": int(m.get("hits", 0)),
                "paid_cents": int(m.get("paid_cents", 0)),
            }
        )
    config: Mapping[str, Any] = view.get("config") or {}
    out: JSONDict = {
        "type": "frame",
        "seq": public.seq,
        "ts_ms": public.ts_ms,
        "mode": mode,
        # tablectl run --unapproved-bench: the page says UNAPPROVED SOFTWARE on every frame
        "unapproved_bench": bool(getattr(public, "unapproved_bench", False)),
        "table_id": view.get("table_id", ""),
        "state": state,
        "words": state_words(state) if not public.storage_fault else "Storage fault: restart",
        "last_event": public.last_event,
        "round_id": public.round_id,
        "rounds": public.rounds_completed,
        "lights": lights,
        "light_meanings": [LIGHT_MEANINGS.get(x, x) for x in lights],  # type: ignore[call-overload]
        "display": glyph,
        "display_meaning": GLYPH_MEANINGS.get(glyph, ""),  # type: ignore[call-overload]
        "segments": segments(glyph),
        "key": bool(view.get("supervisor_key")),
        "wagers": {str(k): v for k, v in thaw(rnd.get("wagers") or {}).items()},
        "pending": thaw(rnd.get("pending") or []),
        "outcomes": thaw(rnd.get("outcomes") or {}),
        "start_number": rnd.get("start_number"),
        "shakes": int(rnd.get("shakes", 0) or 0),
        "side_results": thaw(rnd.get("side_results")),
        "side_wager_offered": bool((config.get("side_wager") or {}).get("offered")),
        "side_bets": thaw(rnd.get("side_bets")),
        "counted": bool(rnd.get("counted")),
        "bank": thaw((view.get("bank") or {}).get("current")),
        "devices": _devices(state, view),
        "meters": meters,
        "faults": faults,
        # the linked progressive (docs/link.md): pool, level, down; meters show the pool's value
        "link": thaw(view.get("link")),
        "storage_fault": public.storage_fault,
        "config_pending": list(public.config_pending),
        "start_mode": config.get("start_mode"),
        "card_reading_shoe": bool(config.get("card_reading_shoe")),
        "hands": hands,
        "entries": list(entries)[-ENTRY_LINES:],
    }
    if extra:
        out.update(extra)
    return out
