"""The trainer's commands typed at the simulated table's terminal (``make run``'s stdin).

One line per command, answered on the console with a ``TRAINING trainer:`` line:

    people dealer,supervisor     who is a person (``people none``: every role scripted)
    fault shoe-jam               inject a fault into a simulated device now (KIND[=VALUE])
    hit royal-flush 3            the practice deck deals LINE at AREA next (``hit cancel``)
    status                       who is a person, the armed practice hit
    help                         the commands, the fault kinds and the lines

The same calls as the page (`controller.sim.training.Trainer`), on a daemon thread that only
reads its stream and calls the trainer (which posts events); end of input ends it. Simulation
only: must never touch the round machine, the journal or a device itself.
"""

from __future__ import annotations

import threading
from typing import Any, TextIO

from controller.sim.training import TrainingError

HELP = "commands: people ROLES|none, fault KIND[=VALUE], hit LINE AREA | hit cancel, status, help"


class TrainerConsole:
    """Reads ``commands`` line by line and answers on ``out``."""

    def __init__(self, trainer: Any, commands: TextIO, out: TextIO) -> None:
        self._trainer = trainer
        self._commands = commands
        self._out = out
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="trainer-console", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _say(self, text: str) -> None:
        with self._lock:
            print(f"TRAINING trainer: {text}", file=self._out, flush=True)

    def _run(self) -> None:
        try:
            for line in self._commands:
                if line.strip():
                    self._say(self.answer(line))
        except (OSError, ValueError):
            return  # the stream closed

    def answer(self, line: str) -> str:
        """The reply to one command line."""
        words = line.split()
        name, args = words[0].lower(), words[1:]
        trainer = self._trainer
        try:
            if name == "people":
                roles = [] if not args or args[0] == "none" else args[0].split(",")
                return _status_words(trainer.set_people(roles))
            if name == "fault":
                if len(args) != 1:
                    raise TrainingError("fault KIND[=VALUE], e.g. fault shoe-jam")
                done = trainer.inject_fault(args[0])
                return f"injected {done['injected']}: it bites at the device's next use"
            if name == "hit":
                if args == ["cancel"]:
                    return _status_words(trainer.cancel_practice())
                if len(args) != 2 or not args[1].isdigit():
                    raise TrainingError("hit LINE AREA, e.g. hit royal-flush 3")
                return _status_words(trainer.practice_hit(int(args[1]), args[0]))
            if name == "status":
                return _status_words(trainer.status())
            if name == "help":
                status = trainer.status()
                return (
                    f"{HELP}; fault kinds: {', '.join(status['fault_kinds'])}; lines: "
                    f"{', '.join(status['practice_lines'])}"
                )
            raise TrainingError(f"unknown command {name!r}; {HELP}")
        except TrainingError as exc:
            return f"refused: {exc}"


def _status_words(status: dict[str, Any]) -> str:
    people = status["people"]
    who = ", ".join(f"{r}: {'person' if r in people else 'scripted'}" for r in status["roles"])
    practice = status.get("practice")
    armed = (
        f"; practice hit armed: {practice['line']} at area {practice['position']}"
        if practice
        else ""
    )
    if practice and practice.get("waiting"):
        armed += f" (waiting: {practice['waiting']})"
    return who + armed
