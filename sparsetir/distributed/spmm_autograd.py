"""The autograd function behind ``spmm``: forward and backward products on a rank's local
matrices, each overlapping its halo exchange."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .halo_exchange import return_halo_gradients, send_halo
from .local_products import product
from .shard import Shard


def _dtype(X: Any) -> np.dtype:
    return np.dtype(np.float32) if X.dtype == torch.float32 else np.dtype(np.float64)



class DistributedSpmm(torch.autograd.Function):
    """Forward: start the halo exchange, multiply the owned columns, then add the halo columns'
    product into the boundary rows. Backward: the transpose, halo part first so its gradients
    travel back to their owners while the owned part is computed."""

    @staticmethod
    def forward(ctx: Any, X_local: Any, shard: Shard, group: Any) -> Any:
        own, halo, _, _ = shard.products.matrices(_dtype(X_local))
        X_local = X_local.detach().contiguous()
        pending = send_halo(shard, X_local, group)
        Y = product(own, X_local)
        X_halo = pending.wait()
        if shard.products.boundary.shape[0]:
            boundary = torch.from_numpy(shard.products.boundary)
            Y.index_add_(0, boundary, product(halo, X_halo))
        ctx.shard, ctx.group = shard, group
        return Y

    @staticmethod
    def backward(ctx: Any, grad_Y: Any) -> Any:
        shard, group = ctx.shard, ctx.group
        _, _, own_T, halo_T = shard.products.matrices(_dtype(grad_Y))
        grad_Y = grad_Y.contiguous()
        boundary = torch.from_numpy(shard.products.boundary)
        halo_grad = product(halo_T, grad_Y[boundary])
        pending = return_halo_gradients(shard, halo_grad, group)
        grad_X = product(own_T, grad_Y)
        returned = pending.wait()
        if returned.shape[0]:
            grad_X.index_add_(0, torch.from_numpy(shard.send_local), returned)
        return grad_X, None, None
