"""``ops.schedule_of``: the schedule behind an ops kernel, with its steps, for the explorer."""

from __future__ import annotations

import pytest

import sparsetir
from sparsetir import ops
from sparsetir._tvm import tvm
from sparsetir.ops.kernels import MAKERS, KernelKey
from sparsetir.schedule import replay
from sparsetir.transforms import pipeline


def test_the_schedule_of_spmm_holds_the_default_rules_steps_and_replays_to_the_kernel():
    sch = ops.schedule_of("spmm", width=32)
    assert isinstance(sch, sparsetir.Schedule)
    primitives = [step.primitive for step in sch.history]
    assert "lower_sparse_iter" in primitives
    assert "partition_rows" in primitives  # nnz-balanced row chunks
    assert {"split", "vectorize"} <= set(primitives)  # the register tile's vector loop
    kernel_f3 = pipeline.lower(MAKERS["spmm"](KernelKey("spmm", "float32", feat=32)))
    tvm.ir.assert_structural_equal(pipeline.lower(sch.func), kernel_f3)
    tvm.ir.assert_structural_equal(pipeline.lower(replay(sch.initial, sch.history)), kernel_f3)


@pytest.mark.parametrize("op, key", [("sddmm", {}), ("bsr_gather_spmm", {"block": (4, 4)}), ("segment_sum", {})])
def test_every_kind_of_maker_gives_its_schedule(op, key):
    sch = ops.schedule_of(op, width=16, **key)
    assert len(sch.history) > 0
    replay(sch.initial, sch.history)


def test_an_unknown_op_is_refused():
    with pytest.raises(ValueError, match="no ops kernel 'spmv2'"):
        ops.schedule_of("spmv2")


def test_the_explorer_shows_the_steps_of_an_ops_schedule():
    sch = ops.schedule_of("spmm", width=16)
    document = sparsetir.explore(sch).document
    assert [s["primitive"] for s in document["steps"]] == [step.primitive for step in sch.history]
    assert "C[i, k] = C[i, k] + A[i, j] * B[j, k]" in document["script_text"]


@pytest.mark.parametrize("op", ["spmm", "split_spmm", "sddmm"])
def test_the_cuda_kernels_schedule_holds_the_recipes_steps_and_replays_to_it(op):
    """``target="cuda"``: the GPU recipe's schedule, its thread bindings among the steps; a
    replay of its history from its start gives the program the CUDA kernel is compiled from."""
    sch = ops.schedule_of(op, width=32, target="cuda")
    assert "bind" in [step.primitive for step in sch.history]
    tvm.ir.assert_structural_equal(pipeline.lower(replay(sch.initial, sch.history)), pipeline.lower(sch.func))


def test_the_cuda_softmax_schedule_keeps_its_row_values_in_registers():
    """Its steps are there; a replay is refused, since the stage-II script of a buffer moved to
    registers (``set_scope``) does not parse back to the same program, which a replay checks."""
    primitives = [step.primitive for step in ops.schedule_of("softmax", target="cuda").history]
    assert "bind" in primitives and primitives.count("set_scope") == 2


def test_an_unknown_cuda_op_is_refused():
    with pytest.raises(ValueError, match="no CUDA ops kernel 'bsr_gather_spmm'"):
        ops.schedule_of("bsr_gather_spmm", width=8, target="cuda")
