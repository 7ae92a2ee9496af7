"""Configuration of the round: game options and the progressive levels, validated at load.

Responsible for: turning the ``game`` section of the table's configuration into a frozen
``GameConfig``, rejecting anything the regulations forbid (a progressive wager other than $1 or
$5 (NY 5324.41(k)(1)); a rate of progression under 21% of a $1 or 27% of a $5 wager (k)(5); 1-7
side wager odds outside 5.5:1..6:1 or without a random number generator (j)(1),(j)(2)(vi); the
three-card bonus with an RNG or dice starting position or with the 1-7 side wager (n)(4), (j)(1)),
with a ``ValueError`` whose message starts with the full key path. Unknown keys are errors.

Readers: `fsm.configread`. Files: the pay tables and house ways (`Library`) are read once, when the
configuration is loaded; ``with_changes`` (a step's configuration change) reads none.

Must never: read a file inside a step, read the clock, or touch a meter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from fsm.configread import REQUIRED, Reader, describe, key_path, table_value
from fsm.round.position import areas_from_right
from fsm.rules import houseway
from fsm.rules.houseway import DEFAULT_WAY, HouseWay
from fsm.rules.houseway_rules import HouseWayError
from fsm.rules.paytables import BonusConfig, Odds
from fsm.rules.progressive import DATA_DIR as PROGRESSIVE_DIR
from fsm.rules.progressive import (
    DEFAULT_TABLE,
    REGULATION_MINIMUMS,
    PayTableError,
    ProgressiveTable,
)
from fsm.rules.ranking import RankingOptions

# NY 5324.41(k)(5): least rate of progression, in basis points of the amount wagered.
MIN_RATE_BP = {100: 2100, 500: 2700}
SIDE_WAGER_MIN_ODDS = Fraction(11, 2)  # NY 5324.41(j)(2)(vi): no less than 5.5:1
SIDE_WAGER_MAX_ODDS = Fraction(6, 1)  # ... and no more than 6:1
# "three_card": the three-card bonus procedure, NY 5324.41(n)(4): the starting position is the
# player position farthest to the dealer's left holding a pai gow wager (no RNG, no dice).
START_MODES = ("rng", "dice", "three_card")
# NY 5324.41(a)(2)(i): the areas are numbered 1..6; which end of the row sits farthest to the
# dealer's right is a property of the layout. Winning wagers are paid from that area on,
# counter-clockwise (NY (g)(7), NJ 13:69F-11.9(i)). The usual layout: area 1 at the dealer's right.
DEALER_RIGHT_AREAS = (1, 6)
# NY 5324.41(k)(4)(i): "for a $5 progressive wager, multiply payout amount by five" — every amount,
# a share of the meter too ("times-five", the text). "share-not-multiplied" (a share of the meter
# paid as for $1, only fixed amounts times five) only on a regulator's written ruling, named in
# game.five_dollar_ruling.
FIVE_DOLLAR_READINGS = ("times-five", "share-not-multiplied")
BANK_START_RULES = ("table_open", "every_shuffle")
# NY 5324.41(f): the three dealing procedures. Only the automated shoe (f)(3) is supported: the
# controller's counts and checks (the stacks dispensed, the four cards left, the shoe's deadline)
# are the shoe's reports; a manual shoe (f)(1) or the dealer's hand (f)(2) would need the dealer
# to report every stack, which no input of the table does.
DEALING = ("automated_shoe",)
NOT_SUPPORTED_DEALING = {
    "manual_shoe": "(f)(1)",
    "hand": "(f)(2)",
}


@dataclass(frozen=True)
class Library:
    """The progressive pay tables and house ways a configuration may name, read when the
    configuration is loaded (every shipped one and any named by path), so that no step of the
    round reads a file: a change in maintenance picks from what is loaded here."""

    paytables: Mapping[str, ProgressiveTable]
    ways: Mapping[str, HouseWay]

    @classmethod
    def load(cls, paytable: str = DEFAULT_TABLE, way: str = DEFAULT_WAY) -> Library:
        """Read the shipped tables and ways and the named ones; ValueError naming the key."""
        names = sorted({p.stem for p in PROGRESSIVE_DIR.glob("*.toml")} | {paytable})
        tables: dict[str, ProgressiveTable] = {}
        for name in names:
            try:
                tables[name] = ProgressiveTable.load(name)
            except PayTableError as e:
                if name == paytable:
                    raise ValueError(f"game.paytable: {e}") from None
        ways: dict[str, HouseWay] = {}
        shipped = houseway.available()
        for name in sorted(set(shipped) | {way}):
            try:
                ways[name] = HouseWay.load(name)
            except (HouseWayError, OSError) as e:
                if name != way:
                    continue
                why = "" if "/" not in way and not way.endswith(".toml") else f" ({e})"
                raise ValueError(
                    f"game.house_way: must be one of {', '.join(shipped)} or a house-way file, "
                    f"got {describe(way)}{why}"
                ) from None
        return cls(tables, ways)


@dataclass(frozen=True)
class ProgressiveLevel:
    """One progressive level and its parameters (NJ 13:69E-1.39A): base (initial) amount, reset
    amount, rate of progression and hidden (reserve) rate in basis points of each wager, limit
    (0 = none; contributions above it go to the overflow meter), and the pay-table lines it pays
    (empty = every line not claimed by another level)."""

    name: str
    initial_cents: int
    reset_cents: int
    rate_bp: int
    hidden_rate_bp: int = 0
    limit_cents: int = 0
    lines: tuple[str, ...] = ()

    KEYS = frozenset(
        {
            "name",
            "initial_cents",
            "reset_cents",
            "rate_bp",
            "hidden_rate_bp",
            "limit_cents",
            "lines",
        }
    )

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str) -> ProgressiveLevel:
        level = Reader(data, where, sorted(cls.KEYS))
        name = level.string("name")
        initial = level.cents("initial_cents")  # amounts: 0..MAX_CENTS
        reset = level.cents("reset_cents", initial)
        rate = level.integer("rate_bp", REQUIRED, 0)
        hidden = level.integer("hidden_rate_bp", 0, 0)
        limit = level.cents("limit_cents", 0)
        if rate + hidden > 10000:
            raise ValueError(
                f"{key_path(where, 'rate_bp')}: rate_bp + hidden_rate_bp = {rate + hidden} exceeds "
                "10000 (100% of the wager)"
            )
        if limit and limit < max(initial, reset):
            raise ValueError(
                f"{key_path(where, 'limit_cents')}: limit {limit} is below the initial or reset "
                f"amount ({max(initial, reset)})"
            )
        raw_lines = level.raw("lines", [])
        if not isinstance(raw_lines, list | tuple) or not all(
            isinstance(x, str) for x in raw_lines
        ):
            raise ValueError(f"{key_path(where, 'lines')}: must be a list of pay-table line names")
        return cls(name, initial, reset, rate, hidden, limit, tuple(raw_lines))

    def to_mapping(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "initial_cents": self.initial_cents,
            "reset_cents": self.reset_cents,
            "rate_bp": self.rate_bp,
            "hidden_rate_bp": self.hidden_rate_bp,
            "limit_cents": self.limit_cents,
            "lines": list(self.lines),
        }


@dataclass(frozen=True)
class GameConfig:
    """The ``game`` section: options of the round and the progressive levels."""

    table_id: str = "T1"
    # "rng" (approved RNG) or "dice" (shaker): table-rules.md; "three_card" with (and only with)
    # the three-card bonus: NY 5324.41(n)(4)
    start_mode: str = "rng"
    progressive_wager_cents: int = 100  # NY 5324.41(k)(1): $1 or $5
    paytable: str = "ny-5324-41-k4"
    levels: tuple[ProgressiveLevel, ...] = (
        ProgressiveLevel("progressive", 100_000, 100_000, 2100, 500, 0, ()),
    )
    card_reading_shoe: bool = False
    three_card_bonus: bool = False
    player_banking: bool = False
    bank_start_of_game: str = "table_open"  # which shuffles start a game for (h)(2)
    side_wager_offered: bool = False
    side_wager_odds: str = "6:1"
    ace_low_straight: str = "second"
    joker_flush: str = "highest-missing"
    house_way: str = DEFAULT_WAY  # the dealer's (and a bank's) setting (NY 5324.41(g), (q))
    ez_pai_gow: bool = False  # NJ 13:69F-11.9(h)3, (j): no vigorish; queen dragon pushes
    rounds_per_shuffle: int = 1
    shuffle_timeout_ms: int = 180_000
    rng_timeout_ms: int = 10_000
    dispense_timeout_ms: int = 60_000
    dealer_right_area: int = 1  # game.layout.dealer_right_area (DEALER_RIGHT_AREAS)
    five_dollar_meter_share: str = "times-five"  # FIVE_DOLLAR_READINGS
    five_dollar_ruling: str = ""  # the regulator's written ruling the other reading relies on
    table: ProgressiveTable = field(default_factory=ProgressiveTable.load, compare=False)
    way: HouseWay = field(default_factory=HouseWay.load, compare=False)
    # the table file's [bonus] section (None: no bonus wager offered), validated by
    # fsm.rules.paytables.BonusConfig; journaled with the game configuration
    bonus_section: Mapping[str, object] | None = None
    bonus: BonusConfig | None = field(default=None, compare=False)
    library: Library = field(default_factory=Library.load, compare=False, repr=False)

    KEYS = frozenset(
        {
            "table_id",
            "start_mode",
            "progressive_wager_cents",
            "paytable",
            "levels",
            "card_reading_shoe",
            "three_card_bonus",
            "player_banking",
            "bank_start_of_game",
            "side_wager",
            "ace_low_straight",
            "joker_flush",
            "house_way",
            "ez_pai_gow",
            "rounds_per_shuffle",
            "shuffle_timeout_ms",
            "rng_timeout_ms",
            "dispense_timeout_ms",
            "layout",
            "five_dollar_meter_share",
            "five_dollar_ruling",
            "bonus",
            "dealing",
        }
    )

    @property
    def ranking(self) -> RankingOptions:
        return RankingOptions(self.ace_low_straight, self.joker_flush)  # type: ignore[arg-type]

    @property
    def side_wager_odds_fraction(self) -> Fraction:
        num, den = self.side_wager_odds.split(":")
        return Fraction(num) / Fraction(den)

    def payment_order(self) -> tuple[int, ...]:
        """The betting areas in the order winning wagers are paid: from the area farthest to
        the dealer's right, counter-clockwise around the table (NY 5324.41(g)(7),
        NJ 13:69F-11.9(i)); which area that is, is the layout's (``layout.dealer_right_area``)."""
        return tuple(areas_from_right(self.dealer_right_area))

    def progressive_payout(self, line: str, meter_cents: int) -> int:
        """What ``line`` pays this table's progressive wager with its level's meter at
        ``meter_cents`` now (NY (k)(4), (k)(6)), by the table's reading of (k)(4)(i)."""
        return self.table.payout_cents(
            line,
            self.progressive_wager_cents,
            meter_cents,
            five_times_meter=self.five_dollar_meter_share == "times-five",
        )

    def level(self, name: str) -> ProgressiveLevel:
        for lvl in self.levels:
            if lvl.name == name:
                return lvl
        raise KeyError(name)

    def level_for_line(self, line: str) -> ProgressiveLevel:
        """The level whose meter pays (and is deducted for) a pay-table line."""
        default = self.levels[0]
        for lvl in self.levels:
            if line in lvl.lines:
                return lvl
            if not lvl.lines:
                default = lvl
        return default

    @classmethod
    def from_mapping(
        cls,
        data: Mapping[str, object],
        where: str = "game",
        library: Library | None = None,
        previous: GameConfig | None = None,
    ) -> GameConfig:
        """Validate the ``game`` section; its ``bonus`` key is the file's ``[bonus]`` section
        (messages name it ``bonus.*``). The pay table and the house way it names are taken from
        ``library``; without one (loading the configuration) the library is read here. A bonus
        section equal to ``previous``'s is taken from it (no pay-table file read again)."""
        game = Reader(data, where, sorted(cls.KEYS))
        table_id = game.string("table_id", "T1")
        three_card = game.boolean("three_card_bonus", False)
        start_mode = _start_mode(game, three_card)
        wager, table, way, library = _progressive(game, library)
        levels = _levels(game, cls.levels)
        _check_levels(levels, table, wager, game.path("levels"))
        side_offered, odds, frac = _side_wager(game, start_mode, three_card)
        ace_low = game.choice("ace_low_straight", ("second", "lowest"), "second")
        joker = game.choice("joker_flush", ("highest-missing", "ace"), "highest-missing")
        rounds_per_shuffle = game.integer("rounds_per_shuffle", 1, 0)
        if rounds_per_shuffle != 1:
            raise game.error(
                "rounds_per_shuffle",
                f"must be 1, not {rounds_per_shuffle}: a round deals 49 of the 53 cards, so "
                "every round is dealt from a deck shuffled and counted at 53 again (NY "
                "5324.41(b), (n)(8)); a second round from one shuffle would deal collected cards "
                "unshuffled and uncounted",
            )
        _dealing(game)
        timeouts = _timeouts(game, cls)
        right = _dealer_right_area(game)
        five, ruling = _five_dollar(game)
        banking, bank_start = _banking(game)
        bonus, bonus_section = _bonus(game, previous, side_offered, frac, three_card)
        return cls(
            table_id=table_id,
            start_mode=start_mode,
            progressive_wager_cents=wager,
            paytable=game.string("paytable", "ny-5324-41-k4"),
            levels=levels,
            card_reading_shoe=game.boolean("card_reading_shoe", False),
            three_card_bonus=three_card,
            player_banking=banking,
            bank_start_of_game=bank_start,
            side_wager_offered=side_offered,
            side_wager_odds=odds,
            ace_low_straight=ace_low,
            joker_flush=joker,
            house_way=game.string("house_way", DEFAULT_WAY),
            ez_pai_gow=game.boolean("ez_pai_gow", False),
            rounds_per_shuffle=rounds_per_shuffle,
            dealer_right_area=right,
            five_dollar_meter_share=five,
            five_dollar_ruling=ruling,
            table=table,
            way=way,
            library=library,
            bonus_section=bonus_section,
            bonus=bonus,
            **timeouts,
        )

    def to_mapping(self) -> dict[str, Any]:
        """The mapping ``from_mapping`` reads back to an equal config (journaled, snapshotted)."""
        return {
            "table_id": self.table_id,
            "start_mode": self.start_mode,
            "progressive_wager_cents": self.progressive_wager_cents,
            "paytable": self.paytable,
            "levels": [lvl.to_mapping() for lvl in self.levels],
            "card_reading_shoe": self.card_reading_shoe,
            "three_card_bonus": self.three_card_bonus,
            "player_banking": self.player_banking,
            "bank_start_of_game": self.bank_start_of_game,
            "side_wager": {"offered": self.side_wager_offered, "odds": self.side_wager_odds},
            "ace_low_straight": self.ace_low_straight,
            "joker_flush": self.joker_flush,
            "house_way": self.house_way,
            "ez_pai_gow": self.ez_pai_gow,
            "rounds_per_shuffle": self.rounds_per_shuffle,
            "shuffle_timeout_ms": self.shuffle_timeout_ms,
            "rng_timeout_ms": self.rng_timeout_ms,
            "dispense_timeout_ms": self.dispense_timeout_ms,
            "layout": {"dealer_right_area": self.dealer_right_area},
            "five_dollar_meter_share": self.five_dollar_meter_share,
            **({"five_dollar_ruling": self.five_dollar_ruling} if self.five_dollar_ruling else {}),
            **({} if self.bonus_section is None else {"bonus": _plain(self.bonus_section)}),
        }


def _plain(value: Any) -> Any:
    """A copy of a TOML value as plain dicts and lists (JSON-able, for the journal)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _check_bonus(
    bonus: BonusConfig, side_offered: bool, side_odds: Fraction, three_card: bool
) -> None:
    """The bonus offering must agree with the game options the round plays it by: the 1-7 side
    wager (NY 5324.41(j)) is settled by the round at ``side_wager.odds``, the three-card bonus
    (NY 5324.41(n)) changes the deal; offering one without the other would pay what the round
    does not play."""
    offered = set(bonus.offered)
    pairs = (
        ("side-1-7", "side_wager.offered", side_offered),
        ("three-card", "three_card_bonus", three_card),
    )
    for name, key, enabled in pairs:
        if (name in offered) != enabled:
            raise ValueError(
                f"bonus.offered: {name!r} is {'' if name in offered else 'not '}offered but "
                f"game.{key} is {str(enabled).lower()}; they must agree"
            )
    side = bonus.tables.get("side-1-7")
    if side is not None:
        hit = side.pays.get("hit")
        if isinstance(hit, Odds) and hit.ratio != side_odds:
            raise ValueError(
                f"bonus.tables.side-1-7: pays {hit} but game.side_wager.odds is "
                f"{side_odds.numerator}:{side_odds.denominator} (the round pays that); they must "
                "agree"
            )


def _claimed_lines(
    levels: tuple[ProgressiveLevel, ...], table: ProgressiveTable, where: str
) -> dict[str, str]:
    """Each pay-table line and the level that pays it: names distinct, every line of the pay
    table paid by one level exactly (one level at most may leave ``lines`` empty: the default)."""
    names: set[str] = set()
    claimed: dict[str, str] = {}
    defaults = 0
    for i, lvl in enumerate(levels):
        if lvl.name in names:
            raise ValueError(f"{where}[{i}].name: level {lvl.name!r} appears twice")
        names.add(lvl.name)
        if not lvl.lines:
            defaults += 1
        for line in lvl.lines:
            if line not in table.line_names:
                raise ValueError(
                    f"{where}[{i}].lines: {line!r} is not a line of pay table {table.name}"
                )
            if line in claimed:
                raise ValueError(
                    f"{where}[{i}].lines: {line!r} is already paid by level {claimed[line]!r}"
                )
            claimed[line] = lvl.name
    if defaults > 1:
        raise ValueError(f"{where}: only one level may leave 'lines' empty (the default level)")
    if defaults == 0 and set(claimed) != set(table.line_names):
        missing = sorted(set(table.line_names) - set(claimed))
        raise ValueError(f"{where}: no level pays line(s) {', '.join(missing)}")
    return claimed


def _check_levels(
    levels: tuple[ProgressiveLevel, ...], table: ProgressiveTable, wager: int, where: str
) -> None:
    claimed = _claimed_lines(levels, table, where)
    total = sum(lvl.rate_bp for lvl in levels)
    least = MIN_RATE_BP[wager]
    if total < least:
        raise ValueError(
            f"{where}[0].rate_bp: rate of progression {total / 100:g}% of a {wager // 100}-dollar "
            f"wager is below the {least / 100:g}% NY 5324.41(k)(5) requires"
        )
    # NY 5324.41(k)(5): "the progressive meter used to determine the progressive payouts" is the
    # meter of the level paying the lines that are a share of the meter: each such level grows
    # at the rate itself (another level's rate does not fund it)
    meter_lines = [ln.name for ln in table.lines if ln.from_meter]
    default_level = next((lvl.name for lvl in levels if not lvl.lines), None)
    for i, lvl in enumerate(levels):
        pays = [ln for ln in meter_lines if claimed.get(ln, default_level) == lvl.name]
        if pays and lvl.rate_bp < least:
            raise ValueError(
                f"{where}[{i}].rate_bp: level {lvl.name!r} pays {', '.join(pays)} from its meter "
                f"but grows at {lvl.rate_bp / 100:g}% of a {wager // 100}-dollar wager, below "
                f"the {least / 100:g}% NY 5324.41(k)(5) requires of that meter"
            )


def check_reset_amounts(game: GameConfig, where: str = "game.levels") -> None:
    """A level whose meter pays a share-of-the-meter line (the natural royal flush) must start
    and reset at least at the largest fixed amount NY 5324.41(k)(4)(ii) requires for a lower
    hand (a royal flush and a pair: $200 a dollar wagered): below it the table's best hand would
    pay less than a hand it outranks is guaranteed (``reset_cents = 1`` pays the natural royal
    flush one cent). The parsheet flags a table's own fixed amounts above the reset (NJ
    13:69D-1.52(e)); this is the floor no table can go under. Checked by the table's
    configuration loader (a round test may start a meter at zero). ValueError naming the key."""
    levels, table, wager = game.levels, game.table, game.progressive_wager_cents
    claimed = {line for lvl in levels for line in lvl.lines}
    least = max(fixed for _, _, fixed in REGULATION_MINIMUMS if fixed is not None)
    need = least * wager // 100
    for i, lvl in enumerate(levels):
        paid = lvl.lines or tuple(n for n in table.line_names if n not in claimed)
        if not any(line.from_meter for line in table.lines if line.name in paid):
            continue
        for key, amount in (("initial_cents", lvl.initial_cents), ("reset_cents", lvl.reset_cents)):
            if amount < need:
                raise ValueError(
                    f"{where}[{i}].{key}: {amount} is below {need}, the least NY 5324.41(k)(4)(ii) "
                    f"pays a lower hand on a {wager}-cent wager; the meter pays the best hands"
                )


def with_changes(
    config: GameConfig, changes: Mapping[str, object], where: str = "game"
) -> GameConfig:
    """A new config with dotted keys replaced (``levels[0].rate_bp``, ``side_wager.odds``),
    validated as a whole. Raises ValueError naming the key."""
    data: Any = config.to_mapping()
    for key in changes:
        if key == "bonus" or key.startswith(("bonus.", "bonus[")):
            raise ValueError(
                f"{key}: the bonus offering is changed in the configuration file, with the table "
                "closed (its pay tables are loaded with the configuration)"
            )
    for key, value in changes.items():
        target: Any = data
        parts = config_key_path(key)
        for part in parts[:-1]:
            try:
                target = target[part]
            except (KeyError, IndexError, TypeError):
                raise ValueError(f"{where}.{key}: no such key") from None
        last = parts[-1]
        in_list = isinstance(target, list) and isinstance(last, int) and 0 <= last < len(target)
        if not (isinstance(target, dict) or in_list):
            raise ValueError(f"{where}.{key}: no such key")
        target[last] = value
    # inside a step: the pay tables and house ways come from what the configuration loaded
    return GameConfig.from_mapping(data, where, config.library, previous=config)


def config_key_path(key: str) -> list[str | int]:
    """A dotted configuration key as its path: ``levels[0].rate_bp`` -> ["levels", 0, "rate_bp"]
    (what `with_changes` walks; ValueError for an index that is not a number)."""
    out: list[str | int] = []
    for piece in key.split("."):
        while "[" in piece:
            head, _, rest = piece.partition("[")
            idx, _, piece = rest.partition("]")
            if head:
                out.append(head)
            if not idx.isdigit():
                raise ValueError(f"{key}: bad index {idx!r}")
            out.append(int(idx))
        if piece:
            out.append(piece)
    return out


# ----------------------------------------------------------------- the game section, by key group
# Each reads its keys of the ``game`` section through the section's `Reader` and applies the
# regulation's rule that ties them together; `GameConfig.from_mapping` calls them in the order
# the problems are reported.


def _start_mode(game: Reader, three_card: bool) -> str:
    """How the starting position is found: NY 5324.41(n)(4) ties it to the three-card bonus."""
    start_mode = game.choice("start_mode", START_MODES, "three_card" if three_card else "rng")
    if three_card and start_mode != "three_card":
        raise game.error(
            "start_mode",
            f"{start_mode!r} cannot be used with the three-card bonus: the starting position is "
            "the player position farthest to the dealer's left with a pai gow wager (NY "
            "5324.41(n)(4)); use 'three_card' or leave start_mode out",
        )
    if start_mode == "three_card" and not three_card:
        raise game.error(
            "start_mode",
            "'three_card' is the dealing procedure of the three-card bonus (NY 5324.41(n)); it "
            "needs three_card_bonus = true",
        )
    return start_mode


def _progressive(
    game: Reader, library: Library | None
) -> tuple[int, ProgressiveTable, HouseWay, Library]:
    """The progressive wager (NY 5324.41(k)(1): $1 or $5), its pay table and the house way,
    taken from ``library`` (read here when None: loading the configuration)."""
    wager = game.integer("progressive_wager_cents", 100, 0)
    if wager not in MIN_RATE_BP:
        raise game.error(
            "progressive_wager_cents",
            f"{wager} is not allowed; NY 5324.41(k)(1) allows a $1 (100) or a $5 (500) "
            "progressive wager",
        )
    paytable = game.string("paytable", "ny-5324-41-k4")
    way_name = game.string("house_way", DEFAULT_WAY)
    if library is None:
        library = Library.load(paytable, way_name)
    table = library.paytables.get(paytable)
    if table is None:
        raise game.error(
            "paytable",
            f"must be one of {', '.join(library.paytables)} (the pay tables loaded with the "
            f"configuration), got {describe(paytable)}",
        )
    way = library.ways.get(way_name)
    if way is None:
        raise game.error(
            "house_way",
            f"must be one of {', '.join(library.ways)}, got {describe(way_name)}",
        )
    if wager not in table.wager_cents:
        raise game.error(
            "progressive_wager_cents",
            f"pay table {paytable} does not accept a {wager}-cent wager",
        )
    return wager, table, way, library


def _levels(game: Reader, default: tuple[ProgressiveLevel, ...]) -> tuple[ProgressiveLevel, ...]:
    """The progressive meters (``[[game.levels]]``), or ``default``."""
    raw_levels = game.raw("levels", None)
    if raw_levels is None:
        return default
    if not isinstance(raw_levels, list | tuple) or not raw_levels:
        raise game.error("levels", "must be a non-empty list of levels")
    return tuple(
        ProgressiveLevel.from_mapping(raw, f"{game.path('levels')}[{i}]")
        for i, raw in enumerate(raw_levels)
    )


def _side_wager(game: Reader, start_mode: str, three_card: bool) -> tuple[bool, str, Fraction]:
    """The 1-7 side wager: offered, and its odds within 5.5:1..6:1 (NY 5324.41(j)(2)(vi)); only
    with an RNG (j)(1), never with the three-card bonus (n)(4)."""
    side_where = game.path("side_wager")
    raw = game.raw("side_wager", {})
    if not isinstance(raw, Mapping):
        raise ValueError(f"{side_where}: must be a table with offered and odds")
    side = Reader(raw, side_where, ("odds", "offered"))
    offered = side.boolean("offered", False)
    odds = side.string("odds", "6:1")
    try:
        num, den = odds.split(":")
        frac = Fraction(num) / Fraction(den)
    except (ValueError, ZeroDivisionError):
        raise side.error("odds", f"must look like '6:1' or '5.5:1', not {odds!r}") from None
    if not SIDE_WAGER_MIN_ODDS <= frac <= SIDE_WAGER_MAX_ODDS:
        raise side.error("odds", f"{odds} is outside 5.5:1 to 6:1 (NY 5324.41(j)(2)(vi))")
    if offered and three_card:
        raise side.error(
            "offered",
            "the 1-7 side wager cannot be offered with the three-card bonus: it needs a random "
            "number generator to pick the starting position (NY 5324.41(j)(1)), and the "
            "three-card procedure has none (NY 5324.41(n)(4))",
        )
    if offered and start_mode != "rng":
        raise side.error(
            "offered", "the 1-7 side wager needs start_mode = 'rng' (NY 5324.41(j)(1))"
        )
    return offered, odds, frac


def _timeouts(game: Reader, defaults: type[GameConfig]) -> dict[str, int]:
    """The deadlines of the devices' answers, at least 1 ms each."""
    timeouts = {
        k: game.integer(k, getattr(defaults, k), 0)
        for k in ("shuffle_timeout_ms", "rng_timeout_ms", "dispense_timeout_ms")
    }
    for k, v in timeouts.items():
        if v < 1:
            raise game.error(k, "must be at least 1 ms")
    return timeouts


def _dealing(game: Reader) -> None:
    """How the cards are dealt (NY 5324.41(f)): only from an automated dealing shoe (f)(3)."""
    dealing = game.string("dealing", DEALING[0])
    if dealing in NOT_SUPPORTED_DEALING:
        raise game.error(
            "dealing",
            f"{dealing!r} (NY 5324.41{NOT_SUPPORTED_DEALING[dealing]}) is not supported: this "
            "controller follows the deal through an automated dealing shoe's reports (the "
            "stacks dispensed, the four cards left, (f)(3)); with a manual shoe or a deal from "
            "the hand it could count and check nothing. Use 'automated_shoe'",
        )
    if dealing not in DEALING:
        raise game.error(
            "dealing",
            f"must be 'automated_shoe' ('manual_shoe' and 'hand' are not supported), got "
            f"{describe(dealing)}",
        )


def _dealer_right_area(game: Reader) -> int:
    """Which end of the row of areas is the dealer's right (NY 5324.41(a)(2)(i))."""
    layout = game.table("layout", ("dealer_right_area",))
    right = layout.integer("dealer_right_area", 1, 0)
    if right not in DEALER_RIGHT_AREAS:
        raise layout.error(
            "dealer_right_area",
            "must be 1 (areas numbered counter-clockwise from the dealer's right, the usual "
            f"layout) or 6 (numbered from the dealer's left), got {describe(right)}",
        )
    return right


def _five_dollar(game: Reader) -> tuple[str, str]:
    """How a $5 wager's share of the meter is paid (NY 5324.41(k)(4)(i)) and the regulator's
    ruling a departure from the text relies on."""
    five = game.choice("five_dollar_meter_share", FIVE_DOLLAR_READINGS, "times-five")
    ruling = game.string("five_dollar_ruling", "", empty=True).strip()
    if five == "share-not-multiplied" and not ruling:
        raise game.error(
            "five_dollar_ruling",
            "'share-not-multiplied' departs from NY 5324.41(k)(4)(i) (\"multiply payout amount "
            'by five"); name the regulator\'s written ruling it relies on (e.g. "NYSGC letter '
            '2026-014")',
        )
    if five == "times-five" and ruling:
        raise game.error(
            "five_dollar_ruling",
            "only with five_dollar_meter_share = 'share-not-multiplied'; 'times-five' is the "
            "regulation's text",
        )
    return five, ruling


def _banking(game: Reader) -> tuple[bool, str]:
    """Player banking and when the game starts (NY 5324.41(h)(2): no player banks then)."""
    banking = game.boolean("player_banking", False)
    bank_start = game.choice("bank_start_of_game", BANK_START_RULES, "table_open")
    if banking and bank_start == "every_shuffle":
        raise game.error(
            "bank_start_of_game",
            "'every_shuffle' with a shuffle every round (rounds_per_shuffle is 1) makes every "
            "round a start of the game, where no player may bank (NY 5324.41(h)(2)): "
            "player_banking could never happen; use 'table_open' or turn player_banking off",
        )
    return banking, bank_start


def _bonus(
    game: Reader, previous: GameConfig | None, side_offered: bool, odds: Fraction, three_card: bool
) -> tuple[BonusConfig | None, Mapping[str, object] | None]:
    """The file's ``[bonus]`` section (messages name it ``bonus.*``); one equal to
    ``previous``'s is taken from it (no pay-table file read again)."""
    raw = game.raw("bonus", None)
    if raw is None:
        return None, None
    section = table_value(raw, "bonus")
    bonus = previous.bonus if previous is not None and previous.bonus_section == section else None
    if bonus is None:
        bonus = BonusConfig.from_mapping(section, "bonus")
    _check_bonus(bonus, side_offered, odds, three_card)
    return bonus, _plain(section)
