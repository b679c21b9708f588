"""``sparsetir.distributed``: one sparse operation spread over the processes of a
``torch.distributed`` group, each holding a block of rows (docs/distributed.md).

- ``partition(A, world_size, method)``: which rank owns each row of a square CSR matrix
  (METIS through ``pymetis``, or equal-nnz contiguous blocks); the same on every rank.
- ``shard(A, part, rank)``: one rank's rows with local column ids and its halo plan (the rows
  of ``X`` it sends to and receives from every other rank).
- ``spmm(shard, X_local)``: the rank's rows of ``A @ X`` from the rank's rows of ``X``,
  exchanging only the halo rows (all-to-all), with autograd through the reverse exchange.
- ``sddmm(shard, X_local, Y_local)``: the values of ``A ⊙ (X Yᵀ)`` on the rank's rows of ``A``
  (local CSR order), exchanging ``Y``'s halo rows the same way.

The local products run on the compiled kernels of ``sparsetir.ops``; the transport is
``torch.distributed`` (gloo on CPU), never one of our own.
"""

from __future__ import annotations

from .partition import Partition, partition
from .sddmm import sddmm
from .shard import Shard, shard
from .spmm import spmm

__all__ = ["Partition", "Shard", "partition", "sddmm", "shard", "spmm"]
