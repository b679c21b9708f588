"""The GPU kernels' schedules checked on the CPU: each thread-bound program is run with its GPU
loops serial (``runtime/cuda/simulate.py``) and compared with NumPy/SciPy.

This checks what the schedules decide (splits, predicates, register caches and their
write-back, where reductions start, every index), for the ops' GPU kernels at awkward widths
and for the default schedule of every workload. It does not check the parallel execution, TVM's
warp-shuffle lowering or the CUDA code (nvcc compiles that: ``test_nvcc_compile.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir
from gpu_kernels import OP_KEYS, hybrid_arguments, key_id, simulated_op, workload_kernel
from sparsetir.runtime.cuda.row_split import split_rows
from sparsetir.runtime.cuda.simulate import serial_program, simulate
from workloads import WORKLOADS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from ops_matrices import MATRICES  # noqa: E402

RNG = np.random.default_rng(20251125)


def _matrices(dtype):
    out = {name: make(dtype) for name, make in MATRICES.items()}
    cora = sparsetir.data.load("cora").astype(dtype)
    out["cora"] = cora
    for a in out.values():
        a.indptr = a.indptr.astype(np.int32)
        a.indices = a.indices.astype(np.int32)
    return out


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)


def _check_spmm(kernel, key):
    for name, A in _matrices(key.dtype).items():
        X = RNG.standard_normal((A.shape[1], key.feat)).astype(key.dtype)
        C = np.full((A.shape[0], key.feat), np.nan, key.dtype)
        kernel(A.data, X, C, A.indptr, A.indices, *A.shape, A.nnz)
        np.testing.assert_allclose(C, A @ X, err_msg=name, **_tol(key.dtype))


def _check_split_spmm(kernel, key):
    """Rows cut into pieces of 1, 3 and 16 nonzeros: one piece per nonzero, uneven last pieces,
    and rows of one piece; the workspace starts as NaN, so a piece left unwritten shows."""
    for name, A in _matrices(key.dtype).items():
        for length in (1, 3, 16):
            split = split_rows(A.indptr, length)
            X = RNG.standard_normal((A.shape[1], key.feat)).astype(key.dtype)
            C = np.full((A.shape[0], key.feat), np.nan, key.dtype)
            W = np.full((split.count, key.feat), np.nan, key.dtype)
            kernel(A.data, X, C, W, split.pieces, split.piece_ptr, A.indices, *A.shape, A.nnz, split.count,
                   split.most)
            np.testing.assert_allclose(C, A @ X, err_msg=f"{name}, pieces of {length}", **_tol(key.dtype))


def _check_sddmm(kernel, key):
    for name, A in _matrices(key.dtype).items():
        X = RNG.standard_normal((A.shape[0], key.feat)).astype(key.dtype)
        Y = RNG.standard_normal((A.shape[1], key.feat)).astype(key.dtype)
        out = np.full(A.nnz, np.nan, key.dtype)
        rows = np.repeat(np.arange(A.shape[0], dtype=np.int32), np.diff(A.indptr))
        kernel(A.data, X, Y, out, rows, A.indices, *A.shape, A.nnz)
        expected = A.data * np.einsum("ij,ij->i", X[rows].astype(np.float64), Y[A.indices].astype(np.float64))
        np.testing.assert_allclose(out, expected, err_msg=name, **_tol(key.dtype))


def _check_segment_sum(kernel, key):
    for name, A in _matrices(key.dtype).items():
        values = RNG.standard_normal((A.nnz, key.feat)).astype(key.dtype)
        out = np.full((A.shape[0], key.feat), np.nan, key.dtype)
        longest = int(np.diff(A.indptr).max()) if A.shape[0] else 0
        kernel(values, out, A.indptr, A.shape[0], longest, A.nnz)
        sums = np.vstack([np.zeros((1, key.feat)), np.cumsum(values.astype(np.float64), axis=0)])
        expected = sums[A.indptr[1:]] - sums[A.indptr[:-1]]
        np.testing.assert_allclose(out, expected, err_msg=name, **_tol(key.dtype))


def _check_softmax(kernel, key):
    for name, A in _matrices(key.dtype).items():
        out = np.full(A.nnz, np.nan, key.dtype)
        kernel(A.data, out, A.indptr, A.indices, *A.shape, A.nnz)
        expected = np.empty(A.nnz)
        for lo, hi in zip(A.indptr[:-1], A.indptr[1:]):
            e = np.exp(A.data[lo:hi].astype(np.float64) - A.data[lo:hi].max(initial=-np.inf))
            expected[lo:hi] = e / e.sum()
        np.testing.assert_allclose(out, expected, err_msg=name, **_tol(key.dtype))


def _check_bsr_spmm(kernel, key):
    br, bc = key.block
    for density in (0.0, 0.1, 0.5):
        A = sp.random(8 * br, 6 * bc, density=density, format="csr", dtype=key.dtype, random_state=4).tobsr((br, bc))
        X = RNG.standard_normal((A.shape[1], key.feat)).astype(key.dtype)
        C = np.full((A.shape[0], key.feat), np.nan, key.dtype)
        kernel(np.ascontiguousarray(A.data), X, C, A.indptr.astype(np.int32), A.indices.astype(np.int32),
               A.shape[0] // br, A.shape[1] // bc, A.data.shape[0])
        np.testing.assert_allclose(C, A @ X, err_msg=f"density {density}", **_tol(key.dtype))


def _check_ell_spmm(kernel, key):
    for m, n, width in ((30, 40, 5), (1, 3, 1), (64, 10, 12)):
        indices = RNG.integers(0, n, (m, width)).astype(np.int32)
        values = RNG.standard_normal((m, width)).astype(key.dtype)
        X = RNG.standard_normal((n, key.feat)).astype(key.dtype)
        C = np.full((m, key.feat), np.nan, key.dtype)
        kernel(values, X, C, indices.reshape(-1), m, n, width)
        np.testing.assert_allclose(C, np.einsum("iw,iwf->if", values, X[indices]), **_tol(key.dtype))


def _check_hybrid_spmm(kernel, key):
    """Every test matrix in the GPU's hybrid layout (empty rows, rows longer than the widest
    bucket in pieces summed from the workspace); C and the workspace start as NaN, so anything
    left unwritten shows."""
    for name, A in _matrices(key.dtype).items():
        X = RNG.standard_normal((A.shape[1], key.feat)).astype(key.dtype)
        C = np.full((A.shape[0], key.feat), np.nan, key.dtype)
        # Called as ops/cuda calls it: its padding columns are -1, which the kernel tests and the
        # argument checks of a sparsetir.build kernel would refuse as out of range.
        kernel.compiled.invoke(hybrid_arguments(A, key.widths, X, C))
        np.testing.assert_allclose(C, A @ X, err_msg=name, **_tol(key.dtype))


CHECKS = {
    "hybrid_spmm": _check_hybrid_spmm,
    "spmm": _check_spmm,
    "split_spmm": _check_split_spmm,
    "sddmm": _check_sddmm,
    "segment_sum": _check_segment_sum,
    "softmax": _check_softmax,
    "bsr_spmm": _check_bsr_spmm,
    "ell_spmm": _check_ell_spmm,
}


@pytest.mark.parametrize("key", OP_KEYS, ids=key_id)
def test_op_kernel_schedule_matches_reference(key):
    CHECKS[key.op](simulated_op(key), key)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_default_schedule_matches_reference(name):
    """Every workload built for CUDA with no schedule of its own, on every input case."""
    w = WORKLOADS[name]
    kernel = simulate(workload_kernel(name))
    for case in w.cases:
        inputs = w.make_inputs(np.random.default_rng(11), case)
        expected = w.reference(inputs)
        kernel(*[inputs[p] for p in w.params])
        for out in w.outputs:
            np.testing.assert_allclose(inputs[out], expected[out], rtol=2e-5, atol=2e-5, err_msg=f"{name}/{case}/{out}")


def test_serial_program_has_no_thread_bindings_and_plain_stores():
    kernel = workload_kernel("csr_spmm")
    assert "thread_binding" in kernel.func.script()
    serial = serial_program(kernel.func).script()
    assert "thread_binding" not in serial and "T.serial" not in serial.split("def ")[0]


def test_simulation_turns_atomic_adds_into_accumulations():
    from sparsetir.transforms.atomic_updates import lower_atomic_updates
    from tvm.script import tirx as T

    @T.prim_func(s_tir=True)
    def scatter(x: T.Buffer((8,), "float32"), idx: T.Buffer((8,), "int32"), y: T.Buffer((4,), "float32")):
        for t in T.thread_binding(8, thread="threadIdx.x"):
            with T.sblock("add"):
                vt = T.axis.spatial(8, t)
                y[idx[vt]] = y[idx[vt]] + x[vt]

    atomic = lower_atomic_updates(scatter, ["add"])
    assert "atomic_add" in atomic.script()
    serial = serial_program(atomic)
    assert "atomic_add" not in serial.script()
    kernel = sparsetir.runtime.build_stage3(serial, [], cache=sparsetir.runtime.KernelCache(disk=None))
    x = np.arange(8, dtype=np.float32)
    idx = np.array([0, 1, 0, 3, 3, 3, 2, 0], np.int32)
    y = np.zeros(4, np.float32)
    kernel(x, idx, y)
    np.testing.assert_array_equal(y, np.bincount(idx, weights=x, minlength=4).astype(np.float32))
