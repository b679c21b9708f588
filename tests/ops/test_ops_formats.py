"""``ops.spmm(A, X, format=...)``: every format equals SciPy on the shared matrices and on the
awkward cases; conversions are cached per structure and never go stale; ``auto`` chooses by trial
and remembers; bad formats are named."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import sparsetir
import sparsetir.ops as ops
from sparsetir import data
from sparsetir.ops import SpmmFormat, auto, formatted

from ops_matrices import MATRICES, random_csr

FORMATS = ["csr", "bsr", "ell", "hyb", "auto", SpmmFormat("bsr", block=3), SpmmFormat("hyb", widths=(2, 8))]
SHARED = ["cora", "citeseer", "pubmed", "email_enron", "soc_slashdot0902", "bcsstk16", "rgg_n_2_15_s0"]


def _check(A, X, fmt, rtol=1e-5):
    C = ops.spmm(A, X, format=fmt)
    expected = A @ X
    scale = max(float(np.abs(expected).max()), 1.0)
    np.testing.assert_allclose(C, expected, rtol=rtol, atol=rtol * scale, err_msg=str(fmt))
    return C


@pytest.mark.parametrize("name", SHARED)
def test_every_format_on_every_shared_matrix(name, shared_data_dir):
    A = data.load(name, search_dirs=[shared_data_dir])
    X = np.random.default_rng(0).standard_normal((A.shape[1], 16)).astype(np.float32)
    for fmt in ["csr", "bsr", "ell", "hyb", "auto"]:
        _check(A, X, fmt, rtol=2e-5)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_formats_on_the_awkward_matrices(matrix, fmt):
    for width in (1, 16, 33):
        X = np.random.default_rng(width).standard_normal((matrix.shape[1], width)).astype(np.float32)
        C = _check(matrix, X, fmt)
        assert C.shape == (matrix.shape[0], width) and C.flags.c_contiguous


@pytest.mark.parametrize("block", [2, 3, 4, 8])
def test_bsr_on_shapes_not_divisible_by_the_block(block):
    A = random_csr(67, 45, 0.1, 5)
    X = np.random.default_rng(1).standard_normal((45, 24)).astype(np.float32)
    C = _check(A, X, SpmmFormat("bsr", block=block))
    assert C.shape == (67, 24)


def test_long_rows_are_pieces_of_the_widest_bucket():
    A = random_csr(40, 300, 0.02, 6)
    A[7, :] = 1.0  # 300 entries: 9 pieces of 32 and a remainder
    A = A.tocsr()
    X = np.random.default_rng(2).standard_normal((300, 16)).astype(np.float32)
    for widths in [(1, 2, 4, 8, 16, 32), (4,), (1, 2)]:
        _check(A, X, SpmmFormat("hyb" if len(widths) > 1 else "ell", widths=widths))


def test_float64_torch_and_duplicates():
    A = random_csr(50, 40, 0.1, 7, dtype=np.float64)
    X = np.random.default_rng(3).standard_normal((40, 20))
    for fmt in ["bsr", "hyb"]:
        _check(A, X, fmt, rtol=1e-12)
        T = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                                    torch.from_numpy(A.data.copy()), size=A.shape)
        out = ops.spmm(T, torch.from_numpy(X), format=fmt)
        assert isinstance(out, torch.Tensor)
        np.testing.assert_allclose(out.numpy(), A @ X, rtol=1e-12, atol=1e-12)
    # Duplicate entries (and unsorted columns): summed, as SciPy's product sums them.
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0], np.float32), np.array([3, 1, 3, 0]), np.array([0, 3, 3, 4])),
                        shape=(3, 5))
    Xd = np.random.default_rng(4).standard_normal((5, 16)).astype(np.float32)
    for fmt in ["bsr", "ell", "hyb"]:
        _check(dup, Xd, fmt)
        dup.data *= 2  # values are re-laid out on each call for a matrix with duplicates
        _check(dup, Xd, fmt)


def test_conversion_once_per_structure_and_values_always_current():
    A = random_csr(60, 50, 0.1, 8)
    X = np.random.default_rng(5).standard_normal((50, 16)).astype(np.float32)
    for fmt in ["bsr", "hyb"]:
        _check(A, X, fmt)
        before = ops.prepared.preparations
        A.data *= -3  # in place: the next call must see it
        _check(A, X, fmt)
        assert ops.prepared.preparations == before
        form = ops.converted(A, ops._csr("A", A), formatted.resolve("x", fmt, ops._stats(A, ops._csr("A", A))))
        assert form.seconds > 0


def test_inputs_are_not_modified():
    A = random_csr(30, 20, 0.2, 9)
    X = np.random.default_rng(6).standard_normal((20, 16)).astype(np.float32)
    kept = [A.data.copy(), A.indices.copy(), A.indptr.copy(), X.copy()]
    for fmt in ["bsr", "ell", "hyb", "auto"]:
        ops.spmm(A, X, format=fmt)
    for before, after in zip(kept, [A.data, A.indices, A.indptr, X]):
        np.testing.assert_array_equal(before, after)


def test_auto_tries_candidates_once_and_remembers():
    A = data.load("cora")
    X = np.random.default_rng(7).standard_normal((A.shape[1], 32)).astype(np.float32)
    _check(A, X, "auto")
    made = auto.choice(A, X)
    assert "csr" in made.seconds and all(s > 0 for s in made.seconds.values())
    assert str(made.format) in made.seconds
    if made.format.name != "csr":  # another format wins only by the margin
        assert made.seconds[str(made.format)] * auto.MARGIN <= made.seconds["csr"]
    again = auto.choice(A, X)
    assert again is made  # remembered: no second trial
    assert "width 32 float32" in made.describe()


def test_candidates_follow_the_structure():
    blocky = sp.csr_matrix(np.kron(np.eye(20), np.ones((3, 3), np.float32)))
    stats = sparsetir.formats.stats(blocky)
    names = [str(f) for f in auto.candidates(stats)]
    assert names[0] == "csr" and "bsr(3)" in names
    assert formatted.resolve("x", "bsr", stats) == SpmmFormat("bsr", block=3)
    graph = data.load("cora")
    assert [str(f) for f in auto.candidates(sparsetir.formats.stats(graph))] == ["csr", "hyb(1, 2, 4, 8, 16, 32)"]


def test_bad_formats_are_named():
    A = random_csr(10, 8, 0.3, 10)
    X = np.ones((8, 4), np.float32)
    with pytest.raises(sparsetir.ArgumentError, match=r"spmm: format: format must be one of 'csr', 'bsr', 'ell', 'hyb', 'auto'"):
        ops.spmm(A, X, format="coo")
    with pytest.raises(sparsetir.ArgumentError, match="bsr needs a positive block size, got 0"):
        ops.spmm(A, X, format=SpmmFormat("bsr", block=0))
    with pytest.raises(sparsetir.ArgumentError, match=r"hyb needs increasing power-of-two widths, got \(3, 8\)"):
        ops.spmm(A, X, format=SpmmFormat("hyb", widths=(3, 8)))
    with pytest.raises(sparsetir.ArgumentError, match=r"ell needs increasing power-of-two widths \(one\)"):
        ops.spmm(A, X, format=SpmmFormat("ell", widths=(2, 4)))
    Ct = ops.csr_tensors(A)
    with pytest.raises(sparsetir.ArgumentError, match="under torch.compile and with CsrTensors spmm computes on CSR"):
        ops.spmm(Ct, torch.ones(8, 4), format="bsr")


def test_gradients_through_a_format_equal_csr_ones():
    A = random_csr(30, 25, 0.2, 11, dtype=np.float64)
    T = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                                torch.from_numpy(A.data.copy()), size=A.shape)
    grads = {}
    for fmt in ["csr", "bsr", "hyb"]:
        X = torch.from_numpy(np.random.default_rng(12).standard_normal((25, 6))).requires_grad_()
        out = ops.spmm(T, X, format=fmt)
        (out * out).sum().backward()
        grads[fmt] = X.grad.clone()
    torch.testing.assert_close(grads["bsr"], grads["csr"])
    torch.testing.assert_close(grads["hyb"], grads["csr"])


def test_bucket_widths_may_be_a_list():
    """SpmmFormat(widths=[...]) is read as the tuple it stands for (the format keys the kernel
    cache, and a list made the lookup fail with TypeError: unhashable)."""
    A = sp.random(30, 25, 0.2, format="csr", dtype=np.float64, random_state=1)
    X = np.random.default_rng(0).standard_normal((25, 6))
    for fmt in (ops.SpmmFormat("ell", widths=[4]), ops.SpmmFormat("hyb", widths=[1, 2, 4])):
        np.testing.assert_allclose(ops.spmm(A, X, format=fmt), A @ X, rtol=1e-12, atol=1e-12)
