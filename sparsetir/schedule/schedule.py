"""``sparsetir.Schedule``: stage-I primitives, recorded step by step.

Handles are iteration names (strings), so every step's arguments are plain data: the history
serializes to JSON and replays on the unscheduled function to the same program.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import ScheduleError
from ..ir.axis import FusedAxis
from ..ir.function import SparseFunction
from .history import History, Step
from .stage1 import STAGE1_PRIMITIVES, find_iteration, iteration_names


def _plain(value: Any) -> Any:
    """JSON-able form of a primitive argument (axes and groups by name)."""
    if isinstance(value, FusedAxis):
        return "+".join(a.name for a in value.axes)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    name = getattr(value, "name", None)
    if name is not None and not isinstance(value, (str, int, float, bool)):
        return name
    return value


class Schedule:
    """A function being scheduled, with the history of every primitive applied to it."""

    def __init__(self, func: SparseFunction):
        if not isinstance(func, SparseFunction):
            raise ScheduleError(f"Schedule takes a stage-I SparseFunction, got {type(func).__name__}")
        self._initial = func
        self._func = func
        self.history = History(func.script())

    @property
    def func(self) -> SparseFunction:
        """The program as scheduled so far."""
        return self._func

    def get_sparse_iteration(self, name: str) -> str:
        """A handle (the name) of the sparse iteration ``name``, checked to exist."""
        find_iteration(self._func, name)
        return name

    def iterations(self) -> list[str]:
        """Names of every sparse iteration."""
        return iteration_names(self._func)

    def _apply(self, primitive: str, iteration: str, **kwargs: Any) -> None:
        plain = {k: _plain(v) for k, v in kwargs.items()}
        self._func = STAGE1_PRIMITIVES[primitive](self._func, iteration, **plain)
        self.history.steps.append(Step(primitive, {"iteration": iteration, **plain}, 1, self._func.script()))

    def sparse_reorder(self, iteration: str, order: Sequence[Any]) -> None:
        """Reorder the axes of a sparse iteration (parents stay before their children)."""
        self._apply("sparse_reorder", iteration, order=list(order))

    def sparse_fuse(self, iteration: str, axes: Sequence[Any]) -> None:
        """Fuse consecutive parent→child axes of a sparse iteration into one loop."""
        self._apply("sparse_fuse", iteration, axes=list(axes))

    def annotate_sparse_iter(self, iteration: str, key: str, value: Any) -> None:
        """Set an attribute of a sparse iteration."""
        self._apply("annotate_sparse_iter", iteration, key=key, value=value)


def replay(func: SparseFunction, history: History) -> SparseFunction:
    """Apply a recorded history's primitives to ``func`` again; the result equals the original's."""
    for step in history.steps:
        if step.stage != 1 or step.primitive not in STAGE1_PRIMITIVES:
            raise ScheduleError(f"cannot replay step '{step.primitive}' at stage {step.stage}")
        args = dict(step.args)
        iteration = args.pop("iteration")
        func = STAGE1_PRIMITIVES[step.primitive](func, iteration, **args)
    return func
