"""Printing stage II in the RFC's style: a sparse header, then TVM's own printing of the body.

The header is the ``def`` line with the stage-I handles and scalars, TVM's ``T.func_attr``
line (it carries ``"sparse_tir_level": 1``), one line per axis and one per sparse buffer. The
body below it is ``PrimFunc.script()`` verbatim, so it cannot drift from TVM's syntax; the
parser (``stage2_parser``) turns the header back into ``T.match_buffer`` lines for TVM's parser.
"""

from __future__ import annotations

import ast
from typing import Any

from .._tvm import tirx
from ..ir.axis import DENSE_FIXED, DENSE_VARIABLE, SPARSE_FIXED
from ..ir.stage2 import ALLOCATED, Stage2Function
from .expr_printer import ExprPrinter


def print_stage2(f2: Stage2Function) -> str:
    """The stage-II script of ``f2``; ``sparsetir.parse`` reads it back to an equal function."""
    text = f2.prim.script()
    lines = text.splitlines()
    tree = ast.parse(text)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    first = fn.body[0]
    if not (isinstance(first, ast.Expr) and "func_attr" in ast.unparse(first.value.func)):
        raise ValueError("TVM printed no T.func_attr line for a stage-II function")
    handle_of = {}
    for meta in f2.buffers:
        handle_of[meta.buffer] = meta.handle_name
    expr = ExprPrinter(lambda v: v.name)

    def handle(var: Any) -> str:
        for key, name in handle_of.items():
            if key.same_as(var):
                return name
        raise ValueError(f"buffer {var.name} is not bound to a handle")

    sparse = [meta.buffer for meta in f2.buffers]
    params = []
    for k, (p, name) in enumerate(zip(f2.prim.params, f2.param_names)):
        if isinstance(p.ty, tirx.BufferType) and not any(p.same_as(b) for b in sparse):
            # a plain dense parameter (e.g. partition_rows' boundaries): TVM's own annotation
            params.append(f"{name}: {ast.get_source_segment(text, fn.args.args[k].annotation)}")
        elif isinstance(p.ty, tirx.BufferType):
            params.append(f"{name}: T.handle")
        else:
            dtype = getattr(p.ty, "dtype", None)
            params.append(f"{p.name}: T.{dtype}" if dtype is not None else f"{p.name}: T.handle")
    indent = " " * first.col_offset
    out = ["# from sparsetir.script import tir as T", "", "@T.prim_func", f"def {fn.name}({', '.join(params)}):"]
    out.extend(lines[first.lineno - 1 : first.end_lineno])
    for axis in f2.axes:
        idtype = f'idtype="{axis.idtype}"'
        if axis.kind == DENSE_FIXED:
            call = f"T.dense_fixed({expr(axis.length)}, {idtype})"
        elif axis.kind == DENSE_VARIABLE:
            sizes = f"({expr(axis.length)}, {expr(axis.nnz)})" if axis.nnz is not None else expr(axis.length)
            call = f"T.dense_variable({axis.parent.name}, {sizes}, {handle(axis.indptr)}, {idtype})"
        elif axis.kind == SPARSE_FIXED:
            call = (
                f"T.sparse_fixed({axis.parent.name}, ({expr(axis.length)}, {expr(axis.nnz_cols)}), "
                f"{handle(axis.indices)}, {idtype}, sorted={axis.sorted})"
            )
        else:
            sizes = f"({expr(axis.length)}, {expr(axis.nnz)})" if axis.nnz is not None else expr(axis.length)
            call = (
                f"T.sparse_variable({axis.parent.name}, {sizes}, ({handle(axis.indptr)}, {handle(axis.indices)}), "
                f"{idtype}, sorted={axis.sorted})"
            )
        out.append(f"{indent}{axis.name} = {call}")
    for meta in f2.buffers:
        axes = ", ".join(a.name for a in meta.axes)
        extra = f", extra_storage={expr(meta.extra_storage)}" if meta.extra_storage is not None else ""
        if meta.role == ALLOCATED:
            scope = meta.buffer.ty.storage_scope
            out.append(f'{indent}{meta.name} = T.alloc_sparse_buffer([{axes}], dtype="{meta.dtype}", scope="{scope}")')
        else:
            out.append(f'{indent}{meta.name} = T.match_sparse_buffer({meta.handle_name}, [{axes}], dtype="{meta.dtype}"{extra})')
    out.append(f"{indent}# body")
    out.extend(lines[first.end_lineno : fn.end_lineno])
    return "\n".join(out) + "\n"
