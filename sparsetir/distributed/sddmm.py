"""``sddmm``: the values of ``A ⊙ (X Yᵀ)`` on a rank's rows of ``A``, with ``Y``'s halo rows
exchanged by the halo all-to-all (overlapping the owned-column entries) and autograd through
the reverse exchange."""

from __future__ import annotations

from typing import Any

from ..runtime.csr_checks import fail
from .halo_exchange import check_group
from .local_operand import check_local_operand, check_shard
from .shard import Shard


def sddmm(shard: Shard, X_local: Any, Y_local: Any, group: Any = None) -> Any:
    """The rank's rows of ``sparsetir.ops.sddmm(A, X, Y)`` (``A[i, j] * dot(X[i], Y[j])`` on
    ``A``'s entries) for ``X_local = X[rows]``, ``Y_local = Y[rows]`` (``rows =
    part.rows(rank)``): a torch sparse CSR tensor with the pattern of ``shard.matrix``, local
    column ids included (column ``c`` is global column ``concat(shard.rows, shard.halo)[c]``),
    its values in ``shard.matrix``'s entry order. Every rank of ``group`` calls it; it is
    differentiable in ``X_local`` and ``Y_local`` (the gradients of ``Y``'s halo rows go back
    to their owners), with the single-process gradients restricted to the rank's rows."""
    check_shard("sddmm", shard)
    check_local_operand("sddmm: X_local", shard, X_local)
    check_local_operand("sddmm: Y_local", shard, Y_local)
    if Y_local.shape[1] != X_local.shape[1]:
        fail("sddmm: Y_local", f"has {Y_local.shape[1]} columns, but X_local has {X_local.shape[1]}")
    if Y_local.dtype != X_local.dtype:
        fail("sddmm: Y_local", f"is {Y_local.dtype}, but X_local is {X_local.dtype}")
    check_group("sddmm", shard, group)
    from .sddmm_autograd import DistributedSddmm  # needs torch, which partition and shard do not

    return DistributedSddmm.apply(X_local, Y_local, shard, group)
