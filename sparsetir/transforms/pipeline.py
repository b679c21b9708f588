"""The lowering pipeline: the one place the order of the passes is written.

A program moves from stage I (sparse iterations, ``SparseFunction``) to stage II (loops and
blocks over position-space buffers, ``Stage2Function``) to stage III (a plain TVM
``tvm.tirx.PrimFunc`` over the caller's arrays)::

    lower_sparse_iter          I  → II
    auto_decompose_reduction   II → II   (inits under data-dependent loops hoisted)
    bound_cache_extents        II → II   (data-dependent allocation extents bounded)
    flatten_sparse_buffers     II → III  (then accesses not provably inside their arrays guarded)

Every caller runs this list: ``sparsetir.build``, ``sparsetir show``, ``sparsetir.Schedule``
(its ``lower_sparse_iter`` and ``lower_sparse_buffer`` steps) and ``sparsetir.lower_sparse_buffer``.
A program enters at the first pass that reads its stage; ``until`` stops early, and ``steps``
yields the program after every pass (what an explorer shows). Over a ``tvm.IRModule`` the same
steps run as ``tvm.transform`` module passes (``module_passes.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Union

from .._tvm import tirx
from ..errors import LoweringError, SparseTIRError
from ..ir.function import SparseFunction
from ..ir.module import from_prim_func, is_carrier
from ..ir.stage2 import AXES_ATTR, Stage2Function
from ..trace.fill import fill_spans, keeps_spans
from .auto_decompose_reduction import auto_decompose_reduction
from .bound_cache_extents import bound_cache_extents
from .flatten_sparse_buffers import flatten_sparse_buffers
from .lower_sparse_iter import lower_sparse_iter


@dataclass(frozen=True)
class Pass:
    """One lowering pass: a function from a program at stage ``reads`` to one at stage ``writes``."""

    name: str
    reads: int
    writes: int
    run: Callable[[Any], Any]


PASSES: tuple[Pass, ...] = (
    Pass("lower_sparse_iter", 1, 2, lower_sparse_iter),
    Pass("auto_decompose_reduction", 2, 2, auto_decompose_reduction),
    Pass("bound_cache_extents", 2, 2, bound_cache_extents),
    Pass("flatten_sparse_buffers", 2, 3, flatten_sparse_buffers),
)

#: ``until`` value for "stage II as LowerSparseIter writes it" (where stage-II schedules start)
STAGE_II = "lower_sparse_iter"
#: ``until`` value for "stage III" (the whole pipeline)
STAGE_III = PASSES[-1].name

Until = Union[str, int, None]


def stage_of(func: Any) -> int:
    """1, 2 or 3: the stage of a program (a stage-II ``PrimFunc`` carries the sparse metadata, a
    stage-I function in an ``IRModule`` is a carrier PrimFunc, ``ir/module.py``)."""
    if isinstance(func, SparseFunction) or is_carrier(func):
        return 1
    if isinstance(func, Stage2Function):
        return 2
    if isinstance(func, tirx.PrimFunc):
        return 2 if func.attrs is not None and AXES_ATTR in func.attrs else 3
    raise TypeError(
        f"expected a SparseFunction, a Stage2Function or a tvm.tirx.PrimFunc, got {type(func).__name__}"
    )


def steps(func: Any, until: Until = None) -> Iterator[tuple[str, Any]]:
    """``(pass name, program after it)`` for every pass from ``func``'s stage to ``until``.

    ``until`` is a pass name (stop after it), a stage number (stop at the first program of that
    stage: ``2`` is stage II as LowerSparseIter writes it, ``3`` is stage III) or ``None`` (run
    to the end). A program already at the requested point yields nothing.
    """
    stage = stage_of(func)
    func = from_prim_func(func)
    if stage == 2 and not isinstance(func, Stage2Function):
        func = Stage2Function.from_func(func)
    last = _last_index(until)
    for index, p in enumerate(PASSES[: last + 1]):
        if p.reads < stage:
            continue
        func = _run(p, func)
        stage = p.writes
        yield p.name, func


def lower(func: Any, until: Until = None) -> Any:
    """The program ``func`` (stage I, II or III) after the pipeline's passes up to ``until``."""
    func = from_prim_func(func)
    for _, func in steps(func, until):
        pass
    if stage_of(func) == 2 and not isinstance(func, Stage2Function):
        func = Stage2Function.from_func(func)
    return func


def _run(p: Pass, func: Any) -> Any:
    """One pass, and spans on whatever it made without them (``trace/fill.py``; not for a program
    parsed with ``spans=False``, which keeps none); a failure that is not already a sparsetir
    error (TVM's checks, say) becomes a ``LoweringError`` naming the pass, with the original
    chained."""
    try:
        out = p.run(func)
        return fill_spans(out) if keeps_spans(out) else out
    except SparseTIRError:
        raise
    except Exception as err:  # TVM reports many kinds; none may escape unexplained
        detail = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), type(err).__name__)
        raise LoweringError(f"{p.name} failed on {function_name(func)}: {detail}") from err


def function_name(func: Any) -> str:
    """The name of a program at any stage, for messages."""
    name = getattr(func, "name", None)
    if isinstance(name, str):
        return name
    attrs = getattr(func, "attrs", None)
    return str(attrs["global_symbol"]) if attrs is not None and "global_symbol" in attrs else "the function"


def _last_index(until: Until) -> int:
    if until is None:
        return len(PASSES) - 1
    if isinstance(until, int) and not isinstance(until, bool):
        for index, p in enumerate(PASSES):
            if p.writes == until:
                return index
        raise ValueError(f"no pass of the pipeline writes stage {until}")
    for index, p in enumerate(PASSES):
        if p.name == until:
            return index
    raise ValueError(f"no pass named {until!r}; the pipeline is {', '.join(p.name for p in PASSES)}")
