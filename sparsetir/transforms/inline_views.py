"""InlineViews: stage I → stage I without ``T.decl_buffer`` views, the first step of LowerSparseIter.

A view (seed 002's ``DeclBuffer``: ``B = T.decl_buffer((I, J), "float32", data=A.data)``) reads
and writes the data of ``A`` row-major under its own dense shape. Every access ``B[i, j]``
becomes the access of ``A`` at the same element: the view's indices are linearized over its
axes' lengths and unraveled over ``A``'s (``A[i * n + j]`` for a flat ``A``). A view of another
dtype of the same width reads the same bits: a load is ``T.reinterpret(view dtype, A[..])`` and
a store writes ``T.reinterpret(A's dtype, value)``. The views leave the function, so the rest of
the lowering sees only buffers it already knows.
"""

from __future__ import annotations

from typing import Any

from .._tvm import TensorLoad, structural_map, tirx, tvm
from ..ir.buffer import SparseBuffer
from ..ir.function import SparseFunction


def inline_views(func: SparseFunction) -> SparseFunction:
    """``func`` with every access to a view replaced by the access of the data it views."""
    views = {sb.buffer: sb for sb in func.buffers if sb.view_of is not None}
    if not views:
        return func
    targets = {sb.buffer: sb for sb in func.buffers}
    analyzer = tvm.sym.Analyzer()

    def find(var: Any) -> Any:
        return next((sb for key, sb in views.items() if key.same_as(var)), None)

    def target_of(view: SparseBuffer) -> SparseBuffer:
        return next(sb for key, sb in targets.items() if key.same_as(view.view_of))

    def indices(view: SparseBuffer, idx: list[Any]) -> tuple[Any, list[Any]]:
        target = target_of(view)
        flat = idx[0]
        for ax, i in zip(view.axes[1:], idx[1:]):
            flat = flat * ax.length + i
        out = []
        for ax in reversed(target.axes[1:]):
            out.append(analyzer.simplify(tirx.floormod(flat, ax.length)))
            flat = tirx.floordiv(flat, ax.length)
        out.append(analyzer.simplify(flat))
        return target, out[::-1]

    def on_load(load: Any) -> Any:
        view = find(load.source)
        if view is None:
            return load
        target, idx = indices(view, list(load.indices))
        value = tirx.BufferLoad(target.buffer, idx, span=load.span)
        return value if view.dtype == target.dtype else tirx.reinterpret(view.dtype, value)

    def on_store(store: Any) -> Any:
        view = find(store.buffer)
        if view is None:
            return store
        target, idx = indices(view, list(store.indices))
        value = store.value if view.dtype == target.dtype else tirx.reinterpret(target.dtype, store.value)
        return tirx.BufferStore(target.buffer, value, idx, span=store.span)

    body = structural_map(list(func.body), [(TensorLoad, on_load), (tirx.BufferStore, on_store)])
    buffers = [sb for sb in func.buffers if sb.view_of is None]
    return SparseFunction(func.name, list(func.params), func.attrs, list(func.axes), buffers, list(body), func.span)
