"""``ops.spmm(A, X, format=...)``: SpMM on a format other than CSR, converted once per structure.

A format is named by a string — ``"csr"`` (the default), ``"bsr"``, ``"ell"``, ``"hyb"``,
``"auto"`` or ``"tuned"`` (``tuned.py``) — or given as a ``SpmmFormat`` with its parameters
(``SpmmFormat("bsr", block=3)``).
Without parameters, they come from the matrix's structure (``sparsetir.formats.stats``): the
BSR block size of the densest blocks, the ELL width that holds 90 % of the rows, the hybrid's
power-of-two bucket widths up to the 99th percentile of the row lengths.

The conversion (``sparsetir.formats``) happens on the first call for a matrix and is cached with
the matrix's preparation (``ops.prepared``): its structure, and a position map from each slot of
the new format to the CSR entry it holds (``format_scripts``), so a call gathers the matrix's
*current* values inside the kernel and converts nothing. (A matrix with duplicate entries has
its values summed into the new layout on each call instead, an O(nnz) pass.)

- ``bsr``: blocks of ``block`` x ``block``; the kernel keeps the whole block row's output tile in
  registers (``schedule.bsr_blocked``). A zero cell of a stored block is a stored
  zero (``0 * inf`` is NaN there, as in SciPy's BSR).
- ``ell`` and ``hyb``: every row in one bucket of rows of similar length (``hyb``: widths
  1, 2, 4, ..., ``ell``: one width), a row longer than the widest bucket in several pieces of it;
  one kernel runs all buckets (``horizontal_fusion``), each thread on the rows of one row range.
  A padding slot adds nothing (not ``0 *`` a value).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from .. import formats
from ..runtime.arrays import kernel_view
from .inputs import CsrInput, aligned_empty, fail, row_partition

#: The names ``format=`` takes.
FORMAT_NAMES = ("csr", "bsr", "ell", "hyb", "auto", "tuned")
#: The names decided per matrix and width by a trial, not resolved from the structure here.
TRIED_NAMES = ("auto", "tuned")
#: Block sizes ``bsr`` chooses among, and the least block density (entries per stored cell) it
#: accepts; below it, the zero cells cost more than the blocking saves (bcsstk16: 0.98 at 3x3,
#: 1.4-1.9x faster than CSR; 0.58 at 6x6, 0.7-1.2x).
BSR_BLOCKS = formats.BLOCK_SIZES
BSR_MIN_DENSITY = 0.6
#: The widest ELL bucket of ``hyb``; longer rows are cut into pieces of it.
HYB_MAX_WIDTH = 32


@dataclass(frozen=True)
class SpmmFormat:
    """A format for ``ops.spmm`` with its parameters: ``block`` for ``"bsr"``, bucket ``widths``
    (increasing powers of two) for ``"ell"`` (one width) and ``"hyb"``."""

    name: str
    block: int = 0
    widths: tuple[int, ...] = ()

    def __str__(self) -> str:
        if self.name == "bsr":
            return f"bsr({self.block})"
        if self.name in ("ell", "hyb"):
            return f"{self.name}({', '.join(map(str, self.widths))})"
        return self.name


CSR = SpmmFormat("csr")


def resolve(what: str, spec: Any, stats: Any) -> SpmmFormat:
    """The format ``spec`` (a name, or a ``SpmmFormat``) stands for on a matrix with ``stats``
    (``"auto"`` and ``"tuned"`` are decided by a trial, ``auto.py`` and ``tuned.py``, not here)."""
    if isinstance(spec, SpmmFormat):
        return _checked(what, spec)
    if not isinstance(spec, str) or spec not in FORMAT_NAMES or spec in TRIED_NAMES:
        fail(what, f"format must be one of {', '.join(repr(f) for f in FORMAT_NAMES)} or an ops.SpmmFormat, got {spec!r}")
    if spec == "csr":
        return CSR
    if spec == "bsr":
        return SpmmFormat("bsr", block=best_block(stats)[0])
    if spec == "ell":
        return SpmmFormat("ell", widths=(_power_of_two_at_least(max(stats.row_p90, 1), HYB_MAX_WIDTH),))
    return SpmmFormat("hyb", widths=hyb_widths(stats))


def best_block(stats: Any) -> tuple[int, float]:
    """``(b, density)`` of the block size with the densest blocks (the largest on ties)."""
    return max(((b, stats.density(b)) for b in BSR_BLOCKS), key=lambda bd: (round(bd[1], 2), bd[0]))


def hyb_widths(stats: Any) -> tuple[int, ...]:
    """Power-of-two bucket widths from 1 up to the one holding the 99th percentile of the rows."""
    top = _power_of_two_at_least(max(stats.row_p99, 1), HYB_MAX_WIDTH)
    return tuple(1 << k for k in range(top.bit_length()))


def _power_of_two_at_least(value: int, cap: int) -> int:
    return min(1 << max(int(value) - 1, 0).bit_length(), cap)


def _checked(what: str, f: SpmmFormat) -> SpmmFormat:
    if f.name in TRIED_NAMES:
        fail(what, f"{f.name!r} is decided by a trial: pass format={f.name!r}, not an SpmmFormat")
    if f.name not in FORMAT_NAMES:
        fail(what, f"unknown format {f.name!r} (choose from csr, bsr, ell, hyb)")
    if f.name == "bsr" and (isinstance(f.block, bool) or not isinstance(f.block, int) or f.block < 1):
        fail(what, f"bsr needs a positive block size, got {f.block!r}")
    if f.name in ("ell", "hyb"):
        widths = tuple(f.widths)
        ok = widths and all(isinstance(w, int) and not isinstance(w, bool) and w > 0 and w & (w - 1) == 0 for w in widths)
        if not ok or list(widths) != sorted(set(widths)) or (f.name == "ell" and len(widths) != 1):
            fail(what, f"{f.name} needs increasing power-of-two widths{' (one)' if f.name == 'ell' else ''}, got {f.widths!r}")
        if widths != f.widths:  # a list given: the format is a cache key, so hashable
            return dataclasses.replace(f, widths=widths)
    return f


# --- converted forms -------------------------------------------------------------------------------


@dataclass
class BsrForm:
    """A matrix in BSR for the gather kernel: structure, position map, chunks, conversion time."""

    fmt: SpmmFormat
    bsr: Any  # formats.Bsr
    mb: int
    nb: int
    indptr: Any
    indices: Any
    src: Any  # (nnzb, b, b) int32: the CSR entry of each cell, -1 for a zero cell
    refresh: bool  # duplicates: the values are summed into the layout on each call
    part: Any
    seconds: float

    def arguments(self, values: np.ndarray, X: Any, C: Any, nnz: int) -> tuple:
        data = self.bsr.values(np.asarray(values)) if self.refresh else values
        return (data, self.src, X, C, self.indptr, self.indices, self.mb, self.nb, int(self.bsr.nnzb),
                int(self.bsr.slots) if self.refresh else nnz, self.part, int(self.part.shape[0]) - 1)


@dataclass
class BucketsForm:
    """A matrix as ELL buckets for the fused kernel (``format_scripts.hybrid_spmm_script``)."""

    fmt: SpmmFormat
    hybrid: Any  # formats.Hybrid
    empty: Any  # rows of no bucket
    buckets: list  # per width: (rows, piece pointer, columns, position map, rows, max pieces, pieces)
    refresh: bool
    boundaries: Any  # per iteration (empty rows, then each bucket): chunk boundaries over its rows
    seconds: float
    parts: int = field(default=1)

    def arguments(self, values: np.ndarray, X: Any, C: Any, shape: tuple[int, int], nnz: int) -> tuple:
        data = self.hybrid.values(np.asarray(values)) if self.refresh else values
        args: list = [data, X, C, self.empty, int(self.empty.shape[0])]
        for rows, pieces, cols, src, count, maxp, npieces in self.buckets:
            args += [rows, pieces, cols, src, count, maxp, npieces]
        args += [shape[0], shape[1], int(self.hybrid.slots) if self.refresh else nnz]
        return tuple(args) + tuple(self.boundaries) + (self.parts,)


def convert(a: CsrInput, values: np.ndarray, fmt: SpmmFormat, parts: int) -> Union[BsrForm, BucketsForm]:
    """``a`` (a prepared CSR, with its current ``values``) in format ``fmt``, timed."""
    start = time.perf_counter()
    source = formats.from_arrays(a.indptr, a.indices, np.asarray(values), a.shape)
    if fmt.name == "bsr":
        form = _bsr_form(source, fmt, parts)
    else:
        form = _buckets_form(source, fmt, a.shape[0], parts)
    form.seconds = time.perf_counter() - start
    return form


def _position_map(fmt_obj: Any) -> tuple[np.ndarray, bool]:
    """The CSR entry of every slot (-1 for a slot no entry fills), and whether the values must be
    refreshed per call instead (duplicates: several entries in one slot)."""
    slots = int(fmt_obj.slots)
    if not fmt_obj.injective:
        return np.arange(slots, dtype=np.int32), True
    src = np.full(slots, -1, np.int32)
    held = fmt_obj.entry_slot >= 0
    src[fmt_obj.entry_slot[held]] = np.flatnonzero(held).astype(np.int32)
    return src, False


def _bsr_form(source: Any, fmt: SpmmFormat, parts: int) -> BsrForm:
    b = fmt.block
    bsr = formats.Bsr.from_csr(source, (b, b))
    src, refresh = _position_map(bsr)
    m, n = bsr.shape
    mb, nb = -(-m // b), -(-n // b)
    indptr = np.ascontiguousarray(bsr.indptr, np.int32)
    # Chunks of block rows with equal work: each stored block costs its b rows, each block row 1.
    part = row_partition(indptr * b, parts)
    return BsrForm(fmt, bsr, mb, nb, kernel_view(indptr), kernel_view(np.ascontiguousarray(bsr.indices, np.int32)),
                   kernel_view(src.reshape(-1, b, b)), refresh, kernel_view(part), 0.0)


@dataclass
class Buckets:
    """A matrix's ELL buckets as host arrays (``hybrid_spmm_script``'s arguments, the CPU's and
    the GPU's): per width ``(rows, piece pointer, columns, position map, rows, max pieces,
    pieces)``, the empty rows, the ``formats.Hybrid`` and whether its values are refreshed per
    call (duplicates; the position map then indexes its slots)."""

    hybrid: Any
    empty: np.ndarray
    buckets: list
    refresh: bool


def bucket_arrays(source: Any, widths: tuple[int, ...]) -> Buckets:
    """``source`` (a ``formats.Csr``) as ELL buckets of ``widths``, the longer rows in pieces of
    the widest."""
    hybrid = formats.Hybrid.from_csr(source, 1, widths, remainder="widest")
    src, refresh = _position_map(hybrid)
    buckets = []
    for part in hybrid.buckets:
        rows, first = np.unique(part.rows, return_index=True)  # a long row's pieces are consecutive
        pieces = np.append(first, part.rows.shape[0]).astype(np.int32)
        count = int(rows.shape[0])
        maxp = int(np.diff(pieces).max()) if count else 1
        cols = np.ascontiguousarray(part.indices, np.int32).reshape(-1)
        buckets.append((rows.astype(np.int32), pieces, cols, np.ascontiguousarray(part.take(src)), count, maxp,
                        int(part.rows.shape[0])))
    empty = np.flatnonzero(np.diff(source.indptr) == 0).astype(np.int32)
    return Buckets(hybrid, empty, buckets, refresh)


def _buckets_form(source: Any, fmt: SpmmFormat, m: int, parts: int) -> BucketsForm:
    made = bucket_arrays(source, fmt.widths)
    # Owner chunks: chunk t of every iteration is the rows of one row range (equal nonzeros +
    # rows), so no two threads write one row, and the work of all buckets is balanced.
    owner = row_partition(np.ascontiguousarray(source.indptr, np.int32), parts)
    boundaries = [kernel_view(np.searchsorted(made.empty, owner).astype(np.int32))]
    boundaries += [kernel_view(np.searchsorted(b[0], owner).astype(np.int32)) for b in made.buckets]
    buckets = [tuple(kernel_view(x) for x in b[:4]) + b[4:] for b in made.buckets]
    return BucketsForm(fmt, made.hybrid, kernel_view(made.empty), buckets, made.refresh, boundaries, 0.0, parts)


def output(form: Any, m: int, feat: int, dtype: str) -> tuple[Any, Any]:
    """(the kernel's output array, the caller's view of it): BSR writes whole block rows."""
    rows = form.mb * form.fmt.block if isinstance(form, BsrForm) else m
    C = aligned_empty((rows, feat), dtype)
    return C, C[:m]


def padded_operand(form: Any, X: Any) -> Any:
    """``X`` with the rows BSR's last block column reads past ``n`` (zeros): a copy only when ``n``
    is not a multiple of the block size."""
    if not isinstance(form, BsrForm):
        return X
    rows = form.nb * form.fmt.block
    if X.shape[0] == rows:
        return X
    array = X.numpy() if hasattr(X, "numpy") and not isinstance(X, np.ndarray) else X
    out = np.zeros((rows, array.shape[1]), array.dtype)
    out[:array.shape[0]] = array
    return out


__all__ = ["BsrForm", "Buckets", "BucketsForm", "CSR", "bucket_arrays", "FORMAT_NAMES", "SpmmFormat", "convert", "resolve"]
