"""Hypothesis: every conversion of a random sparse matrix round-trips, refreshes its values like
a fresh conversion, and maps every entry to a slot holding it."""

from __future__ import annotations

import numpy as np
from formats_cases import CONVERSIONS, assert_same_csr, canonical_scipy, dense_of, matrices, padding, slot_map
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetir import formats as F


def hybrids():
    widths = st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True).map(lambda w: tuple(1 << k for k in sorted(w)))
    return st.builds(lambda p, w: (lambda A: F.Hybrid.from_csr(A, p, w)), st.integers(1, 5), widths)


CONVERSION = st.one_of(
    st.sampled_from(sorted(CONVERSIONS)).map(CONVERSIONS.__getitem__),
    st.builds(lambda br, bc: (lambda A: F.Bsr.from_csr(A, (br, bc))), st.integers(1, 5), st.integers(1, 5)),
    st.builds(lambda w: (lambda A: F.Ell.from_csr(A, w)), st.integers(1, 6)),
    st.builds(lambda p: (lambda A: F.PaddedCsr.from_csr(A, p)), st.integers(1, 6)),
    hybrids(),
)


@settings(max_examples=300)
@given(matrices(), CONVERSION)
def test_round_trip_and_entry_map(A, convert):
    f = convert(A)
    canon = canonical_scipy(A)
    assert_same_csr(f.to_csr(), canon)
    np.testing.assert_array_equal(dense_of(f), canon.toarray())
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    slot_rows, slot_cols, _, real = slot_map(f)
    np.testing.assert_array_equal(slot_rows[f.entry_slot], rows)
    np.testing.assert_array_equal(slot_cols[f.entry_slot], A.indices)
    assert real[f.entry_slot].all()
    assert f.injective == (canon.nnz == A.nnz)


@settings(max_examples=200)
@given(matrices(), CONVERSION, st.randoms(use_true_random=False))
def test_values_equal_a_fresh_conversion(A, convert, rnd):
    new = np.array([rnd.randint(-4, 4) for _ in range(A.nnz)], A.dtype)
    f = convert(A)
    fresh = convert(F.from_arrays(A.indptr, A.indices, new, A.shape))
    np.testing.assert_array_equal(f.values(new), fresh.flat_data())
    np.testing.assert_array_equal(fresh.entry_slot, f.entry_slot)
    # Into a caller's buffer holding garbage: the same values, padding and fill cleared.
    out = np.full(f.slots, 99, A.dtype)
    assert f.values(new, out=out) is out
    np.testing.assert_array_equal(out, fresh.flat_data())


@settings(max_examples=200)
@given(matrices(), st.sampled_from(["ell1", "ell3", "padded1", "padded4", "hybrid1", "hybrid3", "hybrid_one_width"]))
def test_padding_columns_are_absent(A, name):
    f = CONVERSIONS[name](A)
    canon = canonical_scipy(A)
    pad_rows, pad_cols = padding(f)
    assert np.all((pad_cols >= 0) & (pad_cols < A.shape[1]))
    stored = set(zip(*canon.nonzero())) | set(zip(np.repeat(np.arange(A.shape[0]), np.diff(canon.indptr)), canon.indices))
    absent = [(r, c) not in stored for r, c in zip(pad_rows, pad_cols)]
    if f.pad_absent:
        assert all(absent)
        assert np.all(canon.toarray()[pad_rows, pad_cols] == 0)
    else:
        # Only a row storing every column of its range has no absent column to pad with.
        assert not all(absent)
