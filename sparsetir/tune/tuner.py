"""``sparsetir.tune``: the default schedule's choices, tuned on the user's arguments and kept.

The decision, in order:

1. the database holds a record for this program, widths, matrix fingerprint and target: its
   choices, nothing measured;
2. ``budget_s=0``: the record of the nearest matrix tuned with the same program, widths and
   target (``Fingerprint.distance``), else the default;
3. otherwise a search (``search.py``) measures candidates on the arguments for ``budget_s``
   seconds and the winner and the default's time are committed to the database.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

from ..default_build import build_default, schedule_of
from ..driver import constraints_of
from ..ir.function import SparseFunction
from ..ir.stage2 import Stage2Function, partitions_of
from ..ir import structural_hash
from ..errors import ArgumentError
from ..runtime.constraints import IndptrConstraint
from ..runtime.kernel import bind_arguments
from ..runtime.specialized import SpecializedKernel
from ..runtime.target import TargetLike, as_target, is_gpu
from ..schedule.default import Choices, is_scheduled
from ..schedule.default.widths import width_params
from ..transforms import pipeline
from .database import as_database
from .fingerprint import fingerprint
from .measure import Bench
from .search import Candidate, Search
from .space import choices_of, describe, random_trace
from .workload import TuningKey


@dataclass(frozen=True)
class Trial:
    """One candidate a search measured: its choices, its time per call and relative to the
    default (None when it was discarded), or why it was discarded."""

    choices: Choices
    seconds: Optional[float]
    ratio: Optional[float]
    error: Optional[str] = None
    #: the ratio in the decision's batches, for the finalists
    confirmed: Optional[float] = None


@dataclass(frozen=True)
class Tuned:
    """What ``tuned`` decided: the kernel, its choices and where they came from (``how``:
    ``"measured"``, ``"database"``, ``"nearest"`` or ``"default"``)."""

    kernel: SpecializedKernel
    choices: Choices
    how: str
    #: the default's time over the choices', as measured now or when they were recorded
    speedup: Optional[float] = None
    #: the nearest record's matrix distance (``how == "nearest"``)
    distance: Optional[float] = None
    trials: tuple[Trial, ...] = ()

    def describe(self) -> str:
        """One line: the choices, where they came from and what they gained."""
        gain = f", {self.speedup:.2f}x the default" if self.speedup else ""
        near = f" at distance {self.distance:.2f}" if self.distance is not None else ""
        measured = f", {len(self.trials)} candidates measured" if self.trials else ""
        return f"{describe(self.choices)} ({self.how}{near}{gain}{measured})"


def tune(f: Any, example_args: Any, budget_s: float = 60, *, database: Any = None, target: TargetLike = "llvm",
         progress: bool = True) -> SpecializedKernel:
    """The kernel of ``f`` under the default CPU schedule with its choices tuned for calls like
    ``example_args`` (a dict by parameter name, or a sequence in parameter order).

    A search measures candidate choices on these very arguments for about ``budget_s`` seconds
    (the default among them; outputs are written to copies) and keeps the fastest, in a
    database on disk (``database``: a directory, a ``TuningDatabase`` or a MetaSchedule
    ``Database``; by default ``tuning/`` under the disk cache root). A later call with the same
    program, widths and matrix measures nothing. ``budget_s=0`` decides without measuring: the
    record of the nearest matrix tuned with this program and widths, else the default.
    ``progress`` shows a progress bar when tqdm is installed. See ``docs/tuning.md``.
    """
    return tuned(f, example_args, budget_s, database=database, target=target, progress=progress).kernel


def tuned(f: Any, example_args: Any, budget_s: float = 60, *, database: Any = None, target: TargetLike = "llvm",
          progress: bool = True) -> Tuned:
    """``tune``, returning the decision with the kernel (its choices, where they came from, what
    was measured)."""
    _check_program(f, target)
    budget = _check_budget(budget_s)
    db = as_database(database)
    default = build_default(f, target, None, None, Choices())
    values = _bind(default, example_args)
    key = _key(f, dict(zip(default.params, values)), target)

    def build(choices: Choices) -> SpecializedKernel:
        return default if choices == Choices() else build_default(f, target, None, None, choices)

    found = db.best(key)
    if found is not None:
        return Tuned(build(found.choices), found.choices, "database", found.speedup)
    if budget == 0:
        near = db.nearest(key)
        if near is not None:
            return Tuned(build(near.choices), near.choices, "nearest", near.speedup, near.distance)
        return Tuned(default, Choices(), "default")

    widths = dict(key.widths)
    workload = key.module()
    bench = Bench(default.params, default.outputs, values)
    bar = _progress_bar(progress, budget, default.name)
    search = Search(build, _program_keys(f, widths),
                    lambda seed: choices_of(random_trace(workload, seed), workload),
                    bench, budget, bar.update if bar is not None else None)
    try:
        winner = search.run()
    finally:
        if bar is not None:
            bar.close()
    default_s = search.default_seconds
    results = [(Choices(), default_s)]
    if winner is not search.default:
        results.append((winner.choices, default_s * winner.confirmed))
    db.commit(key, results)
    trials = (Trial(Choices(), default_s, 1.0),) + tuple(_trial(c) for c in search.candidates)
    speedup = 1.0 / winner.confirmed if winner.confirmed else 1.0
    return Tuned(winner.kernel, winner.choices, "measured", speedup, None, trials)


def key_of(f: Any, example_args: Any, target: TargetLike = "llvm") -> TuningKey:
    """The database key of tuning ``f`` for calls like ``example_args`` on ``target``."""
    _check_program(f, target)
    default = build_default(f, target, None, None, Choices())
    return _key(f, dict(zip(default.params, _bind(default, example_args))), target)


def _check_program(f: Any, target: TargetLike) -> None:
    if not isinstance(f, (SparseFunction, Stage2Function)):
        raise TypeError("sparsetir.tune expects a stage-I SparseFunction (a script) or an unscheduled "
                        f"Stage2Function, got {type(f).__name__}")
    if is_scheduled(f):
        raise ValueError(f"sparsetir.tune: {f.name if hasattr(f, 'name') else 'the program'} is scheduled "
                         "already; tune searches the choices of the default schedule, which applies to "
                         "unscheduled programs only")
    if is_gpu(as_target(target)):
        raise ValueError(f"sparsetir.tune measures CPU kernels; {target!r} is a GPU target")


def _check_budget(budget_s: Any) -> float:
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)):
        raise TypeError(f"budget_s must be a number of seconds, got {type(budget_s).__name__}")
    if math.isnan(budget_s) or budget_s < 0:
        raise ValueError(f"budget_s must be 0 (decide without measuring) or more seconds, got {budget_s}")
    return float(budget_s)


def _bind(kernel: SpecializedKernel, example_args: Any) -> list:
    """The example arguments in parameter order."""
    if isinstance(example_args, Mapping):
        unknown = sorted(set(example_args) - set(kernel.params))
        if unknown:
            raise ArgumentError(f"tune: {kernel.name} has no parameter {', '.join(map(repr, unknown))} "
                                f"(its parameters: {', '.join(kernel.params)})")
        return bind_arguments(kernel, (), dict(example_args))
    if isinstance(example_args, Sequence) and not isinstance(example_args, (str, bytes)):
        return bind_arguments(kernel, tuple(example_args), {})
    raise ArgumentError("tune: example_args must be a dict by parameter name or a sequence in parameter "
                        f"order, got {type(example_args).__name__}")


def _key(f: Any, named: dict[str, Any], target: TargetLike) -> TuningKey:
    widths = width_params(f) if isinstance(f, SparseFunction) else []
    width_values = []
    for name in widths:
        try:
            width_values.append((name, int(named[name])))
        except (TypeError, ValueError):
            raise ArgumentError(f"tune: {name} must be an integer, got {type(named[name]).__name__}") from None
    stage2 = f if isinstance(f, Stage2Function) else pipeline.lower(f, until=pipeline.STAGE_II)
    indptrs = sorted({c.array for c in constraints_of(stage2) if isinstance(c, IndptrConstraint) and c.array in named})
    return TuningKey(f.script(), tuple(sorted(width_values)), fingerprint(named, indptrs, widths),
                     str(as_target(target)))


#: How far ahead rows are prefetched by default: what a key records where nothing is prefetched.
DEFAULT_DISTANCE = Choices().prefetch_distance


def _program_keys(f: Any, widths: dict[str, int]) -> Callable[[Choices], tuple]:
    """What decides the kernel a ``Choices`` builds: the scheduled program, its target options,
    and the choices applied after scheduling where they apply (prefetch where rows are
    gathered, chunks where rows are partitioned)."""
    schedules: dict[Choices, tuple] = {}

    def key(choices: Choices) -> tuple:
        # prefetch (its lines and distance) and chunks_per_thread act after the stage-II
        # schedule (a stage-III rewrite and a call-time choice, rule.py), so one schedule
        # serves all their values
        base = replace(choices, prefetch=-1, chunks_per_thread=1, prefetch_distance=DEFAULT_DISTANCE)
        if base not in schedules:
            scheduled = schedule_of(f, base, **widths)
            prim = scheduled.schedule.func.prim
            options = tuple(sorted((k, str(v)) for k, v in scheduled.target_options.items()))
            schedules[base] = (structural_hash(prim), options, bool(scheduled.gathers), bool(partitions_of(prim.attrs)))
        program, options, gathers, partitioned = schedules[base]
        prefetch = choices.prefetch if gathers and (choices.prefetch is None or choices.prefetch >= 0) else -1
        distance = choices.prefetch_distance if prefetch != -1 else DEFAULT_DISTANCE
        return program, options, prefetch, distance, choices.chunks_per_thread if partitioned else 1

    return key


def _trial(candidate: Candidate) -> Trial:
    if candidate.error is not None or not candidate.ratios:
        return Trial(candidate.choices, None, None, candidate.error or "not timed (the budget ran out)")
    return Trial(candidate.choices, candidate.time, candidate.ratio, confirmed=candidate.confirmed)


class _Bar:
    """A tqdm bar over the budget's seconds, with the best speedup so far."""

    def __init__(self, tqdm: Any, budget_s: float, name: str):
        total = round(budget_s, 1) if math.isfinite(budget_s) else None
        self._bar = tqdm(total=total, desc=f"tune {name}", unit="s", leave=False,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s{postfix}")

    def update(self, search: Search) -> None:
        best = search.best
        elapsed = round(search.elapsed, 1)
        self._bar.n = min(elapsed, self._bar.total) if self._bar.total is not None else elapsed
        self._bar.set_postfix_str(f"{len(search.candidates)} measured, best {1.0 / best.ratio:.2f}x "
                                  f"({describe(best.choices)})" if best.ratios else "")

    def close(self) -> None:
        self._bar.close()


def _progress_bar(progress: bool, budget_s: float, name: str) -> Optional[_Bar]:
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ModuleNotFoundError:  # tqdm is optional: no bar
        return None
    return _Bar(tqdm, budget_s, name)
