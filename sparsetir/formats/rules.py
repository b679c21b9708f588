"""The composable formats as stage-I format descriptions, and rewrite rules from CSR to each.

A format description is a stage-I function that declares a format's axes and one sparse buffer
over them (its body is ``T.evaluate(0)``), as in the RFC; its scalar parameters that fix the
format (block size, ELL width, padding) are specialized away. A rule rewrites a CSR buffer,
laid out over ``(I, J)`` with ``J`` compressed under ``I``, into that format
(``sparsetir.format_decompose``); the conversion routines of this package compute the new
structure arrays, and the decomposed function's preprocess iterations (or ``values()`` of a
converted format) fill the values.

=========  ==================================  ============================================
format     axes                                coordinates of a stored value
=========  ==================================  ============================================
BSR(b)     IO (dense), JO (CSR under IO),      row ``io * b + ii``, column ``jo * b + ji``
           II, JI (dense, b)
ELL(w)     O (dense, 1), I (the ELL rows:      row ``i``, column ``j``; every ELL row holds
           row ids), J (``w`` columns each)    ``w`` slots, padding slots at absent columns
padded(p)  I (dense), JO (chunks per row),     row ``i``, column ``ji``; each row in chunks
           JI (``p`` columns per chunk)        of ``p`` slots
=========  ==================================  ============================================
"""

from __future__ import annotations

import functools
from typing import Sequence

from ..ir.function import SparseFunction
from ..script import tir as T
from ..transforms.format_decompose import FormatRewriteRule


@functools.cache
def _bsr() -> SparseFunction:
    @T.prim_func
    def bsr(a: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32,
            block_size: T.int32) -> None:
        IO = T.dense_fixed(m)
        JO = T.sparse_variable(IO, (n, nnz), (indptr, indices), "int32")
        II = T.dense_fixed(block_size)
        JI = T.dense_fixed(block_size)
        A = T.match_sparse_buffer(a, (IO, JO, II, JI), "float32")
        T.evaluate(0)

    return bsr


@functools.cache
def _ell() -> SparseFunction:
    @T.prim_func
    def ell(a: T.handle, indices_i: T.handle, indices_j: T.handle, m: T.int32, n: T.int32, num_rows: T.int32,
            nnz_cols: T.int32) -> None:
        # The ELL rows are the num_rows positions under the one position of O; their coordinates
        # are row ids, which repeat when a long row is split into several ELL rows.
        O = T.dense_fixed(1)
        I = T.sparse_fixed(O, (m, num_rows), indices_i, "int32", sorted=False)
        J = T.sparse_fixed(I, (n, nnz_cols), indices_j, "int32", sorted=False)
        A = T.match_sparse_buffer(a, (O, I, J), "float32")
        T.evaluate(0)

    return ell


@functools.cache
def _padding() -> SparseFunction:
    @T.prim_func
    def padding(a: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz_chunks: T.int32,
                pad_size: T.int32) -> None:
        I = T.dense_fixed(m)
        JO = T.dense_variable(I, ((n + pad_size - 1) // pad_size, nnz_chunks), indptr, "int32")
        JI = T.sparse_fixed(JO, (n, pad_size), indices, "int32", sorted=False)
        A = T.match_sparse_buffer(a, (I, JO, JI), "float32")
        T.evaluate(0)

    return padding


def bsr_format(block_size: int) -> SparseFunction:
    """The BSR format with square blocks of ``block_size`` (the RFC's ``bsr``, specialized)."""
    fmt = _bsr()
    return fmt.specialize({fmt.param("block_size"): _positive("block_size", block_size)})


def ell_format(width: int) -> SparseFunction:
    """The ELL format with ``width`` slots per row and compressed row ids."""
    fmt = _ell()
    return fmt.specialize({fmt.param("nnz_cols"): _positive("width", width)})


def padding_format(pad: int) -> SparseFunction:
    """CSR with every row's entries in chunks of ``pad`` slots (the last chunk padded)."""
    fmt = _padding()
    return fmt.specialize({fmt.param("pad_size"): _positive("pad", pad)})


def bsr_rule(block_size: int, buffers: Sequence[str] = ("A",), axes: Sequence[str] = ("I", "J"),
             name: str | None = None) -> FormatRewriteRule:
    """CSR ``buffers`` over ``axes`` (row, column) to BSR with ``block_size`` blocks."""
    b = _positive("block_size", block_size)
    return FormatRewriteRule(
        name or str(b), bsr_format(b), list(buffers), list(axes), ["IO", "JO", "II", "JI"],
        {axes[0]: ["IO", "II"], axes[1]: ["JO", "JI"]},
        lambda i, j: (i // b, j // b, i % b, j % b),
        lambda io, jo, ii, ji: (io * b + ii, jo * b + ji),
    )


def ell_rule(width: int, buffers: Sequence[str] = ("A",), axes: Sequence[str] = ("I", "J"),
             name: str | None = None) -> FormatRewriteRule:
    """CSR ``buffers`` over ``axes`` (row, column) to ELL with ``width`` slots per row."""
    return FormatRewriteRule(
        name or str(_positive("width", width)), ell_format(width), list(buffers), list(axes), ["O", "I", "J"],
        {axes[0]: ["O", "I"], axes[1]: ["J"]},
        lambda i, j: (0, i, j),
        lambda o, i, j: (i, j),
    )


def padding_rule(pad: int, buffers: Sequence[str] = ("A",), axes: Sequence[str] = ("I", "J"),
                 name: str | None = None) -> FormatRewriteRule:
    """CSR ``buffers`` over ``axes`` (row, column) to rows padded to chunks of ``pad`` slots."""
    return FormatRewriteRule(
        name or str(_positive("pad", pad)), padding_format(pad), list(buffers), list(axes), ["I", "JO", "JI"],
        {axes[0]: ["I"], axes[1]: ["JO", "JI"]},
        lambda i, j: (i, 0, j),  # the chunk is not a function of the column: accesses go by the iterators
        lambda i, jo, ji: (i, ji),
    )


def _positive(what: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return value


__all__ = ["bsr_format", "bsr_rule", "ell_format", "ell_rule", "padding_format", "padding_rule"]
