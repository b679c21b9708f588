"""``ops.add``, ``ops.multiply``, ``ops.spgemm``: against SciPy on real and random matrices, the
edge cases, the cached symbolic phase, gradients (gradcheck, float64) and the error messages.

Our results keep entries that cancel to 0 (SciPy drops them), so values are compared densely and
patterns as "ours contains SciPy's"; with positive random values nothing cancels and the patterns
are compared exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir
import sparsetir.ops as ops
from sparsetir import data
from sparsetir.ops import sparse_sparse

from ops_matrices import random_csr, snapshot

torch = pytest.importorskip("torch")


def _rand(m, n, density, seed, dtype=np.float64):
    return sp.random(m, n, density=density, format="csr", dtype=dtype, random_state=seed)


def _check_sorted(C):
    indptr, indices = (np.asarray(x) for x in ((C.crow_indices(), C.col_indices()) if torch.is_tensor(C)
                                              else (C.indptr, C.indices)))
    for i in range(len(indptr) - 1):
        assert (np.diff(indices[indptr[i]:indptr[i + 1]]) > 0).all(), f"row {i} is not sorted"


def _same(C, expected, rtol=1e-12, exact_pattern=True):
    """``C`` (ours) equals SciPy's ``expected``: sorted rows, equal values densely, and the
    pattern equal to SciPy's (or, with cancellation possible, containing it)."""
    _check_sorted(C)
    if torch.is_tensor(C):
        C = sp.csr_matrix((C.values().numpy(), C.col_indices().numpy(), C.crow_indices().numpy()), shape=tuple(C.shape))
    assert C.shape == expected.shape and C.dtype == expected.dtype
    expected = expected.tocsr()
    expected.sort_indices()
    dense, ref = C.toarray(), expected.toarray()
    scale = max(float(np.abs(ref).max(initial=0)), 1.0)
    np.testing.assert_allclose(dense, ref, rtol=rtol, atol=rtol * scale)
    ours, theirs = C.copy(), expected.copy()
    ours.data[:] = 1
    theirs.data[:] = 1
    if exact_pattern:
        assert (ours != theirs).nnz == 0
    else:
        assert (theirs - theirs.multiply(ours)).nnz == 0


OPS = {
    "add": (ops.add, lambda A, B: A + B),
    "multiply": (ops.multiply, lambda A, B: A.multiply(B)),
}


# --- against SciPy ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(70, 50, 40), (1, 30, 20), (40, 1, 35), (200, 300, 150)])
def test_spgemm_random(shape, dtype):
    m, k, n = shape
    A = random_csr(m, k, 0.08, 1, dtype)  # empty rows (first and last), one long row
    B = random_csr(k, n, 0.08, 2, dtype)
    _same(ops.spgemm(A, B), A @ B, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_and_multiply_random(name, dtype):
    op, ref = OPS[name]
    A, B = random_csr(90, 60, 0.1, 3, dtype), random_csr(90, 60, 0.1, 4, dtype)
    _same(op(A, B), ref(A, B))
    _same(op(A, A), ref(A, A))  # identical patterns


def test_on_cora_and_bcsstk16(shared_data_dir):
    for name in ("cora", "bcsstk16"):
        A = data.load(name, search_dirs=[shared_data_dir])
        A.sort_indices()
        A64 = A.astype(np.float64)
        _same(ops.spgemm(A64, A64), A64 @ A64, exact_pattern=False)
        C = ops.spgemm(A, A)  # float32: compared with the float64 product
        _check_sorted(C)
        ref = (A64 @ A64).toarray()
        assert np.abs(C.toarray() - ref).max() <= 1e-5 * np.abs(ref).max()
        At = A64.T.tocsr()
        At.sort_indices()
        for op, reference in OPS.values():
            _same(op(A64, At), reference(A64, At), exact_pattern=False)


# --- edge cases ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((0, 0), (0, 0)), ((5, 0), (0, 7)), ((0, 4), (4, 3)), ((3, 4), (4, 0))])
def test_spgemm_of_empty_shapes(shapes):
    A, B = sp.csr_matrix(shapes[0]), sp.csr_matrix(shapes[1])
    C = ops.spgemm(A, B)
    assert C.shape == (shapes[0][0], shapes[1][1]) and C.nnz == 0 and C.toarray().sum() == 0


def test_matrices_without_entries():
    A, B = sp.csr_matrix((6, 5)), _rand(5, 4, 0.5, 1)
    _same(ops.spgemm(A, B), A @ B)
    _same(ops.spgemm(B, sp.csr_matrix((4, 3))), B @ sp.csr_matrix((4, 3)))
    E = sp.csr_matrix((5, 4))
    for _ in range(3):  # a first meeting, a second (sources recorded), a third (gathered)
        B.data = B.data + 1.0
        _same(ops.add(E, B), B + E)
        _same(ops.add(B, E), B + E)
        _same(ops.multiply(B, E), B.multiply(E))


def test_disjoint_patterns():
    A = sp.csr_matrix(np.array([[1.0, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 4]]))
    B = sp.csr_matrix(np.array([[0, 5.0, 0, 6], [7, 0, 0, 0], [8, 0, 9, 0]]))
    assert ops.multiply(A, B).nnz == 0
    _same(ops.add(A, B), A + B)
    C = sp.csr_matrix(np.array([[1.0, 0], [0, 0], [0, 0], [0, 0]]))
    D = sp.csr_matrix(np.array([[0, 0.0], [0, 1]]))  # A's columns never meet D's rows' entries
    assert ops.spgemm(C, D).nnz == 0


def test_int64_indices_and_index_dtype_of_the_result():
    A, B = random_csr(30, 20, 0.2, 5, np.float64), random_csr(20, 25, 0.2, 6, np.float64)
    A64 = sp.csr_matrix((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)), shape=A.shape)
    A64.indices, A64.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)  # SciPy would narrow them
    _same(ops.spgemm(A64, B), A @ B)
    _same(ops.add(A64, A), A + A)


@pytest.mark.parametrize("cls", [sp.csr_matrix, sp.csr_array], ids=["csr_matrix", "csr_array"])
@pytest.mark.parametrize("op", ["spgemm", "add", "multiply"])
def test_scipy_results_are_what_scipys_constructor_makes(cls, op):
    # Results of SciPy's own classes skip its constructor (checks of arrays the kernels made);
    # they must hold the same attributes, pass SciPy's full check and behave as SciPy's.
    A, B = (cls(random_csr(30, 30, 0.2, seed, np.float32)) for seed in (1, 2))
    C = getattr(ops, op)(A, B)
    made = cls((C.data.copy(), C.indices.copy(), C.indptr.copy()), shape=C.shape)
    assert type(C) is cls and set(vars(C)) - {"_has_sorted_indices"} == set(vars(made))
    assert C.indices.dtype == C.indptr.dtype == np.int32 and C.has_sorted_indices
    C.check_format(full_check=True)
    expected = {"spgemm": lambda: A @ B, "add": lambda: A + B, "multiply": lambda: A.multiply(B)}[op]()
    np.testing.assert_allclose((C - expected).toarray(), 0, atol=1e-5)
    np.testing.assert_allclose((C @ np.ones(30, np.float32)), made @ np.ones(30, np.float32))
    assert repr(C) == repr(made)


class _OwnCsr(sp.csr_matrix):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tag = "made by __init__"


def test_a_scipy_subclass_result_goes_through_its_constructor():
    A = _OwnCsr(random_csr(20, 20, 0.2, 3, np.float64))
    C = ops.add(A, A)
    assert type(C) is _OwnCsr and C.tag == "made by __init__"
    _same(C, random_csr(20, 20, 0.2, 3, np.float64) * 2)


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_torch_inputs_give_torch_results(index_dtype):
    A, B = random_csr(40, 30, 0.15, 7, np.float32), random_csr(30, 35, 0.15, 8, np.float32)
    At, Bt = (torch.from_numpy(M.toarray()).to_sparse_csr() for M in (A, B))
    At = torch.sparse_csr_tensor(At.crow_indices().to(index_dtype), At.col_indices().to(index_dtype), At.values(),
                                 size=At.shape)
    Bt = torch.sparse_csr_tensor(Bt.crow_indices().to(index_dtype), Bt.col_indices().to(index_dtype), Bt.values(),
                                 size=Bt.shape)
    C = ops.spgemm(At, Bt)
    assert C.layout == torch.sparse_csr and C.crow_indices().dtype == index_dtype
    _same(C, A @ B, rtol=1e-5)
    A2 = torch.from_numpy(random_csr(40, 30, 0.15, 9, np.float32).toarray()).to_sparse_csr()
    _same(ops.add(At, A2), A + sp.csr_matrix(A2.to_dense().numpy()), rtol=1e-6)
    _same(ops.multiply(At, A2), A.multiply(sp.csr_matrix(A2.to_dense().numpy())), rtol=1e-6)


def test_inputs_are_not_modified():
    A, B = random_csr(50, 40, 0.1, 10), random_csr(40, 30, 0.1, 11)
    A2 = random_csr(50, 40, 0.1, 12)
    before = snapshot(A.data, A.indptr, A.indices, B.data, B.indptr, B.indices, A2.data)
    ops.spgemm(A, B)
    ops.spgemm(A, B, mask=(A @ B).sorted_indices())
    ops.add(A, A2)
    ops.multiply(A, A2)
    after = [A.data, A.indptr, A.indices, B.data, B.indptr, B.indices, A2.data]
    for old, new in zip(before, after):
        np.testing.assert_array_equal(old, new)


def test_spgemm_takes_unsorted_rows_and_repeated_columns():
    A = sp.csr_matrix((np.array([1.0, 2, 3, 4]), np.array([2, 0, 2, 1]), np.array([0, 3, 3, 4])), shape=(3, 3))
    assert not A.has_canonical_format
    B = _rand(3, 5, 0.6, 13)
    C = ops.spgemm(A, B)
    _same(C, A @ B)  # SciPy sums the repeated entries of A as the kernel does


def _spread(cols, rng, rows=300, density=0.05):
    """A (rows x max(cols)+1) matrix whose nonzeros fall on the given sorted columns, shuffled."""
    B0 = sp.csr_matrix(np.where(rng.random((rows, cols.size)) < density, rng.standard_normal((rows, cols.size)), 0))
    return sp.csr_matrix((B0.data, cols[B0.indices], B0.indptr), shape=(rows, int(cols[-1]) + 1))


@pytest.mark.parametrize("n, path", [(2000, "bitmap"), (70_000, "buckets"), (300_000, "buckets")])
def test_long_rows_with_spread_columns_are_sorted(n, path):
    # Rows of the product with far more than SHORT_ROW entries over a span wider than SCAN_SPAN
    # times the row: from the bitmap (span up to BITMAP_SPAN x the row), else by buckets.
    rng = np.random.default_rng(14)
    A = _rand(8, 300, 0.3, 15)
    B = _spread(np.sort(rng.choice(n, 400, replace=False)), rng)
    C = ops.spgemm(A, B)
    lengths = np.diff(C.indptr)
    spans = np.array([C.indices[C.indptr[i + 1] - 1] - C.indices[C.indptr[i]] + 1 for i in range(8)])
    scripts = sparse_sparse.scripts
    assert lengths.min() > 10 * scripts.SHORT_ROW and (spans > scripts.SCAN_SPAN * lengths).all()
    assert (spans <= scripts.BITMAP_SPAN * lengths).all() == (path == "bitmap")
    _same(C, A @ B, exact_pattern=False)


def test_rows_with_bunched_columns_go_to_the_radix_sort():
    # Most columns in a few bunches far apart: a bucket holds more than CROWDED entries.
    rng = np.random.default_rng(27)
    for n in (10_000, 70_000):  # 2 and 3 byte passes
        bunches = np.concatenate([np.arange(c, c + 100) for c in (0, n // 3, n // 2)])
        cols = np.unique(np.concatenate([bunches, rng.choice(n, 100, replace=False), [n - 1]]))
        A = _rand(4, 300, 0.5, 28)
        B = _spread(cols, rng, density=0.2)
        C = ops.spgemm(A, B)
        _same(C, A @ B, exact_pattern=False)


def test_long_rows_within_a_short_span_are_scanned_in_order():
    # Long rows whose columns are dense within their span: emitted by scanning the marker row
    # (the span from B's rows' least and greatest columns, B's rows sorted or not).
    A = _rand(40, 60, 0.5, 24)
    B = sp.csr_matrix(np.triu(np.tril(np.random.default_rng(25).standard_normal((60, 90)), 40), -5))
    C = ops.spgemm(A, B)
    lengths = np.diff(C.indptr)
    assert lengths.max() > sparse_sparse.scripts.SHORT_ROW
    _same(C, A @ B, exact_pattern=False)
    shuffled = B.copy()
    rng = np.random.default_rng(26)
    for r in range(B.shape[0]):
        lo, hi = B.indptr[r], B.indptr[r + 1]
        order = lo + rng.permutation(hi - lo)
        shuffled.indices[lo:hi], shuffled.data[lo:hi] = B.indices[order], B.data[order]
    shuffled.has_sorted_indices = False
    _same(ops.spgemm(A, shuffled), A @ B, exact_pattern=False)


def test_any_number_of_row_chunks_gives_the_same_result():
    A, B = random_csr(120, 80, 0.08, 40, np.float64), random_csr(80, 90, 0.08, 41, np.float64)
    A2 = random_csr(120, 80, 0.08, 42, np.float64)
    expected, _ = sparse_sparse.spgemm_product(_chunked(A, 1), A.data, _chunked(B, 1), B.data)
    for parts in (3, 7, 130):  # more chunks than rows: empty chunks
        a, b = _chunked(A, parts), _chunked(B, parts)
        pattern, first = sparse_sparse.spgemm_product(a, A.data, b, B.data)
        np.testing.assert_array_equal(pattern.indptr, expected.indptr)
        np.testing.assert_array_equal(pattern.indices, expected.indices)
        values = sparse_sparse.spgemm_values(a, A.data, b, B.data, pattern)
        for v in (first, values):
            _same(sp.csr_matrix((v, pattern.indices, pattern.indptr), shape=pattern.shape), A @ B,
                  exact_pattern=False)
        for op, reference in [("add", A + A2), ("multiply", A.multiply(A2))]:
            x = sparse_sparse.Operand(A, a, A.data, np.dtype(np.int32), False)
            y = sparse_sparse.Operand(A2, _chunked(A2, parts), A2.data, np.dtype(np.int32), False)
            # The first meeting of the pair merges without sources, the second records them,
            # the third gathers through them.
            for call in range(3):
                merged, values = sparse_sparse.merge_product(op, x, y)
                assert (merged.src_a is None) == (call == 0)
                _same(sp.csr_matrix((values, merged.indices, merged.indptr), shape=merged.shape), reference)


def _same_unordered(C, expected, rtol):
    """``C`` equals ``expected`` as a set of entries: each row's columns distinct, values equal."""
    assert C.shape == expected.shape and C.dtype == expected.dtype and not C.has_sorted_indices
    for i in range(C.shape[0]):
        row = C.indices[C.indptr[i]:C.indptr[i + 1]]
        assert len(np.unique(row)) == len(row), f"row {i} repeats a column"
    ordered = C.copy()
    ordered.sort_indices()
    _same(ordered, expected, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, density", [((70, 50, 40), 0.08), ((200, 300, 150), 0.08), ((60, 60, 60), 0.5),
                                            ((1, 30, 20), 0.08), ((40, 1, 35), 0.08)])
def test_unsorted_spgemm_has_scipy_entries(shape, density, dtype):
    m, k, n = shape
    A = random_csr(m, k, density, 61, dtype)
    B = random_csr(k, n, density, 62, dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    C = ops.spgemm(A, B, sorted=False)
    _same_unordered(C, A @ B, rtol)
    # Once more on the same structures: the unsorted pattern is reused, with new values.
    A2 = sp.csr_matrix((A.data * 2, A.indices, A.indptr), shape=A.shape)
    again = ops.spgemm(A2, B, sorted=False)
    np.testing.assert_array_equal(again.indices, C.indices)
    _same_unordered(again, A2 @ B, rtol)


def test_unsorted_rows_come_in_the_order_products_reach_them():
    # Row 0 of A reaches B's row 1 (columns 3, 0) before row 0 (columns 2, 0).
    A = sp.csr_matrix((np.array([1.0, 1.0]), np.array([1, 0]), np.array([0, 2])), shape=(1, 2))
    B = sp.csr_matrix(np.array([[5.0, 0, 7, 0], [2.0, 0, 0, 3]]))
    C = ops.spgemm(A, B, sorted=False)
    assert C.indices.tolist() == [0, 3, 2] and C.data.tolist() == [7.0, 3.0, 7.0]
    assert not C.has_sorted_indices
    sorted_C = ops.spgemm(A, B)  # a sorted call on the same pair sorts
    assert sorted_C.indices.tolist() == [0, 2, 3] and sorted_C.has_sorted_indices


@pytest.mark.parametrize("n", [2000, 70_000])
def test_unsorted_spgemm_on_long_rows_and_dense_rows(n):
    # Long rows with spread columns (most products reach a new column), dense rows (most reach
    # one already summed) and rows in between.
    rng = np.random.default_rng(63)
    A = _rand(8, 300, 0.3, 67)
    B = _spread(np.sort(rng.choice(n, 400, replace=False)), rng)
    dense = random_csr(300, 300, 0.4, 64, np.float64)
    middle = random_csr(200, 200, 0.1, 68, np.float64)
    for X, Y in [(A, B), (dense, dense), (middle, middle)]:
        _same_unordered(ops.spgemm(X, Y, sorted=False), X @ Y, 1e-12)


def test_sorted_results_stay_sorted_when_unsorted_is_allowed():
    A = _rand(30, 30, 0.2, 65)
    first = ops.spgemm(A, A)  # the pair's sorted pattern, cached from the second meeting on
    ops.spgemm(A, A)
    C = ops.spgemm(A, A, sorted=False)
    assert C.has_sorted_indices
    _same(C, A @ A)
    M = _rand(30, 30, 0.3, 66)
    M.sort_indices()
    masked = ops.spgemm(A, A, mask=M, sorted=False)
    np.testing.assert_array_equal(masked.indices, M.indices)
    T = torch.from_numpy(A.toarray()).to_sparse_csr()
    _same(ops.spgemm(T, T, sorted=False), A @ A)
    assert first.has_sorted_indices
    with pytest.raises(TypeError, match="spgemm: sorted must be True or False, got 'no'"):
        ops.spgemm(A, A, sorted="no")


def _chunked(M, parts):
    from sparsetir.runtime.partition import row_partition

    M.sort_indices()
    return sparse_sparse.Pattern(M.indptr, M.indices, M.shape, row_partition(M.indptr, parts))


def test_add_and_multiply_sort_a_copy_of_unsorted_scipy_rows():
    # Rows out of order and repeated columns, as SciPy's own products leave them: taken as SciPy
    # takes them (the repeats add up), the inputs untouched, the result sorted.
    A = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1, 2, 0]), np.array([0, 2, 4])), shape=(2, 3))
    R = sp.csr_matrix((np.array([5.0, 6.0, 7.0]), np.array([1, 1, 2]), np.array([0, 3, 3])), shape=(2, 3))
    kept = [(M.data.copy(), M.indices.copy(), M.indptr.copy()) for M in (A, R)]
    for got, want in [(ops.add(A, R), A + R), (ops.multiply(A, R), A.multiply(R)), (ops.add(R, R), R + R),
                      (ops.multiply(R, A), R.multiply(A))]:
        _same(got, sp.csr_matrix(want))
    for M, (data, indices, indptr) in zip((A, R), kept):
        np.testing.assert_array_equal(M.data, data)
        np.testing.assert_array_equal(M.indices, indices)
        np.testing.assert_array_equal(M.indptr, indptr)
    P = random_csr(40, 30, 0.2, 5, np.float64) @ random_csr(30, 50, 0.2, 6, np.float64)  # SciPy: rows unsorted
    Q = random_csr(40, 50, 0.1, 7, np.float64)
    _same(ops.add(P, Q), P + Q)
    X, Y = random_csr(40, 30, 0.2, 8, np.float64), random_csr(30, 50, 0.2, 9, np.float64)
    C = ops.spgemm(X, Y, mask=P)  # a mask with unsorted rows: the result has its pattern, sorted
    S = P.sorted_indices()
    np.testing.assert_array_equal(C.indptr, S.indptr)
    np.testing.assert_array_equal(C.indices, S.indices)
    np.testing.assert_allclose(C.toarray(), (X @ Y).toarray() * (S.toarray() != 0), atol=1e-12)


def test_add_and_multiply_refuse_unsorted_torch_rows_naming_the_row():
    torch = pytest.importorskip("torch")
    A = torch.sparse_csr_tensor(torch.tensor([0, 2, 4]), torch.tensor([0, 1, 2, 0]), torch.ones(4, dtype=torch.float64),
                                size=(2, 3), check_invariants=False)
    B = torch.sparse_csr_tensor(torch.tensor([0, 0, 0]), torch.tensor([], dtype=torch.int64),
                                torch.ones(0, dtype=torch.float64), size=(2, 3))
    with pytest.raises(sparsetir.ArgumentError, match=r"add: A: row 1 is not sorted: column 0 comes after column 2"):
        ops.add(A, B)
    with pytest.raises(sparsetir.ArgumentError, match=r"multiply: B: row 1 is not sorted"):
        ops.multiply(B, A)


# --- mask ---------------------------------------------------------------------------------------


def test_masked_spgemm_has_the_mask_pattern_exactly():
    A, B = random_csr(60, 50, 0.08, 16, np.float64), random_csr(50, 45, 0.08, 17, np.float64)
    M = _rand(60, 45, 0.1, 18)
    M.sort_indices()
    C = ops.spgemm(A, B, mask=M)
    np.testing.assert_array_equal(C.indptr, M.indptr)
    np.testing.assert_array_equal(C.indices, M.indices)
    np.testing.assert_allclose(C.toarray(), (A @ B).toarray() * (M.toarray() != 0), atol=1e-12)
    assert (C.data == 0).any()  # mask entries no product reaches are stored zeros
    Mt = torch.from_numpy(M.toarray()).to_sparse_csr()
    At, Bt = (torch.from_numpy(X.toarray()).to_sparse_csr() for X in (A, B))
    Ct = ops.spgemm(At, Bt, mask=Mt)
    np.testing.assert_allclose(Ct.values().numpy(), C.data, atol=1e-12)


# --- the cached symbolic phase ------------------------------------------------------------------


def test_second_call_with_new_values_runs_only_the_numeric_phase():
    A, B = random_csr(80, 60, 0.1, 19, np.float64), random_csr(60, 70, 0.1, 20, np.float64)
    A2 = random_csr(80, 60, 0.1, 21, np.float64)
    for op, reference, other in [(ops.spgemm, lambda x, y: x @ y, B), *[(f, r, A2) for f, r in OPS.values()]]:
        op(A, other)
        made = sparse_sparse.symbolic.made
        A.data = A.data * 3 - 1  # a new values array on the same index arrays
        _same(op(A, other), reference(A, other), exact_pattern=False)
        A.data *= -2  # in place
        _same(op(A, other), reference(A, other), exact_pattern=False)
        same_arrays = sp.csr_matrix(A.shape)  # another matrix around A's index arrays
        same_arrays.data, same_arrays.indices, same_arrays.indptr = A.data + 1, A.indices, A.indptr
        _same(op(same_arrays, other), reference(same_arrays, other), exact_pattern=False)
        assert sparse_sparse.symbolic.made == made, op.__name__


def test_a_result_edited_in_place_changes_no_later_result():
    # The first call on a pair hands its fresh columns to its result; later calls keep the
    # pattern in the cache and give each result a copy.
    A, B = random_csr(70, 50, 0.1, 27, np.float64), random_csr(50, 60, 0.1, 28, np.float64)
    A2 = random_csr(70, 50, 0.1, 29, np.float64)
    for op, reference, other in [(ops.spgemm, lambda x, y: x @ y, B), *[(f, r, A2) for f, r in OPS.values()]]:
        sparse_sparse.forget()
        for _ in range(4):
            C = op(A, other)
            _same(C, reference(A, other), exact_pattern=False)
            C.indices[:] = 0
            C.indptr[:] = 0


def test_torch_structure_shared_between_tensors_is_cached():
    A, B = random_csr(50, 40, 0.1, 22, np.float64), random_csr(40, 30, 0.1, 23, np.float64)
    crow, col = torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64))
    Bt = torch.from_numpy(B.toarray()).to_sparse_csr()
    ops.spgemm(torch.sparse_csr_tensor(crow, col, torch.from_numpy(A.data), size=A.shape), Bt)
    made = sparse_sparse.symbolic.made
    values = torch.from_numpy(np.random.default_rng(0).standard_normal(A.nnz))
    C = ops.spgemm(torch.sparse_csr_tensor(crow, col, values, size=A.shape), Bt)
    assert sparse_sparse.symbolic.made == made
    expected = sp.csr_matrix((values.numpy(), A.indices, A.indptr), shape=A.shape) @ B
    _same(C, expected, exact_pattern=False)
    # A result's index tensors are shared by the results of one pattern: their structure is found again.
    Ct = torch.from_numpy(B.toarray().T.copy()).to_sparse_csr()
    ops.spgemm(C, Ct)
    made = sparse_sparse.symbolic.made
    D = ops.spgemm(ops.spgemm(torch.sparse_csr_tensor(crow, col, values * 2, size=A.shape), Bt), Ct)
    assert sparse_sparse.symbolic.made == made
    np.testing.assert_allclose(D.to_dense().numpy(), 2 * (expected @ B.T).toarray(), rtol=1e-12, atol=1e-12)


def test_replaced_index_arrays_are_prepared_again():
    A, B = random_csr(30, 30, 0.1, 24, np.float64), random_csr(30, 30, 0.1, 25, np.float64)
    ops.spgemm(A, B)
    A2 = random_csr(30, 30, 0.2, 26, np.float64)
    A.indices, A.indptr, A.data = A2.indices, A2.indptr, A2.data
    _same(ops.spgemm(A, B), A2 @ B, exact_pattern=False)


# --- gradients ----------------------------------------------------------------------------------


def _leaf(values):
    return torch.from_numpy(np.array(values, dtype=np.float64)).requires_grad_()


def _csr(M, values):
    return torch.sparse_csr_tensor(torch.from_numpy(M.indptr.astype(np.int64)),
                                   torch.from_numpy(M.indices.astype(np.int64)), values, size=M.shape)


_A, _B = random_csr(7, 6, 0.4, 27, np.float64), random_csr(6, 5, 0.4, 28, np.float64)
_A2 = random_csr(7, 6, 0.4, 29, np.float64)


def test_gradcheck_spgemm():
    va, vb = _leaf(_A.data), _leaf(_B.data)
    assert torch.autograd.gradcheck(lambda x, y: ops.spgemm(_csr(_A, x), _csr(_B, y)).values(), (va, vb))
    weights = torch.from_numpy(np.random.default_rng(0).standard_normal((7, 5)))
    assert torch.autograd.gradcheck(lambda x, y: ops.spgemm(_csr(_A, x), _csr(_B, y)).to_dense() * weights, (va, vb))


def test_gradcheck_masked_spgemm():
    M = _rand(7, 5, 0.5, 30)
    va, vb = _leaf(_A.data), _leaf(_B.data)
    assert torch.autograd.gradcheck(lambda x, y: ops.spgemm(_csr(_A, x), _csr(_B, y), mask=M).values(), (va, vb))


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_add_and_multiply(name):
    op = OPS[name][0]
    va, vb = _leaf(_A.data), _leaf(_A2.data)
    assert torch.autograd.gradcheck(lambda x, y: op(_csr(_A, x), _csr(_A2, y)).values(), (va, vb))



@pytest.mark.parametrize("name", sorted(OPS))
def test_operands_of_one_pattern_are_combined_entry_by_entry(name):
    # Operands with the same columns in every row give a result of that pattern whose entries
    # line up with theirs: from the second call on, the values come without gathers; results,
    # and gradients, as for any other pair.
    op, reference = OPS[name]
    A = _rand(300, 200, 0.05, 53)
    B = sp.csr_matrix((np.random.default_rng(54).standard_normal(A.nnz), A.indices.copy(), A.indptr.copy()),
                      shape=A.shape)
    sparse_sparse.forget()
    for call in range(3):
        B.data = B.data * 1.5 + call  # new values each call
        _same(op(A, B), reference(A, B))
    entry = next(e for e in sparse_sparse.symbolic._entries.values() if isinstance(e[2], sparse_sparse.Merge))[2]
    assert entry.pattern.aligned and entry.pattern.src_a is None
    va, vb = _leaf(_A.data), _leaf(_A.data[::-1].copy())
    assert torch.autograd.gradcheck(lambda x, y: op(_csr(_A, x), _csr(_A, y)).values(), (va, vb))

def test_gradient_of_one_operand_only():
    va = _leaf(_A.data)
    C = ops.spgemm(_csr(_A, va), _csr(_B, torch.from_numpy(_B.data)))
    C.values().sum().backward()
    rows = np.repeat(np.arange(7), np.diff(_A.indptr))
    np.testing.assert_allclose(va.grad.numpy(), (np.ones((7, 5)) @ _B.toarray().T)[rows, _A.indices])


# --- errors -------------------------------------------------------------------------------------


def test_shape_mismatches_are_named():
    A, B = _rand(4, 5, 0.5, 31), _rand(6, 3, 0.5, 32)
    with pytest.raises(sparsetir.ArgumentError, match=r"spgemm: B: has 6 rows, but A has 5 columns"):
        ops.spgemm(A, B)
    with pytest.raises(sparsetir.ArgumentError, match=r"add: B: has shape \(6, 3\), but A has shape \(4, 5\)"):
        ops.add(A, B)
    with pytest.raises(sparsetir.ArgumentError, match=r"multiply: B: has shape"):
        ops.multiply(A, B)
    with pytest.raises(sparsetir.ArgumentError, match=r"spgemm: mask: has shape \(4, 4\), but A @ B has shape \(4, 3\)"):
        ops.spgemm(A, _rand(5, 3, 0.5, 33), mask=_rand(4, 4, 0.5, 34))


def test_malformed_structures_are_refused():
    A = _rand(4, 5, 0.5, 35)
    A.indptr = np.array([0, 3, 2, 5, A.nnz], np.int32)  # decreasing
    with pytest.raises(sparsetir.ArgumentError, match=r"spgemm: A: indptr"):
        ops.spgemm(A, _rand(5, 3, 0.5, 36))
    B = _rand(5, 3, 0.5, 37)
    B.indices = B.indices.copy()
    B.indices[0] = 7  # out of range
    with pytest.raises(sparsetir.ArgumentError, match=r"add: B: column index 7 is out of range for 3 columns"):
        ops.add(_rand(5, 3, 0.5, 38), B)



@pytest.mark.parametrize("op", ["add", "multiply"])
def test_the_merge_checks_every_entry_of_both_operands(op):
    # The merge checks the structures as it counts: an entry no merge step reaches (past the
    # other operand's last column, or in a row the other operand leaves empty) is checked too,
    # in whichever chunk of rows it lies, and the problem is named as a check before it would.
    fn, m = getattr(ops, op), 300
    columns = np.tile(np.array([0, 5, 10, 39], np.int32), m)
    other = sp.csr_matrix((np.ones(m - 1), np.ones(m - 1, np.int32), np.r_[0, np.arange(m - 1), m - 1].astype(np.int32)),
                          shape=(m, 40))  # column 1 in every row but the last, which is empty
    for row, value, message in [(7, 40, r"column index 40 is out of range for 40 columns"),
                                (250, -3, r"column index -3 is out of range for 40 columns"),
                                (299, 10, r"row 299 is not sorted: column 10 is repeated")]:
        indices = columns.copy()
        indices[4 * row + 3] = value  # the row's last entry, past every column of ``other``
        B = sp.csr_matrix((np.ones(4 * m), indices, np.arange(0, 4 * m + 1, 4, dtype=np.int32)), shape=(m, 40))
        if value == 10:  # a repeated column: SciPy's operands are sorted into a copy, as SciPy takes them
            reference = OPS[op][1]
            _same(fn(other, B), sp.csr_matrix(reference(other, B)))
            _same(fn(B, other), sp.csr_matrix(reference(B, other)))
            Bt, Ot = (torch.sparse_csr_tensor(torch.from_numpy(M.indptr).long(), torch.from_numpy(M.indices).long(),
                                              torch.from_numpy(M.data), size=M.shape, check_invariants=False)
                      for M in (B, other))
            with pytest.raises(sparsetir.ArgumentError, match=rf"{op}: B: {message}"):
                fn(Ot, Bt)
            continue
        with pytest.raises(sparsetir.ArgumentError, match=rf"{op}: B: {message}"):
            fn(other, B)
        with pytest.raises(sparsetir.ArgumentError, match=rf"{op}: A: {message}"):
            fn(B, other)
        if value != 10:  # the structure stays refused where a kernel would address with it
            with pytest.raises(sparsetir.ArgumentError, match=rf"spgemm: A: {message}"):
                ops.spgemm(B, _rand(40, 5, 0.3, 51))


@pytest.mark.parametrize("marked", [True, False])
def test_rows_counted_by_marks_or_by_merging_agree_with_scipy(monkeypatch, marked):
    # ``merge_count`` counts a chunk's rows through a row of marks per chunk, or (too many
    # columns for that) by merging them; both give SciPy's pattern on operands whose rows share
    # part of their columns, in random order of which comes first.
    if not marked:
        monkeypatch.setattr(sparse_sparse, "MARKED_COLUMNS", 0)
    rng = np.random.default_rng(61)
    for case in range(12):
        m, n = int(rng.integers(1, 300)), int(rng.integers(1, 400))
        A = _rand(m, n, float(rng.uniform(0.01, 0.3)), 100 + case)
        keep = A.copy()
        keep.data = (rng.random(A.nnz) < 0.5).astype(np.float64)
        keep.eliminate_zeros()
        B = (keep + _rand(m, n, float(rng.uniform(0.0, 0.2)), 200 + case)).tocsr()
        B.data = rng.random(B.nnz) + 0.5
        sparse_sparse.forget()
        _same(ops.add(A, B), A + B)
        _same(ops.multiply(A, B), A.multiply(B).tocsr())


def test_a_wide_sparse_pair_is_merged_without_marks():
    # Columns far beyond the entries: a row of marks per chunk would cost more than the merge.
    A, B = _rand(50, 200_000, 2e-5, 71), _rand(50, 200_000, 2e-5, 72)
    parts = sparse_sparse._parts()
    assert 200_000 * parts > sparse_sparse.MARK_COST * (A.nnz + B.nnz)
    _same(ops.add(A, B), A + B)
    _same(ops.multiply(A, A), A.multiply(A).tocsr())


def test_the_merge_check_agrees_with_a_row_by_row_check():
    # ``merge_count`` checks a chunk's rows in flat passes and takes back the descents where a
    # row ends; it must refuse exactly the structures a row-by-row check refuses, whatever the
    # chunks, with operands of one pattern (checked once) or of two.
    rng = np.random.default_rng(52)
    for case in range(60):
        m, n = int(rng.integers(1, 40)), int(rng.integers(1, 30))
        lengths = rng.integers(0, min(n, 6) + 1, m) * (rng.random(m) < 0.8)  # some empty rows
        indptr = np.r_[0, np.cumsum(lengths)].astype(np.int32)
        indices = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths] + [[]]).astype(np.int32)
        broken = indices.copy()
        if broken.size >= 2 and case % 3:
            p = int(rng.integers(0, broken.size - 1))
            broken[p], broken[p + 1] = broken[p + 1], broken[p]  # within a row or across two
        elif broken.size and case % 3 == 0:
            broken[int(rng.integers(0, broken.size))] = n if case % 2 else -1
        valid = sparse_sparse._unsorted_row(sparse_sparse.Pattern(indptr, broken, (m, n), indptr)) is None and (
            broken.size == 0 or (broken.min() >= 0 and broken.max() < n))
        B = sp.csr_matrix((np.ones(broken.size), broken, indptr), shape=(m, n))
        A = sp.csr_matrix((np.ones(indices.size), indices, indptr.copy()), shape=(m, n))
        for parts in (1, 3, 50):
            for left, right in [(B, B), (A, B), (B, A)]:
                sparse_sparse.forget()
                x = sparse_sparse.operand("A", left, merge=True)
                y = sparse_sparse.operand("B", right, merge=True)
                chunked = [sparse_sparse.Operand(o.source, _rechunked(o.csr, parts), o.values, o.index_dtype, False)
                           for o in (x, y)]
                if valid:
                    sparse_sparse.merge_product("add", *chunked)
                else:
                    with pytest.raises(sparsetir.ArgumentError, match=r"add: (A|B): (row \d+ is not sorted|column index)"):
                        sparse_sparse.merge_product("add", *chunked)


def _rechunked(csr, parts):
    from sparsetir.runtime.partition import row_partition

    return sparse_sparse.Pattern(csr.indptr, csr.indices, csr.shape, row_partition(csr.indptr, parts))

def test_other_arguments_are_refused():
    A = _rand(4, 4, 0.5, 39)
    with pytest.raises(sparsetir.ArgumentError, match=r"spgemm: B: expected a scipy.sparse CSR matrix .* dense numpy"):
        ops.spgemm(A, np.eye(4))
    with pytest.raises(sparsetir.ArgumentError, match=r"add: B: dtype float32 does not match A's dtype float64"):
        ops.add(A, A.astype(np.float32))
    with pytest.raises(sparsetir.ArgumentError, match=r"multiply: B: is a torch sparse CSR tensor but A is a SciPy"):
        ops.multiply(A, torch.from_numpy(A.toarray()).to_sparse_csr())


def test_kernels_are_compiled_by_tvm():
    for name, config in [("row_bounds", ()), ("spgemm_count", ()), ("spgemm_fill", ("float32",)),
                         ("spgemm_fill_unsorted", ("float64",)), ("spgemm_values", ("float64",)),
                         ("merge_count", (True,)), ("merge_fill", (False, "float64", True)), ("merge_fill", (True, "float32", False)), ("merge_values", (True, "float32"))]:
        kernel = sparse_sparse.kernel(name, *config)
        assert "define" in kernel.source()


def test_ops_forget_drops_a_structure_edited_in_place():
    a = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 0.0]], np.float32))
    first = ops.spgemm(a, a)
    np.testing.assert_allclose(first.toarray(), (a @ a).toarray(), rtol=1e-6)
    a.indices[:] = [1, 2, 0, 2]  # same row lengths, other (still sorted) columns
    sparsetir.ops.forget(a)
    np.testing.assert_allclose(ops.spgemm(a, a).toarray(), (a @ a).toarray(), rtol=1e-6)
    np.testing.assert_allclose(ops.add(a, a).toarray(), (a + a).toarray(), rtol=1e-6)


def test_ops_forget_drops_a_torch_structure_edited_in_place():
    torch = pytest.importorskip("torch")
    dense = torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 0.0]], dtype=torch.float64)
    t = dense.to_sparse_csr()
    ops.spgemm(t, t)
    t.col_indices().numpy()[:] = [1, 2, 0, 2]  # through a NumPy view: the version does not change
    sparsetir.ops.forget(t)
    edited = torch.sparse_csr_tensor(t.crow_indices(), t.col_indices(), t.values(), (3, 3)).to_dense()
    np.testing.assert_allclose(ops.spgemm(t, t).to_dense().numpy(), (edited @ edited).numpy(), rtol=1e-12)


class _Key:
    """A weak-referenceable key object that may hold another."""

    def __init__(self, held=None):
        self.held = held


def _finishes(action, seconds=20.0):
    import threading

    worker = threading.Thread(target=action, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive()


@pytest.mark.parametrize("how", ["drop", "clear", "replace", "collect"])
def test_a_cache_entry_whose_value_holds_another_entrys_key_goes_without_deadlock(how):
    # Dropping an entry frees its value, which held the only reference to the key of another
    # entry of the same cache: that entry's weak-reference callback runs inside the drop, on the
    # same thread (it used to wait forever for the lock the drop held).
    cache = sparse_sparse.IdentityCache()
    inner, outer = _Key(), _Key()
    cache.get("inner", (inner,), lambda: "inner value")
    cache.get("outer", (outer,), lambda: _Key(held=inner))  # the value holds ``inner``
    del inner
    assert len(cache) == 2

    keys = [outer]
    del outer

    def act():
        if how == "drop":
            cache.drop(keys[0])
        elif how == "clear":
            cache.clear()
        elif how == "replace":  # a stale check replaces the value, freeing the old one
            cache.get("outer", (keys[0],), lambda: "new value", check="other")
        else:
            keys[0] = None  # the key object itself goes
    assert _finishes(act), f"{how}: the cache deadlocked"
    assert len(cache) == (1 if how == "replace" else 0)
