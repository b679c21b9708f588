"""Relaxing the alignment that stage-III array parameters promise to LLVM.

TVM 0.27 declares every parameter buffer 64-byte aligned and LLVM then emits aligned vector
moves (``vmovaps``). NumPy only guarantees 16 bytes, so a vectorized kernel called with an
ordinary array segfaults. Before compiling, each array parameter, and each view of one (a
block's ``match_buffer``, a ``DeclBuffer``; TVM requires a view's alignment to divide its
source's), is re-declared aligned to its element size, which every array satisfies.
Unaligned vector moves cost nothing on data that happens to be aligned.
"""

from __future__ import annotations

import numpy as np

from .._tvm import BufferType, Var, s_tir, structural_map, structural_walk, tirx


def relax_param_alignment(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` with array parameters and views aligned to their element size, not 64 bytes."""
    candidates = [p for p in func.params if isinstance(p.ty, BufferType)] + _views(func.body)
    renamed: list[tuple[Var, Var]] = []
    for buf in candidates:
        element = _element_bytes(str(buf.ty.dtype))
        if int(buf.ty.data_alignment) > element:
            renamed.append((buf, _with_alignment(buf, element)))
    if not renamed:
        return func

    def on_var(var: Var) -> Var:
        for old, new in renamed:
            if var.same_as(old):
                return new
        return var

    return structural_map(func, [(Var, on_var)])


def _views(body: "tirx.Stmt") -> list[Var]:
    found: list[Var] = []
    structural_walk(
        body,
        [
            (s_tir.MatchBufferRegion, lambda node: found.append(node.buffer)),
            (tirx.DeclBuffer, lambda node: found.append(node.buffer)),
        ],
    )
    return found


def _with_alignment(buf: Var, alignment: int) -> Var:
    ty = buf.ty
    return tirx.decl_buffer(
        ty.shape,
        str(ty.dtype),
        str(buf.name),
        strides=ty.strides,
        elem_offset=ty.elem_offset,
        scope=ty.storage_scope,
        data_alignment=alignment,
        offset_factor=ty.offset_factor,
        layout=ty.layout,
    )


def _element_bytes(dtype: str) -> int:
    if dtype.startswith("bfloat16"):
        return 2
    try:
        return np.dtype(dtype).itemsize
    except TypeError:
        return 1
