"""The mutants of `make conformance`: for each rule the matrix calls implemented, a small named
change to the code that breaks it (docs/conformance.md names each row's mutant).

A mutant is one or more text patches (file, old, new): ``old`` must occur exactly once in the file
(a short snippet, so that drift elsewhere in the file does not matter); when it does not, the
mutant no longer applies and `make conformance` says so as a failure, never as a pass. Each
mutant breaks the rule in the way a careless change would, never by making the code crash (a
mutant that does not compile is refused). Applied only to a temporary copy of the tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Patch:
    file: str  # relative to the tree's root
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    breaks: str  # the rule broken, in words
    patches: tuple[Patch, ...]


def _m(breaks: str, *patches: tuple[str, str, str]) -> Mutant:
    return Mutant(breaks, tuple(Patch(*p) for p in patches))


POS = "fsm/round/position.py"
BANK = "fsm/round/banking.py"
RANK = "fsm/rules/ranking.py"
BET = "fsm/round/phases/betting.py"
START = "fsm/round/phases/start.py"
DEAL = "fsm/round/phases/deal.py"
FAULT = "fsm/round/phases/fault.py"
CTX = "fsm/round/context.py"
CFG = "fsm/round/config.py"
PAY = "fsm/rules/paytables.py"
PROG = "fsm/rules/progressive.py"
SETTLE = "fsm/round/phases/settle.py"

MUTANTS: dict[str, Mutant] = {
    # --- positions and the count (fsm/round/position.py)
    "one_seat_left_out_of_the_count": _m(
        "six betting positions and the dealer: the count skips the sixth area",
        (
            POS,
            "return [seats[(at + i) % SEATS] for i in range(SEATS)]",
            "return [seats[(at + i) % SEATS] for i in range(SEATS - 1)] + [first]",
        ),
    ),
    "count_goes_clockwise": _m(
        "the count from the dealer goes counterclockwise (NY 5324.2(b)): it goes clockwise",
        (
            POS,
            "return [seats[(at + i) % SEATS] for i in range(SEATS)]",
            "return [seats[(at - i) % SEATS] for i in range(SEATS)]",
        ),
    ),
    "stacks_go_counterclockwise": _m(
        "stacks go clockwise from the starting position: they go counterclockwise",
        (
            POS,
            "return [seats[(at - i) % SEATS] for i in range(SEATS)]",
            "return [seats[(at + i) % SEATS] for i in range(SEATS)]",
        ),
    ),
    "the_bank_is_not_number_one": _m(
        "the bank's position counts as number one: the dealer always does",
        (POS, "first = DEALER if bank_seat is None else bank_seat", "first = DEALER"),
    ),
    "three_card_first_stack_to_the_nearest_left": _m(
        "the first stack goes to the pai gow position farthest left: to the nearest",
        (
            POS,
            "return [*sorted(areas, key=clockwise.index), DEALER]",
            "return [*sorted(areas, key=clockwise.index, reverse=True), DEALER]",
        ),
    ),
    "three_card_dealer_first": _m(
        "stacks go to the pai gow positions, then the dealer: the dealer first",
        (
            POS,
            "return [*sorted(areas, key=clockwise.index), DEALER]",
            "return [DEALER, *sorted(areas, key=clockwise.index)]",
        ),
    ),
    # --- the player bank (fsm/round/banking.py)
    "bank_offered_to_five_areas": _m(
        "banking offered to every player: area 6 is never offered",
        (
            BANK,
            "return [a for a in order if a != self.last_bank]",
            "return [a for a in order if a != self.last_bank and a != 6]",
        ),
    ),
    "a_bank_at_the_start_of_the_game": _m(
        "no player bank at the start of the game (our reading: after the table opens or a void): "
        "a player banks the first round",
        (BANK, "if self.start_of_game or self.offer_start == 0:", "if self.offer_start == 0:"),
        (BANK, "if self.start_of_game:\n            return", "if False:\n            return"),
    ),
    "bank_two_rounds_running": _m(
        "no player banks two consecutive rounds: the last bank may bank again",
        (BANK, "if area == self.last_bank:", "if area == -1:"),
        (BANK, "return [a for a in order if a != self.last_bank]", "return list(order)"),
    ),
    # --- ranking (fsm/rules/ranking.py)
    "joker_is_a_deuce": _m(
        "the joker is an ace (unless it completes a straight or flush): it is a deuce",
        (
            RANK,
            "best = _natural_value([*ranks, ACE], False, opts)",
            "best = _natural_value([*ranks, 2], False, opts)",
        ),
        (
            RANK,
            "a, b = (ACE if c == JOKER else rank(c) for c in cards)\n    if a == b:\n"
            "        return LowHand(",
            "a, b = (2 if c == JOKER else rank(c) for c in cards)\n    if a == b:\n"
            "        return LowHand(",
        ),
    ),
    "flush_below_straight": _m(
        "a flush outranks a straight: swapped",
        (RANK, "    STRAIGHT = 4\n    FLUSH = 5\n", "    STRAIGHT = 5\n    FLUSH = 4\n"),
    ),
    "joker_never_completes_a_straight": _m(
        "the joker completes a straight: never",
        (
            RANK,
            "if v[0] in (Category.STRAIGHT, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH) or (",
            "if v[0] in (Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH) or (",
        ),
    ),
    "a2345_lowest_option_ignored": _m(
        "A-2-3-4-5 may be made the lowest straight: the option is ignored",
        (RANK, 'return 9 if opts.ace_low_straight == "second" else 0', "return 9"),
    ),
    "kickers_compared_lowest_first": _m(
        "the highest card not in the other hand decides: the lowest does",
        (
            RANK,
            "key=lambda kv: (kv[1], kv[0]), reverse=True",
            "key=lambda kv: (kv[1], -kv[0]), reverse=True",
        ),
    ),
    "high_hand_needs_only_its_category": _m(
        "the high hand ranks at least the low hand: only the category is compared",
        (RANK, "return high[: len(low)] >= low", "return high[:1] >= low[:1]"),
    ),
    # --- the shuffle, chips and the lock-out (fsm/round/phases/betting.py)
    "any_deck_count_deals": _m(
        "a deck of 53 cards, counted: any count deals",
        (BET, "return bool(s.e.count == DECK_SIZE)", "return True"),
    ),
    "chips_taken_after_the_lockout": _m(
        'no wager after "no more bets": a chip after the lock-out is taken',
        (
            BET,
            '"chip_detected", BETTING, None, [floor_accepts, acceptor_unlit]',
            '"chip_detected", (BETTING, LOCKED_OUT), None, [floor_accepts, acceptor_unlit]',
        ),
    ),
    "a_lit_acceptor_takes_a_second_chip": _m(
        "one progressive wager per acceptor, its light lit: a second chip is taken",
        (BET, "return area not in s.c.r.wagers or s.refuse(", "return True or s.refuse("),
    ),
    "pai_gow_checked_only_in_three_card_mode": _m(
        "(k)(1) in every mode: a progressive wager without a pai gow wager is refused only with "
        "the three-card bonus",
        (
            BET,
            "    pai_gow = s.c.r.pai_gow\n    if pai_gow is None:\n        return True",
            "    pai_gow = s.c.r.pai_gow\n"
            "    if pai_gow is None or not s.c.config.three_card_bonus:\n        return True",
        ),
    ),
    "chip_count_mismatch_ignored": _m(
        "the chips counted against the lights: a mismatch is ignored",
        (BET, "return s.c.r.mismatch is None or s.refuse(", "return True or s.refuse("),
    ),
    # --- the configuration (fsm/round/config.py)
    "any_progressive_wager_amount": _m(
        "the progressive wager is $1 or $5: any amount the pay table takes",
        (CFG, "if wager not in MIN_RATE_BP:", "if wager <= 0:"),
        (CFG, "least = MIN_RATE_BP[wager]", "least = MIN_RATE_BP.get(wager, 0)"),
        (CFG, "if wager not in table.wager_cents:", "if False:"),
        (PROG, "if wager_cents not in self.wager_cents:", "if wager_cents <= 0:"),
    ),
    "rate_of_progression_halved": _m(
        "a rate of at least 21% / 27%: half of it is taken",
        (CFG, "least = MIN_RATE_BP[wager]", "least = MIN_RATE_BP[wager] // 2"),
    ),
    "side_wager_without_rng": _m(
        "the 1-7 side wager only with an RNG: offered with dice",
        (CFG, 'if offered and start_mode != "rng":', 'if offered and start_mode == "never":'),
    ),
    "side_wager_odds_below_5_5": _m(
        "side wager odds 5.5:1 to 6:1: 5:1 accepted",
        (CFG, "SIDE_WAGER_MIN_ODDS = Fraction(11, 2)", "SIDE_WAGER_MIN_ODDS = Fraction(5, 1)"),
    ),
    # --- bonus pay tables and the offering (fsm/rules/paytables.py)
    "fortune_table_may_pay_less": _m(
        "a fortune bonus table pays at least table A, B or C: less is accepted",
        (
            PAY,
            "if odds.ratio < minimum.ratio:",
            'if odds.ratio < minimum.ratio and "(m)(1)" not in rule.cite:',
        ),
    ),
    "insurance_table_may_pay_less": _m(
        "an insurance table pays at least table A-E: less is accepted",
        (
            PAY,
            "if odds.ratio < minimum.ratio:",
            'if odds.ratio < minimum.ratio and "(m)(3)" not in rule.cite:',
        ),
    ),
    "seven_card_table_may_pay_less": _m(
        "the seven-card bonus pays at least table A or B (our reading of (o)(2)): less is accepted",
        (
            PAY,
            "if odds.ratio < minimum.ratio:",
            'if odds.ratio < minimum.ratio and "(o)(2)" not in rule.cite:',
        ),
    ),
    "three_card_table_may_pay_less": _m(
        "the three-card bonus pays at least the minimum odds: less is accepted",
        (
            PAY,
            "if odds.ratio < minimum.ratio:",
            'if odds.ratio < minimum.ratio and "(o)(1)" not in rule.cite:',
        ),
    ),
    "fixed_odds_may_be_higher": _m(
        "the imperial player bonus odds are fixed: higher odds are accepted",
        (
            PAY,
            'if rule.rule == "exact" and odds.ratio != minimum.ratio:',
            'if rule.rule == "exact" and odds.ratio < minimum.ratio:',
        ),
    ),
    "envy_amounts_may_be_higher": _m(
        "envy amounts are fixed: a higher amount is accepted",
        (PAY, "if raw != minimum:", "if raw < minimum:"),
    ),
    "seven_card_limit_below_50000": _m(
        "the seven-card bonus payout limit is at least $50,000: any limit is accepted",
        (
            PAY,
            "need = max(floor, int(-(-at_min // 1)))",
            'need = 0 if group == "seven-card" else max(floor, int(-(-at_min // 1)))',
        ),
    ),
    "imperial_limit_below_40000": _m(
        "the imperial bonus payout limit is at least $40,000: any limit is accepted",
        (
            PAY,
            "need = max(floor, int(-(-at_min // 1)))",
            'need = 0 if group == "imperial" else max(floor, int(-(-at_min // 1)))',
        ),
    ),
    "fortune_bonus_with_the_three_and_seven_card_bonus": _m(
        "the fortune bonus is not offered with the three-card or seven-card bonus: it is",
        (
            PAY,
            '("fortune-bonus", ("three-card", "seven-card", "imperial"),',
            '("fortune-bonus", ("imperial",),',
        ),
    ),
    "imperial_with_the_three_and_seven_card_bonus": _m(
        "the three-card and seven-card bonus are not offered with the imperial bonus: they are",
        (PAY, '("imperial", ("three-card", "seven-card"),', '("imperial", (),'),
    ),
    "insurance_with_the_imperial_bonus": _m(
        "the imperial bonus is not offered with insurance: it is",
        (PAY, '("insurance", ("imperial",),', '("insurance", (),'),
    ),
    "envy_without_fortune": _m(
        "the envy bonus needs the fortune bonus: offered alone",
        (PAY, 'if "envy" in seen and "fortune-bonus" not in seen:', "if False:"),
    ),
    "bonus_minimum_below_one_dollar": _m(
        "a bonus wager is at least $1: a lower table minimum is accepted",
        (PAY, "if wager in mins and mins[wager] < floor_cents:", "if False:"),
        (PAY, "if cents < least:", "if cents < 1:"),
    ),
    "side_wager_win_not_rounded_down": _m(
        "a side wager's win is rounded down to the dollar: paid to the cent",
        (PAY, "return win - win % 100", "return win"),
    ),
    # --- the RNG, the dice and the 1-7 side wagers (fsm/round/phases/start.py, context.py)
    "the_count_fires_the_rng": _m(
        "the RNG is activated by the dealer or the bank: the chip count fires it by itself",
        (
            BET,
            "from fsm.round.states import (\n    BETTING,",
            "from fsm.round.states import (\n    RNG,\n    BETTING,",
        ),
        (
            BET,
            "Transition(trigger, LOCKED_OUT, None, [rng_mode, *guards, pai_gow_covers],",
            "Transition(trigger, LOCKED_OUT, RNG, [rng_mode, *guards, pai_gow_covers],",
        ),
    ),
    "the_bank_may_not_activate_the_rng": _m(
        "the bank uses the RNG when a player banks: refused",
        (
            START,
            'e.by != "bank"\n        or s.c.bank.current is not None',
            'e.by != "bank"\n        or False',
        ),
    ),
    "a_shake_counts_with_the_lid_off": _m(
        "a shake counts only with the shaker's lid on: a shake with the lid off counts",
        (START, "return not s.c.lid_lifted or s.refuse(", "return True or s.refuse("),
    ),
    "two_shakes_are_enough": _m(
        "the dice are shaken at least three times: two are taken",
        (START, "return n >= 3 or s.refuse(", "return n >= 2 or s.refuse("),
    ),
    "bank_lifting_the_lid_keeps_the_shakes": _m(
        "the bank lifting the lid means a re-shake: the shakes counted stand",
        (
            START,
            "def bank_lifted_lid(s: Step) -> None:\n    s.c.r.shakes = 0",
            "def bank_lifted_lid(s: Step) -> None:\n    s.c.r.shakes += 0",
        ),
    ),
    "side_wagers_taken_after_the_rng": _m(
        "side wagers are made before the RNG is activated: taken after it",
        (
            START,
            '"side_wagers", LOCKED_OUT, None, [side_wager_at_table, bets_valid]',
            '"side_wagers", (LOCKED_OUT, RNG, SIDE_WAGERS), None, '
            "[side_wager_at_table, bets_valid]",
        ),
    ),
    "rng_fires_with_side_wagers_open": _m(
        "the RNG is activated only once the side wagers are closed: fired while they are open",
        (
            START,
            "open_ = s.c.config.side_wager_offered and s.c.r.side_bets is None",
            "open_ = False",
        ),
    ),
    "a_displayed_number_is_voided": _m(
        "a displayed number side wagers ride on is final: a supervisor voids it",
        (
            START,
            "return not (r.side_bets and r.start_number is not None) or s.refuse(",
            "return True or s.refuse(",
        ),
    ),
    "losing_side_wagers_paid": _m(
        "side wagers on another number lose and are collected: paid as winners",
        (
            CTX,
            "side_wager_win_cents(c, odds) if n == number else 0",
            "side_wager_win_cents(c, odds)",
        ),
    ),
    "cards_dealt_before_side_wagers_are_settled": _m(
        "side wagers are settled before any card: the deal starts at the draw",
        (
            START,
            'Transition("rng_drawn", RNG, SIDE_WAGERS, [side_wager_offered, one_draw]',
            'Transition("rng_drawn", RNG, DEALING, [side_wager_offered, one_draw]',
        ),
    ),
    "a_void_forgets_the_side_wagers": _m(
        "a voided round settles or refunds the side wagers: neither",
        (CTX, "r = self.r\n        self._close_side_wagers(reason)", "r = self.r"),
    ),
    # --- dealing (fsm/round/phases/deal.py, betting.py)
    "three_card_stacks_of_four_first": _m(
        "the first cards in stacks of three: stacks of four",
        (
            DEAL,
            "return [Dispense(len(c.delivery_seats()), 3)]",
            "return [Dispense(len(c.delivery_seats()), 4)]",
        ),
    ),
    "pai_gow_positions_change_while_dealing": _m(
        '"no more bets" once the cards are in the shoe: the positions change while dealing',
        (
            BET,
            '"pai_gow_wagers",\n            (BETTING, LOCKED_OUT),',
            '"pai_gow_wagers",\n            (BETTING, LOCKED_OUT, DEALING),',
        ),
    ),
    "fours_dealt_before_the_bonus_is_settled": _m(
        "the three-card bonus is settled before the fours: the fours follow at once",
        (
            DEAL,
            'r.threes = s.memo["hands"] or {}\n    s.c.deadline = None',
            'r.threes = s.memo["hands"] or {}\n    deal_fours(s)',
        ),
    ),
    "any_remainder_deals": _m(
        "a different remainder is a misdeal: any remainder plays",
        (DEAL, "return bool(s.e.remaining == _expected_remaining(s.c))", "return True"),
    ),
    "dealer_hand_set_at_the_deal": _m(
        "the dealer's hand is set after the players': it is set (and shown) at the deal",
        (DEAL, "before=[dealt],", "before=[dealt, show_dealer_hand],"),
    ),
    "queen_dragon_ignored": _m(
        "EZ pai gow: a queen dragon pushes every pai gow wager: ignored",
        (
            DEAL,
            "dragon = cfg.ez_pai_gow and banking is not None and is_queen_dragon(banking)",
            "dragon = False",
        ),
    ),
    # --- progressive payment (fsm/round/context.py, fsm/rules/progressive.py, settle.py, fault.py)
    "winners_paid_from_the_dealers_left": _m(
        "winners are paid from the dealer's right counter-clockwise: from the left",
        (
            CTX,
            "return [a for a in order if a in wanted] + sorted(wanted - set(order))",
            "return sorted(wanted, reverse=True)",
        ),
    ),
    "chip_tray_hit_paid_before_an_earlier_meter_hit": _m(
        "every payment in the order of (g)(7), whatever pays it: a chip-tray hit is paid at once, "
        "before an earlier meter hit waiting for its supervisor",
        (CTX, "if pending or deducted:\n", "if deducted:\n"),
    ),
    "a_paid_hit_corrected_not_adjusted": _m(
        "after payment a correction is an adjustment (the difference, with its reason): a paid "
        "hit is corrected as if unpaid and queued to be paid again",
        (SETTLE, 'if any(p["position"] == area for p in c.r.paid):', "if False:"),
    ),
    "first_listed_line_not_the_best": _m(
        "the progressive line paying the most: the line listed first",
        (PROG, "if best is None or key > best:", "if best is None:"),
    ),
    "meter_paid_at_the_rounds_start": _m(
        "a meter payout at the meter when paid: at the meter when the round started",
        (
            CTX,
            "return self.config.progressive_payout(line, self.meters[level].display_cents)",
            "return self.config.progressive_payout(\n            line, "
            "(self.r.meters_at_start.get(level) or [self.meters[level].display_cents])[0]\n"
            "        )",
        ),
    ),
    "meter_hit_paid_without_a_supervisor": _m(
        "a supervisor validates a payout from the meter: paid at once from the chip tray",
        (CTX, "if pending or deducted:\n", "if pending:\n"),
        (CTX, "if deducted:\n                break", "if False:\n                break"),
    ),
    "a_dealt_round_is_voided": _m(
        "once the cards are dealt a fault resumes the round (cards kept): the round is voided",
        (FAULT, "if not s.e.void or where in VOIDABLE:", "if True:"),
    ),
    "five_dollar_wager_paid_as_one_dollar": _m(
        "a $5 wager is paid five times every payout amount: the $1 amount",
        (
            PROG,
            "return line.amount_cents * wager_cents // 100",
            "return line.amount_cents * min(wager_cents, 100) // 100",
        ),
    ),
    "one_dollar_table_pays_a_dollar_less": _m(
        "the $1 pay table's amounts: each fixed line a dollar less",
        (
            PROG,
            "return line.amount_cents * wager_cents // 100",
            "return line.amount_cents * wager_cents // 100 - 100",
        ),
    ),
    "the_banks_progressive_paid_nothing": _m(
        "a bank's progressive wager is settled by its own rules: the bank is paid $0",
        (
            CTX,
            '"line": paid_line, "cents": payout}',
            '"line": paid_line,\n'
            '                     "cents": 0 if area == self.bank.current else payout}',
        ),
    ),
    "the_sign_shows_zero": _m(
        "the progressive meter sign shows the meter's amount: it shows $0",
        (
            "controller/service/meter_sign.py",
            "                key,\n                max(0, int(cents)),",
            "                key,\n                0 * max(0, int(cents)),",
        ),
    ),
    # --- what a test lab asks (controller/service/rng.py, controller/lab, drivers/gpio/sign.py)
    "rng_modulo_bias": _m(
        "each value 1-7 equally likely: bytes 252..255 are not rejected (b % 7 + 1 over 0..255)",
        ("controller/service/rng.py", "if byte[0] < ACCEPT_BELOW:", "if True:"),
    ),
    "rng_dump_beside_an_open_table": _m(
        "the lab's draws are refused while the live table is open: allowed",
        ("controller/lab/rng_dump.py", "if state in NOT_OPEN:", "if True:"),
    ),
    "software_digest_not_keyed_by_the_seed": _m(
        "the digest is HMAC-SHA1 keyed by the seed asked: a fixed key",
        (
            "controller/lab/software.py",
            "mac = hmac.new(seed, digestmod=hashlib.sha1)",
            'mac = hmac.new(b"\\x00", digestmod=hashlib.sha1)',
        ),
    ),
    "play_without_an_approved_manifest": _m(
        "no play without an approved manifest (fail closed): play goes on",
        (
            "controller/cli/run.py",
            "owner.software_approval = lambda digest: no_manifest",
            "owner.software_approval = lambda digest: None",
        ),
    ),
    "install_ignores_the_release_manifest": _m(
        "install.sh stops when the installed software is not the release's manifest: the "
        "difference is printed and the approved manifest written anyway",
        (
            "controller/service/selfcheck.py",
            'print(f"selfcheck: {problem}", file=sys.stderr)\n            return 1',
            'print(f"selfcheck: {problem}", file=sys.stderr)',
        ),
    ),
    "play_goes_on_with_the_door_open": _m(
        "play is refused while the compartment door is open (no maintenance): play goes on",
        (
            "fsm/round/machine.py",
            "door = self._c.door_refusal() if name in DOOR_REFUSED else None",
            "door = None",
        ),
    ),
    "archive_not_checked_against_its_head_record": _m(
        "each archive is checked against its head record's SHA-256: the check is left out",
        (
            "controller/journal/archive.py",
            'if file_sha256(archive) != head["sha256"]:',
            "if False:",
        ),
    ),
    "the_sign_wraps_at_its_maximum": _m(
        "an amount beyond the sign's digits shows dashes: its last eight digits",
        (
            "drivers/gpio/sign.py",
            'text = "-" * DIGITS_PER_MODULE',
            "text = text[-DIGITS_PER_MODULE:]",
        ),
    ),
}


def apply(mutant: Mutant, tree: Path) -> Callable[[], None]:
    """Patch ``tree`` (a copy of the checkout) and return the function that restores it. A
    ValueError names the patch whose text is not found exactly once, or a mutant that does not
    compile; nothing is left patched then."""
    originals: dict[Path, str] = {}
    try:
        for p in mutant.patches:
            path = tree / p.file
            if not path.is_file():
                raise ValueError(f"{p.file}: no such file")
            text = path.read_text(encoding="utf-8")
            originals.setdefault(path, text)
            n = text.count(p.old)
            if n != 1:
                where = "not found" if n == 0 else f"found {n} times"
                raise ValueError(f"{p.file}: {p.old.splitlines()[0].strip()!r}... {where}")
            text = text.replace(p.old, p.new)
            path.write_text(text, encoding="utf-8")
        for path in originals:
            if path.suffix == ".py":
                try:
                    compile(path.read_text(encoding="utf-8"), str(path), "exec")
                except SyntaxError as e:
                    raise ValueError(f"{path.name}: the mutant does not compile: {e}") from e
    except BaseException:
        for path, text in originals.items():
            path.write_text(text, encoding="utf-8")
        raise

    def restore() -> None:
        for path, text in originals.items():
            path.write_text(text, encoding="utf-8")

    return restore
