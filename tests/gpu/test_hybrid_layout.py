"""The GPU's layout of the hybrid format (``runtime/cuda/hybrid_layout.py``), on the host:
every entry in exactly one slot with its column and value, rows longer than the widest bucket
as long rows in pieces, padding marked -1, each bucket's values aligned."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsetir import formats
from sparsetir.ops import formatted
from sparsetir.runtime.cuda.hybrid_layout import ALIGN_ELEMENTS, LONG_PIECE, hybrid_layout, long_width


def _layout(A, widths):
    made = formatted.bucket_arrays(formats.from_arrays(A.indptr, A.indices, A.data, A.shape), widths)
    return made, hybrid_layout(made.buckets, widths, np.ones(A.nnz, bool), made.empty)


def _rows_of(lay, A):
    """Each row's (column, value) pairs read back from the layout."""
    got = {}
    slots = A.data[lay.gather] if lay.gather.size else np.zeros(0)
    for b in lay.buckets:
        assert b.offset % ALIGN_ELEMENTS == 0 and b.cols.shape == (b.count * b.width,)
        for i, row in enumerate(b.rows):
            cols = b.cols[i * b.width:(i + 1) * b.width]
            vals = slots[b.offset + i * b.width:b.offset + (i + 1) * b.width]
            assert int(row) not in got
            got[int(row)] = sorted(zip(cols[cols >= 0].tolist(), vals[cols >= 0].tolist()))
    assert lay.long_offset % ALIGN_ELEMENTS == 0
    w = lay.piece_width
    for i, row in enumerate(lay.long_rows):
        lo, hi = lay.long_ptr[i] * w, lay.long_ptr[i + 1] * w
        cols = lay.long_cols[lo:hi]
        vals = slots[lay.long_offset + lo:lay.long_offset + hi]
        assert int(row) not in got
        got[int(row)] = sorted(zip(cols[cols >= 0].tolist(), vals[cols >= 0].tolist()))
    return got


@pytest.mark.parametrize("widths", [(1, 2, 4), (4,), (1, 2, 4, 8, 16, 32)])
def test_every_entry_lands_once_and_long_rows_are_split(widths):
    rng = np.random.default_rng(3)
    lengths = rng.choice([0, 1, 2, 3, 5, 9, 40, 100], size=60)
    rows = np.repeat(np.arange(60), lengths)
    cols = np.concatenate([np.sort(rng.choice(200, k, replace=False)) for k in lengths])
    A = sp.csr_matrix((rng.standard_normal(cols.shape[0]), (rows, cols)), shape=(60, 200))
    made, lay = _layout(A, widths)
    got = _rows_of(lay, A)
    for i in range(60):
        want = sorted(zip(A.indices[A.indptr[i]:A.indptr[i + 1]].tolist(), A.data[A.indptr[i]:A.indptr[i + 1]].tolist()))
        assert got.get(i, []) == want, i
    counts = np.diff(A.indptr)
    assert sorted(lay.long_rows.tolist()) == np.flatnonzero(counts > widths[-1]).tolist()
    assert lay.empty.tolist() == np.flatnonzero(counts == 0).tolist()
    piece = long_width(widths)
    assert piece == max(widths[-1], LONG_PIECE)
    assert lay.pieces == int(np.sum(-(-counts[counts > widths[-1]] // piece)))
    for i, row in enumerate(lay.long_rows):  # a piece holds entries first, then padding
        cols = lay.long_cols[lay.long_ptr[i] * piece:lay.long_ptr[i + 1] * piece].reshape(-1, piece)
        assert (cols[:-1] >= 0).all() and (cols[-1][:counts[row] - (cols.shape[0] - 1) * piece] >= 0).all()


def test_no_long_rows_and_an_empty_matrix():
    A = sp.csr_matrix(np.eye(5))
    _, lay = _layout(A, (1, 2))
    assert lay.long_rows.size == 0 and lay.pieces == 0 and lay.most_pieces == 1
    _, lay = _layout(sp.csr_matrix((3, 4)), (1, 2))
    assert lay.gather.size == 0 and lay.empty.tolist() == [0, 1, 2] and all(b.count == 0 for b in lay.buckets)


def test_unused_slots_are_padding():
    """With duplicates the values are summed into slots first; a slot no entry lands in is
    padding (column -1) even though its source index is valid."""
    A = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]))
    made = formatted.bucket_arrays(formats.from_arrays(A.indptr, A.indices, A.data, A.shape), (4,))
    used = np.zeros(max(int(made.hybrid.slots), A.nnz), bool)
    lay = hybrid_layout(made.buckets, (4,), used, made.empty)
    assert (lay.buckets[0].cols == -1).all()


def test_narrow_buckets_do_not_make_a_workspace_row_per_entry():
    """ELL of width 1 on a row of 100 entries: its pieces hold LONG_PIECE entries, not 1, so the
    workspace (a row of the output's width per piece) stays about nnz / LONG_PIECE rows."""
    A = sp.csr_matrix((np.arange(1.0, 104.0), (np.r_[np.zeros(100, int), 1, 2, 3], np.r_[np.arange(100), 0, 1, 2])),
                      shape=(4, 120))
    _, lay = _layout(A, (1,))
    assert lay.long_rows.tolist() == [0] and lay.piece_width == LONG_PIECE
    assert lay.pieces == -(-100 // LONG_PIECE)
    assert _rows_of(lay, A)[0] == list(zip(range(100), np.arange(1.0, 101.0).tolist()))
