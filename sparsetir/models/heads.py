"""A graph's self-looped structure repeated once per attention head, as one block-diagonal matrix."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .csr import csr_tensor


@dataclass(frozen=True)
class HeadStructure:
    """The self-looped graph repeated for ``heads`` heads: head ``h`` occupies rows and columns
    ``h*n ... h*n + n - 1`` and entries ``h*nnz ...``, so one sparse call serves every head.

    Features ``(n, heads, f)`` enter as ``(heads*n, f)`` (head-major) and per-edge scores as
    ``(heads*nnz,)``.
    """

    heads: int
    size: tuple[int, int]
    crow: torch.Tensor  # int64, (heads*n + 1,)
    col: torch.Tensor  # int64, (heads*nnz,)
    rows: torch.Tensor  # int64, (heads*nnz,): the row of each entry (the receiving node)
    coo: torch.Tensor  # int64, (2, heads*nnz): rows over columns, row-major (a coalesced COO's)
    ones: torch.Tensor  # sparse CSR float32 with every value 1: the pattern SDDMM samples

    @classmethod
    def repeat(cls, indptr: torch.Tensor, indices: torch.Tensor, heads: int) -> "HeadStructure":
        """The structure of the CSR (``indptr``, ``indices``, int64) repeated for ``heads`` heads."""
        n, nnz = indptr.shape[0] - 1, indices.shape[0]
        crow = torch.cat([indptr[:-1] + h * nnz for h in range(heads)] + [torch.tensor([heads * nnz])])
        col = torch.cat([indices + h * n for h in range(heads)])
        rows = torch.repeat_interleave(torch.arange(heads * n), crow.diff())
        size = (heads * n, heads * n)
        ones = csr_tensor(crow, col, torch.ones(heads * nnz), size)
        return cls(heads, size, crow, col, rows, torch.stack([rows, col]), ones)
