"""The record of a schedule: every step, its arguments and the program after it.

The explorer reads this record; ``replay`` re-applies it to the unscheduled function. A step's
arguments are plain JSON data: stage-I iterations and axes by name, TVM block and loop handles
by position (see ``handles.py``), so a history survives ``to_json``/``from_json``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator


@dataclass(frozen=True)
class Step:
    """One applied step: its name, JSON-able arguments, and the program (and its stage) after it."""

    primitive: str
    args: dict[str, Any]
    stage: int
    script: str


@dataclass
class History:
    """The program before scheduling (at stage ``stage``) and one ``Step`` per step since."""

    initial_script: str
    steps: list[Step] = field(default_factory=list)
    stage: int = 1

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __getitem__(self, index: int) -> Step:
        return self.steps[index]

    def to_json(self) -> str:
        """A JSON document with the initial program, its stage and every step."""
        data = {"initial": self.initial_script, "stage": self.stage, "steps": [asdict(s) for s in self.steps]}
        return json.dumps(data, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "History":
        """The inverse of ``to_json``."""
        data = json.loads(text)
        return cls(data["initial"], [Step(**s) for s in data["steps"]], data.get("stage", 1))
