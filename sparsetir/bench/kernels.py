"""What each benchmarked kernel is: its inputs, its float64 reference, and every implementation.

Everything about one kernel lives in one place: how its dense operands are made, the exact
result it must produce (computed in float64, independently of every timed implementation),
how many bytes a minimal kernel moves, and how ``sparsetir.ops``, SciPy and torch compute it.
A timed call gets all of its arguments ready-made, so conversions (to torch tensors, to a COO
row array) are never part of a timing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional

import numpy as np
import scipy.sparse

# Bytes of one float32 value or one int32 index.
WORD = 4
# Elements of the nnz-by-width temporaries the float64 SDDMM reference makes at once.
REFERENCE_CHUNK = 1 << 22


class WrongShape(Exception):
    """An answer whose structure (not its values) is wrong, e.g. an SDDMM with another pattern."""


@dataclass(frozen=True)
class Case:
    """One kernel on one matrix at one width, with its operands and the exact answer."""

    matrix_name: str
    matrix: scipy.sparse.csr_matrix
    kernel: str
    width: Optional[int]  # None for SpMV, whose dense operand is a vector
    operands: tuple[np.ndarray, ...]
    expected: np.ndarray  # float64, in the layout ``Impl.values`` returns
    magnitude: np.ndarray  # float64 sum of |terms| per value: the scale of float32 rounding
    bytes_moved: int

    def locate(self, flat: int) -> tuple[int, int]:
        """The (row, column) of the output value at position ``flat`` of ``expected``."""
        if self.kernel == "sddmm":
            row = int(np.searchsorted(self.matrix.indptr, flat, side="right")) - 1
            return row, int(self.matrix.indices[flat])
        if self.expected.ndim == 1:
            return flat, 0
        return tuple(int(i) for i in np.unravel_index(flat, self.expected.shape))


@dataclass(frozen=True)
class Impl:
    """One implementation of a case: a timed call, and how to read its answer afterwards."""

    name: str
    call: Callable[[], Any]
    # Untimed: the call's output as an array in the layout of ``Case.expected``.
    values: Callable[[Any], np.ndarray]


@dataclass(frozen=True)
class Kernel:
    """A benchmarked kernel: how to build its cases and its implementations."""

    name: str
    has_width: bool
    operands: Callable[[scipy.sparse.csr_matrix, int, np.random.Generator], tuple]
    reference: Callable[[scipy.sparse.csr_matrix, tuple], tuple[np.ndarray, np.ndarray]]
    bytes_moved: Callable[[scipy.sparse.csr_matrix, int], int]
    ours: Callable[[Callable, scipy.sparse.csr_matrix, tuple], Impl]
    scipy_peer: Callable[[scipy.sparse.csr_matrix, tuple], Impl]
    torch_peer: Callable[[Any, scipy.sparse.csr_matrix, tuple], Impl]

    def case(
        self, name: str, matrix: scipy.sparse.csr_matrix, width: Optional[int], seed: int
    ) -> Case:
        """The case of this kernel on ``matrix`` at ``width``, with operands drawn from ``seed``."""
        rng = np.random.default_rng(seed)
        operands = self.operands(matrix, width or 1, rng)
        expected, magnitude = self.reference(matrix, operands)
        return Case(
            name,
            matrix,
            self.name,
            width,
            operands,
            expected,
            magnitude,
            self.bytes_moved(matrix, width or 1),
        )

    def impls(self, case: Case, ours: Callable, torch: Optional[ModuleType]) -> list[Impl]:
        """sparsetir's implementation (``ours``, from sparsetir.ops), then each peer's."""
        matrix, operands = case.matrix, case.operands
        impls = [self.ours(ours, matrix, operands), self.scipy_peer(matrix, operands)]
        if torch is not None:
            impls.append(self.torch_peer(torch, matrix, operands))
        return impls


def _dense(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32)


def _csr_bytes(matrix: scipy.sparse.csr_matrix) -> int:
    # indptr, indices and values, each read once.
    return WORD * (matrix.shape[0] + 1 + 2 * matrix.nnz)


def _as64(matrix: scipy.sparse.csr_matrix) -> scipy.sparse.csr_matrix:
    return matrix.astype(np.float64)


def _torch_csr(torch: ModuleType, matrix: scipy.sparse.csr_matrix):
    # int64 is torch's native index type (sampled_addmm answers with int64 indices even for
    # int32 input), so the peer is not charged for index conversions.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
        return torch.sparse_csr_tensor(
            torch.from_numpy(matrix.indptr.astype(np.int64)),
            torch.from_numpy(matrix.indices.astype(np.int64)),
            torch.from_numpy(matrix.data),
            size=matrix.shape,
            check_invariants=True,
        )


def _dense_values(output: Any) -> np.ndarray:
    return np.asarray(output)


def _torch_values(output: Any) -> np.ndarray:
    return output.numpy()


# --------------------------------------------------------------------------- SpMM: A @ X


def _spmm_operands(matrix, width, rng):
    return (_dense(rng, matrix.shape[1], width),)


def _spmm_reference(matrix, operands):
    (x,) = operands
    x64 = x.astype(np.float64)
    return _as64(matrix) @ x64, abs(_as64(matrix)) @ np.abs(x64)


def _spmm_bytes(matrix, width):
    rows, cols = matrix.shape
    return _csr_bytes(matrix) + WORD * width * (cols + rows)


def _spmm_ours(spmm, matrix, operands):
    (x,) = operands
    return Impl("sparsetir", lambda: spmm(matrix, x), _dense_values)


def _spmm_scipy(matrix, operands):
    (x,) = operands
    return Impl("scipy", lambda: matrix @ x, _dense_values)


def _spmm_torch(torch, matrix, operands):
    a, x = _torch_csr(torch, matrix), torch.from_numpy(operands[0])
    return Impl("torch", lambda: torch.sparse.mm(a, x), _torch_values)


# --------------------------------------------------------------------------- SpMV: A @ x


def _spmv_operands(matrix, width, rng):
    return (_dense(rng, matrix.shape[1]),)


def _spmv_bytes(matrix, width):
    rows, cols = matrix.shape
    return _csr_bytes(matrix) + WORD * (cols + rows)


def _spmv_ours(spmv, matrix, operands):
    (x,) = operands
    return Impl("sparsetir", lambda: spmv(matrix, x), _dense_values)


def _spmv_torch(torch, matrix, operands):
    a, x = _torch_csr(torch, matrix), torch.from_numpy(operands[0])
    return Impl("torch", lambda: torch.mv(a, x), _torch_values)


# ---------------------------------------------------------- SDDMM: A * (X @ Y.T) on A's pattern


def _sddmm_operands(matrix, width, rng):
    rows, cols = matrix.shape
    return _dense(rng, rows, width), _dense(rng, cols, width)


def _coo_rows(matrix) -> np.ndarray:
    return np.repeat(np.arange(matrix.shape[0], dtype=np.int32), np.diff(matrix.indptr))


def _sddmm_reference(matrix, operands):
    x64, y64 = (operand.astype(np.float64) for operand in operands)
    rows, cols, a = _coo_rows(matrix), matrix.indices, matrix.data.astype(np.float64)
    expected, magnitude = np.empty(matrix.nnz), np.empty(matrix.nnz)
    step = max(1, REFERENCE_CHUNK // max(1, x64.shape[1]))
    for start in range(0, matrix.nnz, step):
        part = slice(start, start + step)
        xs, ys = x64[rows[part]], y64[cols[part]]
        expected[part] = a[part] * np.einsum("ij,ij->i", xs, ys)
        magnitude[part] = np.abs(a[part]) * np.einsum("ij,ij->i", np.abs(xs), np.abs(ys))
    return expected, magnitude


def _sddmm_bytes(matrix, width):
    rows, cols = matrix.shape
    # A read, X and Y read once each, one output value written per nonzero.
    return _csr_bytes(matrix) + WORD * (width * (rows + cols) + matrix.nnz)


def _sddmm_ours(sddmm, matrix, operands):
    x, y = operands

    def values(output) -> np.ndarray:
        output = scipy.sparse.csr_matrix(output)
        same_pattern = (
            output.shape == matrix.shape
            and np.array_equal(output.indptr, matrix.indptr)
            and np.array_equal(output.indices, matrix.indices)
        )
        if not same_pattern:
            raise WrongShape("result does not have the sparsity pattern of A")
        return output.data

    return Impl("sparsetir", lambda: sddmm(matrix, x, y), values)


def _sddmm_scipy(matrix, operands):
    # The usual NumPy formulation: gather the rows of X and Y each nonzero pairs, dot them.
    x, y = operands
    rows, cols, a = _coo_rows(matrix), matrix.indices, matrix.data
    return Impl(
        "scipy", lambda: a * np.einsum("ij,ij->i", x[rows], y[cols]), _dense_values
    )


def _sddmm_torch(torch, matrix, operands):
    # sampled_addmm(beta=0) gives dot(X[i], Y[j]) on A's pattern without A's values; scaling by
    # them is left out of the timing, which favours torch by one pass over the nonzeros.
    a = _torch_csr(torch, matrix)
    x, y_t = (torch.from_numpy(operand) for operand in operands)
    y_t = y_t.T
    return Impl(
        "torch",
        lambda: torch.sparse.sampled_addmm(a, x, y_t, beta=0),
        lambda output: output.values().numpy() * matrix.data,
    )


KERNELS: dict[str, Kernel] = {
    "spmm": Kernel(
        name="spmm",
        has_width=True,
        operands=_spmm_operands,
        reference=_spmm_reference,
        bytes_moved=_spmm_bytes,
        ours=_spmm_ours,
        scipy_peer=_spmm_scipy,
        torch_peer=_spmm_torch,
    ),
    "sddmm": Kernel(
        name="sddmm",
        has_width=True,
        operands=_sddmm_operands,
        reference=_sddmm_reference,
        bytes_moved=_sddmm_bytes,
        ours=_sddmm_ours,
        scipy_peer=_sddmm_scipy,
        torch_peer=_sddmm_torch,
    ),
    "spmv": Kernel(
        name="spmv",
        has_width=False,
        operands=_spmv_operands,
        reference=_spmm_reference,
        bytes_moved=_spmv_bytes,
        ours=_spmv_ours,
        scipy_peer=_spmm_scipy,
        torch_peer=_spmv_torch,
    ),
}
