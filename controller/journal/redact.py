"""Card identities kept inside the controller until their round resolves (table-rules.md,
"Automated dealing shoe and shuffler"; NJ 13:69F-31.10).

Responsible for the one list of the fields that carry card identities (a ``dealt`` event's
``stacks`` and ``hands``, any ``cards``) and for hiding them in anything that leaves the journal
before the round resolves: an export (``tablectl journal export``) and every log line (the owner's
refusals after a storage fault). Must never change what is journaled: the journal keeps the cards.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Keys whose values are card identities, wherever they appear in an event's data.
CARD_FIELDS = ("stacks", "hands", "cards")
#: What stands in a card field's place.
HIDDEN = "hidden until the round resolves"


def hide_cards(value: Any) -> Any:
    """``value`` (an event's data, any JSON) with every card field's value replaced by
    `HIDDEN`, at any depth: safe for a log line."""
    if isinstance(value, Mapping):
        return {k: (HIDDEN if k in CARD_FIELDS else hide_cards(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [hide_cards(v) for v in value]
    return value
