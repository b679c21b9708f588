"""Stage II: a TVM ``s_tir`` PrimFunc in position space, plus the sparse structure beside it.

The body is ordinary schedulable TensorIR (loops, ``T.sblock``s, buffer loads and stores whose
indices are *positions*). What TIR cannot say — which axes a buffer is laid out by, which
parameter holds an axis's indptr — lives in two PrimFunc attributes, ``sparsetir.axes`` and
``sparsetir.buffers`` (see ``../shared/notes/stage2.md`` §1). ``Stage2Function`` keeps the
function without those attributes next to the metadata, so that structural equality sees the
parameters (definitions) before the metadata that refers to them.
"""

from __future__ import annotations

import keyword
from typing import Any, NamedTuple, Optional

from .._tvm import Expr, Object, Span, Var, field, py_class, tirx
from .axis import Axis
from .text import form

STAGE_II_LEVEL = 1
AXES_ATTR = "sparsetir.axes"
BUFFERS_ATTR = "sparsetir.buffers"
PARAMS_ATTR = "sparsetir.param_names"
SPANS_ATTR = "sparsetir.spans"
#: names of the sparse axes whose rows the kernel relies on being sorted: it binary-searches their
#: coordinates or merges their rows (``T.intersect`` / ``T.union``); the call checks them
SEARCHED_ATTR = "sparsetir.searched_axes"
#: [boundaries array, chunk count, extent of the partitioned loop] per ``partition_rows``, and a
#: fourth entry when the boundaries balance the row lengths of an indptr parameter (its name)
PARTITIONS_ATTR = "sparsetir.partitions"
#: on a stage-III function: {array parameter: the other shape a caller may pass it in}, where an
#: array laid out by a sparse fixed axis (ELL) is accepted both with the axes up to that axis
#: collapsed to one dimension and with one dimension per axis (``flatten_sparse_buffers``); each
#: extent is the text of an expression over the scalar parameters (``"m * nnz_cols"``): variables
#: in a function's attributes would be compared before the parameters that define them
ALT_SHAPES_ATTR = "sparsetir.alt_shapes"
#: on a stage-III function: {size variable: indptr parameter}, for each variable axis that declares
#: no nnz (``T.dense_variable(I, n, indptr)``): the length of the arrays laid out by it, bound by
#: them, which the call checks to be the last entry of the indptr (``flatten_sparse_buffers``)
NNZ_FROM_ATTR = "sparsetir.nnz_from"


class Partition(NamedTuple):
    """One ``partition_rows`` entry of ``PARTITIONS_ATTR``: the boundaries' parameter, the chunk
    count's, the extent of the partitioned loop (a number or a scalar parameter) and the indptr
    parameter whose row lengths the boundaries balance (None: rows weigh the same)."""

    parts: str
    count: str
    extent: str
    weights: Optional[str] = None


def partitions_of(attrs: Any) -> list[Partition]:
    """The ``partition_rows`` entries of a function's attributes."""
    if attrs is None or PARTITIONS_ATTR not in attrs:
        return []
    return [Partition(*(str(x) for x in entry)) for entry in attrs[PARTITIONS_ATTR]]


def func_attr_problem(key: str, value: Any, handles: set, scalars: set) -> Optional[str]:
    """What is wrong with attribute ``key`` of a script's ``T.func_attr``, or None.

    ``global_symbol`` names the compiled function, and the printed script's ``def``: an
    identifier. The ``sparsetir.*`` keys are sparsetir's own bookkeeping, read by its passes and
    by ``build``; a script may carry them (the printer writes them) in the shapes they are
    written in, naming the function's own parameters (``handles``, ``scalars``: their names).
    """
    if key == "global_symbol":
        if not (isinstance(value, str) and value.isidentifier() and not keyword.iskeyword(value)):
            return f"global_symbol names the compiled function and must be a Python identifier, got {value!r}"
        return None
    if not key.startswith("sparsetir."):
        return None
    if key == SPANS_ATTR:
        ok = isinstance(value, dict) and all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in value.values())
        return None if ok else f'"{key}" maps block names to lists of "file:line" strings, got {value!r}'
    if key == SEARCHED_ATTR:
        ok = isinstance(value, list) and all(isinstance(x, str) for x in value)
        return None if ok else f'"{key}" is a list of axis names, got {value!r}'
    if key == PARTITIONS_ATTR:
        shape = f'"{key}" is a list of [boundaries handle, chunk count parameter, extent] triples'
        if not isinstance(value, list):
            return f"{shape}, got {value!r}"
        for entry in value:
            if not (isinstance(entry, list) and len(entry) in (3, 4) and all(isinstance(x, (str, int)) for x in entry)):
                return f"{shape}, got the entry {entry!r}"
            parts, count, extent = (str(x) for x in entry[:3])
            if len(entry) == 4 and str(entry[3]) not in handles:
                return (f"{shape} (a fourth entry names the indptr the boundaries balance): "
                        f"{str(entry[3])!r} is not a handle or buffer parameter")
            if parts not in handles:
                return f"{shape}: {parts!r} is not a handle or buffer parameter"
            if count not in scalars:
                return f"{shape}: {count!r} is not a scalar parameter"
            if not (extent.isdigit() or extent in scalars):
                return f"{shape}: the extent {extent!r} is neither a number nor a scalar parameter"
        return None
    return f'"{key}" is not an attribute a script sets (sparsetir keeps "sparsetir.*" keys for itself)'

VALUE = "value"
INDPTR = "indptr"
INDICES = "indices"
ALLOCATED = "alloc"


@py_class("sparsetir.Stage2Buffer", frozen=True)
class Stage2Buffer(Object):
    """A position-space buffer of stage II and the axes that lay it out.

    ``buffer`` is the PrimFunc parameter (or root allocation) holding the data; ``handle_name``
    is the stage-I handle it was matched to ("" for ``alloc_sparse_buffer``); ``role`` says
    whether it holds values, an axis's indptr or an axis's indices.
    """

    buffer: Var
    axes: list[Axis]
    handle_name: str
    extra_storage: Optional[Expr]
    role: str
    span: Optional[Span] = field(default=None, structural_eq="ignore")

    @property
    def name(self) -> str:
        """The buffer's name in the stage-II script."""
        return self.buffer.name

    @property
    def dtype(self) -> str:
        """Element data type."""
        return str(self.buffer.ty.dtype)

    def __repr__(self) -> str:
        return f"Stage2Buffer({self.name}, [{', '.join(a.name for a in self.axes)}], {self.role})"


@py_class("sparsetir.Stage2Function", frozen=True)
class Stage2Function(Object):
    """A stage-II function: ``prim`` (the PrimFunc without the metadata attributes), axes, buffers.

    ``func`` is the PrimFunc with the metadata attached, the form TVM's ``Schedule`` takes;
    ``Stage2Function.from_func`` splits a (scheduled) PrimFunc back into this wrapper.
    """

    prim: tirx.PrimFunc
    axes: list[Axis]
    buffers: list[Stage2Buffer]
    param_names: list[str]

    @property
    def func(self) -> tirx.PrimFunc:
        """The PrimFunc with ``sparsetir.*`` metadata attributes, ready for ``tvm.s_tir.Schedule``."""
        return (
            self.prim.with_attr(AXES_ATTR, list(self.axes))
            .with_attr(BUFFERS_ATTR, list(self.buffers))
            .with_attr(PARAMS_ATTR, list(self.param_names))
        )

    @staticmethod
    def from_func(func: Any) -> "Stage2Function":
        """Wrap a stage-II PrimFunc carrying the metadata attributes (e.g. ``sch.mod["main"]``)."""
        if hasattr(func, "functions") and not isinstance(func, tirx.PrimFunc):
            func = func["main"]
        attrs = func.attrs
        if attrs is None or AXES_ATTR not in attrs:
            raise ValueError("not a stage-II function: no sparsetir.axes attribute")
        axes = list(attrs[AXES_ATTR])
        buffers = list(attrs[BUFFERS_ATTR])
        names = [str(n) for n in attrs[PARAMS_ATTR]]
        prim = func.without_attr(AXES_ATTR).without_attr(BUFFERS_ATTR).without_attr(PARAMS_ATTR)
        return Stage2Function(prim, axes, buffers, names)

    @property
    def name(self) -> str:
        """The function's global symbol."""
        attrs = self.prim.attrs
        return str(attrs["global_symbol"]) if attrs is not None and "global_symbol" in attrs else "main"

    def buffer(self, name: str) -> Stage2Buffer:
        """The stage-II buffer called ``name``."""
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(f"{self.name} has no stage-II buffer {name!r}")

    def axis(self, name: str) -> Axis:
        """The axis called ``name``."""
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(f"{self.name} has no axis {name!r}")

    def script(self) -> str:
        """The stage-II script; ``sparsetir.parse`` reads it back to an equal function."""
        return form("print_stage2")(self)

    def _structural_key(self) -> "Stage2Function":
        return self

    def __repr__(self) -> str:
        return f"Stage2Function({self.name})"

    def __str__(self) -> str:
        return self.script()
