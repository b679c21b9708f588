"""Loops that do not start at 0 compute the right rows: TVM 0.27 shifts such a loop's variable in
its body but not in the bounds of nested loops, and ``loops_from_zero`` counts them from 0 first."""

from __future__ import annotations

import numpy as np
import scipy.sparse

from sparsetir._tvm import structural_walk, tirx
from sparsetir._tvm import tvmscript_tirx as T
from sparsetir.runtime.build import build_stage3
from sparsetir.transforms.loops_from_zero import loops_from_zero


@T.prim_func
def two_hop_sums(ap: T.Buffer((9,), "int32"), ai: T.Buffer((64,), "int32"), bp: T.Buffer((9,), "int32"),
                 bi: T.Buffer((64,), "int32"), out: T.Buffer((8,), "int32")):
    T.func_attr({"global_symbol": "two_hop_sums", "tir.noalias": True})
    for i in range(8):
        out[i] = 0
        for p in range(ap[i], ap[i + 1]):
            for q in range(bp[ai[p]], bp[ai[p] + 1]):
                out[i] = out[i] + bi[q] + 1


def _starts(func) -> list:
    found = []
    structural_walk(func.body, lambda n: found.append(n.min) if isinstance(n, tirx.For) else None)
    return found


def test_every_loop_starts_at_zero():
    assert any(not isinstance(s, tirx.IntImm) for s in _starts(two_hop_sums))
    out = loops_from_zero(two_hop_sums)
    assert all(isinstance(s, tirx.IntImm) and int(s.value) == 0 for s in _starts(out))
    assert loops_from_zero(out) is out  # nothing left to do


def test_nested_bounds_through_a_shifted_loop_compute_the_reference():
    a = scipy.sparse.random(8, 8, density=0.3, format="csr", random_state=1)
    b = scipy.sparse.random(8, 8, density=0.3, format="csr", random_state=2)

    def padded(x):
        return np.concatenate([x, np.zeros(64 - len(x))]).astype(np.int32)

    expected = np.zeros(8, np.int32)
    for i in range(8):
        for r in a.indices[a.indptr[i]:a.indptr[i + 1]]:
            expected[i] += int((b.indices[b.indptr[r]:b.indptr[r + 1]] + 1).sum())
    out = np.full(8, -1, np.int32)
    build_stage3(two_hop_sums, [])(a.indptr.astype(np.int32), padded(a.indices), b.indptr.astype(np.int32),
                                   padded(b.indices), out)
    np.testing.assert_array_equal(out, expected)
