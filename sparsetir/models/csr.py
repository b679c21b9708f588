"""torch sparse CSR tensors for the models: built quietly, and rewritten in place (``CsrSlot``).

A ``CsrSlot`` is one CSR tensor of a fixed structure whose values every ``fill`` overwrites,
gradients flowing back to the values it was filled with. Two reasons not to build a fresh
``torch.sparse_csr_tensor(crow, col, values)`` per forward pass:

- ``sparsetir.ops`` prepares each matrix object once (validation, row partition, and for
  gradients a transposed structure found by sorting the entries) and reads its values on every
  call; a fresh tensor per pass is prepared again every time (an edge softmax and an SpMM with
  gradients over Cora's 8-head attention: 17 ms with fresh tensors, 2.4 ms with slots);
- torch's backward of the constructor (``SparseCompressedTensorBackward0``) goes through
  ``sparse_mask`` and fills a dense (rows x columns) tensor: about 1 s per call for the 8-head
  Cora structure (21,664 x 21,664), and 100 GB for PubMed's (157,736 x 157,736).

The price: a slot holds the values of the last ``fill`` only, so a pass's backward must run
before the next pass fills the slot again (the usual forward, backward, step loop does).
"""

from __future__ import annotations

import warnings

import torch


def csr_tensor(crow: torch.Tensor, col: torch.Tensor, values: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """A torch sparse CSR tensor, without torch's per-process notice that CSR support is beta.

    The structures here come from canonical SciPy matrices, so torch's invariant checks are off.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(crow, col, values, size=size, check_invariants=False)


class CsrSlot:
    """One CSR tensor with the structure (``crow``, ``col``), its values rewritten by each ``fill``."""

    def __init__(self, crow: torch.Tensor, col: torch.Tensor, size: tuple[int, int],
                 dtype: torch.dtype = torch.float32) -> None:
        self.crow, self.col, self.size = crow, col, size
        self.rows = torch.repeat_interleave(torch.arange(size[0]), crow.diff())
        self.tensor = csr_tensor(crow, col, torch.zeros(col.shape[0], dtype=dtype), size)

    def fill(self, values: torch.Tensor) -> torch.Tensor:
        """``self.tensor`` holding ``values`` (one per stored entry); gradients flow into them."""
        return _Fill.apply(values, self)


class _Fill(torch.autograd.Function):
    @staticmethod
    def forward(ctx, values: torch.Tensor, slot: CsrSlot) -> torch.Tensor:
        ctx.slot = slot
        slot.tensor.values().copy_(values)
        return slot.tensor

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple:
        slot = ctx.slot
        # The ops hand back gradients built on the tensor's own index arrays: their values are it.
        if grad.layout == torch.sparse_csr and grad.col_indices().data_ptr() == slot.col.data_ptr() \
                and grad.crow_indices().data_ptr() == slot.crow.data_ptr():
            return grad.values(), None
        # Any other gradient (another pattern, or dense): read it at the stored entries.
        dense = grad.to_dense() if grad.layout != torch.strided else grad
        return dense[slot.rows, slot.col], None
