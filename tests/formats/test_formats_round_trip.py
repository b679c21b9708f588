"""Every conversion gives back the canonical input exactly, and its own arrays describe it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from formats_cases import CONVERSIONS, EDGE_CASES, arrays, assert_same_csr, canonical_scipy, dense_of, slot_map

from sparsetir import data
from sparsetir import formats as F


def input_entries(A):
    """(rows, cols, data) of every stored entry of a CSR input, in its storage order."""
    indptr, indices, data = A.indptr, A.indices, A.data
    return np.repeat(np.arange(indptr.size - 1), np.diff(indptr)), np.asarray(indices), np.asarray(data)


def check_format(f, A, dense: bool = True) -> None:
    """The checks every conversion passes (``dense``: also compare a dense reconstruction)."""
    canon = canonical_scipy(A)
    assert_same_csr(f.to_csr(), canon)
    rows, cols, data = input_entries(A)
    # The values given at conversion, refreshed from the input's own values, are the same.
    np.testing.assert_array_equal(f.values(data), f.flat_data())
    assert f.flat_data().shape == (f.slots,) and f.flat_data().dtype == data.dtype
    # The entry map sends each entry to a real slot at its coordinate.
    assert f.entry_slot.shape == (data.size,) and f.entry_slot.dtype in (np.int32, np.int64)
    slot_rows, slot_cols, _, real = slot_map(f)
    np.testing.assert_array_equal(slot_rows[f.entry_slot], rows)
    np.testing.assert_array_equal(slot_cols[f.entry_slot], cols)
    assert real[f.entry_slot].all()
    assert f.entries == canon.nnz and f.held().sum() == canon.nnz
    for array in f.structure():
        assert array.dtype == np.int32 and array.flags.c_contiguous
    assert f.nbytes >= f.flat_data().nbytes
    assert "\n" not in f.describe() and type(f).__name__ in f.describe()
    if dense:
        np.testing.assert_array_equal(dense_of(f), canon.toarray())


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_cases(case, conversion):
    A = EDGE_CASES[case]()
    check_format(CONVERSIONS[conversion](A), A)


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_bundled_matrices(bundled, conversion):
    name, A = bundled
    check_format(CONVERSIONS[conversion](A), A, dense=name != "pubmed")


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_shuffled_with_duplicates(conversion):
    """cora with every row's entries shuffled and a tenth of them stored twice (integer values,
    so SciPy's sums and ours agree exactly)."""
    A = data.load("cora")
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    again = rng.random(A.nnz) < 0.1
    rows = np.concatenate([rows, rows[again]])
    cols = np.concatenate([A.indices, A.indices[again]])
    values = rng.integers(-5, 6, rows.size).astype(np.float32)
    order = rng.permutation(rows.size)
    shuffled = arrays(rows[order], cols[order], values[order], A.shape)
    check_format(CONVERSIONS[conversion](shuffled), shuffled)


@pytest.mark.parametrize("conversion", ["csc", "bsr4x4", "ell32", "padded4", "hybrid3"])
def test_shared_matrices(shared, conversion):
    _, A = shared
    check_format(CONVERSIONS[conversion](A), A, dense=False)


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch: sparse CSR is beta
@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_torch_input(conversion):
    torch = pytest.importorskip("torch")
    A = EDGE_CASES["not_divisible"]()
    T = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                                torch.from_numpy(A.data), size=A.shape)
    f = CONVERSIONS[conversion](T)
    assert_same_csr(f.to_csr(), A)
    np.testing.assert_array_equal(f.values(T.values()), f.flat_data())


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_input_is_not_modified(conversion):
    A = EDGE_CASES["duplicates"]()
    before = [a.copy() for a in (A.indptr, A.indices, A.data)]
    f = CONVERSIONS[conversion](A)
    f.values(A.data)
    for a, b in zip((A.indptr, A.indices, A.data), before):
        np.testing.assert_array_equal(a, b)


def test_canonical_owns_its_arrays():
    A = sp.random(6, 7, density=0.4, format="csr", random_state=0, dtype=np.float32)
    csr = F.canonical(A)
    assert csr.identity and np.array_equal(csr.entry_slot, np.arange(A.nnz))
    A.data[:] = 7
    A.indices[:] = 0
    assert_same_csr(csr.to_csr(), sp.random(6, 7, density=0.4, format="csr", random_state=0, dtype=np.float32))


def test_canonical_sums_duplicates_in_storage_order():
    # float32 sums depend on order: (1e8 + 1) - 1e8 is 0 in float32, 1e8 + (1 - 1e8) is 0 too,
    # but the order must be the input's, the same in every format.
    A = arrays([0, 0, 0], [1, 1, 1], [1e8, 1, -1e8], (1, 2))
    expected = np.float32(np.float32(np.float32(1e8) + np.float32(1)) + np.float32(-1e8))
    for conversion in CONVERSIONS.values():
        f = conversion(A)
        assert f.to_csr().data.tolist() == [expected]
        assert f.values(np.array([1, 2, 3], np.float32))[f.entry_slot[0]] == 6


def test_ell_is_hybrid_with_one_bucket(bundled):
    _, A = bundled
    for width in (1, 4, 8):
        e = F.Ell.from_csr(A, width)
        (b,) = F.Hybrid.from_csr(A, 1, (width,)).buckets
        for name in ("rows", "indices", "counts"):
            np.testing.assert_array_equal(getattr(e, name), getattr(b, name))


def test_padded_csr_is_ell_indexed_by_row(bundled):
    _, A = bundled
    for pad in (1, 3, 8):
        e, p = F.Ell.from_csr(A, pad), F.PaddedCsr.from_csr(A, pad)
        np.testing.assert_array_equal(p.indices, e.indices.reshape(-1))
        np.testing.assert_array_equal(np.repeat(np.arange(A.shape[0]), np.diff(p.indptr)), e.rows)
        np.testing.assert_array_equal(p.lengths, np.diff(A.indptr))
        assert p.pad_absent == e.pad_absent
