"""The round's events: the envelope every input posts, and one typed record per event type.

An input (a GPIO edge, a serial answer, the console, the owner's deadline) posts an `Event`
envelope: its ``type`` and its JSON ``data`` as received, which the journal keeps verbatim. The
round machine turns the envelope into the event's typed record with `parse_event` when it enters
``RoundMachine.step``: an unknown type, an unknown or missing field, a wrong type or a value out of
range is refused there with the reason (a journaled ``rejected`` effect), never accepted.

Adding an event type: define its record here, once (``@event("name")`` on a class with its fields
and a docstring saying what it records), then its transitions in the phase it belongs to
(fsm/round/phases/, docs/architecture.md walks through it); the docs' catalogues are generated from
these records (``python docs/catalogue.py --write``). Must never hold behaviour: the phases decide
what an event means.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar, cast, dataclass_transform

from fsm.round.constants import AREAS
from fsm.round.records import (
    MAY_BE_EMPTY,
    OMIT_NONE,
    Between,
    Json,
    Record,
    RecordError,
    record,
)

#: The untyped JSON of an envelope's data, as received (validated by `parse_event`).
JSON = Any

Position = Annotated[int, Between(1, AREAS)]
Supervisor = str


@dataclass(frozen=True)
class Event:
    """One input for the round as it was received: ``type`` names it (``chip_detected``,
    ``lockout_pressed``, ``fault_raised`` ...), ``data`` carries its JSON fields."""

    type: str
    data: Mapping[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        return {"type": self.type, "data": dict(self.data)}


class EventRecord(Record):
    """Base of the typed events."""

    def envelope(self) -> Event:
        """The envelope of this event (what an input posts and the journal keeps): every field
        that differs from its default (a field left at its default is left out; `parse_event`
        gives it back)."""
        data = self.fields_json()
        defaults = {f.name: f.default for f in dataclasses.fields(cast(Any, self))}
        for f in self.FIELDS:
            if not f.required and getattr(self, f.name) == defaults[f.name]:
                data.pop(f.key, None)
        return Event(self.TYPE, data)


_R = TypeVar("_R", bound=EventRecord)

#: Every event type -> its record class (filled in by ``@event``).
EVENTS: dict[str, type[EventRecord]] = {}


@dataclass_transform(frozen_default=True)
def event(name: str) -> Callable[[type[_R]], type[_R]]:
    """Define the record of the event type ``name`` (and register it)."""
    return record(name, EVENTS)


def parse_event(ev: Event) -> EventRecord:
    """The typed record of an envelope; `RecordError` says what is wrong with it."""
    etype = getattr(ev, "type", None)
    if not isinstance(etype, str):
        raise RecordError("type: an event type must be a string")
    cls = EVENTS.get(etype)
    if cls is None:
        raise RecordError(f"unknown event type {etype!r}"[:120])
    data = getattr(ev, "data", None)
    if not isinstance(data, Mapping):
        raise RecordError("data: must be a mapping")
    return cls.parse(data)


# --------------------------------------------------------------------------- the table itself


@event("power_up")
class PowerUp(EventRecord):
    """the service started: SHA-256 of its software and data files, storage check, the seq it
    resumed from (the reconcile event after a restart); `clock_synced` false: the system clock
    was not yet synchronised (a Pi has no RTC), so this entry's and later timestamps may be off
    until a `device_recovered` with device `clock`, code `TIME_SYNC`; `training` true: a simulated
    training table (`tablectl simulate`), whose journal every report and verify marks TRAINING;
    `unapproved_bench` true: `tablectl run --unapproved-bench`, a lab bench playing software no
    approved manifest vouches for, marked UNAPPROVED SOFTWARE on every report, verify and screen"""

    software_hash: str | None = None
    storage: Json = None
    restored_seq: Annotated[int, Between(0)] | None = None
    clock_synced: bool | None = None
    training: bool | None = None
    unapproved_bench: bool | None = None


@event("table_opened")
class TableOpened(EventRecord):
    """the table opens (a shuffle follows)"""

    supervisor: Supervisor
    via: str | None = None


@event("table_closed")
class TableClosed(EventRecord):
    """the table closes"""

    supervisor: Supervisor
    via: str | None = None


# --------------------------------------------------------------------------- betting


@event("shuffle_complete")
class ShuffleComplete(EventRecord):
    """the shuffler's deck count (53 required, NY (n)(8)) and the deck's id"""

    count: Annotated[int, Between(0, 9999)]
    deck_id: Json = None


@event("chip_detected")
class ChipDetected(EventRecord):
    """a chip at an acceptor (1-6); refused when late (after the lock-out, NY (k)(2)), when
    the acceptor is already lit, or when the acceptors are not armed"""

    position: Position


@event("bank_accepted")
class BankAccepted(EventRecord):
    """a player banks the round (NY (h))"""

    position: Position


@event("bank_released")
class BankReleased(EventRecord):
    """the bank withdrawn before the lock-out"""


@event("lockout_pressed")
class LockoutPressed(EventRecord):
    """ "no more bets": the lock-out button (NY (k)(2))"""


@event("pai_gow_wagers")
class PaiGowWagers(EventRecord):
    """three-card bonus only: the betting areas (1-6, distinct, at least one) holding a pai gow
    wager, entered by the dealer in Betting or LockedOut; every lit progressive wager must be
    among them (NY (k)(1)); the stacks go to them only, farthest left first, dealer last
    (NY (n)(4)-(5), (n)(7)(ii))"""

    positions: Json
    via: str | None = None


@event("chips_confirmed")
class ChipsConfirmed(EventRecord):
    """the dealer's chip count equals the lights lit; contributions made"""


@event("chips_mismatch")
class ChipsMismatch(EventRecord):
    """the count differs; supervisor alerted"""

    counted: Annotated[int, Between(0, 64)]


@event("chips_resolved")
class ChipsResolved(EventRecord):
    """the supervisor names the wagers that stand"""

    supervisor: Supervisor
    positions: Json
    via: str | None = None


# --------------------------------------------------------------------------- starting position


@event("rng_activated")
class RngActivated(EventRecord):
    """the dealer (or, when a player banks, the bank) activates the RNG after the chip count and
    once the 1-7 side wagers are closed (NY (h)(8)(ii), (h)(10)(ii), (j)(2)(i)); the dealer
    panel's NEXT does it as the dealer"""

    by: Literal["dealer", "bank"] = "dealer"
    via: str | None = None


@event("rng_drawn")
class RngDrawn(EventRecord):
    """the one RNG draw of the round, 1-7, as drawn and shown"""

    value: Annotated[int, Between(1, 7)]


@event("rng_void")
class RngVoid(EventRecord):
    """the supervisor voids the draw; a redraw follows"""

    supervisor: Supervisor
    reason: str
    via: str | None = None


@event("shake_detected")
class ShakeDetected(EventRecord):
    """one shake of the dice shaker (``count``: the sensor's own count, informational)"""

    count: Annotated[int, Between(0)] | None = None


@event("shaker_lid")
class ShakerLid(EventRecord):
    """the shaker's lid sensor"""

    lifted: bool


@event("lid_lifted_by_bank")
class LidLiftedByBank(EventRecord):
    """the bank lifted the lid: re-shake required (NY (h)(8)(i))"""


@event("dice_position_entered")
class DicePositionEntered(EventRecord):
    """the dice total (3-18) entered by the dealer"""

    total: Annotated[int, Between(3, 18)]


@event("side_wagers")
class SideWagers(EventRecord):
    """the 1-7 side wagers `[{"position","number","cents"}]`, possibly none, entered by the
    dealer in LockedOut before the RNG is activated (replaceable until then); activating the
    RNG closes them (NY (j)(2)(i), NJ 11.8C(b)1); `supervisor` and `via` say who entered them
    through the console or the page"""

    bets: Json
    supervisor: str | None = None
    via: str | None = None


@event("side_wagers_settled")
class SideWagersSettled(EventRecord):
    """the dealer has collected the losing and paid the winning 1-7 side wagers recorded before
    the draw (NY (j)(2)(iv)-(v)); the deal follows"""


# --------------------------------------------------------------------------- dealing and play


@event("dealt")
class Dealt(EventRecord):
    """the shoe dispensed (4 cards remain; with the three-card bonus and p pai gow positions
    53 − 3(p+1) after the threes, 53 − 7(p+1) after the fours); card identities (a reading shoe,
    per dispense: `stacks` in the order dispensed, or `hands` by seat) are hidden from every
    export until the round resolves"""

    remaining: Annotated[int, Between(0, 53)]
    stacks: Json = None
    hands: Json = None


@event("three_card_settled")
class ThreeCardSettled(EventRecord):
    """three-card bonus wagers settled by the dealer (NY (n)(6)); the stacks of four follow
    (NY (n)(7)(ii))"""


@event("play_complete")
class PlayComplete(EventRecord):
    """hands set and shown: settlement starts"""


@event("progressive_outcome")
class ProgressiveOutcome(EventRecord):
    """a position's progressive line (or `null`: lost), when the shoe does not read cards"""

    position: Position
    line: Annotated[str, MAY_BE_EMPTY] | None


@event("hit_validated")
class HitValidated(EventRecord):
    """a supervisor validates a hit: paid at the meter now (NY (k)(3)(iii), (k)(6))"""

    position: Position
    supervisor: Supervisor
    via: str | None = None


@event("hit_voided")
class HitVoided(EventRecord):
    """a pending hit found not to be the line entered: not a winner, or (`line`) a winner of
    the right line, higher or lower, which is then paid at the meter as it stands
    (NY (k)(3)(ii))"""

    position: Position
    supervisor: Supervisor
    reason: str
    via: str | None = None
    line: str | None = None


@event("hit_corrected")
class HitCorrected(EventRecord):
    """a supervisor corrects a position's line before it is paid, upward or downward (`line`,
    `null`: no win): re-decided at the meter as it then stands when its turn to be paid comes
    (NY (k)(3)(ii), (g)(8), (k)(6))"""

    position: Position
    line: Annotated[str, MAY_BE_EMPTY] | None
    supervisor: Supervisor
    reason: str
    via: str | None = None


@event("hit_adjusted")
class HitAdjusted(EventRecord):
    """after payment, a correction of the line at a position of the round just completed (in
    Shuffling, before the next round's betting) is an adjustment: what the right `line` pays
    now less what was paid (NY (k)(3)(ii))"""

    round_id: Annotated[int, Between(0)]
    position: Position
    line: Annotated[str, MAY_BE_EMPTY] | None
    supervisor: Supervisor
    reason: str
    via: str | None = None


@event("round_completed")
class RoundCompleted(EventRecord):
    """the round is complete (posted by the machine itself); accepted ones are what `rounds`
    counts; refused unless it names the round in play"""

    round_id: Annotated[int, Between(0)]


# --------------------------------------------------------------------------- faults


@event("fault_raised")
class FaultRaised(EventRecord):
    """a fault (codes below); progressive wagers refused. `held`: the device reports this
    condition and will report it healthy (`device_recovered`); until then the fault cannot be
    cleared (the per-device fault set)"""

    code: str
    device: str
    detail: Annotated[str, MAY_BE_EMPTY] = ""
    held: bool = False


@event("fault_cleared")
class FaultCleared(EventRecord):
    """a supervisor clears it: the round resumes, or is voided with its contributions reversed"""

    supervisor: Supervisor
    void: bool = False
    via: str | None = None


@event("deadline")
class Deadline(EventRecord):
    """a deadline of the state passed (the owner posts it; no timer threads)"""


@event("device_recovered")
class DeviceRecovered(EventRecord):
    """a device answers again after a communication fault, or reports healthy after a
    condition it reported (`code`; none: every fault it holds)"""

    device: str
    code: str | None = None


# --------------------------------------------------------------------------- the floor link


@event("floor_link")
class FloorLink(EventRecord):
    """the casino floor system's link went down (no poll for 5 s) or came back (docs/sas.md);
    down with `blocks_progressive` (configuration `sas.progressive_depends_on_link`): progressive
    wagers refused, acceptors not armed, until it returns (NJ 13:69E-1.39B(d))"""

    up: bool
    blocks_progressive: bool = False


@event("link_state")
class LinkState(EventRecord):
    """the linked progressive's link controller (docs/link.md): `up` false when the table could
    not reach it for the configured time (the linked wager unplayable, its acceptors not armed,
    NY 5321.18(c), NJ 13:69E-1.39B(d),(e)); true once the controller confirmed it holds the
    table's contributions up to `confirmed_seq`; `pool` and `level` name what is linked;
    `linked` false: no longer linked"""

    up: bool
    pool: str
    level: str
    confirmed_seq: Annotated[int, Between(0)] | None = None
    detail: str | None = None
    #: false: the table is no longer linked (its configuration has no [link]): the progressive
    #: is the table's own again
    linked: bool = True


@event("link_hit_locked")
class LinkHitLocked(EventRecord):
    """the link controller locked the linked pool's payout of a pending hit: `cents` paid from
    the pool's meter at that moment, `order` the order it recorded among the pool's hits (NY
    5321.18(b)(3)(iii)); journaled before anything shows the win; `line`: the hit's line the
    lock was asked for (refused for another hit at the position, a supervisor's corrected one);
    `paid_line`: the line the pool found paying the most of the hand's lines at its meter (NY
    5324.41(g)(8)), `paid_from` where it is paid from (`chip_tray`: a fixed amount (k)(5) does
    not deduct from the meter; the pool decided it and locked nothing off its meter)"""

    position: Position
    level: str
    cents: Annotated[int, Between(0)]
    order: Annotated[int, Between(1)]
    pool: str
    meter_cents: Annotated[int, Between(0)] | None = None
    line: str | None = None
    paid_line: str | None = None
    paid_from: Literal["meter", "chip_tray"] | None = None


FloorCommandName = Literal[
    "refuse_progressive",
    "accept_progressive",
    "set_clock",
    "enable_game",
    "disable_game",
    "exception_acked",
]


@event("floor_command")
class FloorCommand(EventRecord):
    """a command of the floor system (docs/sas.md): `refuse_progressive` / `accept_progressive`
    (SAS 01 / 02), `set_clock` (7F: `clock`, `clock_offset_ms`, `applied` only when the
    configuration allows), `enable_game` / `disable_game` (09, `game`), `exception_acked` (the
    host took exception `code`, raised by entry `source_seq`); `unjournaled`: host commands not
    journaled before this one (over the bound of controller/floor/bound.py)"""

    command: FloorCommandName
    code: Annotated[int, Between(0, 255)] | None = None
    source_seq: Annotated[int, Between(0)] | None = None
    clock: str | None = None
    clock_offset_ms: int | None = None
    applied: bool | None = None
    game: Annotated[int, Between(0, 9999)] | None = None
    unjournaled: Annotated[int, Between(0)] | None = None


# --------------------------------------------------------------------------- training

TrainingAction = Literal["practice_deal", "fault_injected", "people", "drill_answered"]
_Omit = OMIT_NONE


@event("training")
class Training(EventRecord):
    """simulated training table only (docs/operator-guide.md, Training), changing nothing in the
    round: `practice_deal` (the practice deck put `line`'s cards in the stack of `position`
    before the shoe dealt it), `fault_injected` (a trainer injected `fault` into a simulated
    device), `people` (who is a person: `people` names the roles dealer, players, supervisor),
    `drill_answered` (`trainee` answered dealer drill `number` of kind `drill` at `level`
    (none: mixed levels), `correct` or not: the trainee's history is these entries)"""

    action: TrainingAction
    position: Position | None = None
    line: str | None = None
    fault: str | None = None
    people: tuple[str, ...] | None = None
    by: str | None = None
    trainee: Annotated[str | None, _Omit] = None
    drill: Annotated[str | None, _Omit] = None
    level: Annotated[int | None, Between(1, 3), _Omit] = None
    number: Annotated[int | None, Between(0), _Omit] = None
    correct: Annotated[bool | None, _Omit] = None


# --------------------------------------------------------------------------- the door


@event("door")
class Door(EventRecord):
    """the controller compartment's door switch (issue 28 item 4), journaled with the entry's
    time: `open` true when the door was opened (or the switch's wire broke), false when it was
    closed; while it is open play is refused unless a supervisor allowed maintenance"""

    open: bool


@event("door_maintenance")
class DoorMaintenance(EventRecord):
    """a supervisor (PIN checked by the console) allows play to go on while the compartment
    door is open, for maintenance (`allow` true), or withdraws it (`allow` false); closing the
    door ends it"""

    supervisor: Supervisor
    allow: bool
    via: str | None = None


# --------------------------------------------------------------------------- the dealer panel


@event("panel_next")
class PanelNext(EventRecord):
    """the dealer's NEXT button, meaning what the state needs next; with the supervisor key on,
    also the supervisor's step (open the table, validate the pending hit, clear a fault)"""


@event("panel_void")
class PanelVoid(EventRecord):
    """the VOID button, supervisor key on only: void the pending hit, clear a fault voiding the
    round, void the RNG draw, or close an idle table"""


@event("supervisor_key")
class SupervisorKey(EventRecord):
    """the supervisor key switch (its position is kept); the key alone names no one: panel
    steps are journaled as `panel-key` unless a `key_holder` named the person"""

    on: bool


@event("key_holder")
class KeyHolder(EventRecord):
    """a supervisor, identified (console PIN, a badge reader), names themself as the one who
    turned the supervisor key on: panel steps are journaled in their name until the key is
    turned off; refused while the key is off"""

    supervisor: Supervisor
    via: str | None = None


@event("console_refused")
class ConsoleRefused(EventRecord):
    """the supervisor console refused a PIN (never the PIN itself); at most 10 a minute are
    journaled, `unjournaled` counts those that were not"""

    supervisor: Supervisor
    request: str
    reason: str
    unjournaled: Annotated[int, Between(0)] | None = None


@event("software_verified")
class SoftwareVerified(EventRecord):
    """an on-demand software verification (docs/software-verification.md): `by` who asked (a
    supervisor's id, or `floor` for the floor system's SAS long poll 21), `via` console, web or
    sas, `method` hmac-sha1 (GAT style) or sas-crc16 (SAS 21), the `seed` asked with and the
    `digest` answered (hex) over `files` approved files (`size` bytes, listed by `manifest`,
    `approved` false where no approved manifest exists); `problem`: why there is no digest"""

    by: str
    via: Literal["console", "web", "sas"]
    method: Literal["hmac-sha1", "sas-crc16"]
    seed: str
    digest: str | None = None
    files: Annotated[int, Between(0)] | None = None
    size: Annotated[int, Between(0)] | None = None
    manifest: str | None = None
    approved: bool | None = None
    problem: str | None = None


# --------------------------------------------------------------------------- maintenance


@event("maintenance_entered")
class MaintenanceEntered(EventRecord):
    """maintenance, table closed"""

    supervisor: Supervisor
    via: str | None = None


@event("maintenance_exited")
class MaintenanceExited(EventRecord):
    """back to closed"""

    supervisor: Supervisor
    via: str | None = None


@event("config_changed")
class ConfigChanged(EventRecord):
    """configuration changed (`changes`: {"dotted.key": new value}; old and new values in the
    effect)"""

    supervisor: Supervisor
    changes: Json
    via: str | None = None


@event("config_pending")
class ConfigPending(EventRecord):
    """the configuration file differs from the journal's while the table is open: the journal's
    stays in force, `keys` names every differing key, `changes` lists each as
    {"key", "journal", "file"}; applied when the table next closes"""

    keys: tuple[str, ...]
    changes: Json
    via: str | None = None


@event("meter_corrected")
class MeterCorrected(EventRecord):
    """a supervised meter correction (NJ 13:69D-1.52(f): never without a recorded reason)"""

    level: str
    meter: str
    delta_cents: int
    reason: str
    supervisor: Supervisor
    via: str | None = None


@event("meters_carried")
class MetersCarried(EventRecord):
    """a fresh journal on a table that had one (docs/journal.md, "A fresh journal carrying the
    meters"): every level's complete meters (`meters`: {level: its meters as the journal stores
    them}) carried over from the previous journal's head `previous_seq` / `previous_hash`
    (`previous_key_id`: its key id), read from `source` (journal: the previous file, verified
    by replay; report: the last signed meters report; witness: central's stored copy, its
    chain checked and replayed; verify cannot follow the chain across these two), with two
    supervisors' PINs
    (`supervisors`, two different ids); only on a closed table whose meters never moved"""

    meters: Json
    previous_seq: Annotated[int, Between(1)]
    previous_hash: str
    source: Literal["journal", "report", "witness"]
    supervisors: tuple[Supervisor, ...]
    previous_key_id: Annotated[str, MAY_BE_EMPTY] = ""
    via: str | None = None


@event("light_test")
class LightTest(EventRecord):
    """acceptor light test"""

    supervisor: Supervisor | None = None
    via: str | None = None


@event("display_test")
class DisplayTest(EventRecord):
    """number display test"""

    supervisor: Supervisor | None = None
    via: str | None = None
