"""Schedule snapshots: the program after every step of a schedule's history.

The history (``schedule/history.py``) records each step as data and the script after it; the
explorer needs the programs themselves (to lower, build and map them line by line), so it
replays the history step by step on the function the schedule started from. A step that no
longer applies (the script was edited since it was recorded) ends the replay with its error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..errors import SparseTIRError
from ..schedule import History, Schedule, Step


@dataclass(frozen=True)
class Snapshot:
    """The program (at ``stage``) after ``step``; the first snapshot, before any step, has none."""

    step: Optional[Step]
    stage: int
    program: Any


@dataclass(frozen=True)
class Replay:
    """Snapshots of a replayed history, and why it stopped early (``None`` when every step applied)."""

    snapshots: list[Snapshot]
    error: Optional[str] = None


def replay_snapshots(initial: Any, history: Optional[History] = None) -> Replay:
    """The program ``initial`` and the program after each step of ``history`` applied to it."""
    try:
        sch = Schedule(initial, round_trip=False)
    except SparseTIRError as err:
        return Replay([], str(err))
    snapshots = [Snapshot(None, sch.stage, sch.func)]
    if history is None:
        return Replay(snapshots)
    if history.stage != sch.stage:
        return Replay(snapshots, f"the schedule starts at stage {history.stage}, the program is at stage {sch.stage}")
    for number, step in enumerate(history, 1):
        try:
            sch.apply_step(step)
        except SparseTIRError as err:
            return Replay(snapshots, f"step {number} ({step.primitive}) no longer applies: {err}")
        snapshots.append(Snapshot(step, sch.stage, sch.func))
    return Replay(snapshots)
