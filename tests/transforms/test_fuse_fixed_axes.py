"""``T.fuse`` over a fixed axis (ELL's ``T.sparse_fixed`` columns under their rows): one loop
over every (row, slot) pair, the row and the slot its counter divided by the slots per row and
its remainder (TACO's ``collapse``). It used to be refused as if the columns were not under the
rows (found by ``python -m fuzz.semantic``). A fused chain mixing variable and fixed axes is
still refused, naming both."""

from __future__ import annotations

import numpy as np
import pytest

import sparsetir
from sparsetir.runtime.cuda.simulate import simulate

SDDMM = '''from sparsetir.script import tir as T

@T.prim_func
def ell_sddmm(x: T.handle, y: T.handle, c: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat: T.int32,
              cols: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_fixed(I, (n, cols), indices, "int32")
    D = T.dense_fixed(n)
    K = T.dense_fixed(feat)
    X = T.match_sparse_buffer(x, (I, K), "float32")
    Y = T.match_sparse_buffer(y, (D, K), "float32")
    C = T.match_sparse_buffer(c, (I, J), "float32")
    with T.sp_iter([T.fuse(I, J), K], "SSR", "sddmm") as [i, j, k]:
        with T.init():
            C[i, j] = T.float32(0)
        C[i, j] = C[i, j] + X[i, k] * Y[j, k]
'''

#: A variable axis (CSR columns) under a fixed one (ELL slots): the fused chain mixes them.
MIXED = '''from sparsetir.script import tir as T

@T.prim_func
def mixed(a: T.handle, c: T.handle, indices_j: T.handle, indptr_k: T.handle, indices_k: T.handle, m: T.int32,
          n: T.int32, p: T.int32, cols: T.int32, nnz_k: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_fixed(I, (n, cols), indices_j, "int32")
    K = T.sparse_variable(J, (p, nnz_k), (indptr_k, indices_k), "int32")
    A = T.match_sparse_buffer(a, (I, J, K), "float32")
    C = T.match_sparse_buffer(c, (I, J, K), "float32")
    with T.sp_iter([T.fuse(I, J, K)], "SSS", "copy") as [i, j, k]:
        C[i, j, k] = A[i, j, k]
'''


def _ell(rng, m=37, n=20, cols=3):
    return np.sort(np.stack([rng.choice(n, cols, replace=False) for _ in range(m)]), axis=1).astype(np.int32)


@pytest.mark.parametrize("schedule", ["none", "default"])
@pytest.mark.parametrize("cols, width", [(3, 17), (1, 32), (5, 1)])
def test_a_fused_ell_sddmm_equals_numpy(schedule, cols, width):
    rng = np.random.default_rng(cols * 100 + width)
    m, n = 37, 20
    idx = _ell(rng, m, n, cols)
    x = rng.standard_normal((m, width)).astype(np.float32)
    y = rng.standard_normal((n, width)).astype(np.float32)
    c = np.full(m * cols, np.nan, np.float32)
    kernel = sparsetir.build(sparsetir.parse(SDDMM, "ell_sddmm.py"), schedule=schedule)
    kernel(x=x, y=y, c=c, indices=idx.ravel(), m=m, n=n, feat=width, cols=cols)
    expected = np.einsum("ik,ijk->ij", x.astype(np.float64), y.astype(np.float64)[idx])
    np.testing.assert_allclose(c.reshape(m, cols), expected, rtol=1e-5, atol=1e-5)


def test_the_fused_loop_divides_its_counter_and_round_trips():
    lowered = sparsetir.lower_sparse_iter(sparsetir.parse(SDDMM, "ell_sddmm.py"))
    text = lowered.script()
    assert "for ij, k in T.grid(m * cols, feat):" in text
    assert "C[vij // cols, vij % cols]" in text and "J_indices[vij // cols, vij % cols]" in text
    assert sparsetir.structural_equal(sparsetir.parse(text), lowered)


def test_the_gpu_schedule_of_a_fused_ell_sddmm_computes_it():
    rng = np.random.default_rng(5)
    m, n, cols, width = 37, 20, 3, 33
    idx = _ell(rng, m, n, cols)
    x = rng.standard_normal((m, width)).astype(np.float32)
    y = rng.standard_normal((n, width)).astype(np.float32)
    c = np.full(m * cols, np.nan, np.float32)
    kernel = simulate(sparsetir.build(sparsetir.parse(SDDMM, "ell_sddmm.py"), target="cuda"))
    kernel(x=x, y=y, c=c, indices=idx.ravel(), m=m, n=n, feat=width, cols=cols)
    np.testing.assert_allclose(c.reshape(m, cols), np.einsum("ik,ijk->ij", x, y[idx]), rtol=1e-4, atol=1e-4)


def test_a_chain_of_variable_and_fixed_axes_is_refused_naming_both():
    with pytest.raises(sparsetir.LoweringError,
                       match=r"sparse iteration 'copy': T.fuse needs the axes under the first to be all variable or "
                             r"all fixed \('K' is variable, 'J' fixed\)"):
        sparsetir.lower_sparse_iter(sparsetir.parse(MIXED, "mixed.py"))
