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

import re
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
    "Open_LockedOut": "No more bets",
    "Open_StartingPosition_Rng": "Drawing the starting position",
    "Open_StartingPosition_Dice": "Shake the dice (at least three times)",
    "Open_SideWagers": "1-7 side wagers: NEXT when settled",
    "Open_Dealing": "Dealing the cards",
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
    "SHOE_JAM": "the shoe jammed",
    "SHOE_EMPTY": "the shoe is empty",
    "SHOE_MISDEAL": "the shoe misdealt",
    "SHUFFLER_JAM": "the shuffler jammed",
    "LINK_TIMEOUT": "a device stopped answering",
    "RESPONSE_TIMEOUT": "a device did not answer in time",
    "PORT_LOST": "a device's cable or port was lost",
    "LINE_NOISE": "noise on a device's line",
    "PROTOCOL_ERROR": "a device answered what it should not",
    "DEVICE_BUSY": "a device is busy",
    "DEVICE_HARDWARE": "a device reports a hardware fault",
    "DEVICE_REJECTED": "a device refused a command",
    "COMMAND_NOT_DELIVERED": "a command did not reach its device",
    "SOFTWARE_UNAPPROVED": "the software is not the approved one",
}
#: The serial protocol's message names a device's detail may start with (not for people).
_WIRE = re.compile(r"^[A-Z]+_(REQ|RSP)(: ?)?")

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
    """One journal entry as the page lists it, in words: what happened, who did it, what it
    caused (pays, hits, faults, a refusal with its reason), never a card or raw JSON."""
    effects = [e for e in data.get("effects") or [] if isinstance(e, Mapping)]
    said = [
        w
        for w in (
            effect_words(e)
            for e in effects
            if etype != "progressive_outcome" or e.get("type") != "outcome"
        )
        if w
    ]
    text = "; ".join(said)
    if len(text) > ENTRY_TEXT:
        text = text[: ENTRY_TEXT - 3] + "..."
    line: JSONDict = {
        "seq": seq,
        "ts_ms": ts_ms,
        "round_id": round_id,
        "type": etype,
        "words": _event_words(etype, _without_cards(data)),
        "who": _who(data),
        "text": text,
    }
    refused = refusal(etype, data)
    if refused is not None:
        line["refused"] = refused
    return line


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
                # the starting position's order (the layout's; with the three-card bonus the
                # pai gow positions, farthest left first); the entered positions otherwise
                if rid in self._order:
                    order = self._order[rid]
                elif rid in self._pai_gow:
                    order = three_card_order(self._pai_gow[rid])
                else:
                    order = list(range(len(raw_stacks)))
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
                    "detail": _WIRE.sub("", reason_words(str(f.get("detail") or ""))),
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
        # the controller compartment's door (issue 28 item 4): None without a door switch
        "door": _door(view.get("door")),
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
        "start_seat": rnd.get("start_seat"),
        "shakes": int(rnd.get("shakes", 0) or 0),
        "side_results": thaw(rnd.get("side_results")),
        "side_wager_offered": bool((config.get("side_wager") or {}).get("offered")),
        "side_wager_odds": (config.get("side_wager") or {}).get("odds"),
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
        "three_card_bonus": bool(config.get("three_card_bonus")),
        "pai_gow": thaw(rnd.get("pai_gow")),
        "stage": rnd.get("stage"),
        "paid": [
            {**thaw(p), "words": effect_words({"type": "pay", **thaw(p)})}
            for p in rnd.get("paid") or []
            if isinstance(p, Mapping)
        ],
        "next_step": next_step(state, rnd, config),
        "panel": panel_hints(state, rnd, view),
        "fault_interrupted": fault.get("interrupted") if isinstance(fault, Mapping) else None,
    }
    for p in out["pending"]:
        if isinstance(p, dict):
            if "locked_cents" in p:  # a linked hit: what the pool locked is what is paid
                where = "the chip tray" if p.get("locked_from") == "chip_tray" else "the meter"
                paid = line_words(p.get("locked_line") or p.get("line"))
                p["hit_words"] = (
                    f"{line_words(p.get('line'))}; the pool locked {paid}, "
                    f"{money(p['locked_cents'])} from {where}"
                )
            elif p.get("lines") is not None:  # a linked hit: the pool decides at its meter
                p["hit_words"] = f"{line_words(p.get('line'))}; waiting for the pool's lock"
            else:
                p["hit_words"] = hit_words(p)  # the line and what it pays now
            p["words"] = f"area {p.get('position')}: {p['hit_words']}"
    if extra:
        out.update(extra)
    return out


# --------------------------------------------------------------------------- words for people

#: Event types as the page lists them (a journal entry's first words).
EVENT_WORDS: dict[str, str] = {
    "power_up": "the controller started",
    "table_opened": "table opened",
    "table_closed": "table closed",
    "maintenance_entered": "maintenance entered",
    "maintenance_exited": "maintenance ended",
    "shuffle_complete": "deck shuffled and counted",
    "chip_detected": "chip in an acceptor",
    "lockout_pressed": "lock-out pressed: no more bets",
    "bank_accepted": "a player accepted the bank",
    "bank_released": "the bank was released",
    "pai_gow_wagers": "pai gow positions entered",
    "chips_confirmed": "chip count confirmed",
    "chips_resolved": "chip count resolved",
    "side_wagers": "1-7 side wagers entered",
    "rng_activated": "RNG activated",
    "rng_drawn": "starting position drawn",
    "rng_void": "draw voided",
    "shake_detected": "dice shaken",
    "shaker_lid": "shaker lid",
    "lid_lifted_by_bank": "the bank lifted the shaker lid",
    "dice_position_entered": "dice total entered",
    "side_wagers_settled": "1-7 side wagers settled",
    "three_card_settled": "three-card bonus settled",
    "dealt": "cards dealt",
    "play_complete": "play complete",
    "progressive_outcome": "outcome entered",
    "hit_validated": "hit validated",
    "hit_voided": "hit voided",
    "hit_corrected": "hit's line corrected",
    "hit_adjusted": "paid hit adjusted",
    "round_completed": "round complete",
    "fault_raised": "fault",
    "fault_cleared": "fault cleared",
    "panel_next": "NEXT pressed",
    "panel_void": "VOID pressed",
    "supervisor_key": "key switch turned",
    "key_holder": "key holder named",
    "console_refused": "supervisor refused",
    "config_changed": "configuration changed",
    "config_pending": "configuration change waiting",
    "meter_corrected": "meter corrected",
    "light_test": "light test",
    "display_test": "display test",
    "training": "training",
    "deadline": "time limit passed",
    "device_recovered": "device recovered",
    "floor_link": "floor link",
    "floor_command": "floor command",
    "link_state": "progressive link",
    "link_hit_locked": "linked hit locked",
    "door": "compartment door",
    "door_maintenance": "door maintenance",
    "software_verified": "software verified",
}

#: The controls of the page an event comes from (where its refusal is shown).
EVENT_CONTROLS: dict[str, str] = {
    "chip_detected": "chip",
    "lockout_pressed": "lockout",
    "panel_next": "next",
    "panel_void": "void",
    "supervisor_key": "key",
    "shake_detected": "shake",
    "dice_position_entered": "dice",
    "progressive_outcome": "outcome",
    "side_wagers": "side-wagers",
    "pai_gow_wagers": "pai-gow",
    "side_wagers_settled": "next",
    "three_card_settled": "next",
    "chips_confirmed": "next",
    "rng_activated": "next",
    "play_complete": "next",
    "table_opened": "open",
    "table_closed": "close",
    "hit_validated": "validate-hit",
    "hit_voided": "void-hit",
    "fault_cleared": "clear-fault",
    "rng_void": "void-draw",
    "maintenance_entered": "maintenance",
    "maintenance_exited": "maintenance",
    "light_test": "light-test",
    "display_test": "display-test",
    "config_changed": "config-change",
    "chips_resolved": "resolve-chips",
    "meter_corrected": "meter-correct",
    "door_maintenance": "door-maintenance",
}

_UNTIMELY = re.compile(r"^(\w+) is not accepted in state (\w+)$")
_RULE = re.compile(r"\b[a-z0-9_]+\.([a-z0-9_]+)\.rule\b")
_STATE = re.compile(r"\bOpen_[A-Za-z_]+\b")


def line_words(line: object) -> str:
    """A pay-table line as people say it (``royal-flush`` -> ``royal flush``)."""
    return str(line or "").replace("-", " ").replace("_", " ")


def hit_words(hit: Mapping[str, Any]) -> str:
    """A hit still to be paid as people say it: its line and what it pays at the meter as it
    stands (the round's own ``pays_line`` / ``pays_cents``; paid at the meter of its moment)."""
    said = line_words(hit.get("line"))
    pays, best = hit.get("pays_cents"), hit.get("pays_line")
    if isinstance(pays, int) and not isinstance(pays, bool):
        better = f" as {line_words(best)}" if best and best != hit.get("line") else ""
        said += f", pays {money(pays)}{better} now"
    return said


def money(cents: object) -> str:
    try:
        value = int(cents)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return ""
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value) // 100:,}.{abs(value) % 100:02d}"


def rule_words(rule: object) -> str:
    """A house-way rule's name in words (``reference.one_pair.rule`` -> ``one pair``)."""
    text = str(rule or "").split(":")[0]
    m = _RULE.search(text)
    if m:
        return m.group(1).replace("_", " ")
    return text.replace("_", " ")


def reason_words(reason: str) -> str:
    """A refusal's journaled reason with the machine's names put in words."""
    m = _UNTIMELY.match(reason.strip())
    if m:
        etype, state = m.groups()
        what = EVENT_WORDS.get(etype, etype.replace("_", " "))
        return f"not now: {what} is not taken at \u201c{state_words(state)}\u201d"
    text = _RULE.sub(lambda g: g.group(1).replace("_", " "), reason)
    return _STATE.sub(lambda g: f"\u201c{state_words(g.group(0))}\u201d", text)


def _who(data: Mapping[str, Any]) -> str:
    who = data.get("supervisor") or data.get("by") or ""
    via = data.get("via") or ""
    if who == "panel-key":
        who = "the supervisor key at the panel"
    text = str(who)
    if via and text:
        text += f" (at the {'page' if via == 'web' else via})"
    return text[:60]


def _event_words(etype: str, data: Mapping[str, Any]) -> str:
    base = EVENT_WORDS.get(etype, etype.replace("_", " "))
    if etype == "chip_detected" and "position" in data:
        return f"chip in area {data['position']}"
    if etype == "shuffle_complete":
        return f"deck shuffled and counted: {data.get('count')} cards"
    if etype == "rng_drawn":
        return f"starting position drawn: {data.get('value')}"
    if etype == "dice_position_entered":
        return f"dice total entered: {data.get('total')}"
    if etype == "progressive_outcome":
        line = data.get("line")
        return f"area {data.get('position')}: " + (line_words(line) if line else "no win")
    if etype == "side_wagers":
        bets = data.get("bets") or []
        if not bets:
            return "no 1-7 side wagers placed"
        parts = []
        for b in bets:
            if isinstance(b, Mapping):
                where, on = b.get("position"), b.get("number")
                parts.append(f"area {where} on {on} {money(b.get('cents'))}")
        return "1-7 side wagers: " + ", ".join(parts)
    if etype == "pai_gow_wagers":
        return "pai gow positions: " + ", ".join(str(p) for p in data.get("positions") or [])
    if etype == "dealt":
        return f"cards dealt ({data.get('remaining')} left in the shoe)"
    if etype in ("hit_validated", "hit_voided"):
        return f"{base} at area {data.get('position')}"
    if etype == "supervisor_key":
        return "key switch " + ("on" if data.get("on") else "off")
    if etype == "fault_raised":
        return f"fault raised: {fault_words(str(data.get('code', '')))}"
    if etype == "fault_cleared":
        return "fault cleared, round voided" if data.get("void") else "fault cleared"
    if etype == "console_refused":
        return f"refused: {data.get('request', '')} ({data.get('reason', '')})"[:120]
    if etype == "training":
        action = str(data.get("action") or "")
        if action == "practice_deal":
            line, where = line_words(data.get("line")), data.get("position")
            return f"training: practice hand {line} in area {where}"
        if action == "fault_injected":
            return f"training: fault injected ({line_words(data.get('fault'))})"
        if action == "people":
            return "training: a person plays " + (", ".join(data.get("people") or []) or "no role")
        return "training: " + line_words(action)[:80]
    return base


def _door(door: object) -> JSONDict | None:
    if not isinstance(door, Mapping):
        return None
    return {
        "open": bool(door.get("open")),
        "openings": int(door.get("opened", 0)),
        "maintenance": door.get("maintenance"),
        "words": door_words(door),
    }


def effect_words(effect: Mapping[str, Any]) -> str | None:
    """What an effect means to people (None: nothing to say, e.g. the lights)."""
    kind = effect.get("type")
    if kind == "rejected":
        return "REFUSED: " + reason_words(str(effect.get("reason", "")))
    if kind == "pay":
        source = "from the meter" if effect.get("from") == "meter" else "from the chip tray"
        return (
            f"pay area {effect.get('position')} {money(effect.get('cents'))} {source} "
            f"({line_words(effect.get('line'))})"
        )
    if kind == "hit_pending":
        pays = {"pays_cents": effect.get("cents"), "pays_line": effect.get("pays_line")}
        return (
            f"hit at area {effect.get('position')}: "
            f"{hit_words({'line': effect.get('line'), **pays})}, a supervisor validates it"
        )
    if kind == "fault":
        detail = _WIRE.sub("", reason_words(str(effect.get("detail") or "")))
        said = f"fault: {fault_words(str(effect.get('code', '')))}"
        return said + (f" ({detail})" if detail else "")
    if kind == "starting_position":
        seat = effect.get("seat")
        first = "the dealer" if seat == 0 else f"area {seat}"
        return f"starting position {effect.get('number')}: the first stack goes to {first}"
    if kind == "outcome" and effect.get("line"):
        return f"area {effect.get('position')}: {line_words(effect.get('line'))}"
    if kind == "round_summary":
        return f"round {effect.get('round_id')} {effect.get('outcome')}"
    if kind == "refund":
        return f"refund area {effect.get('position')} {money(effect.get('cents'))}"
    if kind == "side_wager_settled":
        parts = []
        for r in effect.get("results") or []:
            if isinstance(r, Mapping):
                won = int(r.get("payout_cents") or 0)
                parts.append(
                    f"area {r.get('position')} on {r.get('number')} "
                    + (f"wins {money(won)}" if won else f"loses {money(r.get('cents'))}")
                )
        said = f"1-7 side wagers settled on {effect.get('number')}"
        return said + (": " + ", ".join(parts) if parts else ": none placed")
    if kind == "dealer_hand" and effect.get("rule"):
        return f"dealer's hand set by the house way: {rule_words(effect.get('rule'))}"
    if kind == "alert":
        detail = _WIRE.sub("", reason_words(str(effect.get("detail", ""))))[:100]
        return f"alert to the {effect.get('to')}: {detail}"
    if kind == "round_voided":
        return f"round {effect.get('round_id')} voided"
    if kind == "door_changed":
        return door_words(effect)
    return None


def door_words(door: Mapping[str, Any]) -> str:
    """The compartment door as people say it (a ``door_changed`` effect or the view's door)."""
    if not door.get("open"):
        return "compartment door closed"
    if door.get("maintenance"):
        return f"compartment door OPEN: maintenance allowed by {door.get('maintenance')}"
    return "compartment door OPEN: play refused until it is closed"


def refusal(etype: str, data: Mapping[str, Any]) -> JSONDict | None:
    """The refusal in an entry (its ``rejected`` effect), with the control it came from."""
    for effect in data.get("effects") or []:
        if isinstance(effect, Mapping) and effect.get("type") == "rejected":
            event = str(effect.get("event") or etype)
            position = effect.get("position", data.get("position"))
            return {
                "event": event,
                "control": EVENT_CONTROLS.get(event, ""),
                "position": position if isinstance(position, int) else None,
                "cause": effect.get("cause"),
                "reason": reason_words(str(effect.get("reason", ""))),
            }
    return None


def next_step(state: str, rnd: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """The dealer's next step in the state, in a dealer's words (what the page asks for)."""
    mode = str(config.get("start_mode") or "rng")
    shoe = bool(config.get("card_reading_shoe"))
    three = bool(config.get("three_card_bonus"))
    side = bool((config.get("side_wager") or {}).get("offered"))
    pending = rnd.get("pending") or []
    if state == "Closed":
        return "The table is closed: a supervisor opens it."
    if state == "Maintenance":
        return "Maintenance: only a supervisor acts."
    if state == "Fault":
        return "Stop play and call a supervisor: the fault must be fixed and cleared."
    if state == "Open_Shuffling":
        return "Wait: the shuffler is shuffling and counting the deck."
    if state == "Open_Betting":
        if three and rnd.get("pai_gow") is None:
            return (
                "Players place their bets. Enter the areas holding a pai gow wager, "
                "then press the lock-out."
            )
        return "Players place their bets. Press the lock-out when betting is over."
    if state == "Open_LockedOut":
        if three and rnd.get("pai_gow") is None:
            return "Enter the areas holding a pai gow wager."
        if side and rnd.get("side_bets") is None:
            return "Enter the 1-7 side wagers the players placed (or none)."
        if not rnd.get("counted"):
            return "Count the chips in the lit acceptors, then press NEXT to confirm the count."
        if mode == "rng":
            return "Press NEXT to draw the starting position."
        return "Press NEXT to go on."
    if state == "Open_StartingPosition_Rng":
        return "Wait: the starting position is being drawn."
    if state == "Open_StartingPosition_Dice":
        shakes = int(rnd.get("shakes") or 0)
        if shakes < 3:
            return f"Shake the dice: {shakes} of at least 3 shakes done."
        return "Read the three dice and enter their total (3 to 18)."
    if state == "Open_SideWagers":
        return (
            f"Settle the 1-7 side wagers on {rnd.get('start_number')}: collect the losers, pay "
            "the winners, then press NEXT to deal."
        )
    if state == "Open_Dealing":
        if rnd.get("stage") == "three_dealt":
            return "Settle the three-card bonus, then press NEXT to deal the four-card stacks."
        return "Wait: the shoe is dealing."
    if state == "Open_Play":
        return "Players set their hands. When every hand is set, press NEXT."
    if state == "Open_Settlement":
        if shoe:
            return "Wait: the progressive wagers are being settled from the cards read."
        return "Enter each wagered area's progressive result: its pay-table line, or no win."
    if state == "Open_JackpotPending":
        if pending:
            p = pending[0]
            return (
                f"Jackpot at area {p.get('position')} ({hit_words(p)}): "
                "call a supervisor to check the hand and validate it."
            )
        return "Call a supervisor to validate the hit."
    if state == "Open_RoundComplete":
        return "Round complete: settle the main game and collect the cards."
    return state_words(state)


def panel_hints(state: str, rnd: Mapping[str, Any], view: Mapping[str, Any]) -> JSONDict:
    """What a press of NEXT and of VOID does now (before it is pressed), and whether it is a
    supervisor's irreversible step (the page then asks to confirm). The dealer panel's meanings
    (fsm/round/plan_panel.py) in words."""
    key = bool(view.get("supervisor_key"))
    config: Mapping[str, Any] = view.get("config") or {}
    pending = rnd.get("pending") or []
    fault = view.get("fault") or {}
    where = str(fault.get("interrupted") or "") if isinstance(fault, Mapping) else ""
    nxt: tuple[str, bool, bool] | None = None  # words, a supervisor's step, irreversible
    void: tuple[str, bool, bool] | None = None
    if state == "Closed":
        nxt = ("opens the table", True, False)
    elif state == "Open_JackpotPending" and pending:
        p = pending[0]
        nxt = (
            f"validates the hit at area {p.get('position')} ({hit_words(p)}): "
            "it is paid now from the meter",
            True,
            True,
        )
        void = (f"voids the hit at area {p.get('position')}: it is not paid", True, True)
    elif state == "Fault":
        if where == "Open_Dealing":
            nxt = ("clears the fault: the round is voided (it stopped while dealing)", True, True)
        else:
            nxt = (f"clears the fault: the round resumes at {state_words(where)}", True, False)
        void = ("clears the fault and voids the round: wagers are refunded", True, True)
    elif state == "Open_LockedOut":
        if not rnd.get("counted"):
            nxt = ("confirms the chip count", False, False)
        else:
            nxt = ("draws the starting position", False, False)
    elif state == "Open_SideWagers":
        nxt = ("ends the 1-7 side wagers: the shoe deals", False, False)
        void = ("voids the draw: the starting position is drawn again", True, True)
    elif state == "Open_Dealing" and rnd.get("stage") == "three_dealt":
        nxt = ("ends the three-card bonus: the four-card stacks are dealt", False, False)
    elif state == "Open_Play":
        nxt = ("ends play: the progressive wagers are settled", False, False)
    if state in ("Open_Betting", "Open_Shuffling"):
        void = ("closes the table", True, True)

    def word(hint: tuple[str, bool, bool] | None) -> JSONDict:
        if hint is None:
            return {"does": "nothing now", "ready": False, "confirm": False}
        text, sup, irreversible = hint
        if sup and not key:
            return {
                "does": f"{text} (needs the supervisor key switch on)",
                "ready": False,
                "confirm": False,
            }
        return {"does": text, "ready": True, "confirm": irreversible}

    del config
    return {"next": word(nxt), "void": word(void)}
