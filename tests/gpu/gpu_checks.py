"""The checks an exported GPU bundle runs on a device (``sparsetir/bench/gpu_bundle.py``): every
op configuration of ``OP_KEYS`` on awkward matrices, and every workload's default-scheduled
kernel on every input case, each with outputs computed here by NumPy/SciPy."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import sparsetir
from gpu_kernels import OP_KEYS, hybrid_arguments, key_id, op_kernel, workload_kernel
from sparsetir.bench.gpu_bundle import Check
from sparsetir.runtime.cuda.row_split import split_rows
from workloads import WORKLOADS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from ops_matrices import MATRICES  # noqa: E402


def _matrices(dtype, feat):
    """Small awkward matrices, and cora at narrow widths: the bundle carries every input and
    output (the bench checks the wide cases on the large matrices against torch on the device)."""
    found = {"skewed": MATRICES["skewed"](dtype), "all_empty": MATRICES["all_empty"](dtype)}
    if feat <= 32:
        found["cora"] = sparsetir.data.load("cora").astype(dtype)
    for a in found.values():
        a.indptr, a.indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    return found


def _op_cases(key, rng):
    """(case name, args, expected outputs by argument index) of one op configuration."""
    dtype, feat = key.dtype, key.feat
    if key.op in ("spmm", "split_spmm", "sddmm", "segment_sum", "softmax"):
        for name, A in _matrices(dtype, feat).items():
            m, n = A.shape
            if key.op == "split_spmm":
                split = split_rows(A.indptr, 3)
                X = rng.standard_normal((n, feat)).astype(dtype)
                yield name, (A.data, X, np.zeros((m, feat), dtype), np.zeros((split.count, feat), dtype), split.pieces,
                             split.piece_ptr, A.indices, m, n, A.nnz, split.count, split.most), {2: A @ X}
            elif key.op == "spmm":
                X = rng.standard_normal((n, feat)).astype(dtype)
                yield name, (A.data, X, np.zeros((m, feat), dtype), A.indptr, A.indices, m, n, A.nnz), {2: A @ X}
            elif key.op == "sddmm":
                X, Y = rng.standard_normal((m, feat)).astype(dtype), rng.standard_normal((n, feat)).astype(dtype)
                rows = np.repeat(np.arange(m), np.diff(A.indptr))
                expected = A.data * np.einsum("ij,ij->i", X[rows].astype(np.float64), Y[A.indices])
                yield name, (A.data, X, Y, np.zeros(A.nnz, dtype), rows.astype(np.int32), A.indices, m, n, A.nnz), \
                    {3: expected}
            elif key.op == "segment_sum":
                values = rng.standard_normal((A.nnz, feat)).astype(dtype)
                sums = np.vstack([np.zeros((1, feat)), np.cumsum(values.astype(np.float64), axis=0)])
                longest = int(np.diff(A.indptr).max()) if m else 0
                yield name, (values, np.zeros((m, feat), dtype), A.indptr, m, longest, A.nnz), \
                    {1: sums[A.indptr[1:]] - sums[A.indptr[:-1]]}
            else:
                expected = np.empty(A.nnz)
                for lo, hi in zip(A.indptr[:-1], A.indptr[1:]):
                    e = np.exp(A.data[lo:hi].astype(np.float64) - A.data[lo:hi].max(initial=-np.inf))
                    expected[lo:hi] = e / e.sum()
                yield name, (A.data, np.zeros(A.nnz, dtype), A.indptr, A.indices, m, n, A.nnz), {1: expected}
    elif key.op == "hybrid_spmm":
        for name, A in _matrices(dtype, feat).items():
            X = rng.standard_normal((A.shape[1], feat)).astype(dtype)
            C = np.full((A.shape[0], feat), np.nan, dtype)  # a row no kernel writes shows
            yield name, hybrid_arguments(A, key.widths, X, C), {1: A @ X}
    elif key.op == "bsr_spmm":
        br, bc = key.block
        A = sp.random(40 * br, 30 * bc, density=0.1, format="csr", dtype=dtype, random_state=5).tobsr((br, bc))
        X = rng.standard_normal((A.shape[1], feat)).astype(dtype)
        yield "random", (np.ascontiguousarray(A.data), X, np.zeros((A.shape[0], feat), dtype),
                         A.indptr.astype(np.int32), A.indices.astype(np.int32), 40, 30, A.data.shape[0]), {2: A @ X}
    else:
        m, n, width = 300, 200, 9
        idx = rng.integers(0, n, (m, width)).astype(np.int32)
        vals = rng.standard_normal((m, width)).astype(dtype)
        X = rng.standard_normal((n, feat)).astype(dtype)
        yield "random", (vals, X, np.zeros((m, feat), dtype), idx.reshape(-1), m, n, width), \
            {2: np.einsum("iw,iwf->if", vals, X[idx])}


def op_checks(keys=OP_KEYS):
    """A check per op configuration and matrix."""
    rng = np.random.default_rng(7)
    return [Check(f"op_{key_id(key)}_{name}", op_kernel(key), args, expected)
            for key in keys for name, args, expected in _op_cases(key, rng)]


def workload_checks(names=None):
    """A check per workload and input case, its default-scheduled kernel against the reference."""
    checks = []
    for name in names or sorted(WORKLOADS):
        w = WORKLOADS[name]
        for case in w.cases:
            inputs = w.make_inputs(np.random.default_rng(11), case)
            expected = w.reference(inputs)
            args = tuple(inputs[p] for p in w.params)
            outputs = {w.params.index(out): expected[out] for out in w.outputs}
            checks.append(Check(f"workload_{name}_{case}", workload_kernel(name), args, outputs))
    return checks
