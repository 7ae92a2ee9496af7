"""What players and the pit see of a hit before it is paid: the line and what it pays (NY
5324.41(a)(4) with 5324.2(l): the progressive meter shown to the players; table-rules.md: the win
shown within 30 seconds), not only "WIN" and the area.

A fixed $100 royal flush at area 3 on a $1,000 meter: the sign shows "WIN   3" and, in turn,
"100.00" (not the meter's $1,000.21); the page's pending hit and the `hit_pending` effect say
"pays $100.00" before the supervisor validates. Driven through `RoundMachine` via
`tests/round_support.Table`; the sign text comes from the reader's own `sign_levels` over a
`PublicSnapshot` of the machine's public view, the page's words from `controller.web.view`.
"""

from __future__ import annotations

from types import MappingProxyType

from round_support import Table, of_type

from controller.service.meter_sign import sign_levels
from controller.service.owner import PublicSnapshot
from controller.web.view import effect_words, frame
from drivers.gpio.sign import sign_texts


def _pending_royal_flush() -> tuple[Table, list[object]]:
    t = Table()
    t.open()
    t.round_to_settlement(3)
    eff = t.outcomes({3: "royal-flush"})
    assert t.state == "Open_JackpotPending"
    return t, eff


def _public(t: Table) -> PublicSnapshot:
    view = t.m.public_view()
    return PublicSnapshot(
        seq=1,
        ts_ms=0,
        state=t.state,
        round_id=t.m.round_id,
        rounds_completed=0,
        view=MappingProxyType(view),
        meters=MappingProxyType(view["meters"]),  # type: ignore[arg-type]
    )


def test_the_sign_shows_what_a_fixed_hit_pays_not_only_win_a4() -> None:
    t, _ = _pending_royal_flush()
    levels = sign_levels(_public(t))
    assert sign_texts(levels, 1, page=0) == ("WIN   3",)
    assert sign_texts(levels, 1, page=1) == ("   100.00",)  # the hit's $100, not the meter


def test_the_sign_shows_a_share_of_the_meter_at_the_meter_as_it_stands_a4_k6() -> None:
    t = Table()
    t.open()
    t.round_to_settlement(3)
    t.outcomes({3: "natural-royal-flush-and-pair"})
    meter = int(t.m.meters()["progressive"]["display_cents"])
    levels = sign_levels(_public(t))
    pays = sign_texts(levels, 1, page=1)[0]
    assert pays.replace(" ", "").replace(".", "") == str(meter)


def test_the_pending_hit_says_what_it_pays_before_validation_a4() -> None:
    t, eff = _pending_royal_flush()
    pending = of_type(eff, "hit_pending")[0].to_json()
    assert (pending["cents"], pending["pays_line"]) == (10_000, "royal-flush")
    assert "pays $100.00" in effect_words(pending)
    page = frame(_public(t), [], None, mode="simulated")
    assert "pays $100.00" in page["pending"][0]["words"]
    assert "pays $100.00" in page["next_step"]
