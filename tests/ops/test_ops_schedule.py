"""``sparsetir.ops`` schedules its kernels through ``sparsetir.Schedule``: guarded and recorded."""

from __future__ import annotations

import numpy as np
import pytest

import sparsetir
from sparsetir.ops import kernels, scripts
from sparsetir.schedule.default.register_tile import register_tile
from sparsetir.ops.inputs import row_partition
from sparsetir.transforms.lower_sparse_iter import lower_sparse_iter

from ops_matrices import random_csr


def _spmm_stage2():
    return kernels._partitioned(lower_sparse_iter(scripts.spmm_script(32, "float32")), "spmm0")


def test_rule_steps_run_on_a_sparsetir_schedule_and_are_recorded():
    seen = []

    def apply(sch):
        assert isinstance(sch, sparsetir.Schedule)
        register_tile(sch, "spmm1", 1, 16, 2)  # 32 columns: tiles of 2 vectors of 16
        seen.extend(step.primitive for step in sch.history)

    f2 = kernels._scheduled(_spmm_stage2(), apply)
    assert seen[:3] == ["split", "reorder", "cache_write"] and seen[-1] == "decompose_reduction"
    A = random_csr(40, 30, 0.2, 5)
    X = np.random.default_rng(0).standard_normal((30, 32)).astype(np.float32)
    C = np.empty((40, 32), np.float32)
    kernel = sparsetir.build(f2)
    part = row_partition(A.indptr.astype(np.int32), 2)
    kernel(A.data, X, C, A.indptr.astype(np.int32), A.indices.astype(np.int32), 40, 30, A.nnz, part, 2)
    np.testing.assert_allclose(C, A @ X, rtol=1e-5, atol=1e-5)


def test_an_unsafe_step_in_an_ops_schedule_is_refused():
    def unsafe(sch):
        row_loop = sch.get_loops("spmm1")[-2]  # the row's nonzeros: a data-dependent extent
        sch.split(row_loop, [None, 4], disable_predication=True)

    with pytest.raises(sparsetir.ScheduleError, match=r"split: disable_predication=True on loop 'j' is refused: "
                                                       r"its extent .* is read from data"):
        kernels._scheduled(_spmm_stage2(), unsafe)
