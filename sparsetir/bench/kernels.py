"""What each benchmarked kernel is: its inputs, its float64 reference, and every implementation.

Everything about one kernel lives in one place: how its dense operands are made, the exact
result it must produce (computed in float64, independently of every timed implementation),
how many bytes a minimal kernel moves, and how ``sparsetir.ops``, SciPy, torch and (where it
has the kernel) Intel MKL compute it. A timed call gets all of its arguments ready-made, so
conversions (to torch tensors, to a COO row array) are never part of a timing.
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


class PeerMissing(Exception):
    """A peer library without the operation: it is left out of the case, with a note."""


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
    # True when the answer is one value per stored entry of ``matrix`` (SDDMM, softmax).
    on_pattern: bool = False
    # A sparse answer's structure (CSR, sorted rows): ``expected`` holds its values.
    pattern: Any = None

    def locate(self, flat: int) -> tuple[int, int]:
        """The (row, column) of the output value at position ``flat`` of ``expected``."""
        if self.pattern is not None:
            row = int(np.searchsorted(self.pattern.indptr, flat, side="right")) - 1
            return row, int(self.pattern.indices[flat])
        if self.on_pattern:
            row = int(np.searchsorted(self.matrix.indptr, flat, side="right")) - 1
            return row, int(self.matrix.indices[flat])
        if self.expected.ndim == 1:
            return flat, 0
        return tuple(int(i) for i in np.unravel_index(flat, self.expected.shape))

    @property
    def features(self) -> Optional[np.ndarray]:
        """The dense (n, width) operand a model computes just before this kernel (X of A @ X, Y
        of SDDMM, the values of segment_sum); None when there is none (SpMV, softmax)."""
        dense = [
            operand for operand in self.operands
            if isinstance(operand, np.ndarray) and operand.ndim == 2
            and np.issubdtype(operand.dtype, np.floating) and self.width is not None
            and operand.shape[1] == self.width
        ]
        return dense[-1] if dense else None


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
    # Intel MKL's implementation (through sparse_dot_mkl), for the kernels MKL has.
    mkl_peer: Optional[Callable[[Any, scipy.sparse.csr_matrix, tuple], Impl]] = None
    # Whether the answer is one value per stored entry of the matrix (see ``Case.on_pattern``).
    on_pattern: bool = False
    # Why this kernel is not run on a matrix (e.g. ELL on a skewed graph), or None to run it.
    skip: Callable[[scipy.sparse.csr_matrix], Optional[str]] = lambda matrix: None
    # A remark on how the kernel's input is derived from a matrix (block size, padding), or None.
    describe: Callable[[scipy.sparse.csr_matrix], Optional[str]] = lambda matrix: None
    # sparsetir's implementation on another format than CSR (``format=`` of ``ops.spmm``), for
    # the kernels that take one; None for the others.
    formatted: Optional[Callable[[Callable, scipy.sparse.csr_matrix, tuple, str], Impl]] = None
    # The kernels of two sparse operands (``sparse_sparse.py``) run in variants (``A@A``,
    # ``A@At``) in place of widths, answer sparse (``reference`` also gives the answer's
    # structure, which ``ours`` and the peers take), count their bytes from the operands and the
    # answer (``bytes_of``), and are not in the default run.
    variants: tuple[str, ...] = ()
    bytes_of: Optional[Callable[[tuple, np.ndarray], int]] = None
    default: bool = True

    def case(
        self, name: str, matrix: scipy.sparse.csr_matrix, width: Optional[int], seed: int,
        variant: Optional[str] = None,
    ) -> Case:
        """The case of this kernel on ``matrix`` at ``width`` (or in ``variant``, named
        ``<kernel> <variant>``), with operands drawn from ``seed``."""
        rng = np.random.default_rng(seed)
        pattern = None
        if variant is None:
            operands = self.operands(matrix, width or 1, rng)
            expected, magnitude = self.reference(matrix, operands)
        else:
            operands = self.operands(matrix, variant, rng)
            expected, magnitude, pattern = self.reference(matrix, operands)
        moved = self.bytes_of(operands, expected) if self.bytes_of else self.bytes_moved(matrix, width or 1)
        return Case(
            name,
            matrix,
            self.name if variant is None else f"{self.name} {variant}",
            width,
            operands,
            expected,
            magnitude,
            moved,
            self.on_pattern,
            pattern,
        )

    def impls(
        self,
        case: Case,
        ours: Callable,
        torch: Optional[ModuleType],
        mkl: Optional[ModuleType] = None,
        formats: tuple[str, ...] = (),
        notes: Optional[list[str]] = None,
    ) -> list[Impl]:
        """sparsetir's implementation (``ours``, from sparsetir.ops), on each of ``formats``
        where the kernel takes one (named ``sparsetir:<format>``), then each peer's: SciPy,
        torch and ``mkl`` (sparse_dot_mkl) where they are installed (not None). A peer without
        the operation is left out, with a note in ``notes``."""
        matrix, operands = case.matrix, case.operands
        if case.pattern is not None:  # a sparse answer: every builder takes its structure
            impls = list(self.ours(ours, matrix, operands, case.pattern))
            peers = [(self.scipy_peer, (matrix, operands, case.pattern))]
            peers += [(self.torch_peer, (torch, matrix, operands, case.pattern))] if torch is not None else []
            if mkl is not None and self.mkl_peer is not None:
                peers.append((self.mkl_peer, (mkl, matrix, operands, case.pattern)))
        else:
            impls = [self.ours(ours, matrix, operands)]
            if self.formatted is not None:
                impls += [self.formatted(ours, matrix, operands, fmt) for fmt in formats]
            peers = [(self.scipy_peer, (matrix, operands))]
            peers += [(self.torch_peer, (torch, matrix, operands))] if torch is not None else []
            if mkl is not None and self.mkl_peer is not None:
                peers.append((self.mkl_peer, (mkl, matrix, operands)))
        for build, args in peers:
            try:
                impls.append(build(*args))
            except PeerMissing as missing:
                if notes is not None and f"{missing}" not in notes:
                    notes.append(f"{missing}")
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


def _spmm_formatted(spmm, matrix, operands, fmt):
    (x,) = operands
    return Impl(f"sparsetir:{fmt}", lambda: spmm(matrix, x, format=fmt), _dense_values)


def _spmm_scipy(matrix, operands):
    (x,) = operands
    return Impl("scipy", lambda: matrix @ x, _dense_values)


def _spmm_torch(torch, matrix, operands):
    a, x = _torch_csr(torch, matrix), torch.from_numpy(operands[0])
    return Impl("torch", lambda: torch.sparse.mm(a, x), _torch_values)


def _spmm_mkl(mkl, matrix, operands):
    # MKL's sparse BLAS on the CSR matrix as it is (int32 indices, float32), the way
    # sparse_dot_mkl's users call it; also SpMV, with a vector x.
    (x,) = operands
    return Impl("mkl", lambda: mkl.dot_product_mkl(matrix, x), _dense_values)


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


def _pattern_values(matrix) -> Callable[[Any], np.ndarray]:
    """Reads a CSR answer that must have ``matrix``'s pattern: its values, in ``matrix``'s order."""

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

    return values


def _sddmm_ours(sddmm, matrix, operands):
    x, y = operands
    return Impl("sparsetir", lambda: sddmm(matrix, x, y), _pattern_values(matrix))


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


# -------------------------------------------- segment_sum: out[i] = values[offs[i]:offs[i+1]].sum(0)
# The segments are A's rows (offsets = A.indptr), the values an (nnz, width) dense array: the
# reduction of a message-passing layer after its per-edge messages are computed.


def _segment_sum_operands(matrix, width, rng):
    return _dense(rng, matrix.nnz, width), matrix.indptr.copy()


def _segment_matrix(offsets: np.ndarray, nnz: int, dtype) -> scipy.sparse.csr_matrix:
    """The (segments, nnz) 0/1 matrix whose product with ``values`` sums each segment."""
    ones = np.ones(nnz, dtype=dtype)
    return scipy.sparse.csr_matrix(
        (ones, np.arange(nnz, dtype=offsets.dtype), offsets), shape=(offsets.shape[0] - 1, nnz)
    )


def _segment_sum_reference(matrix, operands):
    values, offsets = operands
    segments = _segment_matrix(offsets, values.shape[0], np.float64)
    values64 = values.astype(np.float64)
    return segments @ values64, segments @ np.abs(values64)


def _segment_sum_bytes(matrix, width):
    # offsets and the values read once, one output row per segment written.
    rows = matrix.shape[0]
    return WORD * (rows + 1 + width * (matrix.nnz + rows))


def _segment_sum_ours(segment_sum, matrix, operands):
    values, offsets = operands
    return Impl("sparsetir", lambda: segment_sum(values, offsets), _dense_values)


def _segment_sum_scipy(matrix, operands):
    # The (segments, nnz) 0/1 matrix times the values, built once before timing like SDDMM's
    # COO rows. np.add.reduceat over the non-empty segments' starts gives the same sums but was
    # 15x (width 32) to 40x (width 512) slower on cora, so it would flatter sparsetir.
    values, offsets = operands
    segments = _segment_matrix(offsets, values.shape[0], values.dtype)
    return Impl("scipy", lambda: segments @ values, _dense_values)


def _segment_sum_torch(torch, matrix, operands):
    values, offsets = (torch.from_numpy(operand) for operand in operands)
    offsets = offsets.to(torch.int64)
    return Impl(
        "torch",
        lambda: torch.segment_reduce(values, "sum", offsets=offsets, axis=0),
        _torch_values,
    )


# ------------------------------------------------------------------- BSR SpMM: A @ X, A in BSR
# A is converted to BSR with square blocks of the largest of BSR_BLOCKS that divides both of
# its dimensions (1 always does), so no padding changes the answer's shape. Blocks store the
# zeros around A's nonzeros: every implementation multiplies the same BSR matrix.

BSR_BLOCKS = (4, 2, 1)


def bsr_block(matrix: scipy.sparse.csr_matrix) -> int:
    """The block size (rows = columns) the benchmark uses for ``matrix`` in BSR."""
    rows, cols = matrix.shape
    return next(b for b in BSR_BLOCKS if rows % b == 0 and cols % b == 0)


def _bsr(matrix) -> scipy.sparse.bsr_matrix:
    block = bsr_block(matrix)
    bsr = matrix.tobsr(blocksize=(block, block))
    bsr.sort_indices()  # tobsr can leave a block row's columns unsorted; torch needs them sorted
    return bsr


def _bsr_describe(matrix):
    block, stored = bsr_block(matrix), _bsr(matrix).data.size
    fill = stored / matrix.nnz if matrix.nnz else 1.0
    return f"{block}x{block} blocks, {stored} stored values ({fill:.2f}x the nonzeros)"


def _bsr_operands(matrix, width, rng):
    return _bsr(matrix), _dense(rng, matrix.shape[1], width)


def _bsr_reference(matrix, operands):
    # From the CSR matrix, independently of the BSR conversion; the stored zeros add nothing.
    return _spmm_reference(matrix, operands[1:])


def _bsr_bytes(matrix, width):
    bsr = _bsr(matrix)
    rows, cols = matrix.shape
    block_rows, blocks = bsr.indptr.shape[0], bsr.indices.shape[0]
    return WORD * (block_rows + blocks + bsr.data.size + width * (cols + rows))


def _bsr_ours(bsr_spmm, matrix, operands):
    bsr, x = operands
    return Impl("sparsetir", lambda: bsr_spmm(bsr, x), _dense_values)


def _bsr_scipy(matrix, operands):
    bsr, x = operands
    return Impl("scipy", lambda: bsr @ x, _dense_values)


def _bsr_torch(torch, matrix, operands):
    bsr, x = operands
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "sparse BSR support is in beta"
        a = torch.sparse_bsr_tensor(
            torch.from_numpy(bsr.indptr.astype(np.int64)),
            torch.from_numpy(bsr.indices.astype(np.int64)),
            torch.from_numpy(bsr.data),
            size=bsr.shape,
            check_invariants=True,
        )
    x = torch.from_numpy(x)
    return Impl("torch", lambda: a @ x, _torch_values)


def _bsr_mkl(mkl, matrix, operands):
    bsr, x = operands
    return Impl("mkl", lambda: mkl.dot_product_mkl(bsr, x), _dense_values)


# --------------------------------------------------------------------- ELL SpMM: A @ X, A in ELL
# Row i of A stored in row i of (rows, W) index and value arrays, W = A's longest row, short
# rows padded with value 0 at column 0. A matrix whose longest row is more than ELL_MAX_PADDING
# times its mean row length is skipped: most of its ELL form would be padding. The peers have
# no ELL kernel; they multiply the same matrix in CSR.

ELL_MAX_PADDING = 8


def _ell_skip(matrix):
    rows = matrix.shape[0]
    longest = int(np.diff(matrix.indptr).max()) if rows else 0
    mean = matrix.nnz / rows if rows else 0.0
    if longest > ELL_MAX_PADDING * mean:
        return (
            f"its longest row ({longest}) is {longest / mean:.0f}x its mean row length "
            f"({mean:.1f}), over the {ELL_MAX_PADDING}x limit: ELL would be mostly padding"
        )
    return None


def _ell_width(matrix) -> int:
    return int(np.diff(matrix.indptr).max()) if matrix.shape[0] else 0


def _ell_describe(matrix):
    width = _ell_width(matrix)
    stored = matrix.shape[0] * width
    fill = stored / matrix.nnz if matrix.nnz else 1.0
    return f"ELL width {width}, {stored} stored values ({fill:.2f}x the nonzeros)"


def ell_form(matrix: scipy.sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """``matrix`` as ELL ``(indices, values)``, each (rows, longest row), padded with 0s at column 0."""
    rows = matrix.shape[0]
    width = _ell_width(matrix)
    indices = np.zeros((rows, width), dtype=np.int32)
    values = np.zeros((rows, width), dtype=matrix.dtype)
    row_of = _coo_rows(matrix)
    slot = np.arange(matrix.nnz) - matrix.indptr[row_of]
    indices[row_of, slot] = matrix.indices
    values[row_of, slot] = matrix.data
    return indices, values


def _ell_operands(matrix, width, rng):
    return (*ell_form(matrix), _dense(rng, matrix.shape[1], width))


def _ell_reference(matrix, operands):
    return _spmm_reference(matrix, operands[2:])


def _ell_bytes(matrix, width):
    rows, cols = matrix.shape
    return WORD * (2 * rows * _ell_width(matrix) + width * (cols + rows))


def _ell_ours(ell_spmm, matrix, operands):
    indices, values, x = operands
    return Impl("sparsetir", lambda: ell_spmm(indices, values, x), _dense_values)


def _ell_scipy(matrix, operands):
    return _spmm_scipy(matrix, operands[2:])


def _ell_torch(torch, matrix, operands):
    return _spmm_torch(torch, matrix, operands[2:])


def _ell_mkl(mkl, matrix, operands):
    return _spmm_mkl(mkl, matrix, operands[2:])


# -------------------------------------------- softmax: row-wise over the stored entries of S
# S has A's pattern and random standard-normal values (attention scores on the graph's edges):
# the bundled graphs store only 1s, on which every row's softmax is 1/length whatever a kernel
# does with the values.


def _softmax_operands(matrix, width, rng):
    scores = _dense(rng, matrix.nnz)
    return (scipy.sparse.csr_matrix((scores, matrix.indices, matrix.indptr), shape=matrix.shape),)


def _row_starts(indptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first position and the length of each non-empty row."""
    lengths = np.diff(indptr)
    nonempty = np.flatnonzero(lengths)
    return indptr[nonempty], lengths[nonempty]


def _row_softmax(starts, counts, data) -> tuple[np.ndarray, np.ndarray]:
    """The row-wise softmax of ``data`` (rows starting at ``starts``), and ``data - row max``."""
    if not starts.size:
        return np.empty_like(data), np.empty_like(data)
    shifted = data - np.repeat(np.maximum.reduceat(data, starts), counts)
    exps = np.exp(shifted)
    return exps / np.repeat(np.add.reduceat(exps, starts), counts), shifted


def _softmax_reference(matrix, operands):
    (scores,) = operands
    expected, shifted = _row_softmax(*_row_starts(scores.indptr), scores.data.astype(np.float64))
    # float32 rounds exp's argument (|shifted|) and the row sum: errors relative to each value.
    return expected, expected * (1.0 + np.abs(shifted))


def _softmax_bytes(matrix, width):
    # indptr and the values read, one value per nonzero written; the pattern is not needed.
    return WORD * (matrix.shape[0] + 1 + 2 * matrix.nnz)


def _softmax_ours(softmax, matrix, operands):
    (scores,) = operands
    return Impl("sparsetir", lambda: softmax(scores), _pattern_values(matrix))


def _softmax_scipy(matrix, operands):
    # The vectorized NumPy formulation: row max and row sum by reduceat over non-empty rows.
    (scores,) = operands
    starts, counts = _row_starts(scores.indptr)
    data = scores.data
    return Impl("scipy", lambda: _row_softmax(starts, counts, data)[0], _dense_values)


def _softmax_torch(torch, matrix, operands):
    # torch.sparse.softmax has no CSR kernel on CPU; COO (coalesced, so in CSR order) it has.
    (scores,) = operands
    rows = torch.from_numpy(_coo_rows(matrix).astype(np.int64))
    cols = torch.from_numpy(matrix.indices.astype(np.int64))
    a = torch.sparse_coo_tensor(
        torch.stack([rows, cols]),
        torch.from_numpy(scores.data),
        size=matrix.shape,
        check_invariants=True,
    ).coalesce()

    def values(output) -> np.ndarray:
        output = output.coalesce()
        indices = output.indices()
        same_pattern = (
            tuple(output.shape) == matrix.shape
            and torch.equal(indices[0], rows)
            and torch.equal(indices[1], cols)
        )
        if not same_pattern:
            raise WrongShape("result does not have the sparsity pattern of A")
        return output.values().numpy()

    return Impl("torch", lambda: torch.sparse.softmax(a, 1), values)


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
        mkl_peer=_spmm_mkl,
        formatted=_spmm_formatted,
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
        on_pattern=True,
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
        mkl_peer=_spmm_mkl,
    ),
    "segment_sum": Kernel(
        name="segment_sum",
        has_width=True,
        operands=_segment_sum_operands,
        reference=_segment_sum_reference,
        bytes_moved=_segment_sum_bytes,
        ours=_segment_sum_ours,
        scipy_peer=_segment_sum_scipy,
        torch_peer=_segment_sum_torch,
    ),
    "bsr_spmm": Kernel(
        name="bsr_spmm",
        has_width=True,
        operands=_bsr_operands,
        reference=_bsr_reference,
        bytes_moved=_bsr_bytes,
        ours=_bsr_ours,
        scipy_peer=_bsr_scipy,
        torch_peer=_bsr_torch,
        mkl_peer=_bsr_mkl,
        describe=_bsr_describe,
    ),
    "ell_spmm": Kernel(
        name="ell_spmm",
        has_width=True,
        operands=_ell_operands,
        reference=_ell_reference,
        bytes_moved=_ell_bytes,
        ours=_ell_ours,
        scipy_peer=_ell_scipy,
        torch_peer=_ell_torch,
        mkl_peer=_ell_mkl,
        skip=_ell_skip,
        describe=_ell_describe,
    ),
    "softmax": Kernel(
        name="softmax",
        has_width=False,
        operands=_softmax_operands,
        reference=_softmax_reference,
        bytes_moved=_softmax_bytes,
        ours=_softmax_ours,
        scipy_peer=_softmax_scipy,
        torch_peer=_softmax_torch,
        on_pattern=True,
    ),
}

# The kernels of two sparse operands, in a module of their own (sparse answers, variants); it
# imports this module's classes, so it comes after them.
from .sparse_sparse import SPARSE_SPARSE  # noqa: E402

KERNELS.update(SPARSE_SPARSE)
