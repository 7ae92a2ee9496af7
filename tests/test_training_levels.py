"""The dealer drills' levels and the trainee's history in the training journal (issue 25 item 8:
"a history kept in the training journal, a choice of ... level"). The levels are checked against
the rules that make them (the house way's rule family, the areas that play, the meter); the
history is the journal's ``training`` entries (``drill_answered``) read back from a real SQLite
journal. The page's side: tests/test_training_page.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config import SIMULATED_TABLE, load_config
from controller.journal.reports import JournalReader
from controller.journal.store import Journal
from controller.sim.training import LEVELS, Drills, Trainer, TrainingError, trainee_history
from fsm.round.events import Training
from fsm.rules.cards import format_cards, parse_cards


@pytest.fixture(scope="module")
def drills() -> Drills:
    game = load_config(SIMULATED_TABLE).game
    return Drills(
        game.way, game.table, game.ranking,
        wager_cents=game.progressive_wager_cents, meter_cents=game.levels[0].reset_cents,
    )  # fmt: skip


def _family(drills: Drills, cards: str) -> str:
    rule = drills.way.explain(parse_cards(cards), drills.opts).rule
    return rule.split(".")[1].split("[")[0].split(":")[0]


def test_house_way_levels_are_the_families_of_the_house_ways_rules_ny_5324_41_g2(
    drills: Drills,
) -> None:
    families = {level: set() for level in LEVELS}
    for number in range(40):
        for level in LEVELS:
            posed = drills.pose("house-way", number, level)
            assert posed["level"] == level
            families[level].add(_family(drills, posed["cards"]))
            # the same drill again: the same cards (pose and judge agree)
            assert drills.pose("house-way", number, level)["cards"] == posed["cards"]
    assert families[1] <= {"no_pair", "one_pair"} and families[1]
    assert families[2] <= {"two_pair", "three_pair", "trips", "full_house"} and families[2]
    assert not families[3] & (families[1] | families[2]) and families[3]


def test_a_level_drill_is_judged_against_its_own_cards(drills: Drills) -> None:
    for level in LEVELS:
        posed = drills.pose("house-way", 7, level)
        setting = drills.way.set(parse_cards(posed["cards"]), drills.opts)
        answer = {"high": format_cards(setting.high), "low": format_cards(setting.low)}
        assert drills.judge("house-way", 7, answer, level)["correct"] is True


def test_settle_and_progressive_levels(drills: Drills) -> None:
    for number in range(30):
        assert len(drills.pose("settle", number, 1)["players"]) == 2
        assert len(drills.pose("settle", number, 2)["players"]) in (3, 4)
        assert len(drills.pose("settle", number, 3)["players"]) in (5, 6)
        # first steps: a paying line at the reset meter
        assert drills.pose("progressive", number, 1)["meter_cents"] == drills.meter_cents
    # mixed keeps the numbering it had
    assert drills.pose("settle", 3)["level"] is None
    with pytest.raises(TrainingError, match="level"):
        drills.pose("settle", 3, 4)


def test_a_trainees_answers_are_kept_in_the_training_journal_and_read_back(
    tmp_path: Path, drills: Drills
) -> None:
    """Each judged answer is a ``training`` entry (``drill_answered``: who, which drill, level,
    right or wrong); the score, the streaks and the history are folded from the journal."""
    db = tmp_path / "training.db"
    journal = Journal.open(db, table_id="T1", mode="training")
    right = {"kind": "house-way", "number": 3, "level": 1, "correct": True}
    wrong = {"kind": "progressive", "number": 4, "level": None, "correct": False}
    try:
        answers = ((right, "Ann Lee"), (wrong, " Ann  Lee "), (right, "Bob"),
                   (right, "Ann Lee"), (right, "Ann Lee"))  # fmt: skip
        for ts, (verdict, name) in enumerate(answers, 1):
            data = Trainer.answered(name, verdict).fields_json()
            journal.append(ts, None, "training", data, {}, {})
    finally:
        journal.close()
    with JournalReader(db) as reader:
        ann = trainee_history(reader.entries_of(("training",)), "Ann Lee")
    assert (ann["asked"], ann["right"], ann["streak"], ann["best"]) == (4, 3, 2, 2)
    assert ann["per_drill"] == {
        "house-way level 1": {"asked": 3, "right": 3},
        "progressive level mixed": {"asked": 1, "right": 0},
    }
    assert [a["correct"] for a in ann["answers"]] == [True, False, True, True]
    assert Training.parse(Trainer.answered("Ann Lee", right).fields_json()).trainee == "Ann Lee"
    for bad in ("", "   ", "x" * 41, "nul\x00here", 7):
        with pytest.raises(TrainingError, match="trainee"):
            Trainer.answered(bad, right)
