"""The checks of a rank's dense operand (its rows of ``X`` or ``Y``), shared by the distributed
ops so that their refusals read alike."""

from __future__ import annotations

from typing import Any

from ..runtime.csr_checks import fail
from .shard import Shard


def check_shard(op: str, shard: Any) -> None:
    """Refuse anything but a ``Shard`` as ``op``'s shard."""
    if not isinstance(shard, Shard):
        fail(f"{op}: shard", f"expected a Shard made by sparsetir.distributed.shard, got {type(shard).__name__}")


def check_local_operand(what: str, shard: Shard, X: Any) -> None:
    """Refuse ``X`` unless it is a dense 2-D float32/float64 torch tensor with one row per row the
    rank owns; ``what`` names it (``"spmm: X_local"``)."""
    import torch

    if not isinstance(X, torch.Tensor) or X.layout != torch.strided or X.dim() != 2:
        fail(what, f"expected a dense 2-D torch tensor, got {_describe(X)}")
    if X.shape[0] != shard.rows.shape[0]:
        fail(what, f"has {X.shape[0]} rows, but rank {shard.rank} owns {shard.rows.shape[0]}")
    if X.dtype not in (torch.float32, torch.float64):
        fail(what, f"must be float32 or float64, got {X.dtype}")


def _describe(X: Any) -> str:
    shape = getattr(X, "shape", None)
    return f"{type(X).__name__}" + (f" of shape {tuple(shape)}" if shape is not None else "")
