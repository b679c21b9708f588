"""Binding a loop to GPU threads, or running it in parallel on the CPU, where TVM's own check
is stricter than it needs to be.

TVM's ``bind`` requires the loop's subtree to have "compact dataflow": every block in it must
be a complete block (it reads nothing it writes) or a reduction block with a ``T.init``. Sparse
kernels break that rule where it costs nothing: a row block that initialises a row's scalar
accumulator before reducing into it (softmax's row maximum, an explicit init hoisted out of a
possibly empty row), or an elementwise update in place (SDDMM's ``O[p] = A[p] * O[p]``).

``bind`` in ``sparsetir.Schedule`` first asks TVM; when TVM refuses for that reason only, it
binds the loop itself after proving what makes the binding safe (``independent_iterations``):

1. **The loop starts the kernel's loop nest.** It is a serial loop from 0, reached from the top
   of one top-level loop nest through loops (and blocks) each holding nothing but the next one.
   No statement runs beside it inside the kernel, so nothing is executed once per thread that
   was meant to run once.
2. **Its iterations touch disjoint elements.** For every buffer written anywhere under the
   loop (and not allocated under it, which makes it private to an iteration), every access
   under the loop, read or write, has one index dimension ``d`` of the form
   ``c * v + base + r`` where ``v`` is the loop variable, ``c`` a nonzero constant, ``base`` an
   expression of the loops outside (the same for all accesses of the buffer) and ``r`` takes
   values in ``[0, |c|)`` over the loops inside (bounded by TVM's arithmetic analyzer). The
   value of dimension ``d`` then names the iteration, so no element is touched by two. For a
   stage-II buffer laid out by a variable axis only the first dimension is used: different
   first positions own disjoint ranges of storage, different later ones need not.
   Failing one dimension, a *pair* ``(d1, d2)`` may name the iteration: when ``d2``'s index
   lies in ``[0, c)`` in every access, ``c * index[d1] + index[d2]`` is tested as above (row
   ``i`` of a 4x4-blocked output at ``[i // 4, ..., i % 4, ...]`` gives ``i``). In a buffer laid
   out by a variable axis the pair is the first dimension and one of the dense fixed
   dimensions after the last variable one, which are laid out row-major inside each stored
   position, so they tell the elements of one first-dimension row apart.
3. **Atomic accumulations** (``lower_atomic_updates``: ``tirx.cuda.atomic_add`` of an element)
   may collide: a buffer accessed under the loop by atomic adds only is safe whatever its
   indices.

``parallel`` and ``vectorize`` on the CPU do the same after proving conditions 2 and 3 (such a
loop may sit below other statements: they still run once).

Binding then changes only the loop's kind (``ForKind.THREAD_BINDING`` with the thread's
``IterVar``, as TVM's ``bind`` writes it) through the schedule's state, so every handle stays
valid and the step is recorded and replayed as a plain ``bind``. Anything the proof cannot
show is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from .._tvm import Schedule, TensorLoad, Var, s_tir, structural_equal, structural_map, structural_walk, tirx, tvm
from ..errors import ScheduleError
from ..ir.analysis import contains, reads_data, uses_var

#: TVM's words when ``bind`` refuses a subtree that is not compact dataflow.
TVM_COMPACT_DATAFLOW = "does not have compact dataflow"


def refused_for_dataflow(err: Exception) -> bool:
    """Whether TVM refused a ``bind`` only because the subtree is not compact dataflow."""
    return TVM_COMPACT_DATAFLOW in str(err)


def bind_independent(sch: Schedule, loop: Any, thread: str, nested: Sequence[str] = ()) -> None:
    """Bind ``loop`` to ``thread`` after proving its iterations independent (module docs).

    ``nested`` names the buffers laid out by a variable axis (stage II), whose elements only
    the first dimension tells apart. Raises ``ScheduleError`` with the reason when the proof fails.
    """
    reason = independent_iterations(sch, loop, nested)
    if reason is not None:
        raise ScheduleError(reason)
    node = sch.get(loop)
    binding = tirx.IterVar(None, tirx.Var(thread, str(node.loop_var.ty.dtype)), tirx.IterVar.ThreadIndex, thread)
    bound = tirx.For(node.loop_var, node.min, node.extent, tirx.ForKind.THREAD_BINDING, node.body, binding,
                     node.annotations, node.step, node.span)
    sch.state.replace(sch.get_sref(loop), bound)


def run_independent(sch: Schedule, loop: Any, kind: Any, nested: Sequence[str] = (),
                    sorted_indices: Optional[Mapping[str, str]] = None, relied: Optional[set] = None) -> None:
    """Make ``loop`` a CPU ``parallel`` or ``vectorized`` loop (``kind``, a ``tirx.ForKind``) after
    proving its iterations independent (the module docs' conditions 2 and 3: unlike a GPU
    binding, it may sit below other statements, which still run once). ``sorted_indices`` and
    ``relied`` as for ``independent_iterations``."""
    reason = independent_iterations(sch, loop, nested, heads_kernel=False, sorted_indices=sorted_indices,
                                    relied=relied)
    if reason is not None:
        raise ScheduleError(reason)
    node = sch.get(loop)
    if kind == tirx.ForKind.VECTORIZED and not isinstance(node.extent, tirx.IntImm):
        raise ScheduleError(f"loop '{node.loop_var.name}' has no constant extent to vectorize")
    replaced = tirx.For(node.loop_var, node.min, node.extent, kind, node.body, None,
                        node.annotations, node.step, node.span)
    sch.state.replace(sch.get_sref(loop), replaced)


def independent_iterations(sch: Schedule, loop: Any, nested: Sequence[str] = (), heads_kernel: bool = True,
                           sorted_indices: Optional[Mapping[str, str]] = None,
                           relied: Optional[set] = None) -> Optional[str]:
    """None when ``loop`` may run its iterations on different threads (module docs), else why not.

    ``heads_kernel=False`` drops condition 1: a CPU ``parallel`` loop may sit anywhere, since
    the statements around it still run once. ``sorted_indices`` maps the indices buffers of
    sparse axes to their axes: a dimension indexed by one of them at the loop's position
    (``I_indices[r, v]``) names the iteration too, provided that axis's coordinates strictly
    increase within each row, which the kernel then checks on every call: the axes the proof
    relied on are added to ``relied``."""
    node = sch.get(loop)
    name = node.loop_var.name
    if node.kind != tirx.ForKind.SERIAL or not _is_zero(node.min):
        return f"loop '{name}' is not a serial loop from 0"
    if heads_kernel and not _heads_a_kernel(sch.mod["main"].body, node):
        return (f"loop '{name}' does not start a kernel's loop nest: other statements run beside it inside the "
                "kernel, once per thread")
    if isinstance(node.extent, tirx.IntImm) and int(node.extent.value) == 1:
        return None  # one iteration: one thread runs the nest as written
    accesses = _Accesses(node)
    accesses.visit(node.body)
    if accesses.refusal is not None:
        return f"the iterations of loop '{name}' cannot be shown independent: {accesses.refusal}"
    needed: set = set()
    unproven = _unproven_buffers(node, accesses, nested, sorted_indices or {}, needed)
    if unproven:
        return (f"the iterations of loop '{name}' cannot be shown to touch disjoint elements of '{unproven[0]}' "
                f"(no index dimension of its accesses determines the iteration)")
    if relied is not None:
        relied.update(needed)
    return None


def colliding_buffers(sch: Schedule, loop: Any, nested: Sequence[str] = ()) -> list[str]:
    """The buffers written under ``loop`` (plainly, not by atomic adds) whose elements the proof
    cannot assign to one iteration each: bound to threads as it is, the threads could update one
    element at once. Empty when the iterations are independent. Raises ``ScheduleError`` when
    the loop cannot be bound whatever its stores (module docs' condition 1, not a serial loop
    from 0, a statement the proof does not read)."""
    node = sch.get(loop)
    name = node.loop_var.name
    if node.kind != tirx.ForKind.SERIAL or not _is_zero(node.min):
        raise ScheduleError(f"loop '{name}' is not a serial loop from 0")
    if not _heads_a_kernel(sch.mod["main"].body, node):
        raise ScheduleError(f"loop '{name}' does not start a kernel's loop nest")
    if isinstance(node.extent, tirx.IntImm) and int(node.extent.value) == 1:
        return []
    accesses = _Accesses(node)
    accesses.visit(node.body)
    if accesses.refusal is not None:
        raise ScheduleError(f"the iterations of loop '{name}' cannot be shown independent: {accesses.refusal}")
    return _unproven_buffers(node, accesses, nested, {}, set())


def _unproven_buffers(node: Any, accesses: "_Accesses", nested: Sequence[str], sorted_indices: Mapping[str, str],
                      needed: set) -> list[str]:
    """The written buffers under ``node`` no index dimension of whose accesses names the
    iteration (module docs, conditions 2 and 3); the sorted axes relied on go to ``needed``."""
    unproven: list[str] = []
    for buffer, found in accesses.by_buffer().items():
        if not any(a.kind != "read" for a in found) or all(a.kind == "atomic" for a in found):
            continue
        dims = [0] if buffer in nested else range(len(found[0].indices))
        if any(_slot_names_iteration(found, d, node.loop_var, accesses) for d in dims):
            continue
        if _pair_names_iteration(found, node.loop_var, accesses, _pair_tail(nested, buffer)):
            continue
        axis = next((a for a in (_sorted_slot(found, d, node.loop_var, sorted_indices) for d in dims) if a), None)
        if axis is None:
            unproven.append(buffer)
        else:
            needed.add(axis)
    return unproven


def _is_zero(expr: Any) -> bool:
    return isinstance(expr, tirx.IntImm) and int(expr.value) == 0


def _heads_a_kernel(body: Any, target: Any) -> bool:
    """Whether ``target`` is reached from the root block's body through a top-level statement and
    then only loops and blocks that each hold just the next one."""
    node = body
    if isinstance(node, s_tir.SBlockRealize):  # the root block
        node = node.block.body
    if isinstance(node, tirx.SeqStmt):
        holds_target = lambda n: isinstance(n, tirx.Stmt) and n.same_as(target)  # noqa: E731
        node = next((s for s in node.seq if contains(s, holds_target)), None)
    while node is not None:
        if node.same_as(target):
            return True
        if isinstance(node, tirx.For):
            node = node.body
        elif isinstance(node, s_tir.SBlockRealize) and node.block.init is None:
            node = node.block.body
        else:
            return False
    return False


@dataclass(frozen=True)
class _Access:
    """One access to a buffer under the loop, its indices in terms of loop variables."""

    buffer: str
    kind: str  # "read", "write" or "atomic"
    indices: tuple


class _Accesses:
    """Every access under a loop to a buffer not allocated under it, with block iterators
    replaced by their bindings, and the ranges of the loops inside."""

    def __init__(self, loop: Any) -> None:
        self.loop = loop
        self.found: list[_Access] = []
        self.private: set[str] = set()
        self.ranges: list[tuple[Var, Any, Any]] = []  # loop var, min, extent of loops inside
        self.subst: list[tuple[Var, Any]] = []
        self.refusal: Optional[str] = None

    def by_buffer(self) -> dict[str, list[_Access]]:
        """The accesses of each shared buffer, in program order."""
        out: dict[str, list[_Access]] = {}
        for a in self.found:
            if a.buffer not in self.private:
                out.setdefault(a.buffer, []).append(a)
        return out

    def visit(self, stmt: Any) -> None:
        if self.refusal is not None:
            return
        if isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                self.visit(s)
        elif isinstance(stmt, tirx.For):
            self.ranges.append((stmt.loop_var, stmt.min, stmt.extent))
            self._exprs(stmt.min, stmt.extent)
            self.visit(stmt.body)
        elif isinstance(stmt, s_tir.SBlockRealize):
            self._block(stmt)
        elif isinstance(stmt, tirx.BufferStore):
            self._exprs(stmt.value, *stmt.indices)
            self._record(stmt.buffer.name, "write", stmt.indices)
        elif isinstance(stmt, tirx.Evaluate):
            self._evaluate(stmt.value)
        elif isinstance(stmt, tirx.IfThenElse):
            self._exprs(stmt.condition)
            self.visit(stmt.then_case)
            if stmt.else_case is not None:
                self.visit(stmt.else_case)
        elif isinstance(stmt, tirx.While):
            self._exprs(stmt.condition)
            self.visit(stmt.body)
        elif isinstance(stmt, tirx.LetStmt):
            self._exprs(stmt.value)
            self.subst.append((stmt.var, self._substitute(stmt.value)))
            self.visit(stmt.body)
        else:
            self.refusal = f"it holds a {type(stmt).__name__}, which the proof does not read"

    def _block(self, realize: Any) -> None:
        block = realize.block
        if list(block.match_buffers):
            self.refusal = f"block '{block.name_hint}' matches a buffer region (T.match_buffer)"
            return
        self._exprs(realize.predicate, *realize.iter_values)
        for iv, value in zip(block.iter_vars, realize.iter_values):
            self.subst.append((iv.var, self._substitute(value)))
        self.private.update(str(b.name) for b in block.alloc_buffers)
        if block.init is not None:
            self.visit(block.init)
        self.visit(block.body)

    def _evaluate(self, value: Any) -> None:
        if isinstance(value, tvm.ir.Call) and str(value.op.name) == "tirx.cuda.atomic_add":
            target = value.args[0]
            if isinstance(target, tvm.ir.Call) and str(target.op.name) == "tirx.address_of" \
                    and isinstance(target.args[0], TensorLoad):
                load = target.args[0]
                self._exprs(*load.indices, *value.args[1:])
                self._record(load.source.name, "atomic", load.indices)
                return
        self._exprs(value)

    def _exprs(self, *exprs: Any) -> None:
        for expr in exprs:
            loads: list[Any] = []
            structural_walk(expr, lambda n: loads.append(n) if isinstance(n, TensorLoad) else None)
            for load in loads:
                self._record(load.source.name, "read", load.indices)

    def _record(self, buffer: Any, kind: str, indices: Any) -> None:
        self.found.append(_Access(str(buffer), kind, tuple(self._substitute(i) for i in indices)))

    def _substitute(self, expr: Any) -> Any:
        if not self.subst:
            return expr

        def on_var(var: Var) -> Any:
            for old, new in reversed(self.subst):
                if var.same_as(old):
                    return new
            return var

        return structural_map(expr, [(Var, on_var)])


def _slot_names_iteration(found: list[_Access], dim: int, v: Var, accesses: _Accesses) -> bool:
    """Whether dimension ``dim`` of every access is ``c * v + base + r`` with one ``c`` and
    ``base`` for all and ``0 <= r < |c|`` (module docs, condition 2)."""
    analyzer = tvm.sym.Analyzer()
    inner = []
    for var, lo, extent in accesses.ranges:
        if reads_data(lo) or reads_data(extent) or uses_var(extent, v) or uses_var(lo, v):
            continue  # unbounded: r over such a loop is not bounded, and the test below fails
        analyzer.bind(var, tvm.ir.Range.from_min_extent(lo, extent))
        inner.append((var, lo))
    signature = None
    for access in found:
        if len(access.indices) <= dim:
            return False
        index = analyzer.simplify(access.indices[dim])
        shifted = structural_map(index, [(Var, lambda var: v + 1 if var.same_as(v) else var)])
        step = analyzer.simplify(shifted - index)
        if not isinstance(step, tirx.IntImm) or int(step.value) == 0:
            return False
        c = int(step.value)
        rest = analyzer.simplify(index - step * v)
        if uses_var(rest, v):
            return False
        at_start = structural_map(rest, [(Var, lambda var: _start_of(var, inner))])
        base = analyzer.simplify(at_start)
        spread = analyzer.const_int_bound(analyzer.simplify(rest - base))
        if spread.min_value < 0 or spread.max_value >= abs(c):
            return False
        if signature is None:
            signature = (c, base)
        elif signature[0] != c or not structural_equal(signature[1], base):
            return False
    return True


def _pair_tail(nested: Any, buffer: str) -> Optional[int]:
    """The first dimension a pair may combine with dimension 0 in ``buffer``: 0 (any pair) for a
    buffer not laid out by a variable axis, its dense tail for one that is (``nested`` a mapping
    from ``Schedule._nested_buffers``), None when no pair tells its elements apart."""
    if buffer not in nested:
        return 0
    return nested.get(buffer) if isinstance(nested, Mapping) else None


def _pair_names_iteration(found: list[_Access], v: Var, accesses: _Accesses, tail: Optional[int]) -> bool:
    """Whether two dimensions ``(d1, d2)`` together name the iteration: ``d2``'s index lies in
    ``[0, c)`` in every access, and ``c * index[d1] + index[d2]`` passes ``_slot_names_iteration``
    (a row ``i`` of a 4x4-blocked output, written at ``[i // 4, ..., i % 4, ...]``). Such pairs of
    elements are distinct whenever the combined values are. In a buffer laid out by a variable
    axis (``tail`` not 0) only the first dimension and one of the dense dimensions from ``tail``
    on, laid out row-major inside each stored position, may pair."""
    if tail is None:
        return False
    rank = min(len(a.indices) for a in found)
    analyzer = tvm.sym.Analyzer()
    for d2 in range(tail, rank):
        top = 0
        for a in found:
            bound = analyzer.const_int_bound(analyzer.simplify(a.indices[d2]))
            if bound.min_value < 0 or bound.max_value >= 1 << 16:
                top = -1
                break
            top = max(top, int(bound.max_value))
        if top < 1:
            continue
        c = top + 1
        for d1 in (range(rank) if tail == 0 else (0,)):
            if d1 == d2:
                continue
            combined = [_Access(a.buffer, a.kind, (c * a.indices[d1] + a.indices[d2],)) for a in found]
            if _slot_names_iteration(combined, 0, v, accesses):
                return True
    return False


def _sorted_slot(found: list[_Access], dim: int, v: Var, sorted_indices: Mapping[str, str]) -> Optional[str]:
    """The axis whose coordinates name the iteration in dimension ``dim`` of every access: each
    the same load ``IDX[base..., v + c]`` of that axis's indices buffer (``base`` free of ``v``),
    whose values strictly increase within a row once the axis is checked sorted; else None."""
    first = None
    for access in found:
        if len(access.indices) <= dim:
            return None
        index = access.indices[dim]
        if first is None:
            if not isinstance(index, TensorLoad) or str(index.source.name) not in sorted_indices:
                return None
            *base, last = index.indices
            if any(uses_var(b, v) for b in base) or not uses_var(last, v):
                return None
            step = tvm.sym.Analyzer().simplify(last - v)
            if uses_var(step, v):
                return None
            first = index
        elif not structural_equal(index, first):
            return None
    return sorted_indices[str(first.source.name)] if first is not None else None


def _start_of(var: Var, inner: list[tuple[Var, Any]]) -> Any:
    for loop_var, lo in inner:
        if var.same_as(loop_var):
            return lo
    return var


__all__ = ["bind_independent", "colliding_buffers", "independent_iterations", "run_independent", "refused_for_dataflow"]
