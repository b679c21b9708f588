"""The choices ``sparsetir.tune`` searches, as a MetaSchedule design space.

Every field of ``Choices`` listed in ``VALUES`` is a *knob* with a few candidate values (its
default always among them). The space is a schedule function in MetaSchedule's sense (what
``ScheduleFn`` wraps): on a TVM schedule of the tuning workload (``workload.py``) it samples each
knob with ``sample_categorical`` and annotates the workload's root block with the value::

    b0 = sch.get_sblock("root")
    v1 = sch.sample_categorical(candidates=[-1, 0, 1, 2, 4], probs=[0.2, ...], decision=0)
    sch.annotate(b0, "sparsetir.tune.prefetch", v1)
    ...

A point of the space is thus a TVM ``Trace`` whose decisions pick the values; it is stored as
it is in a MetaSchedule ``TuningRecord`` and read back by replaying it (``choices_of``). The
annotation keeps each sample alive: MetaSchedule simplifies traces by dropping samples nothing
uses, and the annotation also names the knob in the replayed module. A knob may take ``None``
(``prefetch``: decided per call by the ``prefetch`` rule); the trace's candidates are integers,
so it writes ``None`` as ``UNSET``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .._tvm import s_tir
from ..schedule.default import Choices

#: Candidate values per knob, the most promising knobs first (the search visits them in this
#: order). ``Choices()``'s default is added to each. Fields ``Choices`` does not have are skipped.
VALUES: dict[str, tuple[int, ...]] = {
    "prefetch": (-1, 0, 1, 2, 4),
    "prefetch_distance": (8, 16, 32),
    "max_vectors": (2, 4, 8, 16),
    "chunks_per_thread": (1, 2, 4, 8),
    "vector_bytes": (16, 32, 64),
    "streamed_row_bytes": (512, 1024, 2048, 4096, 8192),
}

#: Prefix of the root-block annotation that carries a knob's value.
ANNOTATION = "sparsetir.tune."
#: How a trace writes the value ``None`` (no knob takes it as a number).
UNSET = -1000


@dataclass(frozen=True)
class Knob:
    """One tunable field of ``Choices`` and the values the search tries."""

    name: str
    values: tuple[Optional[int], ...]

    def index(self, value: Optional[int]) -> int:
        """The decision that picks ``value``."""
        try:
            return self.values.index(value)
        except ValueError:
            raise ValueError(f"{self.name}={value} is not in the tuning space {self.values}") from None


def knobs() -> tuple[Knob, ...]:
    """The knobs of this version of ``Choices``, each with its default among its values."""
    defaults = {f.name: f.default for f in dataclasses.fields(Choices)}
    return tuple(Knob(name, tuple(sorted(set(values) | {defaults[name]}, key=lambda v: (v is not None, v or 0))))
                 for name, values in VALUES.items() if name in defaults)


def sample(sch: Any, decisions: Optional[Mapping[str, int]] = None) -> None:
    """The design space: sample every knob on ``sch`` (a ``tvm.s_tir.Schedule`` of a tuning
    workload), taking the decision in ``decisions`` where given and a random one otherwise, and
    annotate the root block with the value."""
    root = sch.get_sblock("root")
    for knob in knobs():
        decision = None if decisions is None or knob.name not in decisions else decisions[knob.name]
        value = sch.sample_categorical([UNSET if v is None else v for v in knob.values],
                                       [1.0 / len(knob.values)] * len(knob.values), decision=decision)
        sch.annotate(root, ANNOTATION + knob.name, value)


def trace_of(choices: Choices, workload: Any) -> Any:
    """The trace of the space's point ``choices`` (every knob's value must be in the space)."""
    sch = s_tir.Schedule(workload)
    sample(sch, {k.name: k.index(getattr(choices, k.name)) for k in knobs()})
    return sch.trace


def random_trace(workload: Any, seed: int) -> Any:
    """A trace of the space's point drawn at random (by TVM's sampler, from ``seed``)."""
    sch = s_tir.Schedule(workload, seed=seed)
    sample(sch)
    return sch.trace


def choices_of(trace: Any, workload: Any) -> Choices:
    """The ``Choices`` a trace decides: replayed on ``workload``, read from the root block's
    annotations. Knobs this version of ``Choices`` lacks are ignored; missing ones keep their
    defaults."""
    sch = s_tir.Schedule(workload)
    trace.apply_to_schedule(sch, remove_postproc=False)
    annotations = sch.mod["main"].body.block.annotations
    fields = {f.name for f in dataclasses.fields(Choices)}
    values = {}
    for key, value in annotations.items():
        name = str(key)
        if name.startswith(ANNOTATION) and name[len(ANNOTATION):] in fields:
            values[name[len(ANNOTATION):]] = None if int(value) == UNSET else int(value)
    return Choices(**values)


def with_value(choices: Choices, knob: Knob, value: Optional[int]) -> Choices:
    """``choices`` with one knob set to ``value``."""
    return dataclasses.replace(choices, **{knob.name: value})


def describe(choices: Choices) -> str:
    """The knobs that differ from the default, as ``name=value`` (``default`` when none do)."""
    default = Choices()
    changed = [f"{k.name}={getattr(choices, k.name)}" for k in knobs()
               if getattr(choices, k.name) != getattr(default, k.name)]
    return ", ".join(changed) or "default"
