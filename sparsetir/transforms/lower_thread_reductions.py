"""lower_thread_reductions: reductions over GPU threads as TVM's warp reductions, kernel by kernel.

A reduction block whose reduction loop is bound to ``threadIdx`` (SDDMM's dot product, its
lanes across the feature axis) becomes an in-thread partial sum and a cross-thread reduction
(``tvm_thread_allreduce``, warp shuffles) in TVM's ``LowerCrossThreadReduction``. TVM applies
it only to a block that is the only writer of its output in its scope, and the scope of a
top-level loop nest is the whole function: SDDMM's second kernel, which scales the dot
products in place (``O[p] = A[p] * O[p]``), is a second writer of ``O``, and TVM then leaves
the block as it is, with the reduction loop still bound to threads. The generated kernel has
every lane add into the same element: a race that compiles.

Each top-level statement of the root block is a kernel of its own (or host code), and kernels
run one after another, so a writer in another kernel cannot interfere with a reduction. This
pass runs TVM's pass on each top-level statement alone (the root block's allocations beside it,
and the buffers the pass adds for its partial sums kept), which is the scope the rule is meant
for.

TVM 0.27's pass drops the block's predicate from the write-back it makes (the store of the
reduced value by lane 0) when no conjunct of the predicate involves the reduction loops: a
nonzero loop split by a factor that does not divide it (SDDMM's) then stores past the end of
its output from the last block of threads, on the GPU. The write-back gets back every conjunct
of the reduction block's predicate that does not involve the reduction loops (``_guard_write_backs``).

Afterwards a block that still reduces over a thread-bound loop with plain stores (TVM could not
recognise it as a reduction: no ``T.init``, several writers inside one kernel, a ``blockIdx``
loop) would race. Its accumulations become atomic adds (``atomic_accumulations``): every store
into the buffers it writes, in its kernel, must be an accumulation ``X[e] = X[e] + v`` that
nothing else in the kernel reads. Otherwise (a ``T.init``, a max/min reduction, which CUDA in
TVM 0.27 cannot do atomically, a read of the sum in the same kernel) it is refused with
``LoweringError``.
"""

from __future__ import annotations

from typing import Any

from .._tvm import s_tir, structural_equal, structural_map, structural_walk, tirx, tvm
from ..errors import LoweringError
from ..ir.analysis import has_thread_binding, uses_any, uses_var, vars_of
from ..ir.iteration import ITER_TYPE, REDUCE
from .atomic_updates import atomic_accumulations


def lower_thread_reductions(prim: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``prim`` (stage III, thread-bound) with its cross-thread reductions lowered per kernel."""
    root = prim.body.block if isinstance(prim.body, s_tir.SBlockRealize) else None
    if root is None:
        return prim
    statements = list(root.body.seq) if isinstance(root.body, tirx.SeqStmt) else [root.body]
    lowered, allocations = [], list(root.alloc_buffers)
    for stmt in statements:
        if not has_thread_binding(stmt):
            lowered.append(stmt)
            continue
        alone = prim.with_body(s_tir.SBlockRealize([], True, _with_body(root, stmt, list(root.alloc_buffers))))
        result = s_tir.transform.LowerCrossThreadReduction()(tvm.IRModule({"main": alone}))["main"].body.block
        lowered.append(_atomic_racing_reductions(_guard_write_backs(result.body, _spatial_conditions(stmt))))
        allocations += [b for b in result.alloc_buffers if not any(b.same_as(a) for a in allocations)]
    body = lowered[0] if len(lowered) == 1 else tirx.SeqStmt(lowered)
    return prim.with_body(s_tir.SBlockRealize([], True, _with_body(root, body, allocations)))


def _with_body(root: Any, body: Any, allocations: list) -> Any:
    return s_tir.SBlock(root.iter_vars, root.reads, root.writes, root.name_hint, body, None, allocations,
                        root.match_buffers, root.annotations, root.span)


def _spatial_conditions(kernel: Any) -> dict[str, list]:
    """For each block of ``kernel`` that reduces, the conjuncts of its predicate that do not
    involve its reduction loops (the loops its reduce iterators are bound to)."""
    found: dict[str, list] = {}

    def on_realize(realize: Any) -> None:
        block = realize.block
        reduced = [value for iv, value in zip(block.iter_vars, realize.iter_values)
                   if int(iv.iter_type) == ITER_TYPE[REDUCE]]
        if not reduced:
            return
        loops = [v for value in reduced for v in vars_of(value)]
        found[str(block.name_hint)] = [c for c in _conjuncts(realize.predicate) if not uses_any(c, loops)]

    structural_walk(kernel, [(s_tir.SBlockRealize, on_realize)])
    return found


def _guard_write_backs(kernel: Any, conditions: dict[str, list]) -> Any:
    """``kernel`` with each ``<block>_write_back`` made by TVM's pass predicated on the spatial
    conditions of ``<block>`` too (module docs)."""

    def on_realize(realize: Any) -> Any:
        name = str(realize.block.name_hint)
        if not name.endswith(WRITE_BACK) or name[: -len(WRITE_BACK)] not in conditions:
            return realize
        have = _conjuncts(realize.predicate)
        missing = [c for c in conditions[name[: -len(WRITE_BACK)]] if not any(structural_equal(c, h) for h in have)]
        if not missing:
            return realize
        predicate = realize.predicate
        for c in missing:
            predicate = tirx.And(c, predicate)
        return s_tir.SBlockRealize(realize.iter_values, predicate, realize.block, realize.span)

    return structural_map(kernel, [(s_tir.SBlockRealize, on_realize)])


#: The suffix of the block TVM's pass makes to store a reduced value.
WRITE_BACK = "_write_back"


def _conjuncts(expr: Any) -> list:
    if isinstance(expr, tirx.And):
        return _conjuncts(expr.a) + _conjuncts(expr.b)
    if isinstance(expr, tirx.IntImm) and int(expr.value) == 1:
        return []
    return [expr]


def _atomic_racing_reductions(kernel: Any) -> Any:
    """``kernel`` (a top-level statement) with the stores of blocks left reducing over a
    thread-bound loop made atomic adds; raises when they cannot be (module docs)."""
    racing: list[tuple[Any, Any, set[str]]] = []  # block, the loop its threads race over, buffers

    def visit(stmt: Any, bound: list) -> None:
        if isinstance(stmt, tirx.For):
            visit(stmt.body, bound + [stmt] if stmt.thread_binding is not None else bound)
        elif isinstance(stmt, s_tir.SBlockRealize):
            block = stmt.block
            reduced = [value for iv, value in zip(block.iter_vars, stmt.iter_values)
                       if int(iv.iter_type) == ITER_TYPE[REDUCE]]
            loops = [lp for lp in bound if any(uses_var(v, lp.loop_var) for v in reduced)]
            if loops and _plain_stores(block):
                racing.append((block, loops[0], _plain_stores(block)))
            if block.init is not None:
                visit(block.init, bound)
            visit(block.body, bound)
        elif isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                visit(s, bound)
        elif isinstance(stmt, tirx.IfThenElse):
            visit(stmt.then_case, bound)
            if stmt.else_case is not None:
                visit(stmt.else_case, bound)
        elif hasattr(stmt, "body") and isinstance(getattr(stmt, "body", None), tirx.Stmt):
            visit(stmt.body, bound)

    visit(kernel, [])
    for block, loop, buffers in racing:
        try:
            kernel = atomic_accumulations(kernel, sorted(buffers), f"block '{block.name_hint}'")
        except LoweringError as err:
            raise LoweringError(
                f"block '{block.name_hint}' reduces over loop '{loop.loop_var.name}', bound to "
                f"{loop.thread_binding.thread_tag}, but TVM cannot lower it as a cross-thread reduction "
                "(it needs a reduction block with a T.init, the only writer of its output in its kernel, "
                "reduced over threadIdx loops only); its threads would race on "
                f"{', '.join(sorted(buffers))}, and its stores cannot be made atomic adds: {err}"
            ) from err
    return kernel


def _plain_stores(block: Any) -> set[str]:
    """Names of the non-local buffers ``block`` stores into with plain (not atomic) stores."""
    names: set[str] = set()

    def on_store(store: Any) -> None:
        if str(store.buffer.scope()) not in ("local", "warp"):
            names.add(str(store.buffer.name))

    structural_walk(block.body, [(tirx.BufferStore, on_store)])
    return names


__all__ = ["lower_thread_reductions"]
