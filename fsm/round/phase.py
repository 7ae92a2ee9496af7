"""How a phase of the round is declared (fsm/round/phases/): its states, its transitions in the
state machine library's own terms, and how it refuses an event no transition takes.

A phase module declares one `Phase`:

- ``states``: for each of its leaf states a `StateSpec`: the acceptors (``armed``), lights and
  glyph it shows, what it requests on entry (``on_enter``) and again after a restart
  (``waiting``), and the deadline it sets;
- ``transitions``: `Transition` rows, exactly what ``HierarchicalMachine.add_transition`` takes:
  ``trigger`` (the event type), ``source``, ``dest`` (None: handled in place), ``conditions``
  and ``unless`` (the guards), ``before`` (the actions), ``prepare``. The library tries a
  trigger's rows from the current state in the order declared and takes the first whose guards
  pass: the library, not our code, chooses the destination;
- ``untimely``: for a trigger no transition takes in a state, the refusal to journal (``late``
  chip, ``not_armed`` acceptors, ``untimely`` ...).

Every callback receives the `Step`: the round (``s.c``, fsm/round/context.py) and the event's
typed record (``s.e``). A guard returns a bool; a guard that refuses says why with
``return s.refuse(reason, cause)``. A predicate that only picks between the rows of a trigger
(``dice_mode``, ``hit_stays``) returns False without a reason. A refusal is journaled only when
no row is taken, and then the first reason given: a refusing guard that one row alone needs comes
after that row's picking predicate; a guard every row needs comes first in each
(``no_threes_await`` of ``dealt``).

Must never do I/O, hold game data between steps, or change the round in a guard (only
``before`` actions and state entries change it: `RoundMachine.step` rolls those back exactly
when one of them fails).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fsm.round.context import Round
from fsm.round.effects import Effect, RejectCause
from fsm.round.vocabulary import Glyph, LightState


class Step:
    """The model the library sees for one table: its state, the round, the event being stepped
    (its typed record), the first refusal a guard gave, and what went wrong inside."""

    __slots__ = ("c", "e", "error", "memo", "refusal", "state", "taken")

    def __init__(self, state: str, c: Round) -> None:
        self.state = state
        self.c = c
        self.e: Any = None
        self.refusal: tuple[str, RejectCause, int | None] | None = None
        self.error: BaseException | None = None
        self.taken = False  # a transition passed its guards (set by the library's callback)
        self.memo: dict[str, Any] = {}

    def refuse(
        self, reason: str, cause: RejectCause = "refused", position: int | None = None
    ) -> bool:
        """Record why the event is refused (the first reason given wins) and fail the guard."""
        if self.refusal is None:
            self.refusal = (reason, cause, position)
        return False

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per step (a guard's finding its row's action uses again)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]


Guard = Callable[[Step], bool]
Action = Callable[[Step], None]


@dataclass(frozen=True)
class Transition:
    """One row of ``HierarchicalMachine.add_transition``: ``dest`` None handles the event in
    place (an internal transition: no exit, no entry)."""

    trigger: str
    source: str | Sequence[str]
    dest: str | None = None
    conditions: Sequence[Guard] = ()
    unless: Sequence[Guard] = ()
    before: Sequence[Action] = ()
    prepare: Sequence[Action] = ()

    @property
    def sources(self) -> tuple[str, ...]:
        return (self.source,) if isinstance(self.source, str) else tuple(self.source)


def _none(c: Round) -> list[Effect]:
    return []


def _no_deadline(c: Round) -> list[Any] | None:
    return None


@dataclass(frozen=True)
class StateSpec:
    """What one leaf state does. ``on_enter``: requests issued on entry; ``waiting``: the
    requests it waits on, issued again after a restart (``RoundMachine.outputs``);
    ``deadline``: the deadline set on entry ([due ms, fault code, device]); leaving any state
    clears its deadline."""

    lights: Callable[[Round], list[LightState]]
    glyph: Callable[[Round], Glyph]
    armed: bool = False
    on_enter: Callable[[Round], list[Effect]] = _none
    waiting: Callable[[Round], list[Effect]] = _none
    deadline: Callable[[Round], list[Any] | None] = _no_deadline


@dataclass(frozen=True)
class Untimely:
    """The refusal of ``trigger`` in ``states`` (None: every state where no transition takes it):
    its cause and reason (``{trigger}`` and ``{state}`` are filled in). ``names_position``: the
    rejection names the record's position (a chip refused at its acceptor)."""

    trigger: str
    states: frozenset[str] | None
    cause: RejectCause
    reason: str
    names_position: bool = False


@dataclass(frozen=True)
class Phase:
    """One part of the round: the states it owns, its transitions, its refusals."""

    name: str
    states: Mapping[str, StateSpec] = field(default_factory=dict)
    transitions: Sequence[Transition] = ()
    untimely: Sequence[Untimely] = ()


def as_event(build: Callable[[Step], Any]) -> Action:
    """A ``prepare`` callback: step the row with the record ``build`` makes (the dealer panel's
    NEXT and VOID run the row of the event they stand for, e.g. NEXT in Play is play_complete)."""

    def prepare(s: Step) -> None:
        s.e = build(s)

    prepare.__name__ = f"as_{getattr(build, '__name__', 'event')}"
    return prepare


def always(s: Step) -> bool:
    return True


def nothing(s: Step) -> None:
    return None


__all__ = [
    "Action",
    "Guard",
    "Phase",
    "StateSpec",
    "Step",
    "Transition",
    "Untimely",
    "always",
    "as_event",
    "nothing",
]
