"""The halo exchange: one all-to-all that moves each rank's needed rows of a dense operand
(``spmm``'s ``X``, ``sddmm``'s ``Y``) forward, or the gradients of those rows back to their
owners (backward), started asynchronously so the caller computes while the rows are in
flight. Every distributed op exchanges through these two functions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..runtime.csr_checks import fail
from .shard import Shard


@dataclass(frozen=True)
class PendingRows:
    """Rows arriving from the other ranks: ``wait()`` returns them once the all-to-all is done."""

    rows: Any
    work: Optional[Any]

    def wait(self) -> Any:
        """The received rows (blocks until they are all here)."""
        if self.work is not None:
            self.work.wait()
        return self.rows


def check_group(op: str, shard: Shard, group: Any) -> None:
    """Refuse (naming ``op``) a process group whose size or this process's rank disagrees with
    ``shard``."""
    import torch.distributed as dist

    if shard.world_size == 1 and not (dist.is_available() and dist.is_initialized()):
        return
    if not (dist.is_available() and dist.is_initialized()):
        fail(f"{op}: group", f"the shard is one of {shard.world_size} ranks, but torch.distributed is not "
                            "initialized (call torch.distributed.init_process_group first)")
    size, rank = dist.get_world_size(group), dist.get_rank(group)
    if (size, rank) != (shard.world_size, shard.rank):
        fail(f"{op}: shard", f"is rank {shard.rank} of {shard.world_size}, but this process is rank "
                            f"{rank} of {size} in the group")


def send_halo(shard: Shard, X_local: Any, group: Any) -> PendingRows:
    """Start sending the rows of ``X_local`` (any dense operand indexed by the rank's rows) the
    other ranks need; the result holds this rank's halo rows (``shard.halo`` order) once waited
    on."""
    return _all_to_all(X_local[_send_index(shard, X_local)], shard.send_counts, shard.recv_counts, group,
                       X_local.shape[1])


def return_halo_gradients(shard: Shard, halo_grad: Any, group: Any) -> PendingRows:
    """Start sending the gradients of this rank's halo rows back to their owners; the result
    holds, once waited on, the gradients others computed for the rows this rank sent
    (``shard.send_local`` order), to be added to its own."""
    return _all_to_all(halo_grad, shard.recv_counts, shard.send_counts, group, halo_grad.shape[1])


def _send_index(shard: Shard, X_local: Any) -> Any:
    import torch

    return torch.from_numpy(shard.send_local).to(X_local.device)


def _all_to_all(outgoing: Any, out_counts: list, in_counts: list, group: Any, width: int) -> PendingRows:
    import torch
    import torch.distributed as dist

    incoming = torch.empty((sum(in_counts), width), dtype=outgoing.dtype, device=outgoing.device)
    if len(out_counts) == 1:  # one rank: nothing to exchange
        return PendingRows(incoming, None)
    work = dist.all_to_all_single(incoming, outgoing.contiguous(), in_counts, out_counts,
                                  group=group, async_op=True)
    return PendingRows(incoming, work)
