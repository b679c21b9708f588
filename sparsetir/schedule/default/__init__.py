"""The default CPU schedule: what ``sparsetir.build`` applies to a program nobody scheduled.

A list of named rules, in the order they run (one file each)::

    split_width       (stage I) an awkward width as whole tiles, whole vectors and a tail
    row_parallel      rows in parallel, in chunks of equal nonzeros computed at call time
    streamed_rows     wide rows read in order: summed in place, one pass each
    register_tile     a reduction into a row of outputs: the row in vector registers
    dot_product       a reduction along contiguous elements: vector lanes, summed once
    register_accumulator  a value accumulated over a block's loops: kept in a register
    vectorize_inner   any other contiguous innermost loop: vectors
    prefetch          (per call) gathered rows fetched ahead, where the matrix makes it pay

Each rule reads what it can prove about the program (``facts.py``: iteration kinds, which loops
are data-dependent, where the reduction is, which axis is innermost and contiguous) and either
does not apply or schedules its part through ``sparsetir.Schedule``, so every step is checked
by the sparse guards and recorded in the schedule's history (``sparsetir show``, the explorer).
A rule that TVM refuses halfway is dropped whole. The ready-made ops are built by the same
rules, so a user's SpMM script and ``sparsetir.ops.spmm`` are the same kernel.

Loops whose extent is a scalar parameter cannot be tiled or vectorized without a tail; the
widths a call passes are specialized first (``widths.py``, done per call value by the kernel
``build`` returns), and the rules then see constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..._tvm import tirx
from ...errors import LoweringError, ScheduleError
from ...ir.analysis import contains
from ...ir.function import SparseFunction
from ...ir.stage2 import PARTITIONS_ATTR, Stage2Function
from ..schedule import Schedule
from .dot_product import DotProduct
from .facts import nests
from .register_accumulator import RegisterAccumulator
from .register_tile import RegisterTile
from .row_parallel import RowParallel
from .rule import Choices, Context, Rule
from .split_width import SplitWidth
from ..stage1 import iteration_names
from .streamed_rows import StreamedRows
from .vectorize_inner import VectorizeInner

#: The rules, in the order they run (the stage-I ones first, before lowering).
RULES: tuple[Rule, ...] = (SplitWidth(), RowParallel(), StreamedRows(), RegisterTile(), DotProduct(),
                           RegisterAccumulator(), VectorizeInner())


@dataclass(frozen=True)
class Decision:
    """One rule considered for one nest or block: applied, or refused by TVM (``reason``)."""

    rule: str
    where: str
    applied: bool
    reason: str = ""


@dataclass
class DefaultSchedule:
    """The result of ``default_schedule``: the schedule (its ``func`` and ``history``), the target
    options its code needs, and what each rule did."""

    schedule: Schedule
    target_options: dict[str, Any] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    #: dense operands whose rows the scheduled loops gather (``facts.Gather``): what
    #: ``Choices.prefetch`` prefetches once the program is at stage III
    gathers: list[Any] = field(default_factory=list)

    @property
    def applied(self) -> list[Decision]:
        """The rules that scheduled something."""
        return [d for d in self.decisions if d.applied]


def default_schedule(func: Any, choices: Choices = Choices(), rules: tuple[Rule, ...] = RULES) -> DefaultSchedule:
    """Schedule ``func`` (stage I, or stage II as LowerSparseIter writes it) by the rules.

    The function gets ``tir.noalias``: a kernel checks on every call that no output shares
    memory with another argument, so LLVM may keep loaded values in registers across stores.
    """
    if isinstance(func, SparseFunction):
        func = SparseFunction(func.name, list(func.params), {**dict(func.attrs), "tir.noalias": True},
                              list(func.axes), list(func.buffers), list(func.body), func.span)
    sch = Schedule(func, round_trip=False)
    result = DefaultSchedule(sch)
    if sch.stage == 1:
        for rule in (r for r in rules if r.scope == "iteration"):
            for name in iteration_names(sch.func):
                sch = _try(rule, sch, None, name, name, choices, result)
        sch.lower_sparse_iter()
    if sch.stage != 2:
        raise ScheduleError("the default schedule starts at stage I or II")
    result.schedule = sch
    for rule in (r for r in rules if r.scope != "iteration"):
        for index in range(len(nests(sch.func.prim))):
            names = [None] if rule.scope == "nest" else [b.name for b in nests(sch.func.prim)[index].blocks]
            for name in names:
                nest = nests(sch.func.prim)[index]  # read again: the last rule changed the program
                sch = _try(rule, sch, nest, None if name is None else nest.block(name), name or nest.row_block.name,
                           choices, result)
    result.schedule = sch
    return result


def _try(rule: Rule, sch: Schedule, nest: Any, block: Any, where: str, choices: Choices,
         result: DefaultSchedule) -> Schedule:
    """``sch`` after ``rule`` on ``nest`` or ``block``: a copy it scheduled, or ``sch`` itself when
    it did not apply, TVM refused a step of it, or the rule itself failed on a program it did
    not foresee (the decision, with the reason, is added to ``result``; the program stays
    correct, only less optimized)."""
    context = Context(sch.func, choices)
    trial = sch.fork()
    try:
        applied = rule.apply(trial, nest, block, context)
    except (ScheduleError, LoweringError) as err:
        result.decisions.append(Decision(rule.name, where, False, str(err)))
        return sch
    except Exception as err:  # noqa: BLE001 - a rule's own failure costs speed, never the build
        result.decisions.append(Decision(rule.name, where, False, f"the rule failed: {type(err).__name__}: {err}"))
        return sch
    if not applied:
        return sch
    result.target_options.update(context.target_options)
    result.gathers.extend(g for g in context.gathers if g not in result.gathers)
    result.decisions.append(Decision(rule.name, where, True))
    return trial


def is_scheduled(func: Any) -> bool:
    """Whether a stage-II or III program was scheduled already: a loop that is not serial, or a
    row partition (a stage-I function never is)."""
    if isinstance(func, SparseFunction):
        return False
    prim = func.prim if isinstance(func, Stage2Function) else func
    if prim.attrs is not None and PARTITIONS_ATTR in prim.attrs:
        return True
    return contains(prim.body, lambda n: isinstance(n, tirx.For) and n.kind != tirx.ForKind.SERIAL)


__all__ = ["Choices", "DefaultSchedule", "Decision", "RULES", "Rule", "default_schedule", "is_scheduled"]
