"""``sparsetir.Schedule``: one object that schedules a program through stages I, II and III.

- **Stage I** (a ``SparseFunction``): ``sparse_reorder``, ``sparse_fuse``, ``sparse_split``,
  ``sparse_compute_at``, ``annotate_sparse_iter``; handles are iteration and axis names.
- ``lower_sparse_iter()`` moves to **stage II** (a ``Stage2Function``): TVM's ``s_tir.Schedule``
  primitives (``tvm_primitives.TRANSFORMS`` / ``QUERIES``) work on the position-space loops,
  with the sparse guards of ``guards.py``.
- ``lower_sparse_buffer()`` moves to **stage III** (a plain ``PrimFunc``): the same primitives.

Both moves run the lowering pipeline (``transforms/pipeline.py``): the first up to stage II as
LowerSparseIter writes it, the second the rest.

Every step is checked (stage-I verifier; stage II/III: ``checks.py``) and refused with
``ScheduleError``, the schedule rolled back, when the check fails. Every step is recorded in
``history`` with JSON-able arguments and the program's script after it; ``replay`` applies a
history to the unscheduled function again.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional, Sequence

from .._tvm import Schedule as TVMSchedule, TVMScheduleError, tirx
from ..errors import ScheduleError
from ..ir.axis import AxisKind, FusedAxis
from ..ir.function import SparseFunction
from ..ir.module import from_prim_func
from ..ir.stage2 import SEARCHED_ATTR, Stage2Function
from ..transforms import pipeline
from ..transforms.partition import partition_rows
from .checks import check_stage2, check_stage3
from .guards import check_after, check_before
from .handles import decode, encode
from .history import History, Step
from .stage1 import STAGE1_PRIMITIVES, find_iteration, iteration_names
from .thread_binding import bind_independent, independent_iterations, refused_for_dataflow, run_independent
from .tvm_primitives import QUERIES, TRANSFORMS, bind_arguments, call_with

STAGE_NAMES = {1: "I", 2: "II", 3: "III"}
LOWERINGS = ("lower_sparse_iter", "lower_sparse_buffer")
SPARSE_STAGE2 = ("partition_rows",)  # our own stage-II rewrites, recorded like TVM's steps


class Schedule:
    """A function being scheduled, at stage I, II or III, with the history of every step.

    ``func`` is the current program: a ``SparseFunction`` at stage I, a ``Stage2Function`` at
    stage II, a ``tvm.tirx.PrimFunc`` at stage III. The function passed in is never changed.
    At stages II and III the TVM primitives listed in ``tvm_primitives`` are methods of this
    object (``sch.split(loop, [None, 8])``); the block and loop handles they return stay valid
    for later calls, including after a refused step.

    After every step the program is checked (``checks.py``): sparse buffers still parameters,
    TVM's well-formedness, and that its script parses back to an equal program. The last check
    re-reads the script (about 10 ms a step); ``round_trip=False`` skips it, for schedules
    already known to print faithfully (the ``sparsetir.ops`` recipes, whose kernels the tests
    round-trip).

    ``keep_record=False`` records no steps: ``history`` stays empty (its ``initial_script`` is
    still kept), so the schedule cannot be replayed or shown step by step (``sparsetir.explore``
    shows no steps), and no program's script is kept per step. The steps are checked all the
    same. This is the seed's ``keep_schedule_record`` switch, made an argument.
    """

    def __init__(self, func: Any, *, round_trip: bool = True, keep_record: bool = True):
        func = from_prim_func(func)  # a module's function (``M["f"]``) as the program it stands for
        self.round_trip = round_trip
        self.keep_record = keep_record
        self._initial = func
        self._stage, self._func, self._tvm = _start(func)
        # Sparse axes whose coordinates a step's proof relied on being sorted within rows (a
        # parallel loop writing one row per coordinate): the program then checks them per call.
        self._sorted_axes: list[str] = []
        self.history = History(self._checked_script(), stage=self._stage)

    @property
    def initial(self) -> Any:
        """The function this schedule started from; ``replay(sch.initial, sch.history)`` is ``sch.func``."""
        return self._initial

    @property
    def stage(self) -> int:
        """1, 2 or 3: the stage of the current program."""
        return self._stage

    @property
    def func(self) -> Any:
        """The program as scheduled so far."""
        if self._stage == 1:
            return self._func
        if self._stage == 2:
            return Stage2Function.from_func(_with_sorted(self._tvm.mod["main"], self._sorted_axes))
        return self._tvm.mod["main"]

    def __repr__(self) -> str:
        return f"Schedule(stage {STAGE_NAMES[self._stage]}, {len(self.history)} steps)"

    # -- stage I ---------------------------------------------------------------------------

    def get_sparse_iteration(self, name: str) -> str:
        """A handle (the name) of the sparse iteration ``name``, checked to exist."""
        self._require_stage(1, "get_sparse_iteration")
        find_iteration(self._func, name)
        return name

    def iterations(self) -> list[str]:
        """Names of every sparse iteration."""
        self._require_stage(1, "iterations")
        return iteration_names(self._func)

    def sparse_reorder(self, iteration: str, order: Sequence[Any]) -> None:
        """Reorder the axes of a sparse iteration (parents stay before their children)."""
        self._stage1("sparse_reorder", iteration, order=list(order))

    def sparse_fuse(self, iteration: str, axes: Sequence[Any]) -> None:
        """Fuse consecutive parent→child axes of a sparse iteration into one loop."""
        self._stage1("sparse_fuse", iteration, axes=list(axes))

    def sparse_split(self, iteration: str, axis: Any, at: Optional[int] = None, multiple_of: Optional[int] = None) -> None:
        """Split a sparse iteration in two over ``[0, at)`` and ``[at, extent)`` of a dense axis,
        or after the largest multiple of ``multiple_of`` (``stage1.sparse_split``): an awkward
        width becomes whole vectors plus a tail."""
        args = {"at": at} if multiple_of is None else {"multiple_of": multiple_of} if at is None else \
            {"at": at, "multiple_of": multiple_of}
        self._stage1("sparse_split", iteration, axis=axis, **args)

    def sparse_compute_at(self, iteration: str, target_iteration: str, axis: Any) -> None:
        """Run the producer ``iteration`` inside ``target_iteration``'s loop over ``axis``, one
        slice per coordinate, just before the consumer's work there (``compute_at.py``); the
        loop over the consumer's axes up to ``axis`` becomes the iteration ``<target>_outer``."""
        self._stage1("sparse_compute_at", iteration, target_iteration=target_iteration, axis=axis)

    def annotate_sparse_iter(self, iteration: str, key: str, value: Any) -> None:
        """Set an attribute of a sparse iteration."""
        self._stage1("annotate_sparse_iter", iteration, key=key, value=value)

    def _stage1(self, primitive: str, iteration: str, **kwargs: Any) -> None:
        self._require_stage(1, primitive)
        plain = {k: _plain(v) for k, v in kwargs.items()}
        self._func = STAGE1_PRIMITIVES[primitive](self._func, iteration, **plain)
        self._record(primitive, {"iteration": iteration, **plain}, self._func.script())

    # -- moving between stages -------------------------------------------------------------

    def lower_sparse_iter(self) -> None:
        """Move to stage II: lower the sparse iterations to loops and blocks in position space."""
        self._require_stage(1, "lower_sparse_iter")
        tvm_sch = _tvm_schedule(pipeline.lower(self._func, until=pipeline.STAGE_II).func)
        script = check_stage2(Stage2Function.from_func(tvm_sch.mod["main"]), self.round_trip)
        self._stage, self._func, self._tvm = 2, None, tvm_sch
        self._record("lower_sparse_iter", {}, script)

    def lower_sparse_buffer(self) -> None:
        """Move to stage III: flatten the sparse buffers into the arrays the caller passes."""
        self._require_stage(2, "lower_sparse_buffer")
        stage2 = Stage2Function.from_func(_with_sorted(copy.deepcopy(self._tvm.mod["main"]), self._sorted_axes))
        tvm_sch = _tvm_schedule(pipeline.lower(stage2))
        script = check_stage3(tvm_sch.mod["main"], self.round_trip)
        self._stage, self._tvm = 3, tvm_sch
        self._record("lower_sparse_buffer", {}, script)

    # -- stage II: sparse-aware primitives ------------------------------------------------

    def partition_rows(self, block: str, parts: str = "part", count: str = "P", parallel: bool = False,
                       weights: Optional[str] = None) -> None:
        """Run the loop above ``block`` as ``count`` chunks ``parts[t]:parts[t+1]`` given at call time.

        The kernel gains two parameters, the int32 array ``parts`` (``count + 1`` boundaries,
        checked like an indptr when the kernel is called) and the int32 scalar ``count``; chunks
        with equal numbers of nonzeros balance a parallel loop over them
        (``sparsetir.runtime.partition.row_partition`` computes such boundaries). A second
        partition of the same rows may reuse both parameters (same names), or share only ``count``.

        ``parallel=True`` makes the chunk loop parallel once the iterations of the row loop are
        proven to touch disjoint elements (``thread_binding.independent_iterations``), which TVM's
        own ``parallel`` cannot show for a row block that initialises what it then reduces into.
        ``weights`` names the indptr parameter whose row lengths the boundaries balance (kept in
        the function, for a caller that computes them, such as a default-scheduled kernel).
        This is a new program for TVM: handles taken before this step are not valid after it.
        """
        self._require_stage(2, "partition_rows")
        args: dict[str, Any] = {"block": block, "parts": parts, "count": count}
        if parallel:
            args["parallel"] = True
        if weights is not None:
            args["weights"] = weights
        try:
            if parallel:
                self._prove_rows_independent(block)
            new = partition_rows(self.func, block, parts, count, parallel=parallel, weights=weights)
            tvm_sch = _tvm_schedule(new.func)
            script = check_stage2(Stage2Function.from_func(tvm_sch.mod["main"]), self.round_trip)
        except Exception as err:
            raise _refusal("partition_rows", err) from err
        self._tvm = tvm_sch
        self._record("partition_rows", args, script)

    def _prove_rows_independent(self, block: str) -> None:
        """Refuse unless the row loop ``partition_rows`` would split above ``block`` has
        independent iterations (chunks of such rows may then run at once)."""
        loops = self._tvm.get_loops(self._tvm.get_sblock(block))
        row = next((lp for lp in loops if not _unit_loop(self._tvm.get(lp))), loops[-1] if loops else None)
        if row is None:
            raise ScheduleError(f"block '{block}' has no loop above it")
        reason = independent_iterations(self._tvm, row, self._nested_buffers(), heads_kernel=False)
        if reason is not None:
            raise ScheduleError(f"cannot run the chunks in parallel: {reason}")

    def fork(self) -> "Schedule":
        """An independent copy of this schedule (program and history): steps applied to one do
        not change the other, so a sequence of steps can be tried and dropped."""
        other = copy.copy(self)
        other._sorted_axes = list(self._sorted_axes)
        if self._tvm is not None:
            other._tvm = self._tvm.copy()
        other.history = History(self.history.initial_script, list(self.history.steps), self.history.stage)
        return other

    # -- stages II and III: TVM's primitives -----------------------------------------------

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in TRANSFORMS and name not in QUERIES:
            offered = " (sparsetir.schedule.tvm_primitives lists the TVM primitives offered)" if hasattr(TVMSchedule, name) else ""
            raise AttributeError(f"'Schedule' object has no attribute '{name}'{offered}")

        def primitive(*args: Any, **kwargs: Any) -> Any:
            return self._tvm_primitive(name, args, kwargs)

        primitive.__name__ = name
        primitive.__doc__ = getattr(TVMSchedule, name).__doc__
        return primitive

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | TRANSFORMS | QUERIES)

    def _tvm_primitive(self, name: str, args: tuple, kwargs: dict) -> Any:
        if self._stage == 1:
            raise ScheduleError(f"{name} is a stage-II/III primitive; call lower_sparse_iter() first")
        method = getattr(self._tvm, name)
        try:
            arguments = bind_arguments(method, args, kwargs)
        except TypeError as err:
            raise ScheduleError(f"{name}: {err}") from err
        if name not in QUERIES:
            return self._transform(name, arguments)
        try:
            return call_with(method, arguments)
        except Exception as err:
            raise _refusal(name, err) from err

    def _transform(self, name: str, arguments: dict[str, Any]) -> Any:
        """Apply a TVM primitive as a guarded, checked, recorded step; roll back if refused."""
        backup = self._tvm.copy()  # TVM keeps every handle valid in the copy
        try:
            recorded = {k: encode(self._tvm, v) for k, v in arguments.items()}
            check_before(self._tvm, name, arguments)
            result = self._call_tvm(name, arguments)
            check_after(self._tvm, self.func if self._stage == 2 else None, name, result)
            script = self._checked_script()
        except Exception as err:
            self._tvm = backup
            raise _refusal(name, err) from err
        self._record(name, recorded, script)
        return result

    def _call_tvm(self, name: str, arguments: dict[str, Any]) -> Any:
        """TVM's primitive; a ``bind``, ``parallel`` or ``vectorize`` TVM refuses only for its
        dataflow rule is applied by sparsetir when it can prove the loop's iterations independent
        (``thread_binding.py``)."""
        try:
            return call_with(getattr(self._tvm, name), arguments)
        except TVMScheduleError as err:
            if name not in ("bind", "parallel", "vectorize") or not refused_for_dataflow(err):
                raise
            try:
                if name == "bind":
                    bind_independent(self._tvm, arguments["loop"], arguments["thread_axis"], self._nested_buffers())
                else:
                    kind = tirx.ForKind.PARALLEL if name == "parallel" else tirx.ForKind.VECTORIZED
                    relied: set = set()
                    run_independent(self._tvm, arguments["loop"], kind, self._nested_buffers(), self._sorted_indices(),
                                    relied)
                    self._sorted_axes.extend(sorted(relied - set(self._sorted_axes)))
            except ScheduleError as ours:
                raise ScheduleError(f"refused by TVM (its subtree is not compact dataflow), and {ours}") from err
            return None

    def _sorted_indices(self) -> dict[str, str]:
        """Stage II: the indices buffers of sparse axes declared sorted (``sorted=False`` says the
        coordinates may repeat, as an ELL format's row ids do), by buffer name, to their axes' names."""
        if self._stage != 2:
            return {}
        return {str(a.indices.name): a.name for a in self.func.axes
                if a.is_sparse and a.indices is not None and a.sorted}

    def _nested_buffers(self) -> dict[str, Optional[int]]:
        """Stage-II buffers laid out by a variable axis (their later dimensions share storage
        ranges), each with the first of its trailing dense fixed dimensions after its last
        variable one (None: none): laid out row-major inside each stored position, those still
        tell elements of one first-dimension row apart."""
        if self._stage != 2:
            return {}
        nested: dict[str, Optional[int]] = {}
        for b in self.func.buffers:
            axes = list(b.axes)
            if not any(a.is_variable for a in axes[1:]):
                continue
            last_variable = max(d for d, a in enumerate(axes) if a.is_variable)
            tail = last_variable + 1
            dense = tail < len(axes) and all(a.kind is AxisKind.DENSE_FIXED for a in axes[tail:])
            nested[b.name] = tail if dense else None
        return nested

    # -- history ---------------------------------------------------------------------------

    def apply_step(self, step: Step) -> None:
        """Apply a recorded step again (its handles resolved against the current program)."""
        expected = self._stage + (1 if step.primitive in LOWERINGS else 0)
        if step.stage != expected:
            raise ScheduleError(
                f"step '{step.primitive}' was recorded at stage {STAGE_NAMES.get(step.stage, step.stage)}, "
                f"but here it would give stage {STAGE_NAMES[expected]}"
            )
        if step.primitive in LOWERINGS:
            getattr(self, step.primitive)()
        elif step.primitive in SPARSE_STAGE2:
            getattr(self, step.primitive)(**step.args)
        elif step.primitive in STAGE1_PRIMITIVES:
            args = dict(step.args)
            self._stage1(step.primitive, args.pop("iteration"), **args)
        elif step.primitive in TRANSFORMS:
            try:
                arguments = {k: decode(self._tvm, v) for k, v in step.args.items()}
            except Exception as err:
                raise _refusal(step.primitive, err) from err
            self._transform(step.primitive, arguments)
        else:
            raise ScheduleError(f"cannot replay unknown step '{step.primitive}'")

    def _record(self, primitive: str, args: dict[str, Any], script: str) -> None:
        if self.keep_record:
            self.history.steps.append(Step(primitive, args, self._stage, script))

    def _checked_script(self) -> str:
        if self._stage == 1:
            return self._func.script()
        if self._stage == 2:
            return check_stage2(self.func, self.round_trip)
        return check_stage3(self.func, self.round_trip)

    def _require_stage(self, stage: int, primitive: str) -> None:
        if self._stage != stage:
            raise ScheduleError(
                f"{primitive} is a stage-{STAGE_NAMES[stage]} primitive, but the schedule is at stage {STAGE_NAMES[self._stage]}"
            )


def replay(func: Any, history: History) -> Any:
    """Apply a recorded history's steps to ``func`` again; the result equals the original's."""
    sch = Schedule(func)
    if sch.stage != history.stage:
        raise ScheduleError(
            f"the history starts at stage {STAGE_NAMES.get(history.stage, history.stage)}, "
            f"but the function is at stage {STAGE_NAMES[sch.stage]}"
        )
    for step in history:
        sch.apply_step(step)
    return sch.func


def _start(func: Any) -> tuple[int, Optional[SparseFunction], Optional[TVMSchedule]]:
    """(stage, stage-I function, TVM schedule) for a function at any stage."""
    try:
        stage = pipeline.stage_of(func)
    except TypeError:
        raise ScheduleError(
            f"Schedule takes a SparseFunction, a Stage2Function or a tvm.tirx.PrimFunc, got {type(func).__name__}"
        ) from None
    if stage == 1:
        return 1, func, None
    return stage, None, _tvm_schedule(func.func if isinstance(func, Stage2Function) else func)


def _with_sorted(prim: "tirx.PrimFunc", axes: Sequence[str]) -> "tirx.PrimFunc":
    """``prim`` with ``axes`` among the axes its kernel checks for sorted coordinates."""
    if not axes:
        return prim
    attrs = prim.attrs
    have = [str(a) for a in attrs[SEARCHED_ATTR]] if attrs is not None and SEARCHED_ATTR in attrs else []
    return prim.with_attr(SEARCHED_ATTR, have + [a for a in axes if a not in have])


def _unit_loop(loop: Any) -> bool:
    return isinstance(loop.extent, tirx.IntImm) and int(loop.extent.value) == 1


def _tvm_schedule(func: tirx.PrimFunc) -> TVMSchedule:
    # TVM's Schedule may rewrite the function it is given in place; never give it the caller's.
    return TVMSchedule(copy.deepcopy(func))


def _refusal(name: str, err: Exception) -> ScheduleError:
    """The ``ScheduleError`` that reports ``err`` (ours, or TVM's reason without its IR dump)."""
    if isinstance(err, ScheduleError):
        return ScheduleError(f"{name}: {err}")
    # TVM reports refusals as its own ScheduleError, TVMError, AssertionError, ...
    text = str(err)
    marker = "Error message:"
    reason = text[text.rindex(marker) + len(marker) :].strip() if marker in text else text.strip()
    return ScheduleError(f"{name}: refused by TVM: {reason}")


def _plain(value: Any) -> Any:
    """JSON-able form of a stage-I primitive argument (axes and groups by name)."""
    if isinstance(value, FusedAxis):
        return "+".join(a.name for a in value.axes)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    name = getattr(value, "name", None)
    if name is not None and not isinstance(value, (str, int, float, bool)):
        return name
    return value
