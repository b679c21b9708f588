"""The autograd function behind ``sddmm``: the owned-column entries computed while ``Y``'s halo
is in flight, the halo-column entries after; backward sends the halo rows' gradients home."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from .. import ops
from .halo_exchange import return_halo_gradients, send_halo
from .local_products import product
from .shard import Shard


def _dtype(X: Any) -> np.dtype:
    return np.dtype(np.float32) if X.dtype == torch.float32 else np.dtype(np.float64)


def _entry_values(A: sp.csr_matrix, X: Any, Y: Any) -> Any:
    """``ops.sddmm(A, X, Y)``'s values (one per entry of ``A``, in its order) as a tensor."""
    if A.nnz == 0:
        return torch.zeros(0, dtype=X.dtype)
    return torch.from_numpy(ops.sddmm(A, X, Y).data)


def _with_values(A: sp.csr_matrix, values: Any) -> sp.csr_matrix:
    """``A``'s structure with other values, duplicates summed (for a product with it)."""
    m = sp.csr_matrix((values.numpy(), A.indices, A.indptr), shape=A.shape)
    m.sum_duplicates()
    return m


def _transposed(A: sp.csr_matrix) -> sp.csr_matrix:
    m = A.T.tocsr()
    m.sum_duplicates()
    return m


class DistributedSddmm(torch.autograd.Function):
    """Forward: start sending ``Y``'s halo, compute the entries in owned columns, then those in
    halo columns (boundary rows only). Backward, with ``W = A ⊙ dO``: ``dX = W @ [Y; Y_halo]``,
    ``dY = Wᵀ @ X`` whose halo part (computed first) travels back to the owners while the owned
    part is computed."""

    @staticmethod
    def forward(ctx: Any, X_local: Any, Y_local: Any, shard: Shard, group: Any) -> Any:
        parts = shard.products
        own, halo = parts.entry_matrices(_dtype(X_local))
        X, Y = X_local.detach().contiguous(), Y_local.detach().contiguous()
        pending = send_halo(shard, Y, group)
        own_entries = torch.from_numpy(parts.own_entries)
        values = torch.empty(shard.matrix.nnz, dtype=X.dtype)
        values[own_entries] = _entry_values(own, X, Y)
        Y_halo = pending.wait()
        if parts.boundary.shape[0]:
            values[~own_entries] = _entry_values(halo, X[torch.from_numpy(parts.boundary)], Y_halo)
        ctx.shard, ctx.group = shard, group
        ctx.save_for_backward(X, Y, Y_halo)
        matrix = shard.matrix
        return torch.sparse_csr_tensor(torch.from_numpy(matrix.indptr.astype(np.int64)),
                                       torch.from_numpy(matrix.indices.astype(np.int64)), values,
                                       size=matrix.shape, check_invariants=False)

    @staticmethod
    def backward(ctx: Any, grad_out: Any) -> Any:
        # Every rank runs the reverse exchange, whichever gradients it needs: it is a collective.
        shard, group = ctx.shard, ctx.group
        X, Y, Y_halo = ctx.saved_tensors
        parts = shard.products
        own, halo = parts.entry_matrices(_dtype(X))
        own_entries = torch.from_numpy(parts.own_entries)
        W = torch.from_numpy(shard.matrix.data.astype(_dtype(X))) * _entry_gradients(grad_out, shard)
        own_W, halo_W = _with_values(own, W[own_entries]), _with_values(halo, W[~own_entries])
        boundary = torch.from_numpy(parts.boundary)
        X_boundary = X[boundary].contiguous()
        pending = return_halo_gradients(shard, product(_transposed(halo_W), X_boundary), group)
        grad_X = product(own_W, Y)
        if boundary.shape[0]:
            grad_X.index_add_(0, boundary, product(halo_W, Y_halo))
        grad_Y = product(_transposed(own_W), X)
        returned = pending.wait()
        if returned.shape[0]:
            grad_Y.index_add_(0, torch.from_numpy(shard.send_local), returned)
        return (grad_X if ctx.needs_input_grad[0] else None, grad_Y if ctx.needs_input_grad[1] else None,
                None, None)


def _entry_gradients(grad_out: Any, shard: Shard) -> Any:
    """The gradient of each entry of the result, in ``shard.matrix``'s entry order: autograd
    hands back a CSR gradient with the result's pattern, or a dense one (after ``to_dense()``),
    read at the entries."""
    matrix = shard.matrix
    if grad_out.layout == torch.sparse_csr and grad_out._nnz() == matrix.nnz:
        return grad_out.values().contiguous()
    dense = grad_out.to_dense() if grad_out.layout != torch.strided else grad_out
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
    return dense[torch.from_numpy(rows), torch.from_numpy(matrix.indices.astype(np.int64))]
