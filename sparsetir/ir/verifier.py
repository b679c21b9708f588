"""The stage-I verifier: checks a ``SparseFunction`` is a valid program.

It runs after parsing and after every stage-I pass and schedule step, so IR built by code (not
only by the parser) is held to the same rules. Errors point at the span of the offending node
(a literal carries its own span, so a bad extent is pointed at, not just its declaration).
"""

from __future__ import annotations

import linecache
from typing import Any, Optional

from .._tvm import Span, TensorLoad, Var, structural_walk, tirx
from ..errors import VerifyError
from .axis import INDEX_DTYPES, MERGE_OPS, AxisKind, AttachedAxis, Axis, FusedAxis, MergedAxis, after_sibling
from .buffer import SparseBuffer
from .assembly import assembly_problem
from .coiteration import child_of_union_problem, merge_problem, union_store_problem
from .function import STAGE_I_LEVEL, SparseFunction
from .iteration import SparseIteration

#: The largest literal extent or coordinate (int32, whatever the axis's idtype).
MAX_LITERAL_EXTENT = 2**31 - 1


def verify(func: SparseFunction) -> SparseFunction:
    """Raise ``VerifyError`` at the first rule ``func`` breaks; return it unchanged otherwise."""
    _Verifier(func).run()
    return func


def verify_lowerable(func: SparseFunction) -> SparseFunction:
    """Raise ``VerifyError`` where a valid ``func`` uses what lowering does not support yet.

    Checked before lowering starts, so the error points at the script rather than surfacing
    from TVM. Today that is one rule: a buffer is laid out from the root axis down. Positions
    below a root are stored per row of the ancestors (an indptr or indices array is indexed by
    exactly the ancestors' positions, and the values of a sparse prefix are flattened through
    them), so an axis with a parent must come right after its own chain of ancestors:
    ``(K, I, J)`` or ``(I, K, J)`` with ``J`` under ``I`` are refused. One exception: a dense
    variable axis may come after a *sibling* (``axis.after_sibling``), a batch's ``(B, I, IJ)``,
    whose positions under each row of the parent are split evenly among the sibling's.
    """
    for buf in func.buffers:
        axes = list(buf.axes)
        for k, axis in enumerate(axes):
            ancestors = axis.ancestors()
            if after_sibling(axes, k) and _same_axes(axes[:k - 1], ancestors):
                continue
            if axis.parent is not None and not _same_axes(axes[:k], ancestors):
                chain = ", ".join(a.name for a in ancestors + [axis])
                raise _fail(
                    f"buffer '{buf.name}' must be laid out from the root axis down to be lowered: axis '{axis.name}' "
                    f"must come right after its ancestors, as ({chain}, ...), with no other axis before or between them",
                    buf.span,
                )
    return func


def verify_extents(entity: Axis | SparseBuffer) -> None:
    """Raise ``VerifyError`` at a literal extent of one declaration (an axis's length, nnz and
    nnz_cols; a buffer's extra_storage) that is negative or beyond int32. Stage II declares axes
    and buffers as stage I does and is held to this rule of ``verify`` through here."""
    if isinstance(entity, Axis):
        for what, extent in (("length", entity.length), ("nnz", entity.nnz), ("nnz_cols", entity.nnz_cols)):
            _check_extent(extent, f"the {what} of axis '{entity.name}'", entity.span)
    elif entity.extra_storage is not None:
        _check_extent(entity.extra_storage, f"the extra_storage of buffer '{entity.name}'", entity.span)


def _check_extent(expr: Any, what: str, span: Optional[Span]) -> None:
    """A literal extent is a non-negative int32 (what the lowered loops count in)."""
    value = _literal(expr)
    if value is None:
        return
    if value < 0:
        raise _fail(f"{what} is {value}; an extent cannot be negative", _span_of(expr, span))
    if value > MAX_LITERAL_EXTENT:
        raise _fail(f"{what} is {value}, beyond the largest extent {MAX_LITERAL_EXTENT} (int32)", _span_of(expr, span))


def _fail(message: str, span: Optional[Span]) -> VerifyError:
    if span is None:
        return VerifyError(message)
    name = str(span.source_name.name) if span.source_name is not None else "<script>"
    text = linecache.getline(name, span.line) or None
    return VerifyError(message, name, span.line, span.column, text, span.end_column if span.end_line == span.line else None)


def _span_of(node: Any, fallback: Optional[Span]) -> Optional[Span]:
    span = getattr(node, "span", None)
    return span if isinstance(span, Span) else fallback


def _entry_span(entry: Any, it: SparseIteration) -> Optional[Span]:
    """Where an entry of an iteration's axes is written (a plain axis entry carries its
    declaration's span, not this use's: then the iteration's)."""
    return (entry.span if isinstance(entry, (FusedAxis, AttachedAxis, MergedAxis)) else None) or it.span


def _literal(expr: Any) -> Optional[int]:
    """The value of an integer literal, else None."""
    if isinstance(expr, tirx.IntImm) and str(expr.ty.dtype) != "bool":
        return int(expr.value)
    return None


def _same_axes(a: list[Axis], b: list[Axis]) -> bool:
    return len(a) == len(b) and all(x.same_as(y) for x, y in zip(a, b))


def _vars_in(expr: Any) -> list[Var]:
    found: list[Var] = []

    def visit(node: Any) -> bool:
        if isinstance(node, Var):
            found.append(node)
        return True

    structural_walk(expr, visit)
    return found


class _Verifier:
    def __init__(self, func: SparseFunction):
        self.func = func
        self.params = {p.name: p for p in func.params}
        self.axes: dict[str, Axis] = {}
        self.buffers: dict[Any, SparseBuffer] = {}
        self.iteration_names: set[str] = set()
        self.handle_roles: dict[str, str] = {}  # handle name -> "indptr", "indices" or "data"
        self.unions: list[tuple[Var, MergedAxis]] = []  # the T.union iterators around a statement

    def run(self) -> None:
        level = self.func.attrs.get("sparse_tir_level") if self.func.attrs else None
        if level is not None and level != STAGE_I_LEVEL:
            raise _fail(f"a stage-I function has sparse_tir_level {STAGE_I_LEVEL}, not {level}", self.func.span)
        names = [p.name for p in self.func.params]
        for name in names:
            if names.count(name) > 1:
                raise _fail(f"parameter '{name}' appears twice", self.func.span)
        for axis in self.func.axes:
            self.axis(axis)
        for buf in self.func.buffers:
            self.buffer(buf)
        for stmt in self.func.body:
            self.statement(stmt, iterated=[], reduce_vars=[], in_iteration=False)
        problem = assembly_problem(self.func)
        if problem is not None:
            raise _fail(*problem)

    def _param(self, var: Optional[Var], what: str, span: Optional[Span]) -> None:
        if var is None:
            return
        param = self.params.get(var.name)
        if param is None or not param.same_as(var):
            raise _fail(f"{what} '{var.name}' is not a parameter of {self.func.name}", span)
        if str(var.ty) != "T.handle":
            raise _fail(f"{what} '{var.name}' must be a T.handle parameter", span)

    def axis(self, axis: Axis) -> None:
        if axis.name in self.axes:
            raise _fail(f"axis '{axis.name}' is defined twice", axis.span)
        if AxisKind.of_construct(axis.kind_name) is None:
            raise _fail(f"axis '{axis.name}' has unknown kind {axis.kind_name!r}", axis.span)
        if axis.idtype not in INDEX_DTYPES:
            raise _fail(f"axis '{axis.name}' has index dtype {axis.idtype!r}; use int32 or int64", axis.span)
        if (axis.parent is not None) != axis.kind.has_parent:
            need = "needs a parent axis" if axis.kind.has_parent else "has no parent"
            raise _fail(f"axis '{axis.name}' of kind {axis.kind.value} {need}", axis.span)
        if axis.parent is not None:
            known = self.axes.get(axis.parent.name)
            if known is None or not known.same_as(axis.parent):
                raise _fail(f"the parent '{axis.parent.name}' of axis '{axis.name}' must be defined before it", axis.span)
        if axis.is_variable and axis.indptr is None:
            raise _fail(f"variable axis '{axis.name}' needs an indptr handle", axis.span)
        if axis.is_sparse and axis.indices is None:
            raise _fail(f"sparse axis '{axis.name}' needs an indices handle", axis.span)
        self._param(axis.indptr, f"indptr of axis '{axis.name}'", axis.span)
        self._param(axis.indices, f"indices of axis '{axis.name}'", axis.span)
        self._role(axis.indptr, "indptr", f"axis '{axis.name}'", axis.span)
        self._role(axis.indices, "indices", f"axis '{axis.name}'", axis.span)
        self._check_scalars(axis.length, axis.span)
        verify_extents(axis)
        self.axes[axis.name] = axis

    def _role(self, var: Optional[Var], role: str, user: str, span: Optional[Span]) -> None:
        """A handle is one kind of array: the indptr of axes, their indices, or a buffer's values."""
        if var is None:
            return
        previous = self.handle_roles.setdefault(var.name, role)
        if previous != role:
            raise _fail(f"handle '{var.name}' is already the {previous} array of another declaration; it cannot also be the {role} array of {user}", span)

    def _check_scalars(self, expr: Any, span: Optional[Span]) -> None:
        for var in _vars_in(expr):
            param = self.params.get(var.name)
            if param is None or not param.same_as(var):
                raise _fail(f"'{var.name}' in a length is not a scalar parameter", span)

    def buffer(self, buf: SparseBuffer) -> None:
        if any(b.name == buf.name for b in self.buffers.values()):
            raise _fail(f"sparse buffer '{buf.name}' is defined twice", buf.span)
        seen: list[Axis] = []
        for axis in buf.axes:
            known = self.axes.get(axis.name)
            if known is None or not known.same_as(axis):
                raise _fail(f"axis '{axis.name}' of buffer '{buf.name}' is not defined", buf.span)
            if axis.parent is not None and not any(a.same_as(axis.parent) for a in seen):
                raise _fail(
                    f"axis '{axis.name}' of buffer '{buf.name}' depends on '{axis.parent.name}', which must come before it in the buffer's axes",
                    buf.span,
                )
            seen.append(axis)
        if len(buf.buffer.ty.shape) != len(buf.axes):
            raise _fail(f"buffer '{buf.name}' has a shape of rank {len(buf.buffer.ty.shape)} for {len(buf.axes)} axes", buf.span)
        if buf.handle is not None:
            self._param(buf.handle, f"data of buffer '{buf.name}'", buf.span)
            self._role(buf.handle, "data", f"buffer '{buf.name}'", buf.span)
        verify_extents(buf)
        self.buffers[buf.buffer] = buf

    def statement(self, stmt: Any, iterated: list[Axis], reduce_vars: list[Var], in_iteration: bool) -> None:
        if isinstance(stmt, SparseIteration):
            self.iteration(stmt, iterated, reduce_vars)
        elif isinstance(stmt, tirx.BufferStore):
            if not in_iteration:
                raise _fail("a buffer store must be inside a sparse iteration", stmt.span)
            self.store(stmt, reduce_vars)
        elif isinstance(stmt, tirx.Evaluate):
            self._loads(stmt.value, stmt.span)
        else:
            raise _fail(f"{type(stmt).__name__} is not a stage-I statement", getattr(stmt, "span", None))

    def iteration(self, it: SparseIteration, iterated: list[Axis], reduce_vars: list[Var]) -> None:
        if it.name in self.iteration_names:
            raise _fail(f"two sparse iterations are named '{it.name}'", it.span)
        self.iteration_names.add(it.name)
        flat = it.flat_axes()
        if len(it.kinds) != len(flat) or len(it.iter_vars) != len(flat):
            raise _fail(f"sparse iteration '{it.name}' has {len(flat)} axes, {len(it.kinds)} kinds and {len(it.iter_vars)} iterators", it.span)
        if any(k not in "SR" for k in it.kinds):
            raise _fail(f"sparse iteration '{it.name}' has kinds {it.kinds!r}; each must be S or R", it.span)
        visible = list(iterated)
        unions: list[tuple[Var, MergedAxis]] = []
        position = 0
        for entry in it.axes:
            group = entry.axes if isinstance(entry, (FusedAxis, MergedAxis)) else [entry.axis if isinstance(entry, AttachedAxis) else entry]
            if isinstance(entry, MergedAxis):
                self._merged(entry, it)
                if entry.is_union:
                    unions.append((it.iter_vars[position], entry))
            position += 1 if isinstance(entry, MergedAxis) else len(group)
            for axis in group:
                if self.axes.get(axis.name) is None or not self.axes[axis.name].same_as(axis):
                    raise _fail(f"axis '{axis.name}' in sparse iteration '{it.name}' is not defined", it.span)
                if any(v.same_as(axis) for v in visible):
                    raise _fail(f"axis '{axis.name}' is iterated twice", it.span)
                parent = entry.new_parent if isinstance(entry, AttachedAxis) else axis.parent
                union = next((u for _, u in self.unions + unions if parent is not None and u.holds(parent)), None)
                if union is not None:
                    raise _fail(child_of_union_problem(axis, union), _entry_span(entry, it))
                if parent is not None and not any(v.same_as(parent) for v in visible):
                    raise _fail(
                        f"axis '{axis.name}' depends on '{parent.name}', which must be iterated before it (earlier in this T.sp_iter or in an enclosing one)",
                        # A plain axis entry carries its declaration's span, not this use's.
                        _entry_span(entry, it),
                    )
                visible.append(axis)
        own_reduce = it.reduce_vars()
        if it.init is not None and not own_reduce:
            raise _fail(f"T.init() in sparse iteration '{it.name}', which has no reduction ('R') iterator", it.span)
        if it.init is not None and not it.init:
            raise _fail(f"the T.init() block of sparse iteration '{it.name}' is empty; leave it out", it.span)
        if not it.body:
            what = "only a T.init() block and no update" if it.init is not None else "an empty body"
            raise _fail(f"sparse iteration '{it.name}' has {what}; its body must store into a buffer (or hold a nested T.sp_iter)", it.span)
        self.unions.extend(unions)  # a store in the init or the body may not go through them
        try:
            self._init(it, reduce_vars, own_reduce)
            for stmt in it.body:
                self.statement(stmt, visible, reduce_vars + own_reduce, in_iteration=True)
        finally:
            del self.unions[len(self.unions) - len(unions):]

    def _init(self, it: SparseIteration, reduce_vars: list[Var], own_reduce: list[Var]) -> None:
        """The stores of the iteration's ``T.init()``: ordinary stores that use no 'R' iterator."""
        for stmt in it.init or []:
            if not isinstance(stmt, tirx.BufferStore):
                raise _fail("a T.init() block may contain only buffer stores", it.span)
            self.store(stmt, reduce_vars + own_reduce)
            used = next((v for v in _vars_in(stmt.value) if any(v.same_as(r) for r in own_reduce)), None)
            if used is not None:
                raise _fail(
                    f"the T.init() of sparse iteration '{it.name}' uses reduction iterator '{used.name}'; an init runs "
                    "once before the reduction, where its 'R' iterators have no value",
                    _span_of(stmt, it.span),
                )

    def _merged(self, entry: MergedAxis, it: SparseIteration) -> None:
        """``T.intersect`` / ``T.union`` built by code is held to the parser's rules."""
        if entry.op not in MERGE_OPS:
            raise _fail(f"a merged axis in sparse iteration '{it.name}' is '{entry.op}', not intersect or union", entry.span or it.span)
        problem = merge_problem(entry.op, list(entry.axes))
        if problem is not None:
            raise _fail(problem[1], entry.span or it.span)

    def store(self, stmt: Any, reduce_vars: list[Var]) -> None:
        buf = self.buffers.get(stmt.buffer)
        if buf is None:
            raise _fail(f"store into '{stmt.buffer.name}', which is not a sparse buffer of {self.func.name}", stmt.span)
        if len(stmt.indices) != len(buf.axes):
            raise _fail(f"sparse buffer '{buf.name}' has {len(buf.axes)} axes but is indexed with {len(stmt.indices)} indices", stmt.span)
        for index in stmt.indices:
            for var in _vars_in(index):
                if any(var.same_as(r) for r in reduce_vars):
                    raise _fail(
                        f"the store into '{buf.name}' is indexed by reduction iterator '{var.name}'; a reduction writes an output that does not depend on its 'R' iterators (make it 'S')",
                        stmt.span,
                    )
        self._coordinates(buf, stmt.indices, stmt.span)
        refused = union_store_problem(buf.name, list(buf.axes), list(stmt.indices), self.unions)
        if refused is not None:
            raise _fail(refused, stmt.span)
        value_dtype = str(stmt.value.ty.dtype)
        if value_dtype != buf.dtype:
            raise _fail(f"storing a {value_dtype} value into '{buf.name}' of dtype {buf.dtype}", stmt.span)
        self._loads(stmt.value, stmt.span)
        for index in stmt.indices:
            self._loads(index, stmt.span)

    def _loads(self, expr: Any, span: Optional[Span]) -> None:
        loads: list[Any] = []

        def visit(node: Any) -> bool:
            if isinstance(node, TensorLoad):
                loads.append(node)
            return True

        structural_walk(expr, visit)  # errors are raised out here: one raised in a callback would
        for node in loads:  # reach the caller as TVM's RuntimeError
            source = node.source
            buf = self.buffers.get(source)
            if buf is None:
                raise _fail(f"load from '{source.name}', which is not a sparse buffer of {self.func.name}", span)
            if len(node.indices) != len(buf.axes):
                raise _fail(f"sparse buffer '{buf.name}' has {len(buf.axes)} axes but is indexed with {len(node.indices)} indices", getattr(node, "span", None) or span)
            self._coordinates(buf, node.indices, _span_of(node, span))

    def _coordinates(self, buf: SparseBuffer, indices: Any, span: Optional[Span]) -> None:
        """A literal coordinate is a non-negative int32."""
        for axis, index in zip(buf.axes, indices):
            value = _literal(index)
            if value is not None and not 0 <= value <= MAX_LITERAL_EXTENT:
                raise _fail(f"coordinate {value} of axis '{axis.name}' in '{buf.name}' is outside [0, {MAX_LITERAL_EXTENT}]", _span_of(index, span))
