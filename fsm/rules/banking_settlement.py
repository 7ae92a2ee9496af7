"""The money of a round in which a player banks or co-banks: a ledger of cent movements.

NY 5324.41(h)(11)-(14): the dealer's wager against the bank is settled first (win, push, lose;
a losing dealer wager is moved to the centre); every losing player wager is collected into the
centre; winning wagers (the dealer's too) are paid from the centre, starting with the player
farthest to the right of the dealer and proceeding counter-clockwise; when the centre runs out the
rest is collected from the bank (co-bank: half from the co-bank, half from the chip tray); each
winning player pays a 5% vigorish on the amount won (h)(14); a surplus left in the centre is
charged the vigorish and the rest given to the bank (h)(12) (co-bank: half of it to the chip tray
first, the vigorish on the remaining half, the rest to the co-bank (h)(13)).

Positions: betting areas 1..6, area 1 farthest to the dealer's right, counter-clockwise 1 -> 6
(reference/table-rules.md). Accounts in the ledger: "area:N" (the player at betting area N),
"bank" (the banking player), "centre", "chip_tray" (the house). Who may bank and the rotation of the
bank are the round machine's; this module only moves the money. It must never do I/O, and every
ledger it returns balances: no cent is created or lost (the centre ends empty).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from fsm.rules.cards import CardError, format_card
from fsm.rules.ranking import DEFAULT_OPTIONS, RankingOptions
from fsm.rules.settlement import HasHands, Settlement, VigRule, settle, surrender, vigorish

CENTRE = "centre"
CHIP_TRAY = "chip_tray"
BANK = "bank"


def area_account(area: int) -> str:
    return f"area:{area}"


@dataclass(frozen=True)
class Movement:
    """``amount_cents`` (> 0) moved from one account to another, and why (with its rule)."""

    source: str
    dest: str
    amount_cents: int
    reason: str


@dataclass(frozen=True)
class PlayerWager:
    """One pai gow poker wager against the bank: its betting area, amount and the player's setting
    (None with ``surrendered``: the wager is collected into the centre as a losing wager)."""

    area: int
    wager_cents: int
    setting: HasHands | None
    surrendered: bool = False


@dataclass(frozen=True)
class BankRound:
    """A banked round's outcome: each wager's settlement, the ledger and the net per account."""

    dealer: Settlement | None
    players: dict[int, Settlement]
    ledger: tuple[Movement, ...]
    net: dict[str, int] = field(default_factory=dict)


def settle_bank_round(
    bank: HasHands,
    players: Sequence[PlayerWager],
    *,
    bank_area: int,
    dealer: HasHands | None = None,
    dealer_wager_cents: int = 0,
    co_bank: bool = False,
    ez: bool = False,
    vig: VigRule = "round-up-25",
    opts: RankingOptions = DEFAULT_OPTIONS,
) -> BankRound:
    """Settle a round banked by the player at ``bank_area`` (co-banked with ``co_bank``).

    ``bank`` is the bank's setting, already reset by the house way if the bank set it wrongly
    (NY (q)); ``dealer`` the dealer's setting when the dealer wagers ``dealer_wager_cents`` against
    the bank (NY (h)(7)); not allowed with co-banking (NY (h)(5)). With ``ez`` no vigorish is
    taken on the players' wins (NJ 11.9(j)) and a queen dragon of the bank pushes every wager
    (NJ 11.9(h)3); the bank's surplus is still charged by ``vig`` (NY (h)(12), no EZ rule exempts
    it). Returns the settlements and a ledger in the order the dealer handles the money.
    """
    _check_positions(players, bank_area)
    if co_bank and (dealer is not None or dealer_wager_cents):
        raise ValueError(
            "dealer_wager_cents: the dealer may not wager against a co-bank (NY (h)(5))"
        )
    if dealer_wager_cents and dealer is None:
        raise ValueError("dealer: a dealer wager against the bank needs the dealer's setting")
    _check_distinct_cards(bank, dealer, players)
    ledger: list[Movement] = []
    dealer_result: Settlement | None = None
    if dealer is not None and dealer_wager_cents > 0:
        # the house's own wager: no vigorish on it (NY (h)(14) charges the players)
        dealer_result = replace(
            settle(dealer, bank, dealer_wager_cents, ez=ez, vig=vig, opts=opts), vig_cents=0
        )
        if dealer_result.outcome == "lose":
            ledger.append(
                Movement(
                    CHIP_TRAY, CENTRE, dealer_wager_cents, "dealer's losing wager (NY (h)(11))"
                )
            )
    results: dict[int, Settlement] = {}
    for pw in sorted(players, key=lambda p: p.area):
        if pw.surrendered:
            results[pw.area] = surrender(pw.wager_cents, allowed=True)
        else:
            assert pw.setting is not None
            results[pw.area] = settle(pw.setting, bank, pw.wager_cents, ez=ez, vig=vig, opts=opts)
    for area in sorted(results):
        res = results[area]
        if res.outcome == "lose" and res.wager_cents:
            ledger.append(
                Movement(area_account(area), CENTRE, res.wager_cents, f"losing wager: {res.reason}")
            )
    centre = sum(m.amount_cents for m in ledger)
    # winning wagers in payment order: the dealer's (settled first, (h)(12)), then the players
    # from the dealer's right, counter-clockwise
    winners: list[tuple[str, int]] = []
    if dealer_result is not None and dealer_result.outcome == "win":
        winners.append((CHIP_TRAY, dealer_result.won_cents))
    winners += [
        (area_account(a), r.won_cents) for a, r in sorted(results.items()) if r.outcome == "win"
    ]
    owed = sum(amount for _, amount in winners)
    shortfall = max(0, owed - centre)
    if shortfall:
        if co_bank:
            house_half = (shortfall + 1) // 2  # an odd cent is the house's, never the co-bank's
            if shortfall - house_half:
                ledger.append(
                    Movement(BANK, CENTRE, shortfall - house_half, "co-bank pays half (NY (h)(13))")
                )
            ledger.append(
                Movement(CHIP_TRAY, CENTRE, house_half, "chip tray pays half (NY (h)(13))")
            )
        else:
            ledger.append(Movement(BANK, CENTRE, shortfall, "bank covers the rest (NY (h)(12))"))
        centre += shortfall
    for account, amount in winners:
        if amount:
            why = (
                "dealer's winning wager paid (NY (h)(12))"
                if account == CHIP_TRAY
                else ("winning wager paid 1:1 from the centre (NY (h)(12))")
            )
            ledger.append(Movement(CENTRE, account, amount, why))
            centre -= amount
        if account != CHIP_TRAY:
            area = int(account.split(":")[1])
            commission = results[area].vig_cents
            if commission:
                ledger.append(
                    Movement(account, CHIP_TRAY, commission, "vigorish on the win (NY (h)(14))")
                )
    if centre > 0:
        if co_bank:
            house_half = centre // 2  # an odd cent stays with the co-bank's half
            if house_half:
                ledger.append(
                    Movement(
                        CENTRE,
                        CHIP_TRAY,
                        house_half,
                        "half the surplus to the chip tray (NY (h)(13))",
                    )
                )
            centre -= house_half
        commission = vigorish(centre, vig)
        if commission:
            ledger.append(
                Movement(
                    CENTRE,
                    CHIP_TRAY,
                    commission,
                    "vigorish on the bank's surplus (NY (h)(12),(13))",
                )
            )
            centre -= commission
        if centre:
            ledger.append(Movement(CENTRE, BANK, centre, "surplus to the bank (NY (h)(12),(13))"))
            centre = 0
    net: dict[str, int] = defaultdict(int)
    for m in ledger:
        net[m.source] -= m.amount_cents
        net[m.dest] += m.amount_cents
    if net.get(CENTRE, 0) != 0 or sum(net.values()) != 0:  # pragma: no cover - an invariant
        raise AssertionError(f"unbalanced bank ledger: {dict(net)}")
    return BankRound(dealer_result, results, tuple(ledger), dict(net))


def _check_positions(players: Sequence[PlayerWager], bank_area: int) -> None:
    if isinstance(bank_area, bool) or not isinstance(bank_area, int) or not 1 <= bank_area <= 6:
        raise ValueError(f"bank_area: betting area {bank_area!r} is not 1..6")
    seen: set[int] = set()
    for i, pw in enumerate(players):
        where = f"players[{i}]"
        if isinstance(pw.area, bool) or not isinstance(pw.area, int) or not 1 <= pw.area <= 6:
            raise ValueError(f"{where}.area: betting area {pw.area!r} is not 1..6")
        if pw.area == bank_area:
            raise ValueError(
                f"{where}.area: area {pw.area} is the bank's; the bank wagers on one area only "
                "and does not play against itself (NY (h)(6))"
            )
        if pw.area in seen:
            raise ValueError(f"{where}.area: betting area {pw.area} holds two wagers")
        seen.add(pw.area)
        if isinstance(pw.wager_cents, bool) or not isinstance(pw.wager_cents, int):
            raise ValueError(f"{where}.wager_cents: integer cents, not {pw.wager_cents!r}")
        if pw.wager_cents <= 0:
            raise ValueError(f"{where}.wager_cents: a wager is positive, not {pw.wager_cents}")
        if pw.setting is None and not pw.surrendered:
            raise ValueError(f"{where}.setting: a wager that is not surrendered needs a setting")


def _check_distinct_cards(
    bank: HasHands, dealer: HasHands | None, players: Sequence[PlayerWager]
) -> None:
    """Every card of the round is held once (CardError naming the card and both holders)."""
    holders: list[tuple[str, HasHands]] = [("bank", bank)]
    if dealer is not None:
        holders.append(("dealer", dealer))
    holders += [(f"area:{p.area}", p.setting) for p in players if p.setting is not None]
    seen: dict[int, str] = {}
    for name, setting in holders:
        for c in (*setting.high, *setting.low):
            if c in seen:
                raise CardError(f"{name}: card {format_card(c)} is also held by {seen[c]}")
            seen[c] = name
