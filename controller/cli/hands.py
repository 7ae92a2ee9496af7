"""``tablectl hands`` and ``tablectl settle``: the rules engine on JSON lines, for labs and tests.

``hands`` reads one hand per line as card text (2, 5 or 7 cards) and writes one JSON object per
line;
``settle`` reads JSON lines of four hands and a wager and writes the settlement. A bad line gives
``{"line": n, "error": "..."}``; the command goes on and exits 2 at the end. Responsible only for
the line protocol: every rule is in ``fsm``. Must never touch the journal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from controller.cli import args as types
from fsm.configread import MAX_CENTS
from fsm.rules.cards import CardError, format_cards, parse_cards
from fsm.rules.progressive import PayTableError, ProgressiveTable
from fsm.rules.ranking import Category, RankingOptions, best_five_of_seven, evaluate2, evaluate5

EXIT_BAD_INPUT = 2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "hands",
        help="rank hands read from stdin, one per line, as card text",
        description="Reads one hand a line as card text (2, 5 or 7 cards, e.g. "
        "'AS KS QS JS TS' or 'Ah Kh 2c 3d 4s Jk 9c'; JK is the joker) and writes one JSON "
        "object a line: its category, or for seven cards the best hand, the house way's "
        "setting and the progressive line.",
    )
    p.add_argument(
        "--meter",
        type=types.cents(),
        default=0,
        metavar="CENTS",
        help="progressive meter in cents for meter-based lines (default 0)",
    )
    p.add_argument(
        "--house-way",
        default="reference",
        metavar="NAME",
        help="house way name or TOML path (default: reference)",
    )
    p.add_argument(
        "--pay-table",
        default="ny-5324-41-k4",
        metavar="NAME",
        help="progressive pay table name or TOML path",
    )
    _add_ranking_options(p)
    p.set_defaults(func=run_hands)

    s = sub.add_parser("settle", help="settle pai gow wagers read from stdin as JSON lines")
    s.add_argument(
        "--vig",
        choices=["round-up-25", "exact"],
        default="round-up-25",
        help="vigorish: 5%% rounded up to the next 25 cents (default) or exact",
    )
    _add_ranking_options(s)
    s.set_defaults(func=run_settle)


def _add_ranking_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ace-low-straight",
        choices=["second", "lowest"],
        default="second",
        help="A-2-3-4-5: second highest (default) or lowest, NY 5324.41(c)(4)",
    )
    p.add_argument(
        "--joker-flush",
        choices=["highest-missing", "ace"],
        default="highest-missing",
        help="the joker in a flush fills the highest missing rank (default) or is an ace",
    )


def _options(args: argparse.Namespace) -> RankingOptions:
    return RankingOptions(args.ace_low_straight, args.joker_flush)


def _run_lines(lines: Iterable[str], out: TextIO, handle: Callable[[str], dict[str, Any]]) -> int:
    """Apply ``handle`` to every non-blank line; errors become ``{"line", "error"}`` objects."""
    failed = False
    for n, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            result = handle(text)
        except (CardError, ValueError, KeyError, TypeError) as e:
            failed = True
            message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            result = {"line": n, "error": str(message)}
        out.write(json.dumps(result) + "\n")
        out.flush()
    return EXIT_BAD_INPUT if failed else 0


def run_hands(
    args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    opts = _options(args)
    try:
        table = ProgressiveTable.load(args.pay_table)
    except PayTableError as e:
        print(f"tablectl hands: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.meter < 0:
        print("tablectl hands: --meter must be zero or more cents", file=sys.stderr)
        return EXIT_BAD_INPUT
    from fsm.rules.houseway import HouseWay

    try:
        way = HouseWay.load(args.house_way)
    except (ValueError, OSError) as e:
        print(f"tablectl hands: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT

    def handle(text: str) -> dict[str, Any]:
        cards = parse_cards(text, count=(2, 5, 7))
        shown = format_cards(cards)
        if len(cards) == 5:
            hand = evaluate5(cards, opts)
            return {
                "cards": shown,
                "category": hand.category.label,
                "natural": hand.natural,
                "value": list(hand.value),
            }
        if len(cards) == 2:
            low = evaluate2(cards)
            return {"cards": shown, "category": low.category.label, "value": list(low.value)}
        setting = way.set(cards, opts)
        line = table.best_line(cards, args.meter, opts)
        return {
            "cards": shown,
            "best": Category(best_five_of_seven(cards, opts)[0]).label,
            "house_way": {"high": format_cards(setting.high), "low": format_cards(setting.low)},
            "progressive": line,
            "progressive_cents": 0 if line is None else table.payout_cents(line, 100, args.meter),
        }

    return _run_lines(stdin or sys.stdin, stdout or sys.stdout, handle)


def run_settle(
    args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    opts = _options(args)
    from fsm.rules.settlement import settle_hands

    def handle(text: str) -> dict[str, Any]:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"not a JSON object: {e.msg} at column {e.colno}") from None
        except RecursionError:
            raise ValueError("not a JSON object: nested too deeply") from None
        if not isinstance(obj, dict):
            raise ValueError("expected a JSON object")
        required = ("player_high", "player_low", "dealer_high", "dealer_low", "wager_cents")
        missing = [k for k in required if k not in obj]
        if missing:
            raise ValueError(f"missing field(s): {', '.join(missing)}")
        unknown = set(obj) - {*required, "ez"}
        if unknown:
            raise ValueError(f"unknown field(s): {', '.join(sorted(unknown))}")
        wager = obj["wager_cents"]
        if type(wager) is not int or not 0 < wager <= MAX_CENTS:
            raise ValueError(
                f"wager_cents must be a whole number of cents 1..{MAX_CENTS}, not {wager!r}"[:200]
            )
        ez = obj.get("ez", False)
        if not isinstance(ez, bool):
            raise ValueError(f"ez must be true or false, not {ez!r}")
        hands = {}
        for k in required[:4]:
            if not isinstance(obj[k], str):
                raise ValueError(f"{k} must be a string of cards")
            hands[k] = parse_cards(obj[k], count=5 if k.endswith("high") else 2)
        result = settle_hands(
            hands["player_high"],
            hands["player_low"],
            hands["dealer_high"],
            hands["dealer_low"],
            wager,
            ez=ez,
            vig=args.vig,
            opts=opts,
        )
        return {
            "outcome": result.outcome,
            "won_cents": result.won_cents,
            "vig_cents": result.vig_cents,
        }

    return _run_lines(stdin or sys.stdin, stdout or sys.stdout, handle)
