"""The lowering passes as ``tvm.transform`` module passes over an ``IRModule`` (seed 000's
``mod = format_decompose(mod, rewrites)`` style)::

    mod = sparsetir.transforms.FormatDecompose(rules)(mod)     # stage I  → stage I
    mod = sparsetir.transforms.LowerSparseIter()(mod)          # stage I  → stage II
    mod = sparsetir.transforms.LowerSparseBuffer()(mod)        # stage II → stage III
    mod = tvm.transform.Sequential([LowerSparseIter(), LowerSparseBuffer()])(mod)

Each pass rewrites the module's functions at the stage it reads and leaves the others as they
are, as TVM's function passes skip functions they do not handle. A stage-I function is held in
the module as a carrier PrimFunc (``ir/module.py``). The passes run the pipeline's own steps
(``pipeline.py``), so spans, checks and error messages are those of ``sparsetir.build``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .._tvm import tirx, tvm
from ..ir.module import from_prim_func, to_prim_func
from .format_decompose import FormatRewriteRule, format_decompose
from .pipeline import STAGE_II, lower, stage_of


def stage_pass(name: str, reads: int, rewrite: Callable[[Any], Any]) -> Any:
    """A module pass applying ``rewrite`` to every function of stage ``reads`` (a
    ``SparseFunction``, ``Stage2Function`` or ``PrimFunc``, as ``ir.module.function`` gives it)."""

    def run(mod: Any, _ctx: Any) -> Any:
        rewritten = {}
        for gvar, func in mod.functions.items():
            if isinstance(func, tirx.PrimFunc) and stage_of(func) == reads:
                func = to_prim_func(rewrite(from_prim_func(func)))
            rewritten[gvar] = func
        return tvm.IRModule(rewritten, attrs=mod.attrs)

    return tvm.transform.module_pass(run, opt_level=0, name=name)


def LowerSparseIter() -> Any:  # noqa: N802 (TVM's spelling of pass constructors)
    """Stage I → stage II for every stage-I function of a module (``lower_sparse_iter``)."""
    return stage_pass("sparsetir.LowerSparseIter", 1, lambda func: lower(func, until=STAGE_II))


def LowerSparseBuffer() -> Any:  # noqa: N802
    """Stage II → stage III for every stage-II function of a module (the rest of the pipeline)."""
    return stage_pass("sparsetir.LowerSparseBuffer", 2, lower)


def FormatDecompose(rules: Sequence[FormatRewriteRule], include_preprocess: bool = True) -> Any:  # noqa: N802
    """``format_decompose`` with ``rules`` on every stage-I function of a module."""
    rules = list(rules)
    return stage_pass("sparsetir.FormatDecompose", 1, lambda func: format_decompose(func, rules, include_preprocess))
