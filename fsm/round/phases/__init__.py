"""The round's phases together: every state's `StateSpec`, every transition, every refusal of an
event no transition takes, and the ``HierarchicalMachine`` a table builds from them.

One module per phase (fsm/round/phase.py says how a phase is declared):

    table.py          Closed, Maintenance: open, close, configuration, meters, tests
    betting.py        Shuffling, Betting, LockedOut: the deck, chips, bank, lock-out, chip count
    start.py          StartingPosition (Rng, Dice), SideWagers: the RNG, the dice, 1-7 side wagers
    deal.py           Dealing, Play: the shoe, the three-card bonus, play complete
    settle.py         Settlement, JackpotPending, RoundComplete: outcomes, hits, round completed
    fault.py          Fault: faults raised and cleared, deadlines, device recovery
    informational.py  inputs legal in every state: key switch, power-up, floor and link state

Must never hold game data or do I/O; built once per table (`build_machine`, about a millisecond).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transitions.extensions import HierarchicalMachine

from fsm.round.effects import RejectCause
from fsm.round.events import EVENTS
from fsm.round.phase import Phase, StateSpec, Step, Transition, Untimely
from fsm.round.phases import betting, deal, fault, informational, settle, start, table
from fsm.round.states import CLOSED, LEAF_STATES, SEP, STATE_TREE

PHASES: tuple[Phase, ...] = (
    table.PHASE,
    betting.PHASE,
    start.PHASE,
    deal.PHASE,
    settle.PHASE,
    fault.PHASE,
    informational.PHASE,
)

STATE_TABLE: dict[str, StateSpec] = {s: spec for p in PHASES for s, spec in p.states.items()}
TRANSITIONS: tuple[Transition, ...] = tuple(t for p in PHASES for t in p.transitions)


def _leaves(source: str) -> list[str]:
    return [s for s in LEAF_STATES if s == source or s.startswith(source + SEP)]


#: event type -> the leaf states some transition of it leaves from (derived, never written)
LEGAL: dict[str, frozenset[str]] = {
    trigger: frozenset(
        leaf
        for t in TRANSITIONS
        if t.trigger == trigger
        for source in t.sources
        for leaf in _leaves(source)
    )
    for trigger in EVENTS
}


def _untimely_table() -> dict[tuple[str, str], Untimely]:
    anywhere: dict[str, Untimely] = {}
    table_: dict[tuple[str, str], Untimely] = {}
    for u in (u for p in PHASES for u in p.untimely):
        if u.states is None:
            anywhere[u.trigger] = u
        else:
            for s in u.states:
                table_[(u.trigger, s)] = u
    for trigger in EVENTS:
        for s in LEAF_STATES:
            if s not in LEGAL[trigger]:
                default = Untimely(
                    trigger, None, "untimely", "{trigger} is not accepted in state {state}"
                )
                table_.setdefault((trigger, s), anywhere.get(trigger, default))
    return table_


UNTIMELY = _untimely_table()


def untimely(trigger: str, state: str) -> tuple[RejectCause, str, bool]:
    """The declared refusal of ``trigger`` in ``state``, where no transition takes it."""
    u = UNTIMELY[(trigger, state)]
    return u.cause, u.reason.format(trigger=trigger, state=state), u.names_position


assert set(STATE_TABLE) == set(LEAF_STATES), "every leaf state is declared by one phase"
assert all(LEGAL[trigger] for trigger in EVENTS), "every event type has a transition"
assert {t.trigger for t in TRANSITIONS} <= set(EVENTS), "every trigger is an event type"


# --- what the library calls: each callback gets the library's event data; ours get the Step --


def _library(f: Callable[[Step], Any]) -> Callable[[Any], Any]:
    def call(event_data: Any) -> Any:
        return f(event_data.model)

    call.__name__ = getattr(f, "__name__", "callback")
    return call


def _entered(state: str, spec: StateSpec) -> Callable[[Any], None]:
    def enter(event_data: Any) -> None:
        c = event_data.model.c
        c.state = state
        c.deadline = spec.deadline(c)
        for effect in spec.on_enter(c):
            c.emit(effect)

    enter.__name__ = f"enter_{state}"
    return enter


def _exited(event_data: Any) -> None:
    event_data.model.c.deadline = None


def _with_callbacks(tree: list[Any], prefix: str = "") -> list[Any]:
    """STATE_TREE with every leaf's on_enter / on_exit running its `StateSpec`."""
    out: list[Any] = []
    for node in tree:
        if isinstance(node, str):
            full = prefix + node
            enter = _entered(full, STATE_TABLE[full])
            out.append({"name": node, "on_enter": [enter], "on_exit": [_exited]})
        else:
            full = prefix + node["name"]
            out.append(
                {"name": node["name"], "children": _with_callbacks(node["children"], full + SEP)}
            )
    return out


def _on_exception(event_data: Any) -> None:
    event_data.model.error = event_data.error


def _taken(event_data: Any) -> None:
    event_data.model.taken = True


_STATES = _with_callbacks(STATE_TREE)
_ROWS: list[dict[str, Any]] = [
    {
        "trigger": t.trigger,
        "source": list(t.sources),
        "dest": t.dest,
        "conditions": [_library(g) for g in t.conditions],
        "unless": [_library(g) for g in t.unless],
        "before": [_library(a) for a in t.before],
        "prepare": [_library(a) for a in t.prepare],
    }
    for t in TRANSITIONS
]


def build_machine() -> HierarchicalMachine:
    """A table's machine (built once per RoundMachine; its model is passed per call, never
    registered, so nothing accumulates and no queue is shared between tables)."""
    machine = HierarchicalMachine(
        model=None,
        states=_STATES,
        initial=CLOSED,
        queued=True,
        send_event=True,
        auto_transitions=False,
        on_exception=[_on_exception],
        before_state_change=[_taken],  # runs before every transition's own ``before``
    )
    for row in _ROWS:
        machine.add_transition(**row)
    return machine


__all__ = ["LEGAL", "PHASES", "STATE_TABLE", "TRANSITIONS", "build_machine", "untimely"]
