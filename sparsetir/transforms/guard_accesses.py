"""guard_accesses, the end of FlattenSparseBuffers: no stage-III access can leave its array.

Stage I guards what it must while lowering (``sparse_iter/positions.py``), but a stage-II program
can also come from text, where a loop may run past its axis (``for i in range(n + 3)``) or an
index may be anything (``A[vi + 1]``, ``A[1000000]``). A compiled kernel must never read or
write outside the arrays it is given, so after flattening every access to an array is checked:

- what is known: the range of every loop, the value of every block variable (its binding), the
  block predicates, ``if`` and ``while`` conditions on the way in, and what the argument checks
  establish before a kernel runs (``runtime/constraints.py``): an indptr (or a row-partition
  array) lies in ``[0, total]``, an indices array in ``[0, length)``;
- an index TVM's analyzer proves inside ``[0, extent)`` of its dimension (the symbolic interval
  of the index, then each structure load in its ends replaced by the range the checks give it)
  stays as it is: the accesses of rows and columns stage I lowers, and those a TVM schedule
  keeps inside its split or fused loops;
- any other access to one of the caller's arrays (a binary search's probe, a position map's
  entry, an index past an axis) is guarded, with the semantics stage I gives an access outside
  an axis: a read is 0 and a write is dropped.

The kernels' hot loops prove; a guarded access is one compare (``sparsetir show --stage 3``
prints the guards). An index holding guarded loads nested two deep is guarded without trying
(``MAX_NESTED_CHOICES``): TVM's analyzer splits cases at every level, for seconds, and proves none.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from .._tvm import TensorLoad, Var, s_tir, structural_equal, structural_map, structural_walk, tirx, tvm
from ..ir.analysis import contains
from .sparse_iter.context import conjunction, dtype_of, substitute

Range = tvm.ir.Range


@dataclass(frozen=True)
class ValueRange:
    """What the argument checks establish about an array's elements: ``low <= x <= high``."""

    low: Any
    high: Any


def guard_accesses(prim: "tirx.PrimFunc", values: dict[Any, ValueRange],
                   allocated: Sequence[Any] = ()) -> "tirx.PrimFunc":
    """``prim`` (stage III) with every access to a parameter array not provably inside it guarded.

    ``values`` maps array parameters (their vars) to the range their elements are checked to lie
    in before the kernel runs (structure arrays); other arrays' contents are unknown. Buffers
    the function allocates itself are left to TVM, which sizes a block's allocation to the
    region its accesses cover (``CompactBufferAllocation``); guarding them measured slower (a
    branch inside vectorized loops) and disagreed with caches whose shapes TVM narrows. The
    exceptions are ``allocated``: sparse buffers allocated by a variable axis's total (its nnz),
    indexed through an indptr like the caller's arrays, so guarded like them."""
    params = [p for p in prim.params if isinstance(p.ty, tirx.BufferType)]
    return prim.with_body(_Guard(values, params + list(allocated)).stmt(prim.body))


class _Guard:
    def __init__(self, values: dict[Any, ValueRange], arrays: list[Any]):
        self.values = values
        self.arrays = arrays  # the caller's arrays: the ones guarded
        self.loops: list[tuple[Var, Any, Any]] = []  # var, min, extent (substituted)
        self.subst: list[tuple[Var, Any]] = []  # block variable, its binding (substituted)
        self.conditions: list[Any] = []

    # --- statements ---------------------------------------------------------------------

    def stmt(self, s: Any) -> Any:
        if isinstance(s, tirx.SeqStmt):
            return tirx.SeqStmt([self.stmt(x) for x in s.seq], span=s.span)
        if isinstance(s, tirx.For):
            lo, extent = self.expr(s.min), self.expr(s.extent)
            self.loops.append((s.loop_var, self._sub(lo), self._sub(extent)))
            try:
                body = self.stmt(s.body)
            finally:
                self.loops.pop()
            return tirx.For(s.loop_var, lo, extent, s.kind, body, s.thread_binding, s.annotations,
                            getattr(s, "step", None), span=s.span)
        if isinstance(s, s_tir.SBlockRealize):
            values = [self.expr(v) for v in s.iter_values]
            predicate = self.expr(s.predicate)
            bindings = [(iv.var, self._sub(v)) for iv, v in zip(s.block.iter_vars, values)]
            self.subst.extend(bindings)
            self.conditions.append(self._sub(predicate))
            try:
                block = self.block(s.block)
            finally:
                self.conditions.pop()
                del self.subst[len(self.subst) - len(bindings):]
            return s_tir.SBlockRealize(values, predicate, block, span=s.span)
        if isinstance(s, tirx.IfThenElse):
            cond = self.expr(s.condition)
            then = self._under(self._sub(cond), s.then_case)
            other = self._under(tirx.Not(self._sub(cond)), s.else_case) if s.else_case is not None else None
            return tirx.IfThenElse(cond, then, other, span=s.span)
        if isinstance(s, tirx.While):
            cond = self.expr(s.condition)
            return tirx.While(cond, self._under(self._sub(cond), s.body), span=s.span)
        if isinstance(s, tirx.BufferStore):
            return self.store(tirx.BufferStore(s.buffer, self.expr(s.value), [self.expr(i) for i in s.indices],
                                               span=s.span))
        if isinstance(s, tirx.Evaluate):
            return tirx.Evaluate(self.expr(s.value), span=s.span)
        # Anything else: its accesses are checked with what is known here (nothing of its own);
        # the map goes bottom-up, so a store meets its value and indices already checked.
        return structural_map(s, [(TensorLoad, self.load), (tirx.BufferStore, self.store)])

    def _under(self, cond: Any, body: Any) -> Any:
        self.conditions.append(cond)
        try:
            return self.stmt(body)
        finally:
            self.conditions.pop()

    def block(self, b: Any) -> Any:
        init = self.stmt(b.init) if b.init is not None else None
        body = self.stmt(b.body)
        return s_tir.SBlock(b.iter_vars, b.reads, b.writes, b.name_hint, body, init,
                            b.alloc_buffers, b.match_buffers, b.annotations, b.span)

    def store(self, s: Any) -> Any:
        """``s`` (its value and indices already checked), guarded unless its indices prove."""
        cond = self._inside(s.buffer, list(s.indices))
        return s if cond is None else tirx.IfThenElse(cond, s, None, span=s.span)

    # --- expressions --------------------------------------------------------------------

    def expr(self, e: Any) -> Any:
        """``e`` with its loads guarded (inner loads first: an index may itself be a load)."""
        if e is None or not contains(e, lambda n: isinstance(n, TensorLoad)):
            return e
        return structural_map(e, [(TensorLoad, self.load)])

    def load(self, load: Any) -> Any:
        cond = self._inside(load.source, list(load.indices))
        if cond is None:
            return load
        return tirx.if_then_else(cond, load, tirx.const(0, dtype_of(load)))

    # --- the proof ----------------------------------------------------------------------

    def _sub(self, e: Any) -> Any:
        return substitute(e, self.subst) if e is not None else e

    def _inside(self, buffer: Any, indices: list[Any]) -> Optional[Any]:
        """None when every index is provably inside its dimension (or ``buffer`` is not one of
        the caller's arrays), else the condition that it is."""
        if not any(buffer.same_as(a) for a in self.arrays):
            return None
        shape = list(buffer.ty.shape)
        if len(shape) != len(indices):
            return None  # not a flat access of this array (TVM's own checks refuse it)
        missing = []
        for index, extent in zip(indices, shape):
            dtype = dtype_of(index)
            zero = tirx.const(0, dtype)
            extent = extent if dtype_of(extent) == dtype else tirx.Cast(dtype, extent)
            low, high = self._proves(index, zero, extent)
            if not low:
                missing.append(index >= zero)
            if not high:
                missing.append(index < extent)
        return conjunction(missing) if missing else None

    def _proves(self, index: Any, zero: Any, extent: Any) -> tuple[bool, bool]:
        """Whether ``0 <= index`` and ``index < extent`` hold wherever the access runs.

        Loads become opaque variables (one per distinct load, so the ``indptr[r]`` of an index
        and of its loop's extent are one variable); the index's interval over the loops then
        has symbolic ends in which a row's ``indptr[r+1] - indptr[r]`` cancels; last, the
        variables of checked arrays take the range the checks give them. Inside a loop its
        extent is positive, which settles the signs of symbolic strides (``vi * c + vj``)."""
        if _nested_choices(index) > MAX_NESTED_CHOICES:
            return False, False  # guarded: a proof over such choices takes TVM seconds, and fails
        opaque = _Opaque()
        facts = [opaque(cond) for cond in self.conditions if not _is_true(cond)]
        analyzer = tvm.sym.Analyzer()
        for var, lo, ext in self.loops:
            analyzer.bind(var, Range.from_min_extent(opaque(lo), opaque(ext)))
            facts.append(opaque(ext) > tirx.const(0, dtype_of(ext)))
        index, extent = opaque(self._sub(index)), opaque(extent)
        with ExitStack() as scope:
            for fact in facts:
                scope.enter_context(analyzer.constraint_scope(fact))
            low = _can_prove(analyzer, index >= zero)
            high = _can_prove(analyzer, index < extent)
            if low and high:
                return True, True
            interval = analyzer.int_set(index)
            if not low:
                low = self._bounded(opaque, facts, lambda s: s.min_value >= zero,
                                    analyzer.simplify(interval.min_value))
            if not high:
                high = self._bounded(opaque, facts, lambda s: s.max_value < extent,
                                     analyzer.simplify(interval.max_value))
        return low, high

    def _bounded(self, opaque: "_Opaque", facts: list, holds: Any, end: Any) -> bool:
        """Whether ``holds`` is true of the interval of ``end`` (an end of the index's interval)
        with the variable of every load of a checked array in the range the checks give its
        elements (other loads stay unknown)."""
        analyzer = tvm.sym.Analyzer()
        for var, source in opaque.loads:
            known = self._values_of(source)
            if known is None:
                continue
            dtype = dtype_of(var)
            low = known.low if dtype_of(known.low) == dtype else tirx.Cast(dtype, known.low)
            high = known.high if dtype_of(known.high) == dtype else tirx.Cast(dtype, known.high)
            analyzer.bind(var, Range.from_min_extent(low, analyzer.simplify(high - low + 1)))
        with ExitStack() as scope:
            for fact in facts:
                scope.enter_context(analyzer.constraint_scope(fact))
            try:
                return _can_prove(analyzer, holds(analyzer.int_set(end)))
            except Exception:  # noqa: BLE001 - an infinite interval end forms no comparison
                return False

    def _values_of(self, buffer: Any) -> Optional[ValueRange]:
        for var, known in self.values.items():
            if var.same_as(buffer):
                return known
        return None


class _Opaque:
    """Replaces loads by variables, structurally equal loads by the same one."""

    def __init__(self):
        self.loads: list[tuple[Var, Any]] = []  # variable, the array it was loaded from
        self._seen: list[tuple[Any, Var]] = []
        self._analyzer = tvm.sym.Analyzer()

    def __call__(self, e: Any) -> Any:
        if e is None or not contains(e, lambda n: isinstance(n, TensorLoad)):
            return e
        return structural_map(e, [(TensorLoad, self._var)])

    def _var(self, load: Any) -> Any:
        # Canonical indices, so that ``indptr[vi + 0]`` (a unit block variable bound to 0) and
        # ``indptr[vi]`` are one load.
        load = tirx.BufferLoad(load.source, [self._analyzer.simplify(i) for i in load.indices])
        for seen, var in self._seen:
            if structural_equal(seen, load, map_free_vars=False):
                return var
        var = tirx.Var(f"load{len(self._seen)}", dtype_of(load))
        self._seen.append((load, var))
        self.loads.append((var, load.source))
        return var


#: An index holding ``if_then_else`` choices nested deeper than this (a gather through a guarded
#: gather: ``X[U_indices[E_indices[...]]]``, each load guarded) is guarded without a proof: TVM's
#: analyzer splits cases at every level, and a scheduled hypergraph spent 5 s in 57 such proofs,
#: none of which it could make.
MAX_NESTED_CHOICES = 1


def _nested_choices(e: Any) -> int:
    """How deeply ``if_then_else`` calls nest in ``e``."""
    if _is_choice(e):
        return 1 + max(_nested_choices(a) for a in e.args)
    deepest, first = [0], [True]

    def visit(node: Any) -> bool:
        if first[0]:  # ``e`` itself
            first[0] = False
            return True
        if _is_choice(node):
            deepest[0] = max(deepest[0], _nested_choices(node))
            return False
        return True

    structural_walk(e, visit)
    return deepest[0]


def _is_choice(e: Any) -> bool:
    return isinstance(e, tvm.ir.Call) and isinstance(e.op, tvm.ir.Op) and str(e.op.name) == "prim.if_then_else"


def _is_true(cond: Any) -> bool:
    return isinstance(cond, tirx.IntImm) and int(cond.value) == 1


def _can_prove(analyzer: Any, cond: Any) -> bool:
    try:
        return bool(analyzer.can_prove(cond))
    except Exception:  # noqa: BLE001 - a condition the analyzer cannot form is not proved
        return False
