"""Programs of every stage in one ``tvm.IRModule``.

TVM 0.27's ``IRModule`` holds ``BaseFunc``s only, and a stage-I ``SparseFunction`` is not one
(TVM refuses it with a type error). So a stage-I function enters a module as a *carrier*: a
``PrimFunc`` with the function's parameters, an empty body (``T.evaluate(0)``) and the
``SparseFunction`` itself as its ``"sparsetir.stage1"`` attribute. Structural equality and
hashing of the module then compare the stage-I functions themselves. Stage-II functions enter as
their ``PrimFunc`` with the sparse metadata attributes (``Stage2Function.func``), stage III as
is. ``function`` gives the program back at its stage; ``sparsetir.build``, the pipeline and the
module passes (``transforms/module_passes.py``) take a carrier wherever they take a program.
"""

from __future__ import annotations

from typing import Any, Mapping

from .._tvm import tirx, tvm
from .function import SparseFunction
from .stage2 import AXES_ATTR, Stage2Function

#: the attribute of a carrier PrimFunc that holds its stage-I function
STAGE1_ATTR = "sparsetir.stage1"


def to_prim_func(func: Any) -> tirx.PrimFunc:
    """The ``PrimFunc`` that stands for ``func`` (stage I, II or III) in an ``IRModule``."""
    if isinstance(func, SparseFunction):
        carrier = tirx.PrimFunc(list(func.params), tirx.Evaluate(tirx.const(0, "int32")))
        return carrier.with_attr({"global_symbol": func.name, STAGE1_ATTR: func})
    if isinstance(func, Stage2Function):
        return func.func
    if isinstance(func, tirx.PrimFunc):
        return func
    raise TypeError(f"an IRModule holds SparseFunctions, Stage2Functions and PrimFuncs, not {type(func).__name__}")


def is_carrier(func: Any) -> bool:
    """Whether ``func`` is a PrimFunc standing for a stage-I function."""
    return isinstance(func, tirx.PrimFunc) and func.attrs is not None and STAGE1_ATTR in func.attrs


def from_prim_func(func: Any) -> Any:
    """The program a module's function stands for: a ``SparseFunction`` for a carrier, a
    ``Stage2Function`` for a stage-II PrimFunc, anything else unchanged."""
    if is_carrier(func):
        return func.attrs[STAGE1_ATTR]
    if isinstance(func, tirx.PrimFunc) and func.attrs is not None and AXES_ATTR in func.attrs:
        return Stage2Function.from_func(func)
    return func


def make_module(functions: Mapping[str, Any]) -> Any:
    """A ``tvm.IRModule`` of programs at any stage, by name."""
    return tvm.IRModule({name: to_prim_func(func) for name, func in functions.items()})


def functions(mod: Any) -> dict[str, Any]:
    """Every program of ``mod`` at its own stage, by name, sorted by name (TVM keeps no order)."""
    found = {gv.name_hint: from_prim_func(func) for gv, func in mod.functions.items()}
    return {name: found[name] for name in sorted(found)}


def function(mod: Any, name: str) -> Any:
    """The program called ``name`` in ``mod``, at its own stage (``mod[name]`` gives the PrimFunc)."""
    return from_prim_func(mod[name])


def by_name(parsed: Any) -> dict[str, Any]:
    """The programs of what ``sparsetir.parse`` gives (one function, a module, or a dict of
    functions and modules), by name, a module's functions in its place."""
    items = parsed.items() if isinstance(parsed, dict) else [(None, parsed)]
    found: dict[str, Any] = {}
    for name, value in items:
        if hasattr(value, "functions"):
            found.update(functions(value))
        else:
            found[name if name is not None else _name(value)] = value
    return found


def _name(func: Any) -> str:
    name = getattr(func, "name", None)
    if isinstance(name, str):
        return name
    attrs = getattr(func, "attrs", None)
    return str(attrs["global_symbol"]) if attrs is not None and "global_symbol" in attrs else "main"
