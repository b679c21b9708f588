"""Scratch buffers on the stack: a rewrite of a stage-III function before CPU code generation.

The lowering declares the small scratch a statement needs per iteration (a binary search's
``lo``/``hi`` pair and the position it finds, in ``transforms/sparse_iter/search.py``) in scope
``local``: a thread's registers on a GPU. TVM 0.27's CPU back end (``LowerTVMBuiltin``) turns
every ``local`` allocation into a ``TVMBackendAllocWorkspace`` / ``TVMBackendFreeWorkspace``
pair at its place in the loop nest, so a lookup in a sorted row paid two heap calls per row,
and a fused ``(I, J)`` iteration two per stored entry; only an allocation in scope ``global`` of
constant size under ``kMaxStackAlloca`` becomes a stack slot, which LLVM keeps in registers.

So for the CPU every ``local`` allocation is declared ``global`` (the two scopes mean the same
memory there). Measured on the 2-core development VM (``sparsetir bench --script``, email_enron,
width 64): the fused SDDMM example went from 32.6 to 22.7 ms serial and from 25.2 to 12.1 ms
row-parallel (the workspace calls did not scale with threads), the CSR-to-BSR copy from 12.4 to
10.4 ms serial. A ``local`` buffer of data-dependent or large size stays a workspace call, as
before.
"""

from __future__ import annotations

from typing import Any

from .._tvm import Var, s_tir, structural_walk, tirx
from ..transforms.sparse_iter.context import substitute


def scratch_on_stack(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` with every block allocation of scope ``local`` declared in scope ``global``."""
    local: list[Var] = []

    def on_block(block: Any) -> None:
        local.extend(b for b in block.alloc_buffers if str(b.ty.storage_scope) == "local")

    structural_walk(func.body, [(s_tir.SBlock, on_block)])
    if not local:
        return func
    renamed = [(old, tirx.decl_buffer(list(old.ty.shape), str(old.ty.dtype), name=old.name, scope="global",
                                      layout=None)) for old in local]
    return substitute(func, renamed)
