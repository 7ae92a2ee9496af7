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

Every decision is a function of the published state and the seed (``random.Random`` seeded with
the seed, the round id and what is decided), never of memory kept between calls: a run that is
killed and started again picks up exactly where the committed state is, and asks for the same
things. Chips and the lock-out go through the GPIO pins (`MockPins`); what a dealer or supervisor
enters on the panel or the web page is posted as the round's event. Simulation only: must never
decide a game rule (the round machine refuses what is not allowed) nor touch the journal.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from controller.service.owner import PublicSnapshot
from fsm.round.banking import BankRotation
from fsm.round.catalogue import AREAS
from fsm.round.events import Event

Post = Callable[[Event], None]

SUPERVISOR = "trainer"
WAGER_CHANCE = 0.45  # each player position places the progressive wager this often
SIDE_WAGER_CHANCE = 0.25
PAI_GOW_CHANCE = 0.4  # a position without a progressive wager holds a pai gow wager this often
HIT_CHANCE = 0.03  # per wager, when the dealer enters outcomes (shoe does not read cards)
BANK_CHANCE = 0.12  # each player offered the bank accepts it this often (NY 5324.41(h)(3))
NO_COVER_CHANCE = 0.1  # the dealer finds the bank cannot cover the wagers (h)(4)(ii)
LID_CHANCE = 0.2  # the bank lifts the shaker's lid after two shakes (h)(8)(i), (h)(10)(i)
WAITING_STATES = frozenset({"Open_Shuffling", "Open_Dealing", "Open_StartingPosition_Rng"})


class Pins(Protocol):
    """What the director needs of `controller.sim.table.MockPins`."""

    def drop_chip(self, position: int) -> None: ...

    def press_lockout(self) -> None: ...

    def press_next(self) -> None: ...

    def shake(self) -> None: ...


class Director:
    """Chooses the next action of the dealer, players or supervisor for a public snapshot."""

    def __init__(self, post: Post, pins: Pins, seed: int | str, lines: tuple[str, ...]) -> None:
        self._post = post
        self._pins = pins
        self._seed = seed
        self._lines = lines
        self.actions = 0

    def _rng(self, round_id: int, what: str) -> random.Random:
        return random.Random(f"{self._seed}:{round_id}:{what}")

    def wagers_wanted(self, round_id: int) -> list[int]:
        """The positions whose players place the progressive wager in ``round_id``."""
        rng = self._rng(round_id, "wagers")
        return [p for p in range(1, AREAS + 1) if rng.random() < WAGER_CHANCE]

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
            if self._rng(snap.round_id, "cover").random() < NO_COVER_CHANCE:
                return self._event("bank_released")  # (h)(4)(ii): it cannot cover the wagers
            return None
        if snap.last_event in ("bank_accepted", "bank_released"):
            return None  # refused, or released: the house banks this round
        area = self.bank_wanted(snap.round_id, rotation.offer_order())
        if area is None:
            return None
        return self._event("bank_accepted", {"position": area})

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
        return self._event("pai_gow_wagers", {"positions": sorted(positions)})

    def act(self, snap: PublicSnapshot) -> str | None:
        """Do one thing for ``snap`` and say what (None: nothing to do, wait for a device)."""
        done = self._decide(snap)
        if done is not None:
            self.actions += 1
        return done

    def _event(self, kind: str, data: Mapping[str, Any] | None = None) -> str:
        self._post(Event(kind, dict(data or {})))
        return kind

    def _decide(self, snap: PublicSnapshot) -> str | None:
        if snap.storage_fault:  # cleared only by a restart that passes the storage check
            return None
        state = snap.state
        view = snap.view
        rnd: Mapping[str, Any] = view.get("round", {}) or {}
        rid = snap.round_id
        if state == "Closed":
            return self._event("table_opened", {"supervisor": SUPERVISOR})
        if state == "Maintenance":
            return self._event("maintenance_exited", {"supervisor": SUPERVISOR})
        if state == "Fault":
            if _held(view):  # the device still reports it: wait for its healthy report
                return None
            return self._event("fault_cleared", {"supervisor": SUPERVISOR})
        if state == "Open_Betting":
            offered = self._bank_action(snap, rnd)
            if offered is not None:
                return offered
            lit = {int(p) for p in (rnd.get("wagers") or {})}
            for position in self.wagers_wanted(rid):
                if position not in lit:
                    self._pins.drop_chip(position)
                    return "chip_detected"
            if self._needs_pai_gow(view, rnd):  # before "no more bets" (NY 5324.41(n)(3))
                return self._enter_pai_gow(view, rid, lit)
            self._pins.press_lockout()
            return "lockout_pressed"
        if state == "Open_LockedOut":
            if self._needs_pai_gow(view, rnd):
                lit = {int(p) for p in (rnd.get("wagers") or {})}
                return self._enter_pai_gow(view, rid, lit)
            if self._rng(rid, "confirm").random() < 0.5:
                self._pins.press_next()  # NEXT on the dealer panel confirms the count
                return "panel_next"
            return self._event("chips_confirmed")
        if state == "Open_StartingPosition_Dice":
            shakes = int(rnd.get("shakes", 0))
            if (
                shakes == 2
                and self._bank_of(view) is not None
                and snap.last_event == "shake_detected"
                and self._rng(rid, f"lid{snap.seq}").random() < LID_CHANCE
            ):  # the bank lifts the lid: the dealer has it covered and re-shaken (h)(10)(i)
                return self._event("lid_lifted_by_bank")
            if shakes < 3:
                self._pins.shake()  # by the bank when a player banks (h)(8)(i), (h)(10)(i)
                return "shake_detected"
            rng = self._rng(rid, "dice")
            total = sum(rng.randint(1, 6) for _ in range(3))  # three six-sided dice
            return self._event("dice_position_entered", {"total": total})
        if state == "Open_SideWagers":
            rng = self._rng(rid, "side")
            bets = [
                {"position": p, "number": rng.randint(1, 7), "cents": 500}
                for p in range(1, AREAS + 1)
                if rng.random() < SIDE_WAGER_CHANCE
            ]
            if bets:
                return self._event("side_wagers", {"bets": bets})
            return self._event("side_wagers_settled")
        if state == "Open_Dealing":
            if rnd.get("stage") == "three_dealt":
                return self._event("three_card_settled")
            return None
        if state == "Open_Play":
            self._pins.press_next()  # the dealer's NEXT: hands are set, settle
            return "panel_next"
        if state == "Open_Settlement":
            outcomes = {int(p) for p in (rnd.get("outcomes") or {})}
            for key in sorted(rnd.get("wagers") or {}, key=int):
                position = int(key)
                if position not in outcomes:
                    rng = self._rng(rid, f"outcome{position}")
                    line = rng.choice(self._lines) if rng.random() < HIT_CHANCE else None
                    return self._event("progressive_outcome", {"position": position, "line": line})
            return None
        if state == "Open_JackpotPending":
            pending = rnd.get("pending") or ()
            if pending:
                position = int(pending[0]["position"])
                return self._event(
                    "hit_validated", {"position": position, "supervisor": SUPERVISOR}
                )
            return None
        return None  # Shuffling, Rng, RoundComplete: the devices / the owner answer

    def interrupted(self, snap: PublicSnapshot, why: str) -> str | None:
        """The supervisor's call when a device-waiting state makes no progress (e.g. the table
        restarted while the shoe was dealing: a dispense is never re-issued)."""
        device = {
            "Open_Shuffling": "shuffler",
            "Open_Dealing": "shoe",
            "Open_StartingPosition_Rng": "rng",
        }.get(snap.state)
        if device is None:
            return None
        detail = f"{device} made no progress in {snap.state}: {why}"
        return self._event(
            "fault_raised", {"code": "DEVICE_STALLED", "device": device, "detail": detail}
        )


def _held(view: Mapping[str, Any]) -> bool:
    """Whether the fault set still holds a fault its device reports (a jam not yet cleared)."""
    fault = view.get("fault")
    faults = fault.get("faults", ()) if isinstance(fault, Mapping) else ()
    return any(isinstance(f, Mapping) and f.get("held") for f in faults)
