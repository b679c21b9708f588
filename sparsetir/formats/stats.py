"""Structure statistics of a CSR matrix, for choosing a format: row lengths and block density.

``stats(A)`` costs a small fraction of one SpMM: the row-length figures are exact (O(m)); the
block densities ``nnz / (stored b x b blocks * b * b)`` for b in ``BLOCK_SIZES`` are measured on
the whole matrix when it has at most ``sample`` entries, else on groups of 24 consecutive rows
(24 is a multiple of every block size, so the groups hold whole block rows) spread evenly over
the matrix and holding about ``sample`` entries; ``block_sample`` says which fraction of the
entries they hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..runtime.csr_checks import fail
from .csr import CsrArrays, canonical, is_canonical, read
from .vectorized import offsets

try:  # SciPy's compiled block counter (behind tobsr); private, so a NumPy fallback is kept
    from scipy.sparse._sparsetools import csr_count_blocks as _scipy_count_blocks
except ImportError:  # pragma: no cover - depends on the SciPy build
    _scipy_count_blocks = None

BLOCK_SIZES = (2, 3, 4, 6, 8)
_GROUP = 24  # rows per sampled group: a multiple of every block size


@dataclass(frozen=True)
class Stats:
    """Structure statistics of a matrix (canonical: duplicates merged)."""

    rows: int
    cols: int
    nnz: int
    row_mean: float
    row_std: float
    row_max: int
    #: Percentiles of the row lengths: the smallest length that 50, 90, 99 % of rows do not exceed.
    row_p50: int
    row_p90: int
    row_p99: int
    empty_rows: int
    #: ((b, nnz / (stored b x b blocks * b * b)), ...) for b in ``BLOCK_SIZES``; 0.0 without entries.
    block_density: tuple[tuple[int, float], ...]
    #: Fraction of the entries the block densities were measured on (1.0: all of them).
    block_sample: float

    def density(self, b: int) -> float:
        """The block density for block size ``b`` (one of ``BLOCK_SIZES``)."""
        return dict(self.block_density)[b]


def stats(A: Any, sample: Optional[int] = 8192) -> Stats:
    """The structure statistics of ``A`` (any CSR input); block densities measured on about
    ``sample`` entries (None: all)."""
    if sample is not None and (not isinstance(sample, (int, np.integer)) or isinstance(sample, bool) or sample < 1):
        fail("stats: sample", f"must be a positive number of entries or None, got {sample!r}")
    source = read("stats: A", A)
    if not is_canonical(source):
        c = canonical(source)
        source = CsrArrays(c.indptr, c.indices, c.data, c.shape, c.dtype)
    m, n = source.shape
    nnz = source.nnz
    lengths = np.diff(source.indptr)
    if m:
        p50, p90, p99 = _percentiles(lengths, (50, 90, 99))
        mean, std, longest = float(lengths.mean()), float(lengths.std()), int(lengths.max())
    else:
        p50 = p90 = p99 = 0
        mean = std = 0.0
        longest = 0
    indptr, indices, fraction = _sample_rows(source.indptr, source.indices, sample)
    rows = indptr.shape[0] - 1
    sampled = int(indptr[-1])
    density = tuple((b, sampled / (_count_blocks(indptr, indices, rows, n, b) * b * b) if sampled else 0.0)
                    for b in BLOCK_SIZES)
    return Stats(m, n, nnz, mean, std, longest, p50, p90, p99, int(np.count_nonzero(lengths == 0)), density, fraction)


def _percentiles(lengths: np.ndarray, percents: tuple[int, ...]) -> tuple[int, ...]:
    """The smallest length that ``p`` % of the rows do not exceed, for each ``p``: from a histogram
    of the lengths (O(m + longest), several times faster than ``np.percentile``)."""
    cumulative = np.cumsum(np.bincount(lengths))
    goals = np.asarray(percents, np.float64) / 100.0 * lengths.shape[0]
    return tuple(int(x) for x in np.searchsorted(cumulative, np.ceil(goals - 1e-9), side="left"))


def _sample_rows(indptr: np.ndarray, indices: np.ndarray, sample: Optional[int]) -> tuple[np.ndarray, np.ndarray, float]:
    """(indptr, indices, fraction of entries): the rows of evenly spread 24-row groups holding about
    ``sample`` entries, as a CSR of their own (all rows when the matrix is small enough)."""
    m = indptr.shape[0] - 1
    nnz = int(indptr[-1])
    if sample is None or nnz <= sample:
        return indptr, indices, 1.0
    groups = -(-m // _GROUP)
    take = np.unique(np.linspace(0, groups - 1, min(groups, -(-groups * sample // nnz))).astype(np.int64))
    rows = (take[:, None] * _GROUP + np.arange(_GROUP)).reshape(-1)
    rows = rows[rows < m]
    lengths = np.diff(indptr)[rows]
    sub_indptr = offsets(lengths)
    gather = np.repeat(indptr[rows] - sub_indptr[:-1], lengths) + np.arange(int(sub_indptr[-1]))
    return sub_indptr.astype(np.int32), indices[gather], float(sub_indptr[-1]) / nnz


def _count_blocks(indptr: np.ndarray, indices: np.ndarray, m: int, n: int, b: int) -> int:
    """Number of b x b blocks holding entries of a canonical CSR."""
    if _scipy_count_blocks is not None:
        return int(_scipy_count_blocks(m, n, b, b, indptr, indices))
    from .bsr import _blocks

    return int(_blocks(indptr, indices, b, b, n).block_row.shape[0])
