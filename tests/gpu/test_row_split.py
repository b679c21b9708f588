"""The SpMM row split (``runtime/cuda/row_split.py``): the pieces against the rows they cut, and
when the split is chosen."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsetir.runtime.cuda.row_split import choose, estimate_us, split_rows


@pytest.mark.parametrize("length", [1, 3, 16])
def test_pieces_cover_each_row_in_order(length):
    lengths = np.array([0, 1, 5, 16, 17, 0, 40])
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    split = split_rows(indptr, length)
    assert split.pieces[0] == 0 and split.pieces[-1] == split.count
    assert split.piece_ptr[0] == 0 and split.piece_ptr[-1] == indptr[-1]
    for row, n in enumerate(lengths):
        lo, hi = split.pieces[row], split.pieces[row + 1]
        assert hi - lo == max(1, -(-n // length))  # an empty row keeps one empty piece
        bounds = split.piece_ptr[lo:hi + 1]
        assert bounds[0] == indptr[row] and bounds[-1] == indptr[row + 1]
        assert np.all(np.diff(bounds) <= length) and np.all(np.diff(bounds) >= 0)
    assert split.most == max(max(1, -(-n // length)) for n in lengths)
    assert split.pieces.dtype == np.int32 and split.piece_ptr.dtype == np.int32


def test_no_rows_and_bad_length():
    split = split_rows(np.zeros(1, np.int32), 16)
    assert split.count == 0 and split.most == 0
    with pytest.raises(ValueError, match="piece length must be positive"):
        split_rows(np.array([0, 2]), 0)


def test_skewed_rows_are_split_and_even_rows_are_not():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 6, 5000)
    lengths[7] = 3000  # one hub row: the one-pass kernel would walk 3000 nonzeros
    skewed = np.concatenate([[0], np.cumsum(lengths)])
    assert choose(skewed, 32, 4) in (16, 32)
    assert estimate_us(skewed, 32, 4, choose(skewed, 32, 4)) < estimate_us(skewed, 32, 4, None)
    even = sp.random(4000, 4000, density=0.01, format="csr", random_state=1).indptr
    assert choose(even, 32, 4) is None
    assert choose(np.zeros(1, np.int64), 32, 4) is None


def test_wide_rows_of_a_small_hub_stay_one_pass_when_the_workspace_costs_more():
    lengths = np.full(200_000, 3)
    lengths[0] = 60  # a short walk saved, for a workspace of a row per piece at width 4096
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    assert choose(indptr, 4096, 4) is None


def test_a_matrix_decides_and_splits_once_per_width():
    """``ops.cuda.DeviceCsr.split``: the choice and the pieces are made on first use and kept
    (an SpMM call reuses them); the pieces are ``split_rows``'s."""
    pytest.importorskip("torch")
    from sparsetir.ops.cuda import DeviceCsr

    lengths = np.full(1000, 2)
    lengths[3] = 900
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    csr = DeviceCsr(None, None, (1000, 1000), "float32", int(indptr[-1]), 900, "cpu", indptr.copy())
    count, pieces, piece_ptr, most = csr.split(32)
    expected = split_rows(indptr, choose(indptr, 32, 4))
    assert (count, most) == (expected.count, expected.most)
    np.testing.assert_array_equal(piece_ptr.numpy(), expected.piece_ptr)
    assert csr.split(32)[1] is pieces  # kept, not made again
    even = np.arange(0, 2001, 2, dtype=np.int32)
    assert DeviceCsr(None, None, (1000, 1000), "float32", 2000, 2, "cpu", even).split(32) is None
