"""Stage-I IR → script text in the RFC's spelling; ``parse`` reads it back to an equal function.

Defaults are left out (``idtype="int32"``, ``sorted=True``, ``scope="global"``) so printed
scripts look like hand-written ones. Names are kept, except that a name which would clash with
one already visible gets a numeric suffix, so IR built by passes always prints unambiguously.
"""

from __future__ import annotations

import json
import keyword
import math
from typing import Any, Callable, Optional

from .._tvm import tirx
from ..errors import SparseTIRError
from ..ir.axis import AttachedAxis, Axis, FusedAxis, MergedAxis
from ..ir.buffer import SparseBuffer
from ..ir.function import SparseFunction
from ..ir.iteration import SparseIteration
from .expr_printer import ExprPrinter

_INDENT = "    "


class NameTable:
    """Unique script names for IR objects, scoped like the script's blocks.

    TVM objects are keyed by their node (``same_as``), not by Python wrapper identity.
    """

    def __init__(self, reserved: tuple[str, ...] = ("T",)):
        self.frames: list[set[str]] = [set(reserved)]
        self.names: dict[Any, str] = {}

    def push(self) -> None:
        self.frames.append(set())

    def pop(self) -> None:
        self.frames.pop()

    def define(self, obj: Any, preferred: str) -> str:
        base = preferred if preferred.isidentifier() and not keyword.iskeyword(preferred) else "v"
        name, k = base, 0
        while any(name in frame for frame in self.frames):
            k += 1
            name = f"{base}_{k}"
        self.frames[-1].add(name)
        self.names[_key(obj)] = name
        return name

    def alias(self, obj: Any, name: str) -> None:
        """Print ``obj`` as ``name`` (already defined for another object)."""
        self.names[_key(obj)] = name

    def __contains__(self, obj: Any) -> bool:
        """Whether ``obj`` has a name (is defined in the printed program so far)."""
        return _key(obj) in self.names

    def __call__(self, obj: Any) -> str:
        name = self.names.get(_key(obj))
        if name is None:
            raise SparseTIRError(f"'{getattr(obj, 'name', obj)}' is used but not defined in the printed program")
        return name


def _key(obj: Any) -> Any:
    handle = getattr(obj, "__chandle__", None)
    return ("node", handle()) if handle is not None else obj


def literal_text(value: Any, alias: str = "T") -> str:
    """A Python literal for an attribute value: str, int, float, bool, TVM constants, lists and
    dicts of them. ``parser`` reads it back to a value of the same type."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return json.dumps(str(value))  # a JSON string is a Python string literal: escapes, quotes, non-ASCII
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return "1e999" if value > 0 else "-1e999"  # Python's spelling of an infinite literal
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, (tirx.IntImm, tirx.FloatImm)):
        return ExprPrinter(lambda v: v.name, alias)(value) if str(value.ty.dtype) != "int32" else f"{alias}.int32({value.value})"
    if hasattr(value, "items"):
        items = ", ".join(f"{literal_text(k, alias)}: {literal_text(v, alias)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, (list, tuple)) or type(value).__name__ == "Array":
        return "[" + ", ".join(literal_text(v, alias) for v in value) + "]"
    raise SparseTIRError(f"cannot print attribute value {value!r} ({type(value).__name__}) as a literal")


def attr_dict_text(attrs: dict[str, Any], alias: str = "T") -> str:
    """``{"key": value, ...}`` with keys sorted, as the parser reads it."""
    items = ", ".join(f"{literal_text(k, alias)}: {literal_text(attrs[k], alias)}" for k in sorted(attrs))
    return "{" + items + "}"


def axis_text(a: Axis, alias: str, expr: Callable[[Any], str], name_of: Callable[[Any], str]) -> str:
    """``T.<kind>(parent, shape, structure arrays...)``: the one printer of axis declarations."""
    tail = "" if a.idtype == "int32" else f', idtype="{a.idtype}"'
    if a.is_sparse and not a.sorted:
        tail += ", sorted=False"
    if a.assembled:
        tail += ", assembled=True"
    args = [name_of(a.parent)] if a.parent is not None else []
    if not a.is_variable:
        args.append(expr(a.length) if a.is_dense else f"({expr(a.length)}, {expr(a.nnz_cols)})")
    else:
        args.append(expr(a.length) if a.nnz is None else f"({expr(a.length)}, {expr(a.nnz)})")
    if a.is_variable and a.is_sparse:
        args.append(f"({name_of(a.indptr)}, {name_of(a.indices)})")
    elif a.is_variable or a.is_sparse:
        args.append(name_of(a.indptr if a.is_variable else a.indices))
    return f"{alias}.{a.kind.value}({', '.join(args)}{tail})"


def sparse_buffer_text(axes: list[Axis], dtype: str, handle: Optional[str], scope: str, extra_storage: Any,
                       alias: str, expr: Callable[[Any], str], name_of: Callable[[Any], str]) -> str:
    """``T.match_sparse_buffer(handle, (axes), dtype, ...)`` or ``T.alloc_sparse_buffer(...)``."""
    names = ", ".join(name_of(a) for a in axes)
    names = f"({names},)" if len(axes) == 1 else f"({names})"
    tail = "" if scope == "global" else f", scope={literal_text(scope, alias)}"
    if extra_storage is not None:
        tail += f", extra_storage={expr(extra_storage)}"
    if handle is None:
        return f'{alias}.alloc_sparse_buffer({names}, "{dtype}"{tail})'
    return f'{alias}.match_sparse_buffer({handle}, {names}, "{dtype}"{tail})'


class FunctionPrinter:
    """Prints one stage-I function."""

    def __init__(self, func: SparseFunction, alias: str = "T"):
        self.func = func
        self.T = alias
        self.names = NameTable((alias,))
        self.expr = ExprPrinter(self.names, alias)
        self.lines: list[str] = []

    def emit(self, depth: int, text: str) -> None:
        self.lines.append(_INDENT * depth + text)

    def run(self) -> str:
        T, f = self.T, self.func
        params = []
        for p in f.params:
            name = self.names.define(p, p.name)
            kind = "handle" if str(p.ty) == "T.handle" else str(p.ty.dtype)
            params.append(f"{name}: {T}.{kind}")
        self.emit(0, f"@{T}.prim_func")
        self.emit(0, f"def {f.name}({', '.join(params)}) -> None:")
        if f.attrs:
            self.emit(1, f"{T}.func_attr({attr_dict_text(dict(f.attrs), T)})")
        for axis in f.axes:
            self.emit(1, f"{self.names.define(axis, axis.name)} = {self.axis_text(axis)}")
        for buf in f.buffers:
            name = self.names.define(buf.buffer, buf.name)
            self.names.alias(buf, name)
            self.emit(1, f"{name} = {self.buffer_text(buf)}")
        for stmt in f.body:
            self.statement(stmt, 1)
        if len(self.lines) == 2:
            self.emit(1, "pass")
        return "\n".join(self.lines) + "\n"

    def axis_text(self, a: Axis) -> str:
        return axis_text(a, self.T, self.expr, self.names)

    def buffer_text(self, b: SparseBuffer) -> str:
        if b.view_of is not None:  # a dense view of another buffer's data (seed 002)
            names = ", ".join(self.names(a) for a in b.axes)
            names = f"({names},)" if len(b.axes) == 1 else f"({names})"
            return f'{self.T}.decl_buffer({names}, "{b.dtype}", data={self.names(b.view_of)}.data)'
        handle = self.names(b.handle) if b.handle is not None else None
        return sparse_buffer_text(list(b.axes), b.dtype, handle, b.scope, b.extra_storage, self.T, self.expr, self.names)

    def statement(self, stmt: Any, depth: int) -> None:
        if isinstance(stmt, SparseIteration):
            self.iteration(stmt, depth)
        elif isinstance(stmt, tirx.BufferStore):
            indices = ", ".join(self.expr(i) for i in stmt.indices)
            self.emit(depth, f"{self.names(stmt.buffer)}[{indices}] = {self.expr(stmt.value)}")
        elif isinstance(stmt, tirx.Evaluate):
            self.emit(depth, f"{self.T}.evaluate({self.expr(stmt.value)})")
        else:
            raise SparseTIRError(f"cannot print statement {type(stmt).__name__} in a stage-I script")

    def entry_text(self, entry: Any) -> str:
        if isinstance(entry, FusedAxis):
            return f"{self.T}.fuse({', '.join(self.names(a) for a in entry.axes)})"
        if isinstance(entry, AttachedAxis):
            return f"{self.T}.attach({self.names(entry.axis)}, {self.names(entry.new_parent)})"
        if isinstance(entry, MergedAxis):
            return f"{self.T}.{entry.op}({', '.join(self.names(a) for a in entry.axes)})"
        return self.names(entry)

    def iteration(self, it: SparseIteration, depth: int) -> None:
        T = self.T
        axes = ", ".join(self.entry_text(e) for e in it.axes)
        self.names.push()
        iters = ", ".join(self.names.define(v, v.name) for v in it.iter_vars)
        self.emit(depth, f'with {T}.sp_iter([{axes}], "{it.kinds}", "{it.name}") as [{iters}]:')
        if it.attrs:
            self.emit(depth + 1, f"{T}.sp_iter_attr({attr_dict_text(dict(it.attrs), T)})")
        if it.init is not None:
            self.emit(depth + 1, f"with {T}.init():")
            for stmt in it.init:
                self.statement(stmt, depth + 2)
            if not it.init:
                self.emit(depth + 2, "pass")
        for stmt in it.body:
            self.statement(stmt, depth + 1)
        if not it.body and not it.attrs and it.init is None:
            self.emit(depth + 1, "pass")
        self.names.pop()


def print_function(func: SparseFunction, alias: str = "T") -> str:
    """The script text of a stage-I function."""
    return FunctionPrinter(func, alias).run()
