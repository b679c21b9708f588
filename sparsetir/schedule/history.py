"""The record of a schedule: every primitive, its arguments and the program after it.

The explorer reads this record; ``replay`` re-applies it to the unscheduled function.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Step:
    """One applied primitive: its name, JSON-able arguments, stage, and the program after it."""

    primitive: str
    args: dict[str, Any]
    stage: int
    script: str


@dataclass
class History:
    """The program before scheduling and one ``Step`` per primitive applied since."""

    initial_script: str
    steps: list[Step] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, index: int) -> Step:
        return self.steps[index]

    def to_json(self) -> str:
        """A JSON document with the initial program and every step."""
        return json.dumps({"initial": self.initial_script, "steps": [asdict(s) for s in self.steps]}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "History":
        """The inverse of ``to_json``."""
        data = json.loads(text)
        return cls(data["initial"], [Step(**s) for s in data["steps"]])
