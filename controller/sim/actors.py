"""The people of the simulated table: a scripted dealer, players placing progressive wagers and a
scripted supervisor, deciding their next action from the owner's public snapshot alone. When the
table offers the three-card bonus the dealer enters the positions holding a pai gow wager (every
position with a progressive wager among them, NY 5324.41(k)(1)) before the lock-out.

Player banking (NY 5324.41(h), only with ``game.player_banking``): before any chip of a round the
dealer offers the bank in the order the panel shows (the machine's rotation, published in the
snapshot's ``bank``); each player offered accepts with a seeded chance, the first who accepts
banks. The start of the game, the dealer's turn and the previous round's bank get no offer
((h)(2), (h)(3)). Now and then the dealer finds the bank cannot cover the wagers ((h)(4)(ii)) and
releases it; the round is then house-banked. Every seated player plays the main game every round,
one betting area each, so (h)(4)(i) and (h)(6) hold. With dice the bank shakes the shaker and
sometimes lifts the lid after two shakes, which the dealer has covered and re-shaken ((h)(8)(i),
(h)(10)(i)); that choice is seeded with the journal position too (``seq``), so each re-shake
gets a fresh, bounded chance.

Roles (`People`): the dealer, the players and the supervisor are each either scripted or a
person (``tablectl simulate --people dealer,players,supervisor``, or the page's role chooser); a
scripted role never acts where a person holds it: the director returns None for that action and
the table waits for the person. While the players are people the scripted dealer gives them
`BETTING_WINDOW_S` to place their chips before it calls "no more bets". The scripted supervisor
signs as `SUPERVISOR` ("sim-supervisor"), never as the training login (``trainer``) a person
uses on the console or the page, so the journal tells them apart.

Every decision is a function of the published state and the seed (``random.Random`` seeded with
the seed, the round id and what is decided), never of memory kept between calls: a run that is
killed and started again picks up exactly where the committed state is, and asks for the same
things. Chips and the lock-out go through the GPIO pins (`MockPins`); what a dealer or supervisor
enters on the panel or the web page is posted as the round's event. Simulation only: must never
decide a game rule (the round machine refuses what is not allowed) nor touch the journal.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from controller.service.owner import PublicSnapshot
from fsm.round.banking import BankRotation
from fsm.round.catalogue import AREAS
from fsm.round.events import (
    BankAccepted,
    BankReleased,
    ChipsConfirmed,
    DicePositionEntered,
    Event,
    EventRecord,
    FaultCleared,
    FaultRaised,
    HitValidated,
    LidLiftedByBank,
    MaintenanceExited,
    PaiGowWagers,
    ProgressiveOutcome,
    RngActivated,
    SideWagers,
    SideWagersSettled,
    TableOpened,
    ThreeCardSettled,
)

Post = Callable[[Event], None]

#: The scripted supervisor's id: its own, never a login a person uses (``trainer``, ``floor``).
SUPERVISOR = "sim-supervisor"
#: Who may be a person at the simulated table.
ROLES = ("dealer", "players", "supervisor")
#: While the players are people, the scripted dealer waits this long in Betting before "no more
#: bets" (s).
BETTING_WINDOW_S = 20.0
WAGER_CHANCE = 0.45  # each player position places the progressive wager this often
SIDE_WAGER_CHANCE = 0.25
PAI_GOW_CHANCE = 0.4  # a position without a progressive wager holds a pai gow wager this often
HIT_CHANCE = 0.03  # per wager, when the dealer enters outcomes (shoe does not read cards)
BANK_CHANCE = 0.12  # each player offered the bank accepts it this often (NY 5324.41(h)(3))
NO_COVER_CHANCE = 0.1  # the dealer finds the bank cannot cover the wagers (h)(4)(ii)
LID_CHANCE = 0.2  # the bank lifts the shaker's lid after two shakes (h)(8)(i), (h)(10)(i)
WAITING_STATES = frozenset({"Open_Shuffling", "Open_Dealing", "Open_StartingPosition_Rng"})


def parse_people(spec: str | Iterable[str] | None, where: str = "--people") -> frozenset[str]:
    """The roles a person holds, from ``dealer,players,supervisor`` (any subset, "" or "none":
    nobody); ValueError naming the unknown role."""
    if spec is None:
        return frozenset()
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    roles: set[str] = set()
    for raw in items:
        role = str(raw).strip()
        if not role or role == "none":
            continue
        if role not in ROLES:
            raise ValueError(f"{where}: unknown role {role!r} (roles: {', '.join(ROLES)})")
        roles.add(role)
    return frozenset(roles)


class People:
    """Which roles are held by a person; changed at run time by the page or the console
    (thread-safe: set from their threads, read by the director's loop)."""

    def __init__(self, roles: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._roles = parse_people(list(roles))

    @property
    def roles(self) -> frozenset[str]:
        with self._lock:
            return self._roles

    def set(self, roles: Iterable[str]) -> frozenset[str]:
        parsed = parse_people(list(roles), "people")
        with self._lock:
            self._roles = parsed
        return parsed

    def person(self, role: str) -> bool:
        return role in self.roles

    def any(self) -> bool:
        return bool(self.roles)

    def describe(self) -> str:
        held = self.roles
        return ", ".join(f"{r}: {'person' if r in held else 'scripted'}" for r in ROLES)


class Practice(Protocol):
    """What the director asks of the practice deck (`controller.sim.practice.PracticeDeck`)."""

    def wanted_position(self) -> int | None: ...

    def line_for(self, round_id: int, position: int) -> str | None: ...


class Pins(Protocol):
    """What the director needs of `controller.sim.simulated_table.MockPins`."""

    def drop_chip(self, position: int) -> None: ...

    def press_lockout(self) -> None: ...

    def press_next(self) -> None: ...

    def shake(self) -> None: ...


class Director:
    """Chooses the next action of the dealer, players or supervisor for a public snapshot."""

    def __init__(
        self,
        post: Post,
        pins: Pins,
        seed: int | str,
        lines: tuple[str, ...],
        people: People | None = None,
        practice: Practice | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._post = post
        self._pins = pins
        self._seed = seed
        self._lines = lines
        self.people = people if people is not None else People()
        self._practice = practice
        self._clock = clock
        self._betting_seen: tuple[int, float] | None = None  # (round, when first seen): timing only
        self.actions = 0

    def _person(self, role: str) -> bool:
        return self.people.person(role)

    def _rng(self, round_id: int, what: str) -> random.Random:
        return random.Random(f"{self._seed}:{round_id}:{what}")

    def wagers_wanted(self, round_id: int) -> list[int]:
        """The positions whose players place the progressive wager in ``round_id``."""
        rng = self._rng(round_id, "wagers")
        wanted = [p for p in range(1, AREAS + 1) if rng.random() < WAGER_CHANCE]
        practice = None if self._practice is None else self._practice.wanted_position()
        if practice is not None and practice not in wanted:  # the practice hit needs its wager
            wanted = sorted({*wanted, practice})
        return wanted

    def pai_gow_positions(self, round_id: int) -> list[int]:
        """The positions holding a pai gow wager in ``round_id`` (the dealer enters them when the
        table offers the three-card bonus, NY 5324.41(n)(4)): every position with a progressive
        wager (NY 5324.41(k)(1)) and some others; at least one."""
        rng = self._rng(round_id, "pai_gow")
        wanted = set(self.wagers_wanted(round_id))
        positions = sorted(
            wanted | {p for p in range(1, AREAS + 1) if rng.random() < PAI_GOW_CHANCE}
        )
        return positions or [rng.randint(1, AREAS)]

    def bank_wanted(self, round_id: int, offer: list[int]) -> int | None:
        """The betting area that accepts the bank in ``round_id`` when the dealer offers it in
        the order ``offer`` (NY 5324.41(h)(3): the first who accepts banks), or None: every
        player passes and the house banks."""
        rng = self._rng(round_id, "bank")
        for area in offer:
            if rng.random() < BANK_CHANCE:
                return area
        return None

    def _bank_action(self, snap: PublicSnapshot, rnd: Mapping[str, Any]) -> str | None:
        """The dealer's bank offer before the first chip of the round, or None: none to make.
        A function of the seed, the round id and the published rotation, so a restarted run
        offers and releases alike. Never asked again after a refusal or a release (the
        snapshot's ``last_event``) nor once a chip is lit: the round goes on house-banked and
        the "no progress" guard never trips."""
        view = snap.view
        if not (view.get("config") or {}).get("player_banking") or rnd.get("wagers"):
            return None
        raw = view.get("bank")
        if not raw:
            return None
        rotation = BankRotation.from_json(dict(raw))
        if rotation.current is not None:
            if self._person("dealer"):
                return None  # the dealer judges whether the bank covers the wagers
            if self._rng(snap.round_id, "cover").random() < NO_COVER_CHANCE:
                return self._event(BankReleased())  # (h)(4)(ii): it cannot cover the wagers
            return None
        if snap.last_event in ("bank_accepted", "bank_released"):
            return None  # refused, or released: the house banks this round
        if self._person("players") or self._person("dealer"):
            return None  # a person accepts the bank (players) or makes the offer (dealer)
        right = int(((view.get("config") or {}).get("layout") or {}).get("dealer_right_area", 1))
        area = self.bank_wanted(snap.round_id, rotation.offer_order(right))
        if area is None:
            return None
        return self._event(BankAccepted(position=area))

    def _side_wagers(self, round_id: int) -> str:
        """The dealer enters the 1-7 side wagers the players placed (possibly none)."""
        rng = self._rng(round_id, "side")
        bets = [
            {"position": p, "number": rng.randint(1, 7), "cents": 500}
            for p in range(1, AREAS + 1)
            if rng.random() < SIDE_WAGER_CHANCE
        ]
        return self._event(SideWagers(bets=bets))

    def _bank_of(self, view: Mapping[str, Any]) -> int | None:
        current = (view.get("bank") or {}).get("current")
        return None if current is None else int(current)

    def _needs_pai_gow(self, view: Mapping[str, Any], rnd: Mapping[str, Any]) -> bool:
        config = view.get("config") or {}
        return bool(config.get("three_card_bonus")) and rnd.get("pai_gow") is None

    def _enter_pai_gow(self, view: Mapping[str, Any], rid: int, lit: set[int]) -> str:
        """The dealer enters the pai gow positions: the lit ones, the seeded others and the
        bank's own betting area (the bank plays one area, NY 5324.41(h)(6), and needs cards)."""
        bank = self._bank_of(view)
        positions = lit | set(self.pai_gow_positions(rid)) | ({bank} if bank else set())
        return self._event(PaiGowWagers(positions=sorted(positions)))

    def act(self, snap: PublicSnapshot) -> str | None:
        """Do one thing for ``snap`` and say what (None: nothing to do, wait for a device)."""
        done = self._decide(snap)
        if done is not None:
            self.actions += 1
        return done

    def _event(self, event: EventRecord) -> str:
        self._post(event.envelope())
        return event.TYPE

    def _decide(self, snap: PublicSnapshot) -> str | None:
        if snap.storage_fault:  # cleared only by a restart that passes the storage check
            return None
        state = snap.state
        if state in ("Closed", "Maintenance", "Fault", "Open_JackpotPending"):
            return None if self._person("supervisor") else self._supervise(snap)
        if state == "Open_Betting":
            return self._betting(snap)
        if self._person("dealer"):
            return None  # everything else in the round is the dealer's to enter
        return self._deal(snap)

    def _supervise(self, snap: PublicSnapshot) -> str | None:
        state = snap.state
        if state == "Closed":
            return self._event(TableOpened(supervisor=SUPERVISOR))
        if state == "Maintenance":
            return self._event(MaintenanceExited(supervisor=SUPERVISOR))
        if state == "Fault":
            if _held(snap.view):  # the device still reports it: wait for its healthy report
                return None
            return self._event(FaultCleared(supervisor=SUPERVISOR))
        rnd: Mapping[str, Any] = snap.view.get("round", {}) or {}
        pending = rnd.get("pending") or ()
        level = (snap.view.get("link") or {}).get("level")
        if pending and pending[0].get("level") == level and "locked_cents" not in pending[0]:
            return None  # the link controller has not locked the pool's payout yet
        if pending:
            position = int(pending[0]["position"])
            return self._event(HitValidated(position=position, supervisor=SUPERVISOR))
        return None

    def _betting(self, snap: PublicSnapshot) -> str | None:
        view = snap.view
        rnd: Mapping[str, Any] = view.get("round", {}) or {}
        rid = snap.round_id
        offered = self._bank_action(snap, rnd)
        if offered is not None:
            return offered
        lit = {int(p) for p in (rnd.get("wagers") or {})}
        if not self._person("players"):
            for position in [] if _progressive_refused(view) else self.wagers_wanted(rid):
                if position not in lit:
                    self._pins.drop_chip(position)
                    return "chip_detected"
        if self._person("dealer"):
            return None
        if self._needs_pai_gow(view, rnd):  # before "no more bets" (NY 5324.41(n)(3))
            return self._enter_pai_gow(view, rid, lit)
        if self._person("players"):
            now = self._clock()
            if self._betting_seen is None or self._betting_seen[0] != rid:
                self._betting_seen = (rid, now)
            if now - self._betting_seen[1] < BETTING_WINDOW_S:
                return None  # the people at the table are still placing their chips
        self._pins.press_lockout()
        return "lockout_pressed"

    def _deal(self, snap: PublicSnapshot) -> str | None:
        state = snap.state
        view = snap.view
        rnd: Mapping[str, Any] = view.get("round", {}) or {}
        rid = snap.round_id
        if state == "Open_LockedOut":
            if self._needs_pai_gow(view, rnd):
                lit = {int(p) for p in (rnd.get("wagers") or {})}
                return self._enter_pai_gow(view, rid, lit)
            side = (view.get("config") or {}).get("side_wager") or {}
            if side.get("offered") and rnd.get("side_bets") is None:
                return self._side_wagers(rid)  # closed before the RNG is activated (j)(2)(i)
            if not rnd.get("counted"):
                if self._rng(rid, "confirm").random() < 0.5:
                    self._pins.press_next()  # NEXT on the dealer panel confirms the count
                    return "panel_next"
                return self._event(ChipsConfirmed())
            # the count is confirmed: the RNG is activated by a person ((h)(8)(ii), (h)(10)(ii)),
            # by the bank when a player banks, else by the dealer's NEXT
            if self._bank_of(view) is not None:
                return self._event(RngActivated(by="bank"))
            self._pins.press_next()
            return "panel_next"
        if state == "Open_StartingPosition_Dice":
            shakes = int(rnd.get("shakes", 0))
            if (
                shakes == 2
                and self._bank_of(view) is not None
                and snap.last_event == "shake_detected"
                and self._rng(rid, f"lid{snap.seq}").random() < LID_CHANCE
            ):  # the bank lifts the lid: the dealer has it covered and re-shaken (h)(10)(i)
                return self._event(LidLiftedByBank())
            if shakes < 3:
                self._pins.shake()  # by the bank when a player banks (h)(8)(i), (h)(10)(i)
                return "shake_detected"
            rng = self._rng(rid, "dice")
            total = sum(rng.randint(1, 6) for _ in range(3))  # three six-sided dice
            return self._event(DicePositionEntered(total=total))
        if state == "Open_SideWagers":  # losers collected, winners paid, then the deal (j)(2)
            return self._event(SideWagersSettled())
        if state == "Open_Dealing":
            if rnd.get("stage") == "three_dealt":
                return self._event(ThreeCardSettled())
            return None
        if state == "Open_Play":
            self._pins.press_next()  # the dealer's NEXT: hands are set, settle
            return "panel_next"
        if state == "Open_Settlement":
            outcomes = {int(p) for p in (rnd.get("outcomes") or {})}
            for key in sorted(rnd.get("wagers") or {}, key=int):
                position = int(key)
                if position not in outcomes:
                    practice = (
                        None if self._practice is None else self._practice.line_for(rid, position)
                    )
                    rng = self._rng(rid, f"outcome{position}")
                    line = rng.choice(self._lines) if rng.random() < HIT_CHANCE else None
                    return self._event(ProgressiveOutcome(position=position, line=practice or line))
            return None
        return None  # Shuffling, Rng, RoundComplete: the devices / the owner answer

    def interrupted(self, snap: PublicSnapshot, why: str) -> str | None:
        """The supervisor's call when a device-waiting state makes no progress (e.g. the table
        restarted while the shoe was dealing: a dispense is never re-issued). Not while a person
        is the supervisor: the person sees the stalled state and raises or waits."""
        if self._person("supervisor"):
            return None
        device = {
            "Open_Shuffling": "shuffler",
            "Open_Dealing": "shoe",
            "Open_StartingPosition_Rng": "rng",
        }.get(snap.state)
        if device is None:
            return None
        detail = f"{device} made no progress in {snap.state}: {why}"
        return self._event(FaultRaised(code="DEVICE_STALLED", device=device, detail=detail))


def _progressive_refused(view: Mapping[str, Any]) -> bool:
    """The table refuses progressive wagers now (the linked pool's controller out of reach, the
    floor link down or the floor system's SAS 01): the players place none."""
    link = view.get("link") or {}
    floor = view.get("floor") or {}
    return bool(link.get("down") or floor.get("link_blocks") or floor.get("refused"))


def _held(view: Mapping[str, Any]) -> bool:
    """Whether the fault set still holds a fault its device reports (a jam not yet cleared)."""
    fault = view.get("fault")
    faults = fault.get("faults", ()) if isinstance(fault, Mapping) else ()
    return any(isinstance(f, Mapping) and f.get("held") for f in faults)
