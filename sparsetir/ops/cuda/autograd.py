"""Gradients of the CUDA ops for torch autograd.

An op of ``CudaOps`` comes here when grad mode is on and one of its operands requires grad
(``records_gradients``); the operands are checked first, as for any call. Each op is a
``torch.autograd.Function`` whose forward runs the op's kernels and whose backward runs the
same kernels (the rules are the CPU path's, ``ops/autograd.py``):

- ``spmm``:  dX = Aᵀ·G (``spmm`` over the transposed structure), dA = G[i]·X[j] (``sddmm``);
- ``sddmm``: W = A ⊙ dO, dX = W·Y, dY = Wᵀ·X (``spmm``), dA = dO ⊙ (X Yᵀ) (``sddmm``);
- ``spmv``:  ``spmm``'s with ``x`` as one column (the same kernels at width 1);
- ``softmax``: dV = P ⊙ (dP − rowsum(dP ⊙ P)) (``segment_sum`` over the rows for the row sums);
- ``segment_sum``: d values = G of each entry's segment;
- ``ell_spmm``: dX = Aᵀ·G (``spmm`` over the transposed structure of the ELL matrix as CSR),
  d values = G[i]·X[j] (``sddmm``; padding entries get theirs too, as on the CPU);
- ``bsr_spmm``: dX = Aᵀ·G (``bsr_spmm`` over the transposed blocks); a BSR ``A`` is a constant.

Aᵀ's structure is made on the device once per matrix (``DeviceCsr.transposed``; an ELL matrix's
per backward, as on the CPU: its index tensor is no object to keep it with) and its values are
gathered from A's per backward. The tensors a backward reads are saved with
``save_for_backward``, so an in-place edit of one before the backward (an operand, A's values)
is refused by torch, as on the CPU path. A torch sparse CSR ``A`` that requires grad receives
``A.grad`` as a sparse CSR tensor with ``A``'s pattern (as ``torch.sparse.mm`` gives it); for
``CsrTensors``, its ``values`` tensor receives the gradient of its entries, and a sparse result
is a ``CsrTensors`` whose ``values`` carry the graph.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import numpy as np

from ..csr_tensors import CsrTensors
from ..inputs import plain


def records_gradients(*operands: Any) -> bool:
    """Whether grad mode is on and an operand (a tensor, or a ``CsrTensors``' values) requires grad."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.is_grad_enabled():
        return False
    for x in operands:
        values = x.values if type(x) is CsrTensors else x
        if isinstance(values, torch.Tensor) and values.requires_grad:
            return True
    return False


def spmm(cops: Any, A: Any, a: Any, X: Any, Xk: Any, buckets: Any = None) -> Any:
    """``cops.spmm`` recording gradients; ``a`` and ``Xk`` are ``A``'s structure and ``X`` checked;
    the forward on ``buckets`` when given (the hybrid format), the backward on CSR."""
    return _functions().spmm.apply(_graph_input(A), X, cops, A, a, Xk, buckets)


def spmv(cops: Any, A: Any, a: Any, x: Any, xk: Any) -> Any:
    """``cops.spmv`` recording gradients: ``spmm``'s, with ``x`` as one column."""
    column = xk.reshape(-1, 1)
    given = x.unsqueeze(1) if isinstance(x, sys.modules["torch"].Tensor) else column  # a DLPack x: no gradient
    return spmm(cops, A, a, given, column).squeeze(1)


def sddmm(cops: Any, A: Any, a: Any, X: Any, Y: Any, Xk: Any, Yk: Any) -> Any:
    """``cops.sddmm`` recording gradients."""
    out = _functions().sddmm.apply(_graph_input(A), X, Y, cops, A, a, Xk, Yk)
    return _as_result(A, out)


def softmax(cops: Any, A: Any, a: Any) -> Any:
    """``cops.softmax`` recording the gradient of ``A``'s values."""
    return _as_result(A, _functions().softmax.apply(_graph_input(A), cops, A, a))


def segment_sum(cops: Any, values: Any, checked: Any, offs: np.ndarray) -> Any:
    """``cops.segment_sum`` recording the gradient of ``values``."""
    return _functions().segment_sum.apply(values, cops, checked, offs)


def ell_spmm(cops: Any, ell: Any, values: Any, X: Any, Xk: Any) -> Any:
    """``cops.ell_spmm`` recording gradients for ``values`` and ``X``."""
    return _functions().ell_spmm.apply(values, X, cops, ell, Xk)


def bsr_spmm(cops: Any, a: Any, blocks: Any, X: Any, Xk: Any, shape: tuple[int, int]) -> Any:
    """``cops.bsr_spmm`` recording the gradient of ``X``."""
    return _functions().bsr_spmm.apply(X, cops, a, blocks, Xk, shape)


def _graph_input(A: Any) -> Any:
    """The tensor through which sparse ``A`` takes part in the graph: a torch sparse CSR tensor
    itself, a ``CsrTensors``' values."""
    return A.values if type(A) is CsrTensors else A


def _as_result(A: Any, out: Any) -> Any:
    """A sparse result with ``A``'s pattern: the Function's own output for a torch ``A`` (already
    a sparse CSR tensor), a ``CsrTensors`` around the values for a ``CsrTensors`` ``A``."""
    if type(A) is CsrTensors:
        return CsrTensors(A.crow_indices, A.col_indices, out, A.shape)
    return out


def _kernel_operand(t: Any) -> Any:
    from . import aligned

    return aligned(plain(t))


@functools.cache
def _functions() -> Any:
    """The ``torch.autograd.Function`` classes, defined on first use (torch is then imported)."""
    import types

    import torch

    def grad_of(A: Any, values: Any) -> Any:
        """The gradient for ``_graph_input(A)`` whose entries are ``values``."""
        if type(A) is CsrTensors:
            return values
        return torch.sparse_csr_tensor(A.crow_indices(), A.col_indices(), values, size=tuple(A.shape),
                                       check_invariants=False)  # A's structure, checked when A was prepared

    def entry_grads(dO: Any, a: Any) -> Any:
        """The gradient of a sparse result at its entries, in ``a``'s entry order. Autograd hands
        back a CSR gradient with the result's pattern, a dense one (e.g. after ``to_dense()``),
        or, for a ``CsrTensors`` result, the gradient of its values."""
        if dO.layout == torch.sparse_csr and dO._nnz() == a.nnz:
            return _kernel_operand(dO.values())
        if dO.layout == torch.strided and dO.dim() == 1 and dO.shape[0] == a.nnz:
            return _kernel_operand(dO)
        dense = dO.to_dense() if dO.layout != torch.strided else dO
        flat = a.rows().long() * a.shape[1] + a.indices.long()
        return _kernel_operand(dense.reshape(-1).index_select(0, flat))

    def transposed_values(a: Any, values: Any) -> tuple[Any, Any]:
        t, perm = a.transposed()
        return t, values.index_select(0, perm)

    def ones(a: Any) -> Any:
        return torch.ones(a.nnz, dtype=getattr(torch, a.dtype), device=a.device)

    def spmm_grads(cops: Any, a: Any, values: Any, X: Any, G: Any, of_values: bool, of_x: bool) -> tuple[Any, Any]:
        """SpMM's gradients for the structure ``a``: its entries' (G[i]·X[j]) and X's (Aᵀ·G)."""
        return (cops.sddmm_on(a, ones(a), G, X) if of_values else None,
                cops.spmm_on(*transposed_values(a, values), G) if of_x else None)

    class Spmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A_in, X, cops, A, a, Xk, buckets):
            ctx.cops, ctx.A, ctx.a = cops, A, a
            values = cops.values(A)
            ctx.save_for_backward(values, Xk)
            return cops.spmm_on(a, values, Xk, buckets)

        @staticmethod
        def backward(ctx, G):
            G = _kernel_operand(G)
            values, Xk = ctx.saved_tensors
            dvalues, dX = spmm_grads(ctx.cops, ctx.a, values, Xk, G, *ctx.needs_input_grad[:2])
            return None if dvalues is None else grad_of(ctx.A, dvalues), dX, None, None, None, None, None

    class Sddmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A_in, X, Y, cops, A, a, Xk, Yk):
            ctx.cops, ctx.A, ctx.a = cops, A, a
            values = cops.values(A)
            ctx.save_for_backward(values, Xk, Yk)
            out = cops.sddmm_on(a, values, Xk, Yk)
            return out if type(A) is CsrTensors else cops._same_pattern(A, out)

        @staticmethod
        def backward(ctx, dO):
            cops, a = ctx.cops, ctx.a
            values, Xk, Yk = ctx.saved_tensors
            d = entry_grads(dO, a)
            dA = dX = dY = None
            if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
                W = values * d
                if ctx.needs_input_grad[1]:
                    dX = cops.spmm_on(a, W, Yk)
                if ctx.needs_input_grad[2]:
                    dY = cops.spmm_on(*transposed_values(a, W), Xk)
            if ctx.needs_input_grad[0]:
                dA = grad_of(ctx.A, cops.sddmm_on(a, d, Xk, Yk))
            return dA, dX, dY, None, None, None, None, None

    class Softmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A_in, cops, A, a):
            ctx.cops, ctx.A, ctx.a = cops, A, a
            P = cops.softmax_on(a, cops.values(A))
            ctx.save_for_backward(P)
            return P if type(A) is CsrTensors else cops._same_pattern(A, P)

        @staticmethod
        def backward(ctx, dP):
            cops, a = ctx.cops, ctx.a
            (P,) = ctx.saved_tensors
            d = entry_grads(dP, a)
            dot = cops.row_sums(a, d * P)  # rowsum(dP ⊙ P), one per row
            dV = (d - dot.index_select(0, a.rows())) * P
            return grad_of(ctx.A, dV), None, None, None

    class SegmentSum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, values, cops, checked, offs):
            ctx.counts = torch.from_numpy(np.diff(offs.astype(np.int64))).to(checked.device)
            ctx.nnz = int(checked.shape[0])
            return cops.segment_sum_on(checked, offs)

        @staticmethod
        def backward(ctx, G):
            # Each value's gradient is its segment's: a broadcast, which torch's repeat_interleave does.
            return torch.repeat_interleave(G, ctx.counts, dim=0, output_size=ctx.nnz), None, None, None

    class EllSpmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, values, X, cops, ell, Xk):
            ctx.cops, ctx.ell, ctx.shape = cops, ell, tuple(values.shape)
            checked = _kernel_operand(values)
            ctx.save_for_backward(checked, Xk)
            return cops.ell_spmm_on(ell, checked, Xk)

        @staticmethod
        def backward(ctx, G):
            G = _kernel_operand(G)
            values, Xk = ctx.saved_tensors
            dvalues, dX = spmm_grads(ctx.cops, ctx.ell.as_csr(), values.reshape(-1), Xk, G, *ctx.needs_input_grad[:2])
            return None if dvalues is None else dvalues.reshape(ctx.shape), dX, None, None, None

    class BsrSpmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, cops, a, blocks, Xk, shape):
            ctx.cops, ctx.a, ctx.blocks, ctx.shape = cops, a, blocks, shape
            return cops.bsr_spmm_on(a, blocks, Xk, shape)

        @staticmethod
        def backward(ctx, G):
            from . import DeviceBsr, aligned

            G = _kernel_operand(G)
            m, n = ctx.shape
            br, bc = ctx.a.block
            t_indptr, t_indices, perm = ctx.a.transposed(n // bc)
            t = DeviceBsr(t_indptr, t_indices, (bc, br), ctx.a.device)
            blocks = aligned(ctx.blocks.index_select(0, perm).transpose(1, 2).contiguous())
            return ctx.cops.bsr_spmm_on(t, blocks, G, (n, m)), None, None, None, None, None

    return types.SimpleNamespace(spmm=Spmm, sddmm=Sddmm, softmax=Softmax, segment_sum=SegmentSum,
                                 ell_spmm=EllSpmm, bsr_spmm=BsrSpmm)
