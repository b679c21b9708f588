"""``spmm``: a rank's rows of ``A @ X`` from its rows of ``X``, with the halo exchanged by one
all-to-all that overlaps the local product, and autograd through the reverse exchange."""

from __future__ import annotations

from typing import Any

from ..runtime.csr_checks import fail
from .halo_exchange import check_group
from .shard import Shard


def spmm(shard: Shard, X_local: Any, group: Any = None) -> Any:
    """``(A @ X)[part.rows(rank)]`` for ``X_local = X[part.rows(rank)]`` (a torch tensor): every
    rank of ``group`` (default: the whole world) calls it with its own shard. The gradient of
    ``X_local`` is the single-process gradient of ``X`` restricted to the rank's rows."""
    import torch

    if not isinstance(shard, Shard):
        fail("spmm: shard", f"expected a Shard made by sparsetir.distributed.shard, got {type(shard).__name__}")
    if not isinstance(X_local, torch.Tensor) or X_local.layout != torch.strided or X_local.dim() != 2:
        fail("spmm: X_local", f"expected a dense 2-D torch tensor, got {_describe(X_local)}")
    if X_local.shape[0] != shard.rows.shape[0]:
        fail("spmm: X_local", f"has {X_local.shape[0]} rows, but rank {shard.rank} owns {shard.rows.shape[0]}")
    if X_local.dtype not in (torch.float32, torch.float64):
        fail("spmm: X_local", f"must be float32 or float64, got {X_local.dtype}")
    check_group(shard, group)
    from .spmm_autograd import DistributedSpmm  # needs torch, which partition and shard do not

    return DistributedSpmm.apply(X_local, shard, group)


def _describe(X: Any) -> str:
    shape = getattr(X, "shape", None)
    return f"{type(X).__name__}" + (f" of shape {tuple(shape)}" if shape is not None else "")
