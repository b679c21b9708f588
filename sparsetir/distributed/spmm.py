"""``spmm``: a rank's rows of ``A @ X`` from its rows of ``X``, with the halo exchanged by one
all-to-all that overlaps the local product, and autograd through the reverse exchange."""

from __future__ import annotations

from typing import Any

from .halo_exchange import check_group
from .local_operand import check_local_operand, check_shard
from .shard import Shard


def spmm(shard: Shard, X_local: Any, group: Any = None) -> Any:
    """``(A @ X)[part.rows(rank)]`` for ``X_local = X[part.rows(rank)]`` (a torch tensor): every
    rank of ``group`` (default: the whole world) calls it with its own shard. The gradient of
    ``X_local`` is the single-process gradient of ``X`` restricted to the rank's rows."""
    check_shard("spmm", shard)
    check_local_operand("spmm: X_local", shard, X_local)
    check_group("spmm", shard, group)
    from .spmm_autograd import DistributedSpmm  # needs torch, which partition and shard do not

    return DistributedSpmm.apply(X_local, shard, group)
