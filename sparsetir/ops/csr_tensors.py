"""A CSR matrix as its component tensors: the form of ``A`` that ``torch.compile`` can trace.

TorchDynamo refuses sparse tensors ("Attempted to wrap sparse Tensor"), whether a model holds one
as an attribute or receives one as an argument. A ``CsrTensors`` holds the same matrix as plain
dense tensors (row pointers, column indices, values) and its shape as ints, which Dynamo traces
like any tuple of tensors. Every CSR operation of ``sparsetir.ops`` takes one as ``A``, in eager
mode as under ``torch.compile``, and ``sddmm``/``softmax`` of one return one (with ``A``'s index
tensors, shared, and new values).

torch is never imported here: ``csr_tensors`` finds it in ``sys.modules``.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import numpy as np

from .inputs import fail


class CsrTensors(NamedTuple):
    """A CSR matrix as tensors: ``crow_indices`` (rows + 1,), ``col_indices`` and ``values``
    (nnz,), and ``shape`` ``(rows, cols)`` as ints; gradients flow into ``values``."""

    crow_indices: Any
    col_indices: Any
    values: Any
    shape: tuple[int, int]

    def to_sparse_csr(self) -> Any:
        """The same matrix as a torch sparse CSR tensor (sharing the component tensors)."""
        torch = sys.modules["torch"]
        return torch.sparse_csr_tensor(self.crow_indices, self.col_indices, self.values, size=self.shape)


def csr_tensors(A: Any) -> CsrTensors:
    """``A`` (a torch sparse CSR tensor or a SciPy CSR matrix) as ``CsrTensors``.

    Call it outside the compiled function (a model's ``__init__``). The tensors are detached
    from ``A`` (Dynamo also refuses tensors that are views of a sparse tensor) but share its
    memory: nothing is copied. To train the values, build ``CsrTensors(crow, col, v, shape)``
    with a ``v`` that requires grad.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        fail("csr_tensors: A", "needs torch; import torch first")
    if isinstance(A, torch.Tensor):
        if A.layout != torch.sparse_csr:
            fail("csr_tensors: A", f"expected a torch sparse CSR tensor, got layout {A.layout}")
        return CsrTensors(A.crow_indices().detach(), A.col_indices().detach(), A.values().detach(),
                          (int(A.shape[0]), int(A.shape[1])))
    if getattr(A, "format", None) == "csr":
        return CsrTensors(torch.from_numpy(np.asarray(A.indptr)), torch.from_numpy(np.asarray(A.indices)),
                          torch.from_numpy(np.asarray(A.data)), (int(A.shape[0]), int(A.shape[1])))
    fail("csr_tensors: A", f"expected a torch sparse CSR tensor or a SciPy CSR matrix, got {type(A).__name__}")
