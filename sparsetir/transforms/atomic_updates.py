"""lower_atomic_updates: accumulations that several threads may run on one element, as atomic adds (RFC D3).

After horizontal fusion on a GPU, the threads of different chunks (or of one chunk, when a long
row is split into several ELL rows) can add into the same output element. This pass rewrites
every store of the form ``X[idx] = X[idx] + v`` (or ``v + X[idx]``) in the named blocks into
TVM's CUDA intrinsic ``tirx.cuda.atomic_add(T.address_of(X[idx]), v)``, which its CUDA backend
emits as ``atomicAdd`` (the generic ``tirx.atomic_add`` reaches no backend's code generator). A store of any other form in those blocks is refused (it would
still race), and so is a block with a ``T.init`` (its initialising store is not an
accumulation: split the init out first, as ``format_decompose`` does, or ``decompose_reduction``).

``atomic_accumulations`` makes the same rewrite without names, for a kernel whose threads the
compiler has found may update the same elements of some buffers
(``thread_binding.colliding_buffers``):
the default GPU schedule uses it on a loop nest whose iterations accumulate into shared
elements, and ``lower_thread_reductions`` on a reduction bound to threads that TVM cannot
lower. Every store into those buffers in the kernel must be an accumulation, and nothing else in
the kernel may read them (a read would see a partial sum). Only addition can be made atomic:
TVM 0.27 has ``tirx.cuda.atomic_add`` and ``tirx.cuda.atomic_cas`` on CUDA and no atomic max,
min or multiply, so a ``max``/``min`` reduction into a shared element is refused with the reason.

CPU targets have no atomic add in TVM (its LLVM backend refuses ``tirx.atomic_add``); there,
``horizontal_fusion`` relies on owner boundaries instead, under which no two threads write one
element, and ``needs_atomics`` answers False.
"""

from __future__ import annotations

from typing import Any, Sequence

from .._tvm import TensorLoad, s_tir, structural_equal, structural_map, structural_walk, tirx, tvm
from ..errors import LoweringError


def needs_atomics(target: Any) -> bool:
    """Whether fused iterations on ``target`` get atomic adds (CUDA) rather than owner
    boundaries (CPU, where TVM has no atomic add; other GPU backends are not supported yet)."""
    kind = target if isinstance(target, str) else str(getattr(getattr(target, "kind", None), "name", target))
    return kind.split()[0] == "cuda"


def lower_atomic_updates(prim: "tirx.PrimFunc", blocks: Sequence[str]) -> "tirx.PrimFunc":
    """``prim`` (stage II or III) with the accumulations in ``blocks`` made atomic adds."""
    wanted = set(blocks)
    found: set[str] = set()

    def on_block(block: Any) -> Any:
        name = str(block.name_hint)
        if name not in wanted:
            return block
        found.add(name)
        if block.init is not None:
            errors.append(LoweringError(f"lower_atomic_updates: block '{name}' has a T.init, whose store would race; "
                                        "split the init out (decompose_reduction) first"))
            return block
        refused: list[LoweringError] = []

        def on_store(store: Any) -> Any:
            try:
                return _atomic(store, f"lower_atomic_updates: block '{name}'")
            except LoweringError as err:  # raised through TVM's callback it would arrive as a RuntimeError
                refused.append(err)
                return store

        body = structural_map(block.body, [(tirx.BufferStore, on_store)])
        if refused:
            errors.append(refused[0])
            return block
        return s_tir.SBlock(block.iter_vars, block.reads, block.writes, block.name_hint, body, block.init,
                            block.alloc_buffers, block.match_buffers, block.annotations, block.span)

    errors: list[LoweringError] = []
    new = prim.with_body(structural_map(prim.body, [(s_tir.SBlock, on_block)]))
    if errors:
        raise errors[0]
    missing = sorted(wanted - found)
    if missing:
        raise LoweringError(f"lower_atomic_updates: no block named {', '.join(repr(m) for m in missing)}")
    return new


def atomic_accumulations(stmt: Any, buffers: Sequence[str], where: str) -> Any:
    """``stmt`` (a kernel's loop nest, stage III) with every store into ``buffers`` made an atomic
    add (module docs). Raises ``LoweringError`` naming ``where`` (the loop or block whose threads
    collide) when a store is not an accumulation, sits in a ``T.init``, or a buffer is read
    other than by its accumulations."""
    wanted = set(buffers)
    refused: list[LoweringError] = []

    def on_block(block: Any) -> None:
        if block.init is not None and _stores_into(block.init, wanted):
            refused.append(LoweringError(
                f"{where}: block '{block.name_hint}' initialises {', '.join(sorted(_stores_into(block.init, wanted)))} "
                "in a T.init, which several threads would run on one element; split the init out "
                "(decompose_reduction) to make its accumulations atomic"))

    def on_store(store: Any) -> Any:
        if str(store.buffer.name) not in wanted:
            return store
        try:
            return _atomic(store, where)
        except LoweringError as err:  # raised through TVM's callback it would arrive as a RuntimeError
            refused.append(err)
            return store

    structural_walk(stmt, [(s_tir.SBlock, on_block)])
    new = structural_map(stmt, [(tirx.BufferStore, on_store)])
    if refused:
        raise refused[0]
    for name in sorted(wanted):
        stray = _loads_of(new, name) - _atomic_targets(new, name)
        if stray > 0:
            raise LoweringError(f"{where}: several threads may update '{name}' and the kernel also reads it "
                                "outside its accumulations, where it would see a partial sum; atomic adds cannot "
                                "make that safe")
    return new


def _stores_into(stmt: Any, names: set) -> set[str]:
    found: set[str] = set()

    def on_store(store: Any) -> None:
        if str(store.buffer.name) in names:
            found.add(str(store.buffer.name))

    structural_walk(stmt, [(tirx.BufferStore, on_store)])
    return found


def _loads_of(stmt: Any, name: str) -> int:
    loads: list[Any] = []

    def visit(n: Any) -> None:
        if isinstance(n, TensorLoad) and str(n.source.name) == name:
            loads.append(n)

    structural_walk(stmt, visit)
    return len(loads)


def _atomic_targets(stmt: Any, name: str) -> int:
    """How many atomic adds under ``stmt`` name an element of ``name`` (each holds one load)."""
    calls: list[Any] = []

    def visit(n: Any) -> None:
        if isinstance(n, tvm.ir.Call) and str(n.op.name) == "tirx.cuda.atomic_add":
            address = n.args[0]
            if isinstance(address, tvm.ir.Call) and isinstance(address.args[0], TensorLoad) \
                    and str(address.args[0].source.name) == name:
                calls.append(n)

    structural_walk(stmt, visit)
    return len(calls)


def _atomic(store: Any, where: str) -> Any:
    value = store.value
    target = tirx.BufferLoad(store.buffer, list(store.indices))
    added = None
    if isinstance(value, tirx.Add):
        if _is_same_element(value.a, target):
            added = value.b
        elif _is_same_element(value.b, target):
            added = value.a
    if added is None:
        kind = next((k for k, op in (("max", tirx.Max), ("min", tirx.Min), ("product", tirx.Mul))
                     if isinstance(value, op)
                     and (_is_same_element(value.a, target) or _is_same_element(value.b, target))), None)
        if kind is not None:
            raise LoweringError(f"{where}: the {kind} reduction {store.buffer.name}[...] = {value} may be run by "
                                f"several threads on one element, and CUDA in TVM 0.27 has atomic add only (no "
                                f"atomic {kind}); bind the loops so that each element has one thread")
        raise LoweringError(f"{where} stores {store.buffer.name}[...] = {value}, which is not an accumulation "
                            "X[i] = X[i] + v; it cannot be made atomic")
    call = tirx.call_intrin(str(store.value.ty.dtype), "tirx.cuda.atomic_add",
                            tirx.call_intrin("handle", "tirx.address_of", target), added)
    return tirx.Evaluate(call, span=store.span)


def _is_same_element(expr: Any, load: Any) -> bool:
    """``expr`` reads the element ``load`` reads: the load itself, or the load as LowerSparseIter
    guards a dense coordinate, ``if_then_else(c, X[i], 0)`` (under a store guarded by the same
    ``c``)."""
    if isinstance(expr, tvm.ir.Call) and str(expr.op.name).endswith(".if_then_else") and len(expr.args) == 3:
        expr = expr.args[1]
    return isinstance(expr, TensorLoad) and expr.source.same_as(load.source) and \
        len(expr.indices) == len(load.indices) and \
        all(structural_equal(a, b, map_free_vars=False) for a, b in zip(expr.indices, load.indices))


__all__ = ["atomic_accumulations", "lower_atomic_updates", "needs_atomics"]
