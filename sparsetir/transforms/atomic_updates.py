"""lower_atomic_updates: accumulations that several threads may run on one element, as atomic adds (RFC D3).

After horizontal fusion on a GPU, the threads of different chunks (or of one chunk, when a long
row is split into several ELL rows) can add into the same output element. This pass rewrites
every store of the form ``X[idx] = X[idx] + v`` (or ``v + X[idx]``) in the named blocks into
TVM's CUDA intrinsic ``tirx.cuda.atomic_add(T.address_of(X[idx]), v)``, which its CUDA backend
emits as ``atomicAdd`` (the generic ``tirx.atomic_add`` reaches no backend's code generator). A store of any other form in those blocks is refused (it would
still race), and so is a block with a ``T.init`` (its initialising store is not an
accumulation: split the init out first, as ``format_decompose`` does, or ``decompose_reduction``).

CPU targets have no atomic add in TVM (its LLVM backend refuses ``tirx.atomic_add``); there,
``horizontal_fusion`` relies on owner boundaries instead, under which no two threads write one
element, and ``needs_atomics`` answers False.
"""

from __future__ import annotations

from typing import Any, Sequence

from .._tvm import TensorLoad, s_tir, structural_equal, structural_map, tirx, tvm
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
                return _atomic(store, name)
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


def _atomic(store: Any, block: str) -> Any:
    value = store.value
    target = tirx.BufferLoad(store.buffer, list(store.indices))
    added = None
    if isinstance(value, tirx.Add):
        if _is_same_element(value.a, target):
            added = value.b
        elif _is_same_element(value.b, target):
            added = value.a
    if added is None:
        raise LoweringError(f"lower_atomic_updates: block '{block}' stores {store.buffer.name}[...] = {value}, "
                            "which is not an accumulation X[i] = X[i] + v; it cannot be made atomic")
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


__all__ = ["lower_atomic_updates", "needs_atomics"]
