"""Every op reflects its inputs' current contents: values edited in place between calls (in
contiguous and non-contiguous arrays) are seen; index arrays edited in place after ``forget``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import sparsetir.ops as ops

from ops_matrices import random_csr


def _with_strided_data(A):
    """``A`` holding its values in a non-contiguous view (every other element of a buffer)."""
    B = A.copy()
    buffer = np.zeros((2 * A.nnz,) + A.data.shape[1:], A.dtype)
    buffer[::2] = A.data
    B.data = buffer[::2]
    assert not B.data.flags.c_contiguous or A.nnz <= 1
    return B


def _csr_cases():
    A = random_csr(40, 30, 0.2, 21)
    A.sum_duplicates()
    return {"contiguous": A, "strided": _with_strided_data(A)}


def _sddmm_ref(A, X, Y):
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    return A.data * np.einsum("ij,ij->i", X[rows].astype(np.float64), Y[A.indices].astype(np.float64))


def _softmax_ref(A):
    out = np.empty(A.nnz)
    for i in range(A.shape[0]):
        row = A.data[A.indptr[i]:A.indptr[i + 1]].astype(np.float64)
        if row.size:
            e = np.exp(row - row.max())
            out[A.indptr[i]:A.indptr[i + 1]] = e / e.sum()
    return out


OPS = {
    "spmm": (lambda A, d: ops.spmm(A, d["X"]), lambda A, d: A @ d["X"].astype(np.float64)),
    "spmv": (lambda A, d: ops.spmv(A, d["x"]), lambda A, d: A @ d["x"].astype(np.float64)),
    "sddmm": (lambda A, d: ops.sddmm(A, d["Xs"], d["Y"]).data, lambda A, d: _sddmm_ref(A, d["Xs"], d["Y"])),
    "softmax": (lambda A, d: ops.softmax(A).data, lambda A, d: _softmax_ref(A)),
}


@pytest.fixture
def dense():
    rng = np.random.default_rng(3)
    return {"X": rng.standard_normal((30, 20)).astype(np.float32), "x": rng.standard_normal(30).astype(np.float32),
            "Xs": rng.standard_normal((40, 16)).astype(np.float32), "Y": rng.standard_normal((30, 16)).astype(np.float32)}


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_values_edited_in_place_are_seen(op, layout, dense):
    A = _csr_cases()[layout]
    run, ref = OPS[op]
    np.testing.assert_allclose(run(A, dense), ref(A, dense), rtol=1e-4, atol=1e-4)
    A.data *= 10                     # the case: a cached copy kept the old values
    A.data[: A.nnz // 3] = -2.5
    np.testing.assert_allclose(run(A, dense), ref(A, dense), rtol=1e-4, atol=1e-4)


def test_read_only_values_view_sees_edits_through_its_base(dense):
    A = random_csr(40, 30, 0.2, 22)
    base = A.data
    A.data = base.view()
    A.data.flags.writeable = False
    np.testing.assert_allclose(ops.spmm(A, dense["X"]), A @ dense["X"], rtol=1e-4, atol=1e-4)
    base *= 3
    np.testing.assert_allclose(ops.spmm(A, dense["X"]), A @ dense["X"], rtol=1e-4, atol=1e-4)


def test_torch_values_edited_in_place_are_seen(dense):
    A = random_csr(40, 30, 0.2, 23)
    At = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                                 torch.from_numpy(A.data.copy()), size=A.shape)
    X = torch.from_numpy(dense["X"])
    np.testing.assert_allclose(ops.spmm(At, X).numpy(), A @ dense["X"], rtol=1e-4, atol=1e-4)
    At.values().mul_(-4)
    np.testing.assert_allclose(ops.spmm(At, X).numpy(), (A * -4) @ dense["X"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("strided", [False, True])
def test_bsr_values_edited_in_place_are_seen(strided, dense):
    A = random_csr(40, 30, 0.2, 24).tobsr(blocksize=(2, 3))
    if strided:
        B = A.copy()
        buffer = np.zeros((2 * A.data.shape[0], 2, 3), np.float32)
        buffer[::2] = A.data
        B.data = buffer[::2]
        A = B
    np.testing.assert_allclose(ops.bsr_spmm(A, dense["X"]), A.toarray() @ dense["X"], rtol=1e-4, atol=1e-4)
    A.data *= 7
    np.testing.assert_allclose(ops.bsr_spmm(A, dense["X"]), A.toarray() @ dense["X"], rtol=1e-4, atol=1e-4)


def test_segment_sum_and_ell_values_edited_in_place_are_seen(dense):
    values = np.random.default_rng(5).standard_normal((60, 20)).astype(np.float32)[::2]  # strided rows
    offsets = np.array([0, 4, 4, 30])
    ref = lambda: np.stack([values[a:b].sum(axis=0) for a, b in zip(offsets[:-1], offsets[1:])])
    np.testing.assert_allclose(ops.segment_sum(values, offsets), ref(), rtol=1e-5, atol=1e-5)
    values *= -2
    np.testing.assert_allclose(ops.segment_sum(values, offsets), ref(), rtol=1e-5, atol=1e-5)
    idx = np.array([[0, 5], [29, 1], [3, 3]])
    vals = np.ones((3, 4), np.float32)[:, ::2]  # strided
    dense_A = lambda: np.stack([np.bincount(idx[i], vals[i], minlength=30) for i in range(3)])
    np.testing.assert_allclose(ops.ell_spmm(idx, vals, dense["X"]), dense_A() @ dense["X"], rtol=1e-5, atol=1e-5)
    vals *= 5
    np.testing.assert_allclose(ops.ell_spmm(idx, vals, dense["X"]), dense_A() @ dense["X"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_index_arrays_edited_in_place_are_seen_after_forget(index_dtype, dense):
    A = random_csr(40, 30, 0.2, 25)
    A.indices = A.indices.astype(index_dtype)
    A.indptr = A.indptr.astype(index_dtype)
    np.testing.assert_allclose(ops.spmm(A, dense["X"]), A @ dense["X"], rtol=1e-4, atol=1e-4)
    A.indices[:] = (A.indices + 7) % 30          # new columns
    A.indptr[1:-1] = A.indptr[2:]                # row 0 takes row 1's entries, ...
    A.indptr[-2] = A.indptr[-1]
    ops.forget(A)
    expected = sp.csr_matrix((A.data, A.indices, A.indptr), shape=A.shape) @ dense["X"]
    np.testing.assert_allclose(ops.spmm(A, dense["X"]), expected, rtol=1e-4, atol=1e-4)


def _torch_csr(A, values):
    return torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)),
                                   torch.from_numpy(A.indices.astype(np.int64)), values, size=A.shape)


def test_new_torch_tensors_on_the_same_index_tensors_see_their_own_values_and_indices(dense):
    A = random_csr(40, 30, 0.2, 26)
    crow = torch.from_numpy(A.indptr.astype(np.int64))
    col = torch.from_numpy(A.indices.astype(np.int64))
    X = torch.from_numpy(dense["X"])
    for scale in (1.0, -3.0, 0.5):
        values = torch.from_numpy(A.data * np.float32(scale))  # a new values tensor each time
        At = torch.sparse_csr_tensor(crow, col, values, size=A.shape)
        np.testing.assert_allclose(ops.spmm(At, X).numpy(), (A * scale) @ dense["X"], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(ops.sddmm(At, torch.from_numpy(dense["Xs"]), torch.from_numpy(dense["Y"])).values(),
                                   _sddmm_ref(A * scale, dense["Xs"], dense["Y"]), rtol=1e-4, atol=1e-4)
    # Index tensors edited in place, then a new tensor built on them: its own structure is used
    # (torch gives each CSR tensor's index accessors a version counter of their own, so a
    # preparation keyed on the index memory would not see this edit).
    col.copy_((col + 3) % 30)
    moved = sp.csr_matrix((A.data, (A.indices + 3) % 30, A.indptr), shape=A.shape)
    At = torch.sparse_csr_tensor(crow, col, torch.from_numpy(A.data.copy()), size=A.shape)
    np.testing.assert_allclose(ops.spmm(At, X).numpy(), moved @ dense["X"], rtol=1e-4, atol=1e-4)


def test_torch_results_come_prepared_and_without_warnings(dense):
    import warnings

    A = random_csr(40, 30, 0.2, 27)
    A.sum_duplicates()
    At = _torch_csr(A, torch.from_numpy(A.data.copy()))
    X = torch.from_numpy(dense["Xs"])
    Y = torch.from_numpy(dense["Y"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns when a CSR tensor's checks are off implicitly
        scores = ops.sddmm(At, X, Y)
        before = ops.prepared.preparations
        weights = ops.softmax(scores)
        out = ops.spmm(weights, Y)
    assert ops.prepared.preparations == before  # sddmm's and softmax's results share A's preparation
    assert weights.crow_indices().data_ptr() != At.crow_indices().data_ptr()  # results own their indices
    S = sp.csr_matrix((_sddmm_ref(A, dense["Xs"], dense["Y"]), A.indices, A.indptr), shape=A.shape)
    expected = sp.csr_matrix((_softmax_ref(S), A.indices, A.indptr), shape=A.shape) @ dense["Y"]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


#: Every op on a matrix whose index arrays are then edited in place to point far out of bounds:
#: run in a child process, since a kernel reading the caller's arrays would crash the process.
_EDITED_STRUCTURE_SCRIPT = r"""
import numpy as np, scipy.sparse as sp, sparsetir.ops as ops
from sparsetir import ArgumentError

rng = np.random.default_rng(7)
A0 = sp.random(300, 200, 0.2, format="csr", dtype=np.float32, random_state=1)
X = rng.standard_normal((200, 4)).astype(np.float32)
Xs = rng.standard_normal((300, 4)).astype(np.float32)
x = X[:, 0].copy()
calls = {f"spmm {fmt}": (lambda A, fmt=fmt: ops.spmm(A, X, format=fmt), lambda A: A @ X)
         for fmt in ("csr", "bsr", "ell", "hyb", "auto")}
calls["spmv"] = (lambda A: ops.spmv(A, x), lambda A: A @ x)
calls["sddmm"] = (lambda A: ops.sddmm(A, Xs, X).toarray(),
                  lambda A: A.multiply(Xs @ X.T).toarray())
calls["softmax"] = (lambda A: ops.softmax(A).toarray(), lambda A: softmax_ref(A))


def softmax_ref(A):
    out = A.astype(np.float64)
    for i in range(A.shape[0]):
        row = out.data[out.indptr[i]:out.indptr[i + 1]]
        if row.size:
            row[:] = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
    return out.toarray()


for name, (run, ref) in calls.items():
    for index_dtype in (np.int32, np.int64):
        A = A0.copy()
        A.indices, A.indptr = A.indices.astype(index_dtype), A.indptr.astype(index_dtype)
        expected = ref(A)
        run(A)
        A.indices[:] = 2**30                      # a result for the structure first seen
        np.testing.assert_allclose(run(A), expected, rtol=1e-4, atol=1e-4, err_msg=name)
        A.indptr[-1] = 10**8                      # a changed entry count is prepared again
        try:
            run(A)
        except ArgumentError as err:
            assert "indptr[300]=100000000" in str(err), (name, err)
        else:
            raise AssertionError(f"{name}: an indptr ending past nnz was accepted")
B = A0.tobsr((2, 2))
expected = B @ X
ops.bsr_spmm(B, X)
B.indices[:] = 2**30
np.testing.assert_allclose(ops.bsr_spmm(B, X), expected, rtol=1e-4, atol=1e-4)
print("ok")
"""


def test_index_arrays_edited_in_place_never_reach_the_kernels():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _EDITED_STRUCTURE_SCRIPT], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]
