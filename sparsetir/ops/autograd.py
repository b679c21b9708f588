"""Gradients of ``sparsetir.ops`` for torch autograd, and the way to the ``torch.library`` ops.

An op takes this path only when grad mode is on and one of its torch operands requires grad, when
``torch.compile`` traces it, or when its ``A`` is ``CsrTensors`` (``wants_torch``); otherwise it
runs the plain kernel call, whose speed this module does not touch. Traced calls and
``CsrTensors`` go to the custom ops of ``torch_library.py`` (the same gradient rules); in eager
mode, the other calls that record gradients use the ``torch.autograd.Function`` classes here,
which also take SciPy and torch sparse CSR matrices. Each op here is a
``torch.autograd.Function`` whose forward is the plain op (grad mode is off inside it, so it
does not come back here) and whose backward runs sparsetir's own kernels:

- ``spmm``:  dX = Aᵀ·G (``spmm`` over the transposed structure), dA = G[i]·X[j] (``sddmm``);
- ``sddmm``: W = A ⊙ dO, dX = W·Y, dY = Wᵀ·X (``spmm``), dA = dO ⊙ (X Yᵀ) (``sddmm``);
- ``spmv``:  dx = Aᵀ·g (``spmv``), dA = g[i]·x[j];
- ``segment_sum``: d values = G of each entry's segment;
- ``softmax``: dV = P ⊙ (dP − rowsum(dP ⊙ P)) (``segment_sum`` for the row sums);
- ``bsr_spmm``: dX = Aᵀ·G (``bsr_spmm`` over the transposed block structure);
- ``ell_spmm``: dX = Aᵀ·G (``spmm`` over the transposed structure), d values = G[i]·X[j] (``sddmm``).

The structure a backward needs (transposed CSR, each entry's row, a matrix of ones) is built once
per matrix and cached in ``ops.prepared`` like the forward's preparation. A sparse CSR torch
``A`` that requires grad receives ``A.grad`` as a sparse CSR tensor with ``A``'s pattern, as
``torch.sparse.mm`` gives it. SciPy matrices get no gradient (they are constants to torch), but
the dense torch operands beside them do; on this path a dense numpy operand next to a torch
operand is taken as a torch tensor, and ``sddmm`` of a SciPy ``A`` returns a torch sparse CSR
tensor, so that the result can carry its ``grad_fn``.

torch is imported lazily (``sparsetir.ops`` never imports it itself).
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..runtime.arrays import kernel_view
from .csr_tensors import CsrTensors
from .inputs import plain


def wants_torch(*operands: Any) -> bool:
    """Whether a call goes through torch instead of the plain kernel call: an operand requires
    grad and grad mode is on, a ``CsrTensors`` operand, or torch operands traced by ``torch.compile``.

    This runs on every op call (~0.4 us); numpy operands cost a dict lookup and two type checks
    each, and grad mode and ``torch.compiler.is_compiling()`` are asked only once a tensor is found.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    tensor = False
    for x in operands:
        if isinstance(x, torch.Tensor):
            if x.requires_grad and torch.is_grad_enabled():
                return True
            tensor = True
        elif type(x) is CsrTensors:
            return True
    return tensor and torch.compiler.is_compiling()


def _library(*sparse: Any) -> Any:
    """The ``torch_library`` module when a call belongs to the custom ops (under ``torch.compile``
    or with a ``CsrTensors`` operand), else None. A plain import statement: Dynamo follows it,
    even on the first call (a lookup in ``sys.modules`` would fail its guards)."""
    torch = sys.modules["torch"]
    if torch.compiler.is_compiling() or any(type(a) is CsrTensors for a in sparse):
        from . import torch_library

        return torch_library
    return None


def _ops() -> Any:
    from sparsetir import ops  # the package imports this module: resolve it at call time

    return ops


class _Pattern:
    """What the backward passes need about one CSR structure, built once per matrix.

    ``work`` and ``work_t`` are CSR matrices with the structure and its transpose whose values
    buffers are overwritten before each use (under ``lock``): the kernels' per-matrix
    preparation keys on the arrays' identity, so a fresh matrix per backward would be validated
    and partitioned again on every call.
    """

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, shape: tuple[int, int], dtype: str) -> None:
        m, n = shape
        nnz = int(indices.shape[0])
        self.shape = shape
        self.nnz = nnz
        self.row_lengths = np.diff(indptr)
        self.rows = np.repeat(np.arange(m, dtype=np.int32), self.row_lengths)
        self.cols = indices
        self.indptr = indptr
        # A stable sort of the entries by column lists them in row-major order of Aᵀ; duplicates
        # stay separate entries (they add up in every kernel, as in A).
        self.perm = np.argsort(indices, kind="stable")
        t_indptr = np.zeros(n + 1, np.int32)
        np.cumsum(np.bincount(indices, minlength=n), out=t_indptr[1:])
        self.ones = sp.csr_matrix((np.ones(nnz, dtype), indices, indptr), shape=shape)
        self.work = sp.csr_matrix((np.empty(nnz, dtype), indices, indptr), shape=shape)
        self.work_t = sp.csr_matrix((np.empty(nnz, dtype), self.rows[self.perm], t_indptr), shape=(n, m))
        # Aᵀ's entry p is A's entry perm[p]: the gather map of ``ops.spmm_gathered``.
        self.src = kernel_view(self.perm.astype(np.int32))
        self.lock = threading.Lock()

    def at(self, values: np.ndarray, op: Any, *operands: Any) -> Any:
        """``op`` applied to the matrix of this structure with ``values``, then ``operands``."""
        with self.lock:
            np.copyto(self.work.data, values)
            return op(self.work, *operands)

    def transposed(self, values: np.ndarray, op: Any, *operands: Any) -> Any:
        """``op`` applied to the transpose of the matrix of this structure with ``values``.

        ``ops.spmm`` reads Aᵀ's values from ``values`` through ``perm`` inside its kernel
        (``ops.spmm_gathered``); another op gets them reordered into a copy first."""
        ops = _ops()
        if op is ops.spmm and len(operands) == 1 and values.dtype == self.work_t.data.dtype:
            t = ops._csr("A", self.work_t)
            return ops.spmm_gathered(t, np.ascontiguousarray(values), self.src, *operands)
        with self.lock:
            np.take(values, self.perm, out=self.work_t.data)
            return op(self.work_t, *operands)


def _pattern(A: Any, what: str) -> _Pattern:
    ops = _ops()
    a = ops._csr(what, A)
    return ops.prepared.get("autograd", A, lambda: _Pattern(a.indptr, a.indices, a.shape, a.dtype))


def _same_structure(out: Any, A: Any, what: str) -> Any:
    """``out``, a result with ``A``'s structure, sharing ``A``'s cached ``_Pattern``: the next
    op's backward (``softmax`` of an ``sddmm``, ``spmm`` of a ``softmax``) then finds the
    transposed structure ready instead of sorting the entries again for each new result."""
    pattern = _pattern(A, what)
    _ops().prepared.share("autograd", out, pattern)
    return out


def _values(A: Any) -> np.ndarray:
    """The current values of CSR ``A`` (scipy or torch) as a numpy array."""
    ops = _ops()
    a = ops._csr("A", A)
    return ops.current_values(A, a) if a.is_torch else a.data


def _torch_values(v: Any) -> Any:
    torch = sys.modules["torch"]
    return plain(v) if isinstance(v, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(v))


def _np(t: Any) -> np.ndarray:
    return plain(t).contiguous().numpy()


def _grad_of_csr(A: Any, values: Any) -> Any:
    """``A.grad`` for a torch sparse CSR ``A``: a CSR tensor with ``A``'s pattern and ``values``."""
    torch = sys.modules["torch"]
    return torch.sparse_csr_tensor(A.crow_indices(), A.col_indices(), _torch_values(values), size=tuple(A.shape),
                                   check_invariants=False)  # A's structure, validated when A was prepared


def _output_grad_values(dO: Any, p: _Pattern) -> np.ndarray:
    """The values, at the pattern ``p``, of the gradient of a sparse result.

    Autograd hands back a CSR gradient with the result's own pattern (its values are then the
    gradient); a dense gradient (e.g. after ``to_dense()``) is read at the stored positions.
    """
    torch = sys.modules["torch"]
    if dO.layout == torch.sparse_csr and dO._nnz() == p.nnz:
        return _np(dO.values())
    dense = _np(dO.to_dense() if dO.layout != torch.strided else dO)
    return np.ascontiguousarray(dense[p.rows, p.cols])


def _as_torch(x: Any) -> Any:
    """A dense operand as a torch tensor (numpy arrays are wrapped, sharing memory)."""
    torch = sys.modules["torch"]
    return x if isinstance(x, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(x))


def _is_torch(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


@functools.cache
def _functions() -> Any:
    """The ``torch.autograd.Function`` classes, defined on first use (torch is then imported)."""
    import torch

    ops = _ops()

    class Spmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A_tensor, A, X, format="csr"):
            ctx.A = A
            ctx.save_for_backward(X)
            return ops.spmm(A, X, format=format)

        @staticmethod
        def backward(ctx, G):
            (X,) = ctx.saved_tensors
            A = ctx.A
            p = _pattern(A, "spmm: A")
            dA = dX = None
            if ctx.needs_input_grad[2]:
                dX = p.transposed(_values(A), ops.spmm, G)
            if ctx.needs_input_grad[0]:
                dA = _grad_of_csr(A, ops.sddmm(p.ones, G, X).data)
            return dA, None, dX, None

    class Sddmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A_tensor, A, X, Y):
            ctx.A = A
            ctx.save_for_backward(X, Y)
            out = ops.sddmm(A, X, Y)
            if not _is_torch(out):  # a SciPy A: the result must be a tensor to carry a gradient
                out = _torch_csr(out)
            return _same_structure(out, A, "sddmm: A")

        @staticmethod
        def backward(ctx, dO):
            X, Y = ctx.saved_tensors
            A = ctx.A
            p = _pattern(A, "sddmm: A")
            d = _output_grad_values(dO, p)
            dA = dX = dY = None
            if ctx.needs_input_grad[2] or ctx.needs_input_grad[3]:
                W = _values(A) * d
                if ctx.needs_input_grad[2]:
                    dX = p.at(W, ops.spmm, Y)
                if ctx.needs_input_grad[3]:
                    dY = p.transposed(W, ops.spmm, X)
            if ctx.needs_input_grad[0]:
                dA = _grad_of_csr(A, d * ops.sddmm(p.ones, X, Y).data)
            return dA, None, dX, dY

    class Spmv(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A_tensor, A, x):
            ctx.A = A
            ctx.save_for_backward(x)
            return ops.spmv(A, x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            A = ctx.A
            p = _pattern(A, "spmv: A")
            dA = dx = None
            if ctx.needs_input_grad[2]:
                dx = p.transposed(_values(A), ops.spmv, g.contiguous())
            if ctx.needs_input_grad[0]:
                # One multiply per entry (g[i] * x[j]): a gather in NumPy is as fast as a kernel
                # would be, and needs no SDDMM of width 1 compiled for it.
                dA = _grad_of_csr(A, _np(g)[p.rows] * _np(x)[p.cols])
            return dA, None, dx

    class SegmentSum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, values, offsets):
            offs = _np(offsets) if isinstance(offsets, torch.Tensor) else np.asarray(offsets)
            ctx.counts = torch.from_numpy(np.diff(offs.astype(np.int64)))
            return ops.segment_sum(values, offsets)

        @staticmethod
        def backward(ctx, G):
            # Each value's gradient is its segment's: a broadcast (a gather), which no sparsetir
            # kernel computes; torch's repeat_interleave does it in one pass.
            return torch.repeat_interleave(G, ctx.counts, dim=0, output_size=int(ctx.counts.sum())), None

    class Softmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A_tensor, A):
            ctx.A = A
            P = ops.softmax(A)
            ctx.P = _np(P.values())
            return _same_structure(P, A, "softmax: A")

        @staticmethod
        def backward(ctx, dP):
            A = ctx.A
            p = _pattern(A, "softmax: A")
            P = ctx.P
            d = _output_grad_values(dP, p)
            dot = ops.segment_sum(d * P, p.indptr)  # rowsum(dP ⊙ P), one per row
            # Each entry's row sum by repeating it along its row: half the time of the gather dot[p.rows].
            dA = d - np.repeat(dot, p.row_lengths)
            dA *= P
            return _grad_of_csr(A, dA), None

    class BsrSpmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A, X):
            ctx.A = A
            return ops.bsr_spmm(A, X)

        @staticmethod
        def backward(ctx, G):
            t = ops.prepared.get("autograd_bsr", ctx.A, lambda: _BsrTranspose(ctx.A))
            return None, t.times(ctx.A.data, G)

    class EllSpmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, values, X, indices, rows):
            ctx.save_for_backward(values, X)
            ctx.indices, ctx.rows = indices, rows
            return ops.ell_spmm(indices, values, X, rows)

        @staticmethod
        def backward(ctx, G):
            values, X = ctx.saved_tensors
            idx = _np(ctx.indices) if isinstance(ctx.indices, torch.Tensor) else np.asarray(ctx.indices)
            m, width = ops._ell_shape(idx.shape, tuple(values.shape), ctx.rows)
            n = int(X.shape[0])
            # The ELL matrix as CSR (row i's entries are positions i*width ... i*width + width - 1;
            # padding entries take part with their stored 0). Built per backward: an ELL matrix
            # is not an object the preparation cache can key on.
            indptr = (np.arange(m + 1, dtype=np.int64) * width).astype(np.int32)
            p = _Pattern(indptr, idx.reshape(-1).astype(np.int32), (m, n), str(_np(values).dtype))
            dvalues = dX = None
            if ctx.needs_input_grad[1]:
                dX = p.transposed(_np(values).reshape(-1), ops.spmm, G)
            if ctx.needs_input_grad[0]:
                if width <= n:
                    d = ops.sddmm(p.ones, G, X).data
                else:
                    # sddmm refuses rows longer than the column count (repeated padding columns);
                    # the same dot products in NumPy.
                    d = np.einsum("ij,ij->i", _np(G)[p.rows], _np(X)[p.cols])
                dvalues = torch.from_numpy(d.reshape(tuple(values.shape)))
            return dvalues, dX, None, None

    return types.SimpleNamespace(spmm=Spmm, sddmm=Sddmm, spmv=Spmv, segment_sum=SegmentSum, softmax=Softmax,
                                 bsr_spmm=BsrSpmm, ell_spmm=EllSpmm)


class _BsrTranspose:
    """The transposed block structure of a BSR matrix, with a values buffer refilled per use."""

    def __init__(self, A: Any) -> None:
        br, bc = A.blocksize
        indices = np.asarray(A.indices)
        block_rows = np.repeat(np.arange(A.shape[0] // br, dtype=np.int32), np.diff(A.indptr))
        self.perm = np.argsort(indices, kind="stable")
        t_indptr = np.zeros(A.shape[1] // bc + 1, np.int32)
        np.cumsum(np.bincount(indices, minlength=A.shape[1] // bc), out=t_indptr[1:])
        data = np.empty((indices.shape[0], bc, br), A.data.dtype)
        self.matrix = sp.bsr_matrix((data, block_rows[self.perm], t_indptr), shape=(A.shape[1], A.shape[0]))
        self.lock = threading.Lock()

    def times(self, data: np.ndarray, G: Any) -> Any:
        """Aᵀ·G for the BSR matrix with block values ``data``."""
        with self.lock:
            np.copyto(self.matrix.data, data[self.perm].transpose(0, 2, 1))
            return _ops().bsr_spmm(self.matrix, G)


def _torch_csr(A: Any) -> Any:
    """SciPy CSR ``A`` as a torch sparse CSR tensor (sharing its values)."""
    torch = sys.modules["torch"]
    return torch.sparse_csr_tensor(torch.from_numpy(np.asarray(A.indptr, np.int64)),
                                   torch.from_numpy(np.asarray(A.indices, np.int64)),
                                   torch.from_numpy(A.data), size=tuple(A.shape), check_invariants=False)


def _sparse_arg(A: Any) -> Any:
    """The tensor through which ``A`` takes part in the graph: ``A`` itself when it is torch, else
    None (a SciPy matrix is a constant)."""
    return A if _is_torch(A) else None


def spmm(A: Any, X: Any, format: Any = "csr") -> Any:
    """``ops.spmm`` recording gradients for ``A`` (torch CSR) and ``X``; the forward product runs
    on ``format``, the backward on CSR (the transposed structure)."""
    if (library := _library(A)) is not None:
        if format != "csr":
            from .inputs import fail

            fail("spmm: format", f"{format!r} works on SciPy and torch CSR matrices in eager mode; under "
                                 "torch.compile and with CsrTensors spmm computes on CSR (pass format='csr')")
        return library.spmm(A, X)
    return _functions().spmm.apply(_sparse_arg(A), A, _as_torch(X), format)


def sddmm(A: Any, X: Any, Y: Any) -> Any:
    """``ops.sddmm`` recording gradients for ``A`` (torch CSR), ``X`` and ``Y``."""
    if (library := _library(A)) is not None:
        return library.sddmm(A, X, Y)
    return _functions().sddmm.apply(_sparse_arg(A), A, _as_torch(X), _as_torch(Y))


def spmv(A: Any, x: Any) -> Any:
    """``ops.spmv`` recording gradients for ``A`` (torch CSR) and ``x``."""
    if (library := _library(A)) is not None:
        return library.spmv(A, x)
    return _functions().spmv.apply(_sparse_arg(A), A, _as_torch(x))


def segment_sum(values: Any, offsets: Any) -> Any:
    """``ops.segment_sum`` recording the gradient of ``values``."""
    if (library := _library()) is not None:
        return library.segment_sum(values, offsets)
    return _functions().segment_sum.apply(values, offsets)


def softmax(A: Any) -> Any:
    """``ops.softmax`` recording the gradient of ``A``'s values (torch CSR)."""
    if (library := _library(A)) is not None:
        return library.softmax(A)
    return _functions().softmax.apply(A, A)


def ell_spmm(indices: Any, values: Any, X: Any, rows: Any) -> Any:
    """``ops.ell_spmm`` recording gradients for ``values`` and ``X``."""
    if (library := _library()) is not None:
        return library.ell_spmm(indices, values, X, rows)
    return _functions().ell_spmm.apply(_as_torch(values), _as_torch(X), indices, rows)


def bsr_spmm(A: Any, X: Any) -> Any:
    """``ops.bsr_spmm`` recording the gradient of ``X`` (a SciPy BSR ``A`` is a constant)."""
    if (library := _library()) is not None:
        return library.bsr_spmm(A, X)
    return _functions().bsr_spmm.apply(A, _as_torch(X))
