"""``tablectl drill house-way|settle|progressive [--number N] [--config PATH] [--json]``: one
dealer drill at the terminal (the page's Drills, without a running table).

Prints drill N (by default a new number each run, printed so it can be repeated), reads the
answer from stdin and prints the verdict with the reason: for ``house-way`` one line ``HIGH /
LOW`` (``As Ad 9h 7s 5c / Kh Kd``); for ``settle`` one line per area ``AREA win|push|lose
[VIG]`` (vigorish in dollars, ``3 win 0.75``), ended by an empty line or end of input; for
``progressive`` the amount in dollars (``123.45``). With ``--json`` the drill is one JSON line
and the answer one JSON object (`controller.sim.training.Drills.judge`). Exit 0 correct, 1
wrong, 2 bad input. Responsible only for parsing and printing; the drills are
`controller.sim.training` over `fsm.rules.drills`. Must never touch a journal.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from decimal import Decimal, InvalidOperation
from typing import Any

from controller.cli.args import whole
from controller.config import ConfigError

KINDS = ("house-way", "settle", "progressive")


def register(sub: Any) -> None:
    p = sub.add_parser("drill", help="a dealer drill: house way, settlement, progressive pay")
    p.add_argument("kind", choices=KINDS)
    p.add_argument(
        "--number",
        type=whole(0, 2**63 - 1, "a drill number"),
        help="the drill's number (default: a new one)",
    )
    p.add_argument("--config", metavar="PATH", help="table configuration (default: simulated)")
    p.add_argument("--json", action="store_true", help="the drill and the answer as JSON")
    p.set_defaults(func=run)


def _cents(text: str, where: str) -> int:
    try:
        value = Decimal(text.strip().lstrip("$").replace(",", ""))
    except InvalidOperation:
        raise ValueError(f"{where}: {text.strip()!r} is not an amount in dollars") from None
    cents = value * 100
    if cents != cents.to_integral_value() or cents < 0:
        raise ValueError(f"{where}: {text.strip()!r} is not whole cents")
    return int(cents)


def _read_answer(kind: str) -> dict[str, Any]:
    if kind == "house-way":
        line = sys.stdin.readline()
        high, sep, low = line.partition("/")
        if not sep:
            raise ValueError("answer: HIGH / LOW, e.g. As Ad 9h 7s 5c / Kh Kd")
        return {"high": high.strip(), "low": low.strip()}
    if kind == "progressive":
        return {"amount_cents": _cents(sys.stdin.readline(), "amount")}
    answers: dict[str, dict[str, Any]] = {}
    for line in sys.stdin:
        words = line.split()
        if not words:
            break
        if len(words) not in (2, 3) or not words[0].isdigit():
            raise ValueError(f"answer: {line.strip()!r} is not AREA win|push|lose [VIG]")
        vig = _cents(words[2], f"area {words[0]} vigorish") if len(words) == 3 else 0
        answers[words[0]] = {"outcome": words[1], "vig_cents": vig}
    return {"answers": answers}


def _pose_text(d: dict[str, Any]) -> list[str]:
    lines = [f"drill {d['kind']} number {d['number']}: {d['task']}"]
    if d["kind"] == "house-way":
        lines.append(f"cards: {d['cards']} (house way {d['house_way']})")
        lines.append("answer: HIGH / LOW")
    elif d["kind"] == "settle":
        lines.append(f"dealer: {d['dealer']['high']} / {d['dealer']['low']}")
        for p in d["players"]:
            lines.append(
                f"area {p['position']}: {p['high']} / {p['low']}, wager "
                f"${p['wager_cents'] / 100:,.2f}"
            )
        lines.append(f"answer: one line per area, AREA win|push|lose [VIG] ({d['vigorish']})")
    else:
        lines.append(
            f"cards: {d['cards']}; meter ${d['meter_cents'] / 100:,.2f}; wager "
            f"${d['wager_cents'] / 100:,.2f} ({d['pay_table']})"
        )
        lines.append("answer: the amount paid, in dollars")
    return lines


def _verdict_text(v: dict[str, Any]) -> list[str]:
    head = "correct" if v["correct"] else "not right"
    if "seats" in v:
        return [head, *(f"area {s['position']}: {s['explanation']}" for s in v["seats"])]
    return [head, str(v["explanation"])]


def run(args: argparse.Namespace) -> int:
    from controller.sim.simulate import load_sim_config
    from controller.sim.training import Drills, TrainingError

    err = sys.stderr
    try:
        config = load_sim_config(args.config)
    except ConfigError as exc:
        print(f"tablectl drill: {exc}", file=err)
        return 2
    game = config.game
    drills = Drills(
        game.way,
        game.table,
        game.ranking,
        wager_cents=game.progressive_wager_cents,
        meter_cents=game.levels[0].reset_cents,
        five_times_meter=game.five_dollar_meter_share == "times-five",
    )
    number = args.number if args.number is not None else secrets.randbelow(1_000_000)
    try:
        posed = drills.pose(args.kind, number)
        if args.json:
            print(json.dumps(posed, sort_keys=True), flush=True)
            raw = json.loads(sys.stdin.readline() or "{}")
            if not isinstance(raw, dict):
                raise ValueError("answer: a JSON object")
            answer: dict[str, Any] = raw
        else:
            print("\n".join(_pose_text(posed)), flush=True)
            answer = _read_answer(args.kind)
        verdict = drills.judge(args.kind, number, answer)
    except (TrainingError, ValueError) as exc:
        print(f"tablectl drill: {exc}", file=err)
        return 2
    if args.json:
        print(json.dumps(verdict, sort_keys=True))
    else:
        print("\n".join(_verdict_text(verdict)))
    return 0 if verdict["correct"] else 1
