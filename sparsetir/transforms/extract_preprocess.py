"""extract_preprocess: the data movement of a decomposed function as a kernel of its own.

``format_decompose`` leaves a function that first copies the original buffers into their new
formats (the iterations marked ``T.sp_iter_attr({"preprocess": True})``) and then computes on
the new formats. The copy depends only on the sparse structure and the values, so when the
structure is stationary (a graph, a pruned weight) it runs once and its result serves every
call (RFC D1, "lift the data movement parts outside the kernel"). ``extract_preprocess`` splits
the function in two, each keeping only the parameters, axes and buffers it uses::

    pre, compute = sparsetir.extract_preprocess(decomposed)
    sparsetir.build(pre)(a, indptr, indices, m, n, nnz, a_4, indptr_4, ...)   # fills a_4
    sparsetir.build(compute)(b, c, m, feat_size, a_4, indptr_4, ...)          # every call
"""

from __future__ import annotations

from typing import Any, Sequence

from .._tvm import TensorLoad, Var
from ..ir.analysis import contains
from ..ir.axis import AttachedAxis, Axis, iter_axes
from ..ir.function import SparseFunction
from ..ir.iteration import SparseIteration
from ..ir.verifier import verify
from .format_decompose import COMPOSABLE_ATTR, PREPROCESS_ATTR


def is_preprocess(stmt: Any) -> bool:
    """Whether ``stmt`` is a preprocess iteration (``T.sp_iter_attr({"preprocess": True})``)."""
    return isinstance(stmt, SparseIteration) and bool(dict(stmt.attrs).get(PREPROCESS_ATTR, False))


def extract_preprocess(func: SparseFunction) -> tuple[SparseFunction, SparseFunction]:
    """``(preprocess, compute)``: ``func``'s preprocess iterations and the rest, as two functions.

    ``preprocess`` is named ``<name>_preprocess`` (its ``global_symbol`` too, when ``func`` has
    one). A function without preprocess iterations is an error, and so is one whose preprocess
    iterations are not all before the others (the split would reorder them).
    """
    if not isinstance(func, SparseFunction):
        raise TypeError(f"extract_preprocess takes a stage-I SparseFunction, got {type(func).__name__}")
    flags = [is_preprocess(s) for s in func.body]
    if not any(flags):
        raise ValueError(f"{func.name} has no preprocess iteration (T.sp_iter_attr({{\"preprocess\": True}}))")
    first_other = flags.index(False) if False in flags else len(flags)
    if any(flags[first_other:]):
        late = next(s.name for s, f in zip(func.body[first_other:], flags[first_other:]) if f)
        raise ValueError(f"{func.name}: preprocess iteration '{late}' comes after a compute iteration; "
                         "extract_preprocess would run it earlier")
    pre_attrs = {k: v for k, v in dict(func.attrs).items() if k != COMPOSABLE_ATTR}
    if "global_symbol" in pre_attrs:
        pre_attrs["global_symbol"] = f"{pre_attrs['global_symbol']}_preprocess"
    preprocess = _restricted(func, f"{func.name}_preprocess", pre_attrs, list(func.body[:first_other]))
    compute = _restricted(func, func.name, dict(func.attrs), list(func.body[first_other:]))
    return preprocess, compute


def _restricted(func: SparseFunction, name: str, attrs: dict, body: list[Any]) -> SparseFunction:
    """``func`` with ``body``, keeping the parameters, axes and buffers it uses, in their order."""
    used_buffers = [b for b in func.buffers if _mentions(body, b.buffer)]
    axes: list[Axis] = []

    def need(axis: Axis) -> None:
        for a in axis.ancestors() + [axis]:
            if not any(a.same_as(x) for x in axes):
                axes.append(a)

    for b in used_buffers:
        for a in b.axes:
            need(a)
    for it in _iterations(body):
        for entry in it.axes:
            for a in iter_axes(entry):
                need(a)
            if isinstance(entry, AttachedAxis):
                need(entry.new_parent)
    kept_axes = [a for a in func.axes if any(a.same_as(x) for x in axes)]
    roots: list[Any] = list(body)
    for a in kept_axes:
        roots += [x for x in (a.length, a.nnz, a.nnz_cols, a.indptr, a.indices) if x is not None]
    for b in used_buffers:
        roots += [x for x in (b.handle, b.extra_storage) if x is not None]
    params = [p for p in func.params if _mentions(roots, p)]
    return verify(SparseFunction(name, params, attrs, kept_axes, used_buffers, body, func.span))


def _iterations(stmts: Sequence[Any]) -> list[SparseIteration]:
    out: list[SparseIteration] = []
    for stmt in stmts:
        if isinstance(stmt, SparseIteration):
            out.append(stmt)
            out += _iterations(stmt.body)
    return out


def _mentions(roots: Sequence[Any], target: Any) -> bool:
    """Whether any of ``roots`` refers to ``target`` (a variable or a buffer)."""

    def refers(node: Any) -> bool:
        if isinstance(node, Var):
            return node.same_as(target)
        if isinstance(node, TensorLoad):
            return node.source.same_as(target)
        return getattr(node, "buffer", None) is not None and node.buffer.same_as(target)

    return any(contains(root, refers) for root in roots)


__all__ = ["extract_preprocess", "is_preprocess"]
