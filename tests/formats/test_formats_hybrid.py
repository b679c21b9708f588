"""The hybrid format's bucketing rule, padding and row bounds (ELL and padded CSR share them)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from formats_cases import EDGE_CASES, matrices, padding
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetir import formats as F


def check_buckets(h: F.Hybrid, A) -> None:
    """Each bucket follows the rule, slots are laid out in (range, width) order."""
    canon = sp.csr_matrix(A if not isinstance(A, F.CsrArrays) else (A.data, A.indices, A.indptr), shape=A.shape)
    canon.sum_duplicates()
    m, n = canon.shape
    span = -(-n // h.col_parts) if n else 0
    assert [(b.partition, b.width) for b in h.buckets] == [(p, w) for p in range(h.col_parts) for w in h.widths]
    offset = 0
    pieces = {}  # (row, range) -> number of its entries seen
    for b in h.buckets:
        assert b.offset == offset
        offset += b.slots
        assert b.indices.shape == (b.rows.size, b.width) and b.counts.shape == b.rows.shape
        assert np.all(np.diff(b.rows) >= 0), "rows must be non-decreasing"
        assert np.all((b.counts >= 1) & (b.counts <= b.width))
        smaller = h.widths[h.widths.index(b.width) - 1] if b.width != h.widths[0] else 0
        widest = b.width == h.widths[-1]
        # A piece fits its bucket and no smaller one (full pieces of W go to the widest bucket).
        assert np.all(b.counts > smaller) or widest
        for row, count, cols in zip(b.rows, b.counts, b.indices):
            real = cols[:count]
            assert np.all((real >= b.partition * span) & (real < (b.partition + 1) * span))
            pieces[row, b.partition] = pieces.get((row, b.partition), 0) + count
    assert offset == h.slots
    lengths = {}
    for row in range(m):
        for col in canon.indices[canon.indptr[row]:canon.indptr[row + 1]]:
            lengths[row, col // span] = lengths.get((row, col // span), 0) + 1
    assert pieces == lengths


@settings(max_examples=200)
@given(matrices(max_dim=20, max_entries=80), st.integers(1, 4),
       st.lists(st.integers(0, 4), min_size=1, max_size=4, unique=True), st.sampled_from(["smallest", "widest"]))
def test_bucketing_rule(A, col_parts, exponents, remainder):
    widths = tuple(1 << k for k in sorted(exponents))
    h = F.Hybrid.from_csr(A, col_parts, widths, remainder=remainder)
    check_buckets(h, A)
    if remainder == "widest":
        # A row split into several pieces has all of them in the widest bucket of its range.
        for p in range(col_parts):
            buckets = {}
            for b in h.buckets[p * len(widths):(p + 1) * len(widths)]:
                for row in b.rows:
                    buckets.setdefault(row, []).append(b.width)
            assert all(set(w) == {widths[-1]} for w in buckets.values() if len(w) > 1)


@pytest.mark.parametrize("case", ["long_rows_w4", "long_rows_w8", "long_rows_w32"])
def test_long_rows_are_split(case):
    A = EDGE_CASES[case]()
    W = {"long_rows_w4": 4, "long_rows_w8": 8, "long_rows_w32": 32}[case]
    widths = tuple(1 << k for k in range(W.bit_length()))
    h = F.Hybrid.from_csr(A, 1, widths)
    check_buckets(h, A)
    widest = h.bucket(0, W)
    # Row 1 has W + 1 entries: one full piece and a remainder of 1 in the width-1 bucket.
    assert list(widest.rows).count(1) == 1 and 1 in h.bucket(0, 1).rows
    # Row 2 has 6 W + extra entries: six full pieces, in column order.
    row2 = widest.indices[widest.rows == 2]
    assert row2.shape == (6, W) and np.all(np.diff(row2.reshape(-1)) > 0)


def test_remainder_to_the_widest_bucket():
    A = EDGE_CASES["long_rows_w8"]()  # row 1: 9 entries, row 2: 51, row 3: 1
    smallest = F.Hybrid.from_csr(A, 1, (1, 2, 4, 8))
    widest = F.Hybrid.from_csr(A, 1, (1, 2, 4, 8), remainder="widest")
    assert smallest.bucket(0, 1).rows.tolist() == [1, 3] and smallest.bucket(0, 4).rows.tolist() == [2]
    assert widest.bucket(0, 1).rows.tolist() == [3] and widest.bucket(0, 4).rows.size == 0
    assert widest.bucket(0, 8).rows.tolist() == [1, 1] + [2] * 7
    assert widest.bucket(0, 8).counts.tolist() == [8, 1] + [8] * 6 + [3]
    check_buckets(widest, A)


def test_padding_stays_in_the_column_range():
    A = sp.random(40, 50, density=0.15, format="csr", random_state=3, dtype=np.float32)
    h = F.Hybrid.from_csr(A, 4, (2, 8))
    span = -(-50 // 4)
    for b in h.buckets:
        pad = np.arange(b.width)[None, :] >= b.counts[:, None]
        cols = b.indices[pad]
        assert np.all((cols >= b.partition * span) & (cols < min(50, (b.partition + 1) * span)))
    assert h.pad_absent


def test_full_row_pads_with_its_last_column():
    A = EDGE_CASES["full_dense_row"]()  # row 4 stores all 37 columns
    e = F.Ell.from_csr(A, 32)
    assert not e.pad_absent
    piece = np.flatnonzero(e.rows == 4)[-1]
    assert e.counts[piece] == 5 and np.all(e.indices[piece, 5:] == 36)
    # Other rows still pad with a column they do not store.
    rows, cols = padding(F.Ell.from_csr(A[np.r_[0:4, 5:9]], 32))
    assert np.all(A[np.r_[0:4, 5:9]].toarray()[rows, cols] == 0)


def test_row_bounds_split_work_by_original_rows(bundled):
    _, A = bundled
    h = F.Hybrid.from_csr(A, 2, (1, 4, 16))
    for parts in (1, 2, 7):
        rows = h.row_partition(parts)
        assert rows[0] == 0 and rows[-1] == A.shape[0] and np.all(np.diff(rows) >= 0)
        bounds = h.row_bounds(parts)
        assert bounds.shape == (len(h.buckets), parts + 1) and bounds.dtype == np.int32
        for b, starts in zip(h.buckets, bounds):
            assert starts[0] == 0 and starts[-1] == b.rows.size
            for t in range(parts):
                inside = b.rows[starts[t]:starts[t + 1]]
                assert np.all((inside >= rows[t]) & (inside < rows[t + 1]))
        # Equal work: every range within one row's work of total / parts.
        work = np.ones(A.shape[0], np.int64)
        for b in h.buckets:
            np.add.at(work, b.rows, b.width)
        per_range = [work[rows[t]:rows[t + 1]].sum() for t in range(parts)]
        assert max(per_range) <= work.sum() / parts + work.max()
    explicit = np.array([0, 5, A.shape[0]], np.int32)
    np.testing.assert_array_equal(h.row_bounds(explicit)[:, 1], [np.searchsorted(b.rows, 5) for b in h.buckets])


def test_ell_row_bounds():
    A = EDGE_CASES["long_rows_w8"]()
    e = F.Ell.from_csr(A, 8)
    bounds = e.row_bounds(np.array([0, 2, 4]))
    np.testing.assert_array_equal(bounds, [0, int(np.searchsorted(e.rows, 2)), e.rows.size])
    assert e.row_bounds(3).shape == (4,)


def test_empty_buckets_are_kept():
    A = sp.csr_matrix(np.eye(4, dtype=np.float32))
    h = F.Hybrid.from_csr(A, 2, (1, 2, 4))
    assert len(h.buckets) == 6 and [b.rows.size for b in h.buckets] == [2, 0, 0, 2, 0, 0]
    assert h.bucket(1, 1).rows.tolist() == [2, 3]
