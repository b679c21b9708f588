"""``sparsetir.build`` of a program nobody scheduled, for the CPU: the default schedule.

The script's width parameters (``schedule/default/widths.py``) are specialized per call value,
each variant scheduled by the default rules (``schedule/default``) and compiled on its first
call; the kernel returned (``runtime.specialized.SpecializedKernel``) checks the script's
arguments, computes the row partitions the variant needs and runs it. A program without
widths has one variant, compiled here.
"""

from __future__ import annotations

from typing import Any, Optional

from ._tvm import tvm
from .errors import SparseTIRError
from .ir.function import SparseFunction
from .ir.stage2 import Stage2Function, partitions_of
from .runtime.cache import KernelCache
from .runtime.constraints import IndicesConstraint, used_by
from .runtime.signature import BufferParam, signature_of
from .runtime.specialized import Partition, Prefetch, SpecializedKernel, Variant
from .runtime.parallel import num_threads
from .runtime.target import TargetLike, as_target, host_target
from .runtime.validate import CallValidator
from .schedule.default import Choices, DefaultSchedule, default_schedule
from .schedule.default.prefetch import column_locality, operand_bytes, prefetch_lines
from .schedule.default.widths import width_params
from .transforms import pipeline
from .transforms.prefetch_gathered_rows import prefetch_gathered_rows


def build_default(func: Any, target: TargetLike, name: Optional[str], cache: Optional[KernelCache],
                  choices: Choices = Choices()) -> SpecializedKernel:
    """The kernel of ``func`` (stage I, or an unscheduled stage II) under the default CPU schedule."""
    from .driver import _build, constraints_of

    stage2 = pipeline.lower(func, until=pipeline.STAGE_II) if isinstance(func, SparseFunction) else func
    stage3 = pipeline.lower(stage2)
    symbol = name or pipeline.function_name(stage3) or "main"
    signature = signature_of(stage3, symbol)
    base = used_by(constraints_of(stage2), stage3)
    validator = CallValidator(signature, base, device="cpu")
    widths = width_params(func) if isinstance(func, SparseFunction) else []
    arrays = tuple(i for i, p in enumerate(signature.params) if isinstance(p, BufferParam))
    user_target = as_target(target)

    def make(values: Optional[dict[str, int]], lines: int) -> Variant:
        """The variant for ``values`` of the widths, prefetching ``lines`` of each gathered row
        (-1: as ``choices.prefetch`` says; none and a per-call decision when that is None)."""
        program = func.specialize(values) if values else func
        scheduled = default_schedule(program, choices)
        variant_target = _with_options(user_target, target, scheduled)
        f2 = scheduled.schedule.func
        fixed = lines if lines >= 0 else choices.prefetch
        prefetched = _prefetched(f2, scheduled, fixed, choices.prefetch_distance)
        kernel = _build(prefetched, variant_target, symbol, [], cache)
        decide = _prefetch_plan(scheduled, signature.names) if fixed is None else None
        extra = _extra_checks(f2, base, signature)
        return _variant(kernel, f2, signature.names, arrays, decide, extra)

    chunks = max(int(choices.chunks_per_thread), 1)
    kernel = SpecializedKernel(signature, validator, widths, make, lambda: num_threads() * chunks)
    if not widths:
        kernel.generic  # one variant: compile it now, as build always did
    return kernel


def schedule_of(func: Any, choices: Choices = Choices(), **widths: int) -> DefaultSchedule:
    """The default schedule ``build`` gives ``func`` for these width values (none: the generic one)."""
    program = func.specialize(widths) if widths else func
    return default_schedule(program, choices)


def _prefetched(f2: Stage2Function, scheduled: DefaultSchedule, lines: Optional[int], distance: int) -> Any:
    """``f2`` lowered with ``lines`` of its gathered rows prefetched ``distance`` entries ahead
    (None or -1: ``f2`` as it is; a variant's arguments are checked as the script's, so it
    needs no checks of its own)."""
    if lines is None or lines < 0 or not scheduled.gathers:
        return f2
    f3 = pipeline.lower(f2)
    for g in scheduled.gathers:
        f3 = prefetch_gathered_rows(f3, g.dense, g.indptr, g.indices, g.nnz, distance=distance, max_lines=lines)
    return f3


def _prefetch_plan(scheduled: DefaultSchedule, names: list[str]) -> Optional[Prefetch]:
    """The per-call prefetch decision of a variant (``schedule/default/prefetch.py``): for its
    first gathered operand, when the script passes that operand and its structure."""
    if not scheduled.gathers:
        return None
    g = scheduled.gathers[0]
    if not {g.dense, g.indptr, g.indices} <= set(names):
        return None

    def decide(dense: Any, indptr: Any, indices: Any) -> int:
        row, total = operand_bytes(dense)
        locality = column_locality(indptr, indices, int(dense.shape[0]))
        return prefetch_lines(g.shape, row, total, locality, g.whole_rows)

    return Prefetch(names.index(g.dense), names.index(g.indptr), names.index(g.indices), decide)


def _with_options(target: "tvm.target.Target", given: TargetLike, scheduled: DefaultSchedule) -> "tvm.target.Target":
    """The host target with the options the schedule's code needs (reassociation for dot
    products), unless the caller named a target of their own."""
    if scheduled.target_options and (given == "llvm" or str(target) == str(host_target())):
        return host_target(**scheduled.target_options)
    return target


def _extra_checks(f2: Stage2Function, base: list, signature: Any) -> Optional[Any]:
    """The structure checks the scheduled ``f2`` needs beyond ``base`` (the script's): sorted
    coordinates that a proof of parallel rows relied on (``Schedule``'s sorted axes), as a
    check of a call's arguments; None when there are none."""
    from .driver import constraints_of

    have = {(c.array, getattr(c, "sorted", None)) for c in base}
    extra = [c for c in constraints_of(f2) if isinstance(c, IndicesConstraint) and c.sorted
             and (c.array, True) not in have and c.array in signature.names]
    return CallValidator(signature, extra, device="cpu").check_structure if extra else None


def _variant(kernel: Any, f2: Stage2Function, names: list[str], arrays: tuple[int, ...],
             prefetch: Optional[Prefetch] = None, checks: Optional[Any] = None) -> Variant:
    """Where each argument of the compiled ``kernel`` comes from, for a call with ``names``
    (``arrays``: the positions of the call's array arguments)."""
    position = {n: i for i, n in enumerate(names)}
    params = kernel.params
    sources = tuple(position.get(p) for p in params)
    stage2_names = {str(p.name): n for p, n in zip(f2.prim.params, f2.param_names)}
    partitions = []
    counted: set[str] = set()
    for entry in partitions_of(f2.prim.attrs):
        if entry.parts not in params:
            raise SparseTIRError(f"the default schedule of {kernel.name} partitions rows by '{entry.parts}', "
                                 "which the compiled kernel does not take")
        rows = _rows(entry.extent, position)
        weights = position.get(stage2_names.get(entry.weights, entry.weights)) if entry.weights else None
        count = params.index(entry.count) if entry.count not in counted else None
        counted.add(entry.count)
        dtype = next(p.dtype for p in kernel.signature.params if p.name == entry.parts)
        partitions.append(Partition(params.index(entry.parts), count, rows, weights, dtype))
    return Variant(kernel, sources, tuple(partitions), arrays, prefetch, checks)


def _rows(extent: str, position: dict[str, int]) -> Any:
    if extent.isdigit():
        rows = int(extent)
        return lambda prepared: rows
    at = position[extent]
    return lambda prepared: int(prepared[at])
