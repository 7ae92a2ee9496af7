"""``tablectl parsheet``: the exact par sheet of every pay table a table offers, and the filing.

For the configured table (``--config``: a table's file, or a link controller's, whose pool is then
filed), the named tables (``--pay-table``), or every shipped table:
the exact sheets of ``fsm.rules.parsheet`` (all C(53,7) seven-card hands by rank pattern and suit
combinatorics), the main game by a seeded simulation (both sides on the house way), and per table a
filing page with the items of NJ 13:69D-1.52(e) (initial and reset amounts, rate of progression,
the probability of each jackpot, flagged when rarer than 1 in 100,000,000), as text, JSON or CSV.
``tablectl config check`` refuses such a table (``controller.cli.config.check_jackpots``).

Responsible for the arguments, the random numbers of the simulation (``random.Random(seed)``: a
par sheet is not a game, its rounds must be repeatable) and the page formats. Must never hold a
game rule, write a journal, or touch a meter.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import sys
import time
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

from controller.cli import args as types
from controller.config import ConfigError, TableConfig, load_config
from controller.link.link_config import load_controller_config
from fsm.rules import parsheet as ps
from fsm.rules.houseway import HouseWay
from fsm.rules.jackpot_odds import one_in
from fsm.rules.paytables import BUILTIN, PayTable, load_builtin, parse_paytable
from fsm.rules.progressive import DATA_DIR as PROGRESSIVE_DIR
from fsm.rules.progressive import PayTableError, ProgressiveTable
from fsm.rules.ranking import RankingOptions
from fsm.rules.settlement import VIG_RULES

EXIT_BAD_INPUT = 2
DEFAULT_ROUNDS = 20_000
DEFAULT_METER_CENTS = 100_000


def register(sub: Any) -> None:
    p = sub.add_parser(
        "parsheet",
        help="exact par sheets of the pay tables (all 154,143,080 hands) and the filing page",
        description="Exact probabilities and return of every pay table the table offers, over "
        "every seven-card hand of the 53-card deck; the main game by seeded simulation.",
    )
    p.add_argument(
        "--config",
        metavar="PATH",
        help="table configuration: its tables and options; or a link controller's: its pool",
    )
    p.add_argument(
        "--pay-table",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="a shipped pay table (bonus or progressive) or a TOML file; repeatable "
        "(default: the configured tables, or every shipped table)",
    )
    p.add_argument(
        "--meter",
        type=types.cents(),
        metavar="CENTS",
        help="progressive meter in cents (default: the first level's reset amount, or 100000)",
    )
    p.add_argument(
        "--progressive-wager",
        type=types.cents(),
        choices=(100, 500),
        metavar="CENTS",
        help="progressive wager, 100 or 500 (default: the configured one, or 100)",
    )
    p.add_argument(
        "--rounds", type=types.whole(0, 10**9), default=None, metavar="N", help="main game rounds"
    )
    p.add_argument(
        "--seed",
        type=types.whole(-types.MAX_WHOLE - 1),
        default=1,
        metavar="S",
        help="main game seed (default 1)",
    )
    p.add_argument("--house-way", metavar="NAME", help="house way (default: configured/reference)")
    p.add_argument("--vig", choices=VIG_RULES, default="round-up-25", help="vigorish rule")
    p.add_argument("--ace-low-straight", choices=("second", "lowest"), default=None)
    p.add_argument("--joker-flush", choices=("highest-missing", "ace"), default=None)
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.set_defaults(func=run_parsheet)


# --- what to compute ------------------------------------------------------------------------


class _Plan:
    def __init__(self) -> None:
        self.bonus: list[PayTable] = []
        self.progressive: list[ProgressiveTable] = []
        self.opts = RankingOptions()
        self.royal_match = "king-queen"
        self.levels: list[dict[str, object]] = []
        self.meter = DEFAULT_METER_CENTS
        self.wager = 100
        self.way = "reference"
        self.ez = False
        self.rounds = DEFAULT_ROUNDS
        #: a link controller's configuration: the pool filed (its id, tables, $5 reading)
        self.pool: dict[str, object] | None = None


def _load_table(spec: str) -> PayTable | ProgressiveTable:
    if spec in BUILTIN:
        return load_builtin(spec)
    if (PROGRESSIVE_DIR / f"{spec}.toml").is_file():
        return ProgressiveTable.load(spec)
    path = Path(spec)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ValueError(
            f"--pay-table {spec}: not a shipped table ({', '.join(BUILTIN)}, or a progressive "
            f"table of {PROGRESSIVE_DIR.name}) and not a readable file ({exc.strerror or exc})"
        ) from None
    if "[[line]]" in text:
        return ProgressiveTable.load(path)
    return parse_paytable(text, str(path))


def _link_controller_file(path: str) -> bool:
    """The file is a link controller's configuration (``[pool]`` and ``[tables]``), not a
    table's."""
    try:
        data = tomllib.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False  # load_config says what is wrong with it
    return isinstance(data.get("pool"), dict) and isinstance(data.get("tables"), dict)


def _plan_pool(plan: _Plan, path: str) -> None:
    """The linked pool's filing (NJ 13:69D-1.52(e)): its one level (initial and reset amounts,
    rates, limit), its pay table and wager, the return at its reset meter, its tables."""
    cfg = load_controller_config(path)
    plan.levels = ps.progressive_levels([cfg.level])
    plan.meter = min(cfg.level.initial_cents, cfg.level.reset_cents)
    plan.wager = cfg.wager_cents
    plan.progressive.append(ProgressiveTable.load(cfg.paytable))
    plan.pool = {
        "pool": cfg.pool,
        "tables": dict(sorted(cfg.tables.items())),
        "five_dollar_meter_share": cfg.five_dollar_meter_share,
    }


def _plan(args: argparse.Namespace) -> _Plan:
    plan = _Plan()
    if args.config and _link_controller_file(args.config):
        _plan_pool(plan, args.config)
        args.config = None  # every other figure as for no table configuration
    config: TableConfig | None = load_config(args.config) if args.config else None
    if config is not None:
        g = config.game
        plan.opts = g.ranking
        plan.levels = ps.progressive_levels(g.levels)
        plan.meter = min(g.levels[0].initial_cents, g.levels[0].reset_cents)
        plan.wager = g.progressive_wager_cents
        plan.way = g.house_way
        plan.ez = g.ez_pai_gow
        bonus = config.bonus
        if bonus is not None:
            plan.royal_match = bonus.royal_match
    for spec in args.pay_table:
        table = _load_table(spec)
        if isinstance(table, ProgressiveTable):
            plan.progressive.append(table)
        else:
            plan.bonus.append(table)
    if not args.pay_table and plan.pool is None:
        if config is not None:
            plan.progressive.append(config.game.table)
            if config.bonus is not None:
                plan.bonus.extend(config.bonus.tables.values())
        else:
            plan.progressive.append(ProgressiveTable.load())
            plan.bonus.extend(load_builtin(name) for name in BUILTIN)
    return _finish(plan, args)


def _finish(plan: _Plan, args: argparse.Namespace) -> _Plan:
    """The command line's options over the plan."""
    if args.ace_low_straight or args.joker_flush:
        plan.opts = RankingOptions(
            args.ace_low_straight or plan.opts.ace_low_straight,
            args.joker_flush or plan.opts.joker_flush,
        )
    if args.meter is not None:
        if args.meter < 0:
            raise ValueError(f"--meter: must not be negative, got {args.meter}")
        plan.meter = args.meter
    if args.progressive_wager is not None:
        plan.wager = args.progressive_wager
    if args.house_way:
        plan.way = args.house_way
    if args.rounds is not None:
        if args.rounds < 0:
            raise ValueError(f"--rounds: must not be negative, got {args.rounds}")
        plan.rounds = args.rounds
    for t in plan.progressive:
        if plan.wager not in t.wager_cents:
            raise ValueError(f"{t.name}: does not accept a {plan.wager}-cent wager")
    return plan


def build_sheets(
    bonus: list[PayTable],
    progressive: list[ProgressiveTable],
    opts: RankingOptions,
    meter: int = DEFAULT_METER_CENTS,
    wager: int = 100,
    royal_match: Any = "king-queen",
    levels: list[dict[str, object]] | None = None,
) -> list[ps.Sheet]:
    """Every exact sheet (the census first when any table is on seven cards): the one full
    enumeration serves every table."""
    sheets: list[ps.Sheet] = []
    if progressive or any(t.wager in ps.SEVEN_CARD_WAGERS for t in bonus):
        hands = ps.full_deck(opts)
        sheets.append(ps.census(hands))
    for p in progressive:
        sheets.append(ps.progressive_sheet(p, hands, meter, wager, levels or []))
    for t in bonus:
        if t.wager in ps.SEVEN_CARD_WAGERS:
            sheets.append(ps.bonus_sheet(t, hands, royal_match))
        elif t.wager == "three-card":
            sheets.append(ps.three_card_sheet(t))
        else:
            sheets.append(ps.side_sheet(t))
    return sheets


def simulate_main_game(
    way_name: str, opts: RankingOptions, rounds: int, seed: int, ez: bool, vig: Any
) -> ps.MainGameTally:
    """``rounds`` seeded deals of a player's and the dealer's seven cards from one 53-card deck."""
    tally = ps.MainGameTally(HouseWay.load(way_name), opts, ez, vig)
    rng = random.Random(seed)
    deck = list(range(53))
    for _ in range(rounds):
        cards = rng.sample(deck, 14)
        tally.add(cards[:7], cards[7:])
    return tally


def run_parsheet(args: argparse.Namespace) -> int:
    try:
        plan = _plan(args)
        way = HouseWay.load(plan.way)
    except (ConfigError, ValueError, PayTableError, OSError) as exc:
        print(f"parsheet: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    start = time.perf_counter()
    tables = len(plan.bonus) + len(plan.progressive)
    _progress(
        f"parsheet: exact par sheets of {tables} pay tables"
        + (
            " from every one of the 154,143,080 hands (about 15 s)"
            if plan.progressive or any(t.wager in ps.SEVEN_CARD_WAGERS for t in plan.bonus)
            else ""
        )
        + " ..."
    )
    sheets = build_sheets(
        plan.bonus, plan.progressive, plan.opts, plan.meter, plan.wager, plan.royal_match,
        plan.levels,
    )  # fmt: skip
    exact_s = time.perf_counter() - start
    _progress(f"parsheet: {plan.rounds:,} rounds of the main game, seed {args.seed} ...")
    main = simulate_main_game(way.name, plan.opts, plan.rounds, args.seed, plan.ez, args.vig)
    _progress(f"parsheet: done in {time.perf_counter() - start:.1f} s")
    meta = {
        "hands": sheets[0].hands if sheets and sheets[0].wager == "census" else 0,
        "exact_seconds": round(exact_s, 2),
        "seed": args.seed,
        "rounds": plan.rounds,
        "house_way": way.name,
        "ez_pai_gow": plan.ez,
        "vig": args.vig,
        **({} if plan.pool is None else {"pool": plan.pool}),
    }
    out = {"text": format_text, "json": format_json, "csv": format_csv}[args.format]
    sys.stdout.write(out(sheets, main, meta))
    return 0


def _progress(line: str) -> None:
    """A line of progress on standard error when it is a terminal (a person waiting), never in
    a pipe or a file."""
    if sys.stderr.isatty():
        print(line, file=sys.stderr, flush=True)


# --- formats ----------------------------------------------------------------------------------


def _num(v: object) -> object:
    if isinstance(v, Fraction):
        return float(v)
    if isinstance(v, dict):
        return {str(k): _num(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_num(x) for x in v]
    return v


def _sheet_json(s: ps.Sheet) -> dict[str, object]:
    return {
        "name": s.name,
        "wager": s.wager,
        "cite": s.cite,
        "hands": s.hands,
        "return": _num(s.ret),
        "house_edge": _num(s.edge),
        "lines": [
            {
                "line": ln.line,
                "count": ln.count,
                "probability": float(ln.probability),
                "one_in": None if ln.count == 0 else round(ln.one_in, 2),
                "pays": ln.pays,
                "contribution": float(ln.contribution),
                **({} if ln.deducted is None else {"deducted_from_meter": ln.deducted}),
            }
            for ln in s.lines
        ],
        "notes": list(s.notes),
        "figures": _num(dict(s.figures)),
    }


def _main_json(main: ps.MainGameTally) -> dict[str, object]:
    return {k: {"estimate": v[0], "standard_error": v[1]} for k, v in main.figures().items()}


def format_json(sheets: list[ps.Sheet], main: ps.MainGameTally, meta: dict[str, object]) -> str:
    doc = {"meta": meta, "sheets": [_sheet_json(s) for s in sheets], "main_game": _main_json(main)}
    return json.dumps(doc, indent=2) + "\n"


def format_csv(sheets: list[ps.Sheet], main: ps.MainGameTally, meta: dict[str, object]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in sheets:
        for ln in s.lines:
            deducted = "" if ln.deducted is None else str(ln.deducted).lower()
            w.writerow(
                [s.name, s.wager, ln.line, ln.count, s.hands, f"{float(ln.probability):.12g}",
                 ln.pays, f"{float(ln.contribution):.12g}", deducted, ""]
            )  # fmt: skip
        if s.ret is not None:
            w.writerow([s.name, s.wager, "return", "", s.hands, "", "", f"{float(s.ret):.12g}"])
    for k, (est, se) in main.figures().items():
        w.writerow(
            ["main game", "pai gow", k, "", main.rounds, f"{est:.6g}", "", "", "", f"{se:.3g}"]
        )
    return buf.getvalue()


CSV_COLUMNS = (
    "table", "wager", "line", "count", "hands", "probability", "pays", "contribution",
    "deducted_from_meter", "standard_error",
)  # fmt: skip


def _pct(v: Fraction | float | None) -> str:
    return "-" if v is None else f"{float(v) * 100:.4f}%"


def format_text(sheets: list[ps.Sheet], main: ps.MainGameTally, meta: dict[str, object]) -> str:
    out: list[str] = []
    add = out.append
    add(f"Par sheets, exact: {meta['hands']:,} seven-card hands ({meta['exact_seconds']} s)")
    pool = meta.get("pool")
    if isinstance(pool, dict):
        tables = ", ".join(f"{t} (asset {a})" for t, a in dict(pool["tables"]).items())
        add(
            f"Linked pool {pool['pool']} (its link controller's configuration): one meter for "
            f"every table, at the pool's rates; $5 share of the meter: "
            f"{pool['five_dollar_meter_share']}; tables: {tables}"
        )
    for s in sheets:
        add("")
        add(f"== {s.name} [{s.wager}] ({s.cite})")
        add(f"   {'line':<36} {'hands':>12} {'probability':>13} {'1 in':>14} {'pays':>15}"
            f" {'return':>10}")  # fmt: skip
        for ln in s.lines:
            one_in = "-" if ln.count == 0 else f"{ln.one_in:,.1f}"
            mark = " *" if ln.deducted else ""
            add(
                f"   {ln.line:<36} {ln.count:>12,} {float(ln.probability):>13.10f} {one_in:>14}"
                f" {ln.pays:>15} {float(ln.contribution):>10.6f}{mark}"
            )
        if s.ret is not None:
            add(f"   return {_pct(s.ret)}   house edge {_pct(s.edge)}")
        for note in s.notes:
            add(f"   note: {note}")
        if s.wager == "progressive":
            out.extend(_filing(s))
        elif "expected_payment_cents_per_other_hand" in s.figures:
            v = s.figures["expected_payment_cents_per_other_hand"]
            add(f"   expected envy payment per other hand: {float(v):.4f} cents")  # type: ignore[arg-type]
    add("")
    add(
        f"== Main game, both sides on the house way {meta['house_way']!r}"
        f" ({meta['rounds']:,} rounds, seed {meta['seed']}, vig {meta['vig']}"
        f"{', EZ pai gow' if meta['ez_pai_gow'] else ''})"
    )
    for k, (est, se) in main.figures().items():
        add(f"   {k:<52} {est * 100:9.3f}%  +/- {se * 100:.3f}%")
    return "\n".join(out) + "\n"


def _filing(s: ps.Sheet) -> list[str]:
    f = s.figures
    lines = ["   -- filing (NJ 13:69D-1.52(e); NY 5324.41(k)(4),(5)) --"]
    a, b = f["return_a"], f["return_b_per_meter_cent"]
    assert isinstance(a, Fraction) and isinstance(b, Fraction)
    lines.append(
        f"   return at meter ${int(f['meter_cents']) / 100:,.2f} "  # type: ignore[call-overload]
        f"(${int(f['wager_cents']) / 100:g} wager): "  # type: ignore[call-overload]
        f"{_pct(f['return_at_meter'])}"  # type: ignore[arg-type]
    )
    lines.append(
        f"   return = {float(a):.6f} + {float(b):.6e} x M (M the meter in cents, this segment)"
    )
    be = f["break_even_meter_cents"]
    lines.append(
        "   break-even meter: " + ("none" if be is None else f"${float(be) / 100:,.2f}")  # type: ignore[arg-type]
    )
    da, db = f["deducted_a"], f["deducted_b_per_meter_cent"]
    assert isinstance(da, Fraction) and isinstance(db, Fraction)
    lines.append(
        f"   deducted from the meter (k)(5): {float(da):.6f} + {float(db):.6e} x M per unit "
        "wagered (lines marked *)"
    )
    lines.append(f"   paid by the house: {_pct(f['house_paid_return'])}")  # type: ignore[arg-type]
    if "long_run_return" in f:
        lines.append(
            "   long-run return (house-paid lines + rate of progression + hidden rate): "
            + _pct(f["long_run_return"])  # type: ignore[arg-type]
        )
    levels = f.get("levels") or []
    assert isinstance(levels, list)
    for lvl in levels:
        lines.append(
            f"   level {lvl['name']}: initial ${lvl['initial_cents'] / 100:,.2f}, reset "
            f"${lvl['reset_cents'] / 100:,.2f}, rate of progression {lvl['rate_bp'] / 100:g}%"
            f" + hidden {lvl['hidden_rate_bp'] / 100:g}%"
            + (f", limit ${lvl['limit_cents'] / 100:,.2f}" if lvl["limit_cents"] else "")
        )
    if not levels:
        lines.append("   levels: none configured (pass --config for the amounts and rates)")
    jackpots = f["jackpot_probability"]
    assert isinstance(jackpots, dict)
    for name, p in jackpots.items():
        flag = "  ** RARER THAN 1 IN 100,000,000 **" if p * ps.JACKPOT_ODDS_LIMIT < 1 else ""
        lines.append(f"   jackpot {name}: {one_in(p)} hands{flag}")
    return lines
