"""``partition_rows``: the row loop split into run-time chunks computes the same result."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import sparsetir
from sparsetir._tvm import Schedule
from sparsetir.errors import LoweringError
from sparsetir.ir.stage2 import Stage2Function
from sparsetir.ops import scripts
from sparsetir.ops.inputs import row_partition
from sparsetir.runtime.partition import CHUNK_WORK, MAX_CHUNKS_PER_THREAD, ROW_COST, chunk_count
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


@pytest.mark.parametrize("row_cost", [0, 4])
def test_row_partition_weighs_rows_by_row_cost(row_cost):
    rng = np.random.default_rng(row_cost)
    for trial in range(100):
        rows, parts = int(rng.integers(0, 40)), int(rng.integers(1, 9))
        indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 9, rows))]).astype(np.int32)
        cost = [int(indptr[k]) + row_cost * k for k in range(rows + 1)]
        expected = [0] + [next(k for k in range(rows + 1) if cost[k] * parts >= cost[-1] * t)
                          for t in range(1, parts)] + [rows]
        assert row_partition(indptr, parts, row_cost).tolist() == expected, (indptr.tolist(), parts)


def test_a_row_costs_what_row_cost_says():
    """Ten rows of 4 entries, then 40 empty rows. A row worth 4 entries: the full rows cost 8
    each (80), the empty ones 4 (160), so half the work (120) is done at row 20. A row worth
    one: 5 each (50) and 1 each (40), half (45) at row 9."""
    indptr = np.concatenate([np.arange(0, 44, 4), np.full(40, 40)]).astype(np.int32)
    assert row_partition(indptr, 2, row_cost=4).tolist() == [0, 20, 50]
    assert row_partition(indptr, 2).tolist() == [0, 9, 50]


@pytest.mark.parametrize("work, threads, chunks", [
    (0, 2, 2),  # nothing to do: one chunk per thread
    (CHUNK_WORK, 2, 2),  # under a chunk's worth per thread
    (2 * CHUNK_WORK * 3, 2, 6),  # three chunks' worth per thread
    (10 ** 9, 2, 2 * MAX_CHUNKS_PER_THREAD),  # at most MAX_CHUNKS_PER_THREAD each
    (10 ** 9, 3, 3 * MAX_CHUNKS_PER_THREAD),
    (5 * CHUNK_WORK, 1, 4),
])
def test_chunk_count_cuts_large_calls_into_several_chunks_per_thread(work, threads, chunks):
    assert chunk_count(work, threads) == chunks


def test_a_built_kernel_runs_a_large_call_in_several_chunks_per_thread():
    """The partition arguments a built kernel passes: a multiple of the threads, rows weighed by
    ROW_COST; and the result is SciPy's."""
    from sparsetir.runtime import specialized
    from sparsetir.runtime.parallel import num_threads

    A = scipy.sparse.random(3000, 500, density=0.1, format="csr", dtype=np.float32, random_state=1)
    A.indptr, A.indices = A.indptr.astype(np.int32), A.indices.astype(np.int32)
    X = np.random.default_rng(2).standard_normal((500, 8), dtype=np.float32)
    kernel = sparsetir.build(sparsetir.parse_file(_SPMM))
    calls = []
    original = specialized._boundaries

    def spy(indptr, rows, chunks, dtype):
        found = original(indptr, rows, chunks, dtype)
        calls.append((chunks, found.tolist()))
        return found

    specialized._boundaries = spy
    try:
        C = np.zeros((3000, 8), np.float32)
        kernel(A.data, X, C, A.indptr, A.indices, 3000, 500, 8, A.nnz)
    finally:
        specialized._boundaries = original
    work, threads = A.nnz + ROW_COST * 3000, max(num_threads(), 1)
    [(chunks, bounds)] = calls
    assert chunks == chunk_count(work, threads) == threads * max(1, min(MAX_CHUNKS_PER_THREAD, work // (threads * CHUNK_WORK)))
    assert bounds == row_partition(A.indptr, chunks, ROW_COST).tolist()
    np.testing.assert_allclose(C, A @ X, rtol=1e-5, atol=1e-5)


#: The example's CSR SpMM script (a user's script, built with the default schedule).
_SPMM = Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"


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
