"""``partition_rows``: the row loop split into run-time chunks computes the same result."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import sparsetir
from sparsetir._tvm import Schedule
from sparsetir.errors import LoweringError
from sparsetir.ir.stage2 import Stage2Function
from sparsetir.ops import scripts
from sparsetir.ops.inputs import row_partition
from sparsetir.transforms.partition import partition_rows

from ops_matrices import random_csr


def _partitioned_spmm():
    f2 = sparsetir.lower_sparse_iter(scripts.spmm_script(8, "float32"))
    return partition_rows(f2, "spmm0")


def test_partition_rows_shape_and_metadata():
    f2 = _partitioned_spmm()
    text = f2.script()
    assert "for t in range(P):" in text
    assert "for i in range(part[t + 1] - part[t]):" in text
    assert "vi = T.axis.spatial(m, part[t] + i)" in text
    assert list(f2.param_names)[-2:] == ["part", "P"]
    stage3 = sparsetir.lower_sparse_buffer(f2)
    assert [str(p.name) for p in stage3.params][-2:] == ["part", "P"]


@pytest.mark.parametrize("parts", [[0, 40], [0, 0, 13, 13, 40], [0, 1, 2, 39, 40]])
def test_partitioned_kernel_matches_scipy(parts):
    f2 = _partitioned_spmm()
    sch = Schedule(copy.deepcopy(f2.func))
    sch.parallel(sch.get_loops("spmm0")[0])
    kernel = sparsetir.build(Stage2Function.from_func(sch.mod["main"]))
    A = random_csr(40, 30, 0.2, 13)
    X = np.random.default_rng(0).standard_normal((30, 8)).astype(np.float32)
    C = np.full((40, 8), np.nan, np.float32)
    part = np.array(parts, np.int32)
    kernel(A.data, X, C, A.indptr, A.indices, 40, 30, A.nnz, part, len(parts) - 1)
    np.testing.assert_allclose(C, A @ X, rtol=1e-5, atol=1e-5)


def test_partition_rows_unknown_block():
    f2 = sparsetir.lower_sparse_iter(scripts.spmm_script(8, "float32"))
    with pytest.raises(LoweringError, match="expected one loop directly above block 'nope'"):
        partition_rows(f2, "nope")


@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_row_partition_matches_its_definition(parts):
    # Boundary t is the first row k whose cost so far (nonzeros + rows before k) reaches
    # total * t / parts; checked by brute force on random and degenerate row lengths.
    rng = np.random.default_rng(parts)
    for trial in range(200):
        rows = int(rng.integers(0, 30))
        lengths = rng.integers(0, int(rng.integers(1, 12)), rows)
        lengths[rng.random(rows) < 0.3] = 0
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        cost = [int(indptr[k]) + k for k in range(rows + 1)]
        expected = [0] + [next(k for k in range(rows + 1) if cost[k] * parts >= cost[-1] * t)
                          for t in range(1, parts)] + [rows]
        assert row_partition(indptr, parts).tolist() == expected, (indptr.tolist(), parts)


def test_row_partition_balances_nonzeros():
    indptr = np.array([0, 100, 100, 101, 102, 103, 104, 204], np.int32)
    part = row_partition(indptr, 2)
    assert part[0] == 0 and part[-1] == 7 and np.all(np.diff(part) >= 0)
    chunk_nnz = [indptr[b] - indptr[a] for a, b in zip(part[:-1], part[1:])]
    assert max(chunk_nnz) <= 105


def test_partition_rows_splits_several_blocks_at_the_same_boundaries():
    sch = sparsetir.Schedule(scripts.spmm_script(19, "float32"))
    sch.sparse_split("spmm", "K", 16)  # columns 0-15 in "spmm", 16-18 in "spmm_tail"
    f2 = sparsetir.lower_sparse_iter(sch.func)
    parted = partition_rows(f2, ["spmm0", "spmm_tail0"], parallel=True)
    text = parted.script()
    assert text.count("for t in T.parallel(P):") == 2
    assert text.count("vi = T.axis.spatial(m, part[t] + i)") == 2
    assert list(parted.param_names)[-2:] == ["part", "P"]
    A = random_csr(40, 30, 0.2, seed=4)
    B = np.random.default_rng(4).standard_normal((30, 19)).astype(np.float32)
    C = np.zeros((40, 19), np.float32)
    kernel = sparsetir.build(parted)
    kernel(A.data, B, C, A.indptr, A.indices, 40, 30, A.nnz, np.array([0, 7, 7, 40], np.int32), 3)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


def test_partition_rows_names_a_listed_block_it_cannot_find():
    f2 = sparsetir.lower_sparse_iter(scripts.bsr_spmm_script(2, 2, 8, "float32"))
    with pytest.raises(LoweringError, match="expected one loop directly above block 'nope'"):
        partition_rows(f2, ["bsr_spmm0", "nope"])
