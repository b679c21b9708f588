"""``sparsetir.build``: from any stage to a callable kernel.

What is left of the lowering pipeline (``transforms/pipeline.py``) runs, and the stage-III
``PrimFunc`` is compiled by TVM (``runtime.build_stage3``). The sparse axes known at stage II
become the structure checks the kernel runs on its arguments.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional, Sequence, Union

from ._tvm import tirx
from .default_build import build_default
from .errors import LoweringError, SparseTIRError
from .ir.function import SparseFunction
from .ir.stage2 import AXES_ATTR, INDPTR, SEARCHED_ATTR, Stage2Function, partitions_of
from .runtime.build import build_stage3
from .runtime.cache import KernelCache
from .runtime.constraints import Constraint, IndptrConstraint, constraints_from_axes, layout_positions
from .runtime.assembling import AssembledOutput, AssemblingKernel
from .runtime.kernel import Kernel
from .runtime.specialized import SpecializedKernel
from .runtime.target import TargetLike, as_target, is_gpu
from .schedule.default import is_scheduled
from .schedule.gpu_default import default_gpu_schedule
from .ir import structural_equal, structural_hash
from .transforms import pipeline
from .ir.module import from_prim_func


def build(
    func: Any,
    target: TargetLike = "llvm",
    *,
    name: Optional[str] = None,
    constraints: Optional[Sequence[Constraint]] = None,
    cache: Optional[KernelCache] = None,
    schedule: str = "default",
) -> Union[Kernel, SpecializedKernel]:
    """Lower what is left of ``func`` and compile it for ``target`` (``"llvm"``: the host CPU).

    ``func`` is a stage-I ``SparseFunction``, a ``Stage2Function`` (or a stage-II ``PrimFunc``
    carrying its metadata, as ``sch.mod["main"]``), a ``sparsetir.Schedule`` (its current
    program), or a stage-III ``PrimFunc``. A stage-III function has no sparse axes left, so its
    structure checks come from ``constraints`` (none by default).

    A program nobody scheduled (stage I, or stage II with only serial loops and no row
    partition) gets the default CPU schedule (``schedule/default``): rows in nnz-balanced
    parallel chunks, feature axes register-tiled and vectorized. Its width parameters (the
    extents of innermost dense axes, such as ``feat``) are then specialized per call value: the
    kernel (a ``SpecializedKernel``) compiles a variant for each width it is called with.
    ``schedule="none"`` builds the program as written (serial loops); a GPU target has its own
    default (``schedule/gpu_default.py``).

    The result is cached by the program's structure: building the same program again is
    instant. Shapes and nnz stay symbolic, so one kernel serves every matrix.

    A stage-I program with an assembled axis (a sparse output whose pattern the kernel computes,
    ``T.sparse_variable(..., assembled=True)``) builds into an ``AssemblingKernel``: a symbolic
    kernel counts the output's rows, a numeric one writes its coordinates and values, and the
    call returns the new arrays (``runtime/assembling.py``).
    """
    func = _unwrap(func)
    if not isinstance(func, (SparseFunction, Stage2Function, tirx.PrimFunc)):
        raise TypeError(
            "sparsetir.build expects a SparseFunction, a Stage2Function, a Schedule or a "
            f"tvm.tirx.PrimFunc, got {type(func).__name__}"
        )
    if schedule not in ("default", "none"):
        raise ValueError(f"schedule must be 'default' or 'none', got {schedule!r}")
    if _assembles(func):
        if constraints is not None or is_gpu(as_target(target)):
            raise ValueError(f"{func.name} assembles a sparse output; it is built for the CPU with the checks its "
                             "axes give (no target other than a CPU, no constraints=)")
        make = lambda: _assembling(func, target, name, cache, schedule)  # noqa: E731
        return make() if cache is not None else _built.get(func, target, (name, schedule, "assembling"), make)
    return _program(func, target, name, constraints, cache, schedule)


def _program(func: Any, target: TargetLike, name: Optional[str], constraints: Optional[Sequence[Constraint]],
             cache: Optional[KernelCache], schedule: str) -> Union[Kernel, SpecializedKernel]:
    """``build`` of one program (checked, unwrapped): the default schedule's kernel or the
    program as written, kept by ``_built`` unless a cache or constraints are given."""
    if schedule == "default" and constraints is None and _takes_default(func, target):
        make = lambda: build_default(func, target, name, cache)  # noqa: E731
        if cache is not None:
            return make()
        return _built.get(func, target, (name, "default"), make)
    if constraints is not None or cache is not None:
        return _build(func, target, name, constraints, cache)
    return _built.get(func, target, name, lambda: _build(func, target, name, None, None))


def _assembles(func: Any) -> bool:
    """Whether ``func`` has an assembled axis (refused at stage II, where no symbolic program
    can be derived any more)."""
    if isinstance(func, SparseFunction):
        return any(a.assembled for a in func.axes)
    if isinstance(func, Stage2Function) and any(a.assembled for a in func.axes):
        raise ValueError(f"{func.name} assembles a sparse output at stage II; build its stage-I program, from which "
                         "sparsetir derives the symbolic kernel that counts the output's rows")
    return False


def _assembling(func: SparseFunction, target: TargetLike, name: Optional[str], cache: Optional[KernelCache],
                schedule: str) -> AssemblingKernel:
    """The symbolic and the numeric kernel of ``func`` (``runtime/assembling.py``)."""
    from .ir.assembly import assemblies
    from .transforms.assemble import counts_name, symbolic_function

    symbolic = _program(symbolic_function(func), target, None, None, cache, schedule)
    numeric = _program(func, target, name, None, cache, schedule)
    outputs = [AssembledOutput(a.axis.name, a.axis.parent.length, a.axis.idtype, counts_name(func, a), a.axis.indptr.name,
                               a.axis.indices.name, a.axis.nnz.name, tuple(b.handle.name for b in a.buffers))
               for a in assemblies(func)]
    return AssemblingKernel(symbolic, numeric, outputs)


def _takes_default(func: Any, target: TargetLike) -> bool:
    """Whether ``build`` gives ``func`` the default CPU schedule: a CPU target, and a program at
    stage I or an unscheduled stage II."""
    if isinstance(func, tirx.PrimFunc) or is_gpu(as_target(target)):
        return False
    return not is_scheduled(func)


def _build(func: Any, target: TargetLike, name: Optional[str], constraints: Optional[Sequence[Constraint]],
           cache: Optional[KernelCache]) -> Kernel:
    gpu = is_gpu(as_target(target))
    if gpu and pipeline.stage_of(func) == 1:
        func = pipeline.lower(func, until=pipeline.STAGE_II)
    checks: Optional[list[Constraint]] = constraints_of(func) if isinstance(func, Stage2Function) else None
    if gpu and isinstance(func, Stage2Function):
        # Loop nests the schedule left unbound get GPU blocks and threads, at stage II where
        # the sparse layout shows which elements each row owns; what stays unbound, at stage III.
        func = default_gpu_schedule(func)
    for _, func in pipeline.steps(func):
        if checks is None and isinstance(func, Stage2Function):
            checks = constraints_of(func)  # the first stage-II program: the sparse axes as written
    if constraints is not None:
        checks = list(constraints)
    if gpu:
        func = default_gpu_schedule(func)
    try:
        return build_stage3(func, checks or [], target=target, name=name, cache=cache)
    except SparseTIRError:
        raise
    except Exception as err:  # TVM's code generation refused the program
        lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()] or [type(err).__name__]
        # A heading such as LLVM's "verification failed with the following errors:" with its first error.
        detail = " ".join(lines[:2]) if lines[0].endswith(":") else lines[0]
        raise LoweringError(f"compiling {name or pipeline.function_name(func)} for {target} failed: {detail}") from err


class _Built:
    """Kernels by the function ``build`` was given (before lowering), so that building an equal
    program again skips the lowering too: a hit costs a structural hash and comparison (tens of
    microseconds) where lowering takes milliseconds. Equal programs whose parameters are named
    differently are different entries (the kernel is called by those names)."""

    def __init__(self) -> None:
        self._entries: dict[tuple, list[tuple[Any, Kernel]]] = {}
        self._lock = threading.Lock()

    def get(self, func: Any, target: TargetLike, name: Any, make: Callable[[], Any]) -> Any:
        """The kernel built from ``func`` for ``target``, made by ``make`` on a miss."""
        target_key = target if isinstance(target, str) else str(as_target(target))
        key = (structural_hash(func), _param_names(func), target_key, name)
        with self._lock:
            for seen, kernel in self._entries.get(key, []):
                if seen is func or structural_equal(seen, func):
                    return kernel
        kernel = make()
        with self._lock:
            self._entries.setdefault(key, []).append((func, kernel))
        return kernel

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()


def _param_names(func: Any) -> tuple[str, ...]:
    if isinstance(func, Stage2Function):
        return tuple(func.param_names)
    return tuple(str(p.name) for p in func.params)


_built = _Built()


def constraints_of(func: Stage2Function) -> list[Constraint]:
    """The argument checks a stage-II function's sparse axes imply."""
    attrs = func.prim.attrs
    searched = {str(a) for a in attrs[SEARCHED_ATTR]} if attrs is not None and SEARCHED_ATTR in attrs else set()
    # Stage II names the structure arrays after their axes (J_indptr); the kernel's parameters
    # keep the script's names (indptr), which is what a caller passes and errors must say.
    renames = {p.name: name for p, name in zip(func.prim.params, func.param_names)}
    # An indptr has a row per position of the axes that lay it out (the size its parameter gets):
    # counted from its parent alone, an axis under a sparse fixed one (CSF) would count only the
    # fixed width, since stage II's dense twin of that axis has no parent.
    rows = {renames.get(b.buffer.name, b.buffer.name): layout_positions(list(b.axes), renames)
            for b in func.buffers if b.role == INDPTR}
    return constraints_from_axes(list(func.axes), searched, renames, rows) + _partition_checks(func)


def _partition_checks(func: Stage2Function) -> list[Constraint]:
    """Row-partition boundaries (``partition_rows``) are checked like an indptr over the chunks."""
    scalars = {str(p.name): p for p in func.prim.params if not isinstance(p.ty, tirx.BufferType)}
    checks: list[Constraint] = []
    for parts, count, extent, _ in partitions_of(func.prim.attrs):
        end = int(extent) if extent.isdigit() else scalars[extent]
        checks.append(IndptrConstraint(array=parts, axis=f"partition {parts}", rows=(scalars[count],), nnz=end))
    return checks


def _unwrap(func: Any) -> Any:
    """The program to build: a Schedule's current one, an IRModule's function, stage II wrapped."""
    if not isinstance(func, (SparseFunction, Stage2Function, tirx.PrimFunc)):
        if hasattr(func, "func"):  # sparsetir.Schedule
            func = func.func
        elif hasattr(func, "mod"):  # tvm.s_tir.Schedule
            func = func.mod
    if hasattr(func, "functions"):  # IRModule: its only function, else "main"
        functions = list(func.functions.values())
        func = functions[0] if len(functions) == 1 else func["main"]
    if isinstance(func, tirx.PrimFunc) and func.attrs is not None and AXES_ATTR in func.attrs:
        return Stage2Function.from_func(func)
    return from_prim_func(func)  # a stage-I function held in an IRModule (ir/module.py)
