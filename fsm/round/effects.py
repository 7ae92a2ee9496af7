"""The round's effects: one typed record per effect type, with every fact its readers need.

``RoundMachine.step`` answers an event with a list of these. The owner journals each one as JSON
(``effect.to_json()``: ``{"type": ..., fields}``), then applies it; every reader — devices,
reports, verify, the console — reads the same facts and none re-derives them: who validated a hit
and how (``pay.supervisor``, ``pay.via``), why an event or a chip was refused
(``rejected.cause``), what a round came to (``round_summary``). A record is also a read-only
mapping of its journal form (``effect["type"]``), so a JSON reader and a typed reader see the same
thing; `parse_effect` turns journaled JSON back into the record.

Adding an effect type: define its record here, once (``@effect("name")`` on a class with its
fields and a docstring naming who applies it); the docs' catalogues are generated from these
records (``python docs/catalogue.py --write``). Must never hold behaviour, and no effect may carry
a card identity (the cards of a round are in the journaled ``dealt`` events only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, Literal, TypeVar, dataclass_transform

from fsm.round.records import (
    MAY_BE_EMPTY,
    OMIT_NONE,
    Between,
    Json,
    Key,
    Record,
    RecordError,
    json_value,
    record,
)
from fsm.round.vocabulary import Glyph, LightState

#: Why an event was refused (``rejected.cause``):
#: ``invalid`` unknown type, unknown or missing field, wrong type or value;
#: ``wrong_round`` it names a round that is not the round in play;
#: ``untimely`` not accepted in the current state;
#: ``refused`` a rule of the state refuses it (the reason says which);
#: ``internal`` a bug while checking or applying it (nothing changed);
#: for ``chip_detected``: ``late`` after the lock-out (NY 5324.41(k)(2)), ``already_lit`` the
#: acceptor already holds a wager, ``not_armed`` the acceptors are not taking wagers.
RejectCause = Literal[
    "invalid",
    "wrong_round",
    "untimely",
    "refused",
    "internal",
    "late",
    "already_lit",
    "not_armed",
]
REJECT_CAUSES: tuple[str, ...] = RejectCause.__args__  # type: ignore[attr-defined]
MovementKind = Literal["contribution", "payout", "reset", "reversal", "correction"]
PaidFrom = Literal["meter", "chip_tray"]
Omit = OMIT_NONE


class Effect(Record, Mapping[str, Any]):
    """Base of the effects: a frozen record, and a read-only mapping of its journal form."""

    def to_json(self) -> dict[str, Json]:
        """The journal form: ``{"type": TYPE, field: value ...}``."""
        return {"type": self.TYPE, **self.fields_json()}

    def __getitem__(self, key: str) -> Any:
        if key == "type":
            return self.TYPE
        for f in self.FIELDS:
            if f.key == key:
                value = getattr(self, f.name)
                if value is None and f.omit_none:
                    break
                return json_value(value)
        raise KeyError(key)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Effect):
            if type(other) is type(self):
                return all(getattr(self, f.name) == getattr(other, f.name) for f in self.FIELDS)
            return False
        if isinstance(other, Mapping):
            return self.to_json() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())


_R = TypeVar("_R", bound=Effect)

#: Every effect type -> its record class (filled in by ``@effect``).
EFFECTS: dict[str, type[Effect]] = {}


@dataclass_transform(frozen_default=True)
def effect(name: str) -> Callable[[type[_R]], type[_R]]:
    """Define the record of the effect type ``name`` (and register it)."""
    return record(name, EFFECTS)


def parse_effect(data: Mapping[str, Json], where: str = "effect") -> Effect:
    """The record of one journaled effect; `RecordError` names what is wrong."""
    if not isinstance(data, Mapping):
        raise RecordError(f"{where}: must be an object")
    kind = data.get("type")
    cls = EFFECTS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RecordError(f"{where}.type: unknown effect type {kind!r}"[:120])
    return cls.parse({k: v for k, v in data.items() if k != "type"}, where)


def effects_json(effects: list[Effect]) -> list[dict[str, Json]]:
    """The journal form of a step's effects."""
    return [e.to_json() for e in effects]


# --------------------------------------------------------------------------- refusals


@effect("rejected")
class Rejected(Effect):
    """journal only: the event was refused and nothing changed; `cause` says why in one word
    (invalid, wrong_round, untimely, refused, internal; for chips late, already_lit, not_armed),
    `reason` in words; `position`: the acceptor of a refused chip"""

    event: str
    reason: str
    cause: RejectCause
    position: Annotated[int | None, Omit] = None


# --------------------------------------------------------------------------- outputs


@effect("acceptors")
class Acceptors(Effect):
    """acceptors: armed (taking progressive wagers) only in Betting"""

    armed: bool


@effect("lights")
class Lights(Effect):
    """acceptor lights 1..6 (vocabulary: fsm/round/vocabulary.py)"""

    states: tuple[LightState, ...]


@effect("display")
class Display(Effect):
    """number display: a digit 1-7 or a status glyph (fsm/round/vocabulary.py)"""

    glyph: Glyph


@effect("shuffle")
class Shuffle(Effect):
    """shuffler: shuffle and count the deck"""


@effect("draw_rng")
class DrawRng(Effect):
    """owner: draws 1..7 with the OS CSPRNG and posts rng_drawn"""


@effect("dispense")
class Dispense(Effect):
    """shoe: dispense `stacks` stacks of `cards` (7 of 7; with the three-card bonus n + 1 of 3,
    then n + 1 of 4, n pai gow positions)"""

    stacks: int
    cards: int


@effect("alert")
class Alert(Effect):
    """panel / floor: someone must act, play is not stopped (codes in docs/journal.md)"""

    to: Literal["supervisor", "dealer"]
    code: str
    detail: Annotated[str, MAY_BE_EMPTY]


@record("posted_event")
class PostedEvent(Record):
    """The envelope a ``post`` effect asks the owner to process next."""

    type: str
    data: Json


@effect("post")
class Post(Effect):
    """owner: processes this event next (`event`: {type, data})"""

    event: PostedEvent


# --------------------------------------------------------------------------- the round


@effect("wagers")
class Wagers(Effect):
    """journal / reports: the progressive wagers that stand now (after a chip is accepted, or
    the supervisor resolved a chip count), each of `wager_cents`"""

    positions: tuple[int, ...]
    wager_cents: int


@effect("outcome")
class Outcome(Effect):
    """journal / reports: a wagered position's progressive line (null: it lost), as entered by
    the dealer or decided from a card-reading shoe's hand"""

    position: int
    line: str | None


@effect("fault")
class Fault(Effect):
    """journal / reports: the table entered (or stays in) Fault: `code`, `device`, `detail`,
    the state the round was `interrupted` in"""

    code: str
    device: str
    detail: Annotated[str, MAY_BE_EMPTY]
    interrupted: str


@effect("door_changed")
class DoorChanged(Effect):
    """journal / floor (SAS exceptions 11 door opened, 12 door closed) / web page: what
    `changed` (the door `opened` or `closed`, or the `maintenance` allowance), the door now
    `open` or closed; `openings` counts every opening since the journal began (the SAS door
    meter); `maintenance` names the supervisor who allowed play with the door open (null: play
    refused while it is open)"""

    changed: Literal["opened", "closed", "maintenance"]
    open: bool
    openings: Annotated[int, Between(0)]
    maintenance: str | None = None


@effect("fault_cleared")
class FaultClearedEffect(Effect):
    """journal / reports: a supervisor cleared the fault (`via` panel or console); the round
    `resumed` in its state or was `voided`"""

    supervisor: str
    outcome: Literal["resumed", "voided"]
    via: Annotated[str | None, Omit] = None


@effect("starting_position")
class StartingPosition(Effect):
    """notice / web page: the starting position (`by` rng, dice or three_card), the seat it
    falls on, the order the stacks reach the seats (7 seats; with the three-card bonus the pai
    gow positions and the dealer) and who banks"""

    by: Literal["rng", "dice", "three_card"]
    number: int
    seat: int
    order: tuple[int, ...]
    bank: int | None


@effect("bank_offer")
class BankOffer(Effect):
    """dealer panel: offer the bank in this order (NY (h)(3))"""

    order: tuple[int, ...]


@effect("bank")
class Bank(Effect):
    """who banks this round (null: the house)"""

    position: int | None


@record("side_wager_result")
class SideWagerResult(Record):
    """One 1-7 side wager and what it won."""

    position: int
    number: int
    cents: int
    payout_cents: int


@effect("side_wager_settled")
class SideWagerSettled(Effect):
    """dealer: the 1-7 side wagers settled on the drawn `number` (NY (j))"""

    number: int
    results: tuple[SideWagerResult, ...]


@effect("side_wager_refund")
class SideWagerRefund(Effect):
    """dealer: a voided round returns a 1-7 side wager whose number was never displayed
    (NY (j)(3), NJ 11.8C(c)); one whose number was displayed is settled instead"""

    position: int
    number: int
    cents: int
    reason: str


@effect("hit_pending")
class HitPending(Effect):
    """supervisor: a payout deducted from the meter awaits validation (NY (k)(3)(iii)); `cents`
    what it pays at the meter as it stands now for its best line `pays_line` (shown on the sign
    and the page; the amount paid is decided again at the meter of the time of payment, (k)(6))"""

    position: int
    level: str
    line: str
    cents: Annotated[int | None, Omit] = None
    pays_line: Annotated[str | None, Omit] = None


@effect("pay")
class Pay(Effect):
    """dealer: pay `cents` for the hand's best `line` decided when paid (NY (g)(8), (k)(6)),
    `from` the meter (deducted, validated: `supervisor` who, `via` how — `panel` with the
    supervisor key switch, `console`, or as the event said) or from the chip tray (a fixed
    amount, no validation). From the meter, `house_cents` of `cents` were funded by the house
    because the meter held less (the rest came off the meter); `voided_line`: the pay of a
    corrected line after that line's hit was voided (NY (k)(3)(ii))"""

    position: int
    level: str
    line: str
    cents: int
    from_: Annotated[PaidFrom, Key("from")]
    supervisor: Annotated[str | None, Omit] = None
    via: Annotated[str | None, Omit] = None
    house_cents: Annotated[int | None, Omit] = None
    voided_line: Annotated[str | None, Omit] = None


@effect("hit_voided")
class HitVoidedEffect(Effect):
    """journal / reports: a pending hit withdrawn by a supervisor (`via` panel or console);
    `corrected_line`: the right line (higher or lower) the supervisor named, paid next
    (NY (k)(3)(ii))"""

    position: int
    level: str
    line: str
    supervisor: str
    reason: str
    via: Annotated[str | None, Omit] = None
    corrected_line: Annotated[str | None, Omit] = None


@effect("hit_corrected")
class HitCorrectedEffect(Effect):
    """journal / reports: a supervisor corrected the line at `position` before it was paid, from
    `line` to `corrected_line` (null: no win), with the `reason` (NY (k)(3)(ii)); the hit is
    re-decided at the meter as it stands when it is paid"""

    position: int
    line: str | None
    corrected_line: str | None
    supervisor: str
    reason: str
    via: Annotated[str | None, Omit] = None


@effect("hit_adjusted")
class HitAdjustedEffect(Effect):
    """journal / reports: after payment, the line at `position` of round `round_id` corrected
    from `line` to `corrected_line` (NY (k)(3)(ii)): `owed_cents` what the right line pays now,
    `paid_cents` what was paid, `cents` the difference (paid `from` the meter or the chip tray
    when positive; negative: overpaid, no money moves, the casino's internal controls)"""

    round_id: int
    position: int
    line: str | None
    corrected_line: str | None
    owed_cents: int
    paid_cents: int
    cents: int
    supervisor: str
    reason: str
    level: Annotated[str | None, Omit] = None
    via: Annotated[str | None, Omit] = None


@effect("refund")
class Refund(Effect):
    """dealer: a voided round returns the progressive wager"""

    position: int
    cents: int
    reason: str


@effect("round_voided")
class RoundVoided(Effect):
    """journal: the round is void (`supervisor`: who cleared the fault that voided it)"""

    round_id: int
    reason: str
    supervisor: Annotated[str | None, Omit] = None


@record("summary_position")
class SummaryPosition(Record):
    """One wagered position of a round's summary."""

    position: int
    wager_cents: int
    line: str | None
    payout_cents: int
    paid_from: Annotated[PaidFrom | None, Omit] = None
    validated_by: Annotated[str | None, Omit] = None
    refund_cents: Annotated[int | None, Omit] = None


@record("summary_meter")
class SummaryMeter(Record):
    """One level's meter at the start and at the end of a round (meter = display + overflow +
    reserve, whole cents)."""

    level: str
    display_before_cents: int
    display_after_cents: int
    meter_before_cents: int
    meter_after_cents: int


@effect("round_summary")
class RoundSummary(Effect):
    """journal / reports: what a round came to when it ended (`outcome` completed or voided):
    each wagered position with its wager, line, payout (and refund when voided), and each
    level's meter before and after"""

    round_id: int
    outcome: Literal["completed", "voided"]
    positions: tuple[SummaryPosition, ...]
    meters: tuple[SummaryMeter, ...]
    reason: Annotated[str | None, Omit] = None


# --------------------------------------------------------------------------- the linked progressive


@effect("linked_wager")
class LinkedWager(Effect):
    """floor link (SAS) / journal: the linked progressive wager's playability changed, and only
    then: `playable` false, the link controller out of reach (the wager refused, its acceptors
    not armed; NY 5321.18(c), NJ 13:69E-1.39B(d),(e)); true, first linked while reachable or
    confirmed again; `linked` false, no longer linked (the table's own progressive again)"""

    pool: str
    level: str
    playable: bool
    linked: bool


# --------------------------------------------------------------------------- meters and config


@effect("meter_movement")
class MeterMovement(Effect):
    """journal: whole-cent deltas of one level's meters; their sum per level equals the change
    of the level's meters. A contribution has `wagers` and `wagered_cents` (the wagers counted
    and what they cost then); every other kind (a payout, the reset after it, the reversal of a
    voided round, a supervised correction) has its `reason` and `supervisor`; a correction the
    `meter` corrected"""

    level: str
    kind: MovementKind
    round_id: int
    display_cents: int
    overflow_cents: int
    reserve_cents: int
    house_cents: int
    wagers: Annotated[int | None, Omit] = None
    wagered_cents: Annotated[int | None, Omit] = None
    reason: Annotated[str | None, Omit] = None
    supervisor: Annotated[str | None, Omit] = None
    meter: Annotated[str | None, Omit] = None

    @property
    def meter_delta_cents(self) -> int:
        """The change of display + overflow + reserve."""
        return self.display_cents + self.overflow_cents + self.reserve_cents


@record("config_change")
class ConfigChange(Record):
    """One key of a configuration change, old and new value."""

    key: str
    old: Json
    new: Json


@effect("config_changed")
class ConfigChangedEffect(Effect):
    """journal: the configuration changed, each key old → new, by whom"""

    changes: tuple[ConfigChange, ...]
    supervisor: str


@record("carried_level")
class CarriedLevel(Record):
    """One level's meters as a fresh journal took them over (whole cents)."""

    level: str
    display_cents: int
    overflow_cents: int
    reserve_cents: int


@effect("meters_carried")
class MetersCarriedEffect(Effect):
    """journal / reports: a fresh journal took over every level's meters from the previous
    journal's head `previous_seq` / `previous_hash` (`source`: where they were read), on two
    supervisors' PINs: nothing moved, nothing lost or invented"""

    previous_seq: int
    previous_hash: str
    source: str
    supervisors: tuple[str, ...]
    levels: tuple[CarriedLevel, ...]


@effect("dealer_hand")
class DealerHand(Effect):
    """dealer: with a card-reading shoe, at play_complete, the dealer's hand set by `house_way`
    (`rule`: the way's rule applied; NY 5324.41(g)(1)); with `ez_pai_gow` a queen dragon of the
    banking hand (the dealer's, or the player bank's: `bank`) pushes every pai gow wager
    (NJ 13:69F-11.9(h)3). Never a card"""

    house_way: str
    rule: str
    ez_pai_gow: bool
    bank: int | None
    queen_dragon: bool
    pai_gow_wagers: Literal["push", "settle"]
