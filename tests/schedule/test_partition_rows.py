"""partition_rows at stage II: nnz-balanced row chunks, checked boundaries, recorded and replayed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sparsetir
from sparsetir.schedule import History

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"


def partitioned_spmm() -> sparsetir.Schedule:
    sch = sparsetir.Schedule(sparsetir.parse_file(EXAMPLE))
    sch.lower_sparse_iter()
    sch.partition_rows("csr_spmm0")
    sch.parallel(sch.get_loops(sch.get_sblock("csr_spmm0"))[0])
    return sch


def call(kernel, a, x, part):
    c = np.full((a.shape[0], x.shape[1]), np.nan, np.float32)
    kernel(a.data, x, c, a.indptr, a.indices, a.shape[0], a.shape[1], x.shape[1], a.nnz, np.asarray(part, np.int32), len(part) - 1)
    return c


@pytest.fixture(scope="module")
def kernel():
    return sparsetir.build(partitioned_spmm())


@pytest.mark.parametrize("chunks", [1, 2, 5, 17])
def test_any_partition_computes_spmm(kernel, chunks):
    a = sparsetir.data.load("cora")
    x = np.random.default_rng(chunks).standard_normal((a.shape[1], 8), dtype=np.float32)
    cuts = np.searchsorted(a.indptr, np.linspace(0, a.nnz, chunks + 1)[1:-1])  # nnz-balanced
    part = [0, *sorted(int(c) for c in cuts), a.shape[0]]
    np.testing.assert_allclose(call(kernel, a, x, part), a @ x, rtol=1e-5, atol=1e-5)


def test_empty_chunks_are_fine(kernel):
    a = sparsetir.data.load("citeseer")
    x = np.ones((a.shape[1], 4), np.float32)
    part = [0, 0, 100, 100, a.shape[0], a.shape[0]]
    np.testing.assert_allclose(call(kernel, a, x, part), a @ x, rtol=1e-5)


@pytest.mark.parametrize(
    "part, message",
    [
        ([0, 900, 800, 2708], r"'part': not non-decreasing at position 1"),
        ([0, 1000, 2709], r"'part': ends at part\[2\]=2709, expected m = 2708"),
        ([5, 1000, 2708], r"'part': must start at 0"),
    ],
)
def test_bad_boundaries_are_refused(kernel, part, message):
    a = sparsetir.data.load("cora")
    with pytest.raises(sparsetir.ArgumentError, match=message):
        call(kernel, a, np.ones((a.shape[1], 4), np.float32), part)


def test_step_is_recorded_and_replays_from_json():
    sch = partitioned_spmm()
    steps = [s.primitive for s in sch.history]
    assert steps == ["lower_sparse_iter", "partition_rows", "parallel"]
    assert "for t in T.parallel(P):" in sch.history.steps[-1].script
    again = sparsetir.replay(sparsetir.parse_file(EXAMPLE), History.from_json(sch.history.to_json()))
    sparsetir.assert_structural_equal(again, sch.func)


def test_partition_needs_stage_2_and_an_existing_block():
    sch = sparsetir.Schedule(sparsetir.parse_file(EXAMPLE))
    with pytest.raises(sparsetir.ScheduleError, match="stage-II primitive"):
        sch.partition_rows("csr_spmm0")
    sch.lower_sparse_iter()
    with pytest.raises(sparsetir.ScheduleError, match="expected one loop directly above block 'nope'"):
        sch.partition_rows("nope")
    assert [s.primitive for s in sch.history] == ["lower_sparse_iter"]
