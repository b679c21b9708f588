"""The pass record: every pass of one compilation, with the program it read and wrote and its time.

It is built on ``pipeline.steps`` (the one list of passes), so a pass added to ``PASSES`` appears
here with nothing else to change. ``sparsetir show --passes`` prints it, and the explorer lists
it with the diff of each pass.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..transforms import pipeline


@dataclass(frozen=True)
class PassRecord:
    """One pass as it ran: its name, the program before and after it, and the seconds it took."""

    name: str
    before: Any
    after: Any
    seconds: float

    @property
    def stage_before(self) -> int:
        """The stage (1, 2 or 3) of the program the pass read."""
        return pipeline.stage_of(self.before)

    @property
    def stage_after(self) -> int:
        """The stage (1, 2 or 3) of the program the pass wrote."""
        return pipeline.stage_of(self.after)


def record_passes(program: Any, until: pipeline.Until = None) -> list[PassRecord]:
    """Lower ``program`` through the pipeline (to ``until``, as ``pipeline.steps``), recording
    every pass; a pass that fails raises as it does in ``sparsetir.build``."""
    records: list[PassRecord] = []
    steps = pipeline.steps(program, until)
    before = program
    while True:
        start = time.perf_counter()
        try:
            name, after = next(steps)
        except StopIteration:
            return records
        records.append(PassRecord(name, before, after, time.perf_counter() - start))
        before = after
