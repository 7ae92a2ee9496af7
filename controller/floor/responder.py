"""The answer to each long poll of the minimum list, from one published snapshot (docs/sas.md).

``respond(poll, snap, fold, now_s)`` is pure: it reads the owner's `PublicSnapshot` (meters,
pending hits, state) and the journal-derived `FloorFold` handed to it, and returns the frame to
send (None: no answer) and, for the polls that command the table, the ``floor_command`` event
data to post to the owner. Must never read the journal or the machine, post anything itself,
wait on the owner, or raise on any poll (a bad field is a NACK).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.floor.exceptions import FloorFold
from controller.floor.meters import (
    CANCELLED,
    COIN_IN,
    COIN_OUT,
    DROP,
    GAMES_LOST,
    GAMES_PLAYED,
    GAMES_WON,
    JACKPOT,
    meter_value,
    value_or_zero,
)
from controller.floor.sas_config import SasSection
from controller.service.owner import PublicSnapshot
from drivers.sas import codec
from drivers.sas.sas_link import Poll
from fsm.round.config import GameConfig
from fsm.round.events import FloorCommand, FloorCommandName, SoftwareVerified

GAME = 1  # the table is one game; game 0 is the machine as a whole
DENOMINATION_CENT = 0x01
SINGLE_METERS = {
    0x10: CANCELLED,
    0x11: COIN_IN,
    0x12: COIN_OUT,
    0x13: DROP,
    0x14: JACKPOT,
    0x15: GAMES_PLAYED,
    0x16: GAMES_WON,
    0x17: GAMES_LOST,
}
MAX_2F_CODES = 10
MAX_6F_CODES = 12


@dataclass(frozen=True)
class Reply:
    frame: bytes | None
    command: FloorCommand | None = None
    reason: str = ""
    #: a ``software_verified`` entry to journal (21, ROM signature verification)
    verified: SoftwareVerified | None = None


class _Nack(Exception):
    pass


#: An award's amount field (1B, 84: 5 BCD bytes) carries at most $99,999,999.99. Meters roll
#: over at their field's width as SAS meters do (the host takes differences modulo it); an award
#: never does: a larger one is not answered (docs/sas.md, "Rollover").
AWARD_MAX = codec.bcd_max(5)


def _too_large(what: str, cents: int) -> str:
    return (
        f"{what}: {cents} cents exceed the 5-byte BCD field (at most {AWARD_MAX}); not "
        "answered rather than wrapped (docs/sas.md, Rollover)"
    )


class Responder:
    """Answers polls for one table; built once from its configuration."""

    def __init__(self, sas: SasSection, game: GameConfig, serial_number: str) -> None:
        self.sas = sas
        self.game = game
        self.address = sas.address
        self.serial_number = serial_number[:40]
        self.levels = [lvl.name for lvl in game.levels]
        max_bet = min(255, game.progressive_wager_cents)
        self.info = codec.machine_info(
            sas.game_id,
            sas.additional_id,
            DENOMINATION_CENT,
            max_bet,
            0,
            0,
            sas.paytable_id,
            sas.base_percent,
        )

    # ------------------------------------------------------------------------------ helpers
    def _meters(self, snap: PublicSnapshot) -> Mapping[str, Mapping[str, Any]]:
        return snap.meters

    def _v(self, code: int, snap: PublicSnapshot) -> int:
        return value_or_zero(code, self._meters(snap), self.sas.meters)

    def _game(self, data: bytes) -> int:
        try:
            game = codec.from_bcd(data[:2])
        except codec.BcdError as exc:
            raise _Nack(f"game number: {exc}") from None
        if game not in (0, GAME):
            raise _Nack(f"game number {game:04d}: the table has game 0001 only")
        return game

    def handpay(self, snap: PublicSnapshot) -> tuple[int, int]:
        """(level number, amount in cents) of the first hit awaiting a supervisor; (0, 0)."""
        rnd = snap.view.get("round") or {}
        pending = rnd.get("pending") or ()
        if not pending:
            return 0, 0
        hit = pending[0]
        level = str(hit.get("level", ""))
        number = self.levels.index(level) + 1 if level in self.levels else 0
        if "locked_cents" in hit:  # a linked hit: exactly what the pool locked (docs/link.md)
            return number, int(hit["locked_cents"])
        if hit.get("lines") is not None:  # the pool's to decide at its meter: not known yet
            return number, 0
        meter = int((snap.meters.get(level) or {}).get("display_cents", 0))
        pays = hit.get("pays_cents")  # the round's own figure, at the meter as it stands
        if isinstance(pays, int) and not isinstance(pays, bool):
            return number, pays
        try:
            # what the hit is paid now: its best line at each line's level's meter (the
            # round decides it again when it is paid, NY 5324.41(g)(8), (k)(6))
            amounts = []
            for line in self.game.table.implied(str(hit.get("line"))):
                at = (snap.meters.get(self.game.level_for_line(line).name) or {}).get(
                    "display_cents", 0
                )
                amounts.append(self.game.progressive_payout(line, int(at)))
            amount = max(amounts)
        except (KeyError, ValueError):
            amount = meter
        return number, amount

    def last_win(self, snap: PublicSnapshot) -> tuple[int, int]:
        """(level number, amount in cents) of the last progressive win paid from a meter."""
        best: tuple[int, int, int] = (-1, 0, 0)
        for i, name in enumerate(self.levels):
            for hit in (snap.meters.get(name) or {}).get("last_hits", ()):
                t = int(hit.get("time_ms", 0))
                if t >= best[0]:
                    best = (t, i + 1, int(hit.get("amount_cents", 0)))
        return best[1], best[2]

    # ------------------------------------------------------------------------------ answer
    def respond(self, poll: Poll, snap: PublicSnapshot, fold: FloorFold, now_s: float) -> Reply:
        command = poll.command
        assert command is not None
        if command not in self.sas.enabled_polls:
            return Reply(None, reason="poll not enabled")
        try:
            return self._respond(command, poll, snap, fold, now_s)
        except _Nack as exc:
            return Reply(codec.nack(self.address), reason=str(exc))

    def broadcast(self, poll: Poll, now_s: float) -> Reply:
        """A poll to address 0: only 7F (set date and time) means something; never answered."""
        if poll.command == 0x7F and 0x7F in self.sas.enabled_polls:
            try:
                return Reply(None, self._set_clock(poll.data, now_s))
            except _Nack as exc:
                return Reply(None, reason=str(exc))
        return Reply(None, reason="broadcast")

    def _rom_signature(self, seed: int) -> Reply:
        """21: CRC-16 seeded by the host over every approved file (controller/lab/software.py),
        journaled; no answer when a file cannot be read (the problem is journaled)."""
        from controller.lab.software import request

        record, answer = request("sas-crc16", f"{seed:04x}", "floor", "sas")
        if not answer.get("ok"):
            return Reply(None, reason=str(answer.get("error")), verified=record)
        signature = int(str(answer["digest"]), 16)
        frame = codec.rom_signature_answer(self.address, signature)
        return Reply(frame, verified=record)

    def _set_clock(self, data: bytes, now_s: float) -> FloorCommand:
        try:
            mo, d, y, h, mi, s = codec.parse_date_time(data)
        except ValueError as exc:
            raise _Nack(f"date and time: {exc}") from None
        wanted = datetime.datetime(y, mo, d, h, mi, s).astimezone().timestamp()
        applied = self.sas.clock_setting_allowed
        return FloorCommand(
            command="set_clock",
            clock=f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}",
            clock_offset_ms=round((wanted - now_s) * 1000) if applied else 0,
            applied=applied,
        )

    def _respond(
        self, command: int, poll: Poll, snap: PublicSnapshot, fold: FloorFold, now_s: float
    ) -> Reply:
        a = self.address
        v = self._v
        data = poll.data
        if command in (0x01, 0x02):
            accepted = FloorCommand(command="accept_progressive")
            return Reply(
                codec.ack(a),
                FloorCommand(command="refuse_progressive") if command == 0x01 else accepted,
            )
        if command == 0x09:
            game = self._game(data)
            if data[2] not in (0, 1):
                raise _Nack(f"enable flag 0x{data[2]:02X}: 00 or 01")
            name: FloorCommandName = "enable_game" if data[2] == 1 else "disable_game"
            return Reply(codec.ack(a), FloorCommand(command=name, game=game))
        if command == 0x0F:
            six = (CANCELLED, COIN_IN, COIN_OUT, DROP, JACKPOT, GAMES_PLAYED)
            return Reply(codec.meters_answer(a, 0x0F, [v(c, snap) for c in six]))
        if command in SINGLE_METERS:
            return Reply(codec.meters_answer(a, command, [v(SINGLE_METERS[command], snap)]))
        if command == 0x18:
            return Reply(codec.meters_answer(a, 0x18, [0, 0], size=2))
        if command == 0x19:
            five = (COIN_IN, COIN_OUT, DROP, JACKPOT, GAMES_PLAYED)
            return Reply(codec.meters_answer(a, 0x19, [v(c, snap) for c in five]))
        if command == 0x1A:
            return Reply(codec.meters_answer(a, 0x1A, [v(0x0C, snap)]))
        if command == 0x1B:
            level, amount = self.handpay(snap)
            if amount > AWARD_MAX:
                return Reply(None, reason=_too_large("1B handpay", amount))
            return Reply(codec.handpay_answer(a, 0, level, amount, 0, 0))
        if command == 0x1C:
            eight = [
                v(COIN_IN, snap),
                v(COIN_OUT, snap),
                v(DROP, snap),
                v(JACKPOT, snap),
                v(GAMES_PLAYED, snap),
                v(GAMES_WON, snap),
                door_opened(snap),  # the controller compartment's door (issue 28 item 4)
                fold.power_ups,
            ]
            return Reply(codec.meters_answer(a, 0x1C, eight))
        if command == 0x1F:
            return Reply(codec.answer(a, 0x1F, self.info))
        if command == 0x2F:
            game = self._game(data)
            wanted = list(data[2:])
            if not 1 <= len(wanted) <= MAX_2F_CODES:
                raise _Nack(f"2F carries 1 to {MAX_2F_CODES} meter codes, got {len(wanted)}")
            return Reply(codec.selected_meters_answer(a, game, [(c, v(c, snap)) for c in wanted]))
        if command in (0x6F, 0xAF):
            game = self._game(data)
            raw = data[2:]
            if len(raw) % 2 or not 1 <= len(raw) // 2 <= MAX_6F_CODES:
                raise _Nack(f"{command:02X} carries 1 to {MAX_6F_CODES} two-byte meter codes")
            extended = [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]
            meters = [
                (c, meter_value(c, self._meters(snap), self.sas.meters) if c < 0x100 else None)
                for c in extended
            ]
            return Reply(codec.extended_meters_answer(a, command, game, meters))
        if command == 0x21:
            return self._rom_signature(int.from_bytes(data[:2], "little"))
        if command == 0x51:
            return Reply(codec.game_number_answer(a, 0x51, 1))
        if command == 0x52:
            game = self._game(data)
            values = (v(COIN_IN, snap), v(COIN_OUT, snap), v(JACKPOT, snap), v(GAMES_PLAYED, snap))
            return Reply(codec.game_meters_answer(a, game, *values))
        if command == 0x53:
            game = self._game(data)
            return Reply(codec.game_config_answer(a, game, self.info))
        if command == 0x54:
            return Reply(codec.version_answer(a, self.sas.sas_version, self.serial_number))
        if command == 0x55:
            return Reply(codec.game_number_answer(a, 0x55, GAME))
        if command == 0x56:
            return Reply(codec.enabled_games_answer(a, [GAME]))
        if command == 0x7E:
            t = datetime.datetime.fromtimestamp(now_s + fold.clock_offset_s).astimezone()
            return Reply(
                codec.date_time_answer(a, t.month, t.day, t.year, t.hour, t.minute, t.second)
            )
        if command == 0x7F:
            return Reply(codec.ack(a), self._set_clock(data, now_s))
        if command == 0x83:
            game = self._game(data)
            return Reply(codec.cumulative_progressive_answer(a, game, v(0x20, snap)))
        if command == 0x84:
            level, amount = self.last_win(snap)
            if amount > AWARD_MAX:
                return Reply(None, reason=_too_large("84 last progressive win", amount))
            return Reply(codec.last_progressive_answer(a, 0, level, amount))
        return Reply(None, reason="unknown poll")


def door_opened(snap: PublicSnapshot) -> int:
    """The SAS door-opened meter: the openings of the controller compartment's door the round
    counted (its ``door_changed`` effects); 0 for a table without a door switch."""
    door = snap.view.get("door")
    return int(door.get("opened", 0)) if isinstance(door, Mapping) else 0
