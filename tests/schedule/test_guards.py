"""The refusals of ``sparsetir.Schedule``: each names its reason and leaves the schedule as it was."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

import sparsetir
from sparsetir._tvm import tirx
from sparsetir.ir.stage2 import Stage2Buffer, Stage2Function
from sparsetir.schedule import checks
from schedule_helpers import assert_computes_reference, at_stage2


@contextmanager
def refused(sch, match):
    """Expect a ``ScheduleError`` matching ``match`` that leaves the program and history as they were."""
    script, steps = sch.func.script(), len(sch.history)
    with pytest.raises(sparsetir.ScheduleError, match=match):
        yield
    assert sch.func.script() == script
    assert len(sch.history) == steps


def test_rfactor_over_predicated_split_of_row_loop():
    sch = at_stage2("csr_spmm")
    block = sch.get_sblock("csr_spmm1")
    j, k = sch.get_loops(block)
    sch.reorder(k, j)
    jo, ji = sch.split(j, [None, 4])
    message = (
        r"rfactor: loop 'j_1' is refused: block 'csr_spmm1' runs under the data-dependent predicate "
        r"T\.where\(j_0 \* 4 \+ j_1 < J_indptr\[vi \+ 1\] - J_indptr\[vi\]\) .*short or empty rows uninitialised"
    )
    with refused(sch, message):
        sch.rfactor(ji, 0)
    with refused(sch, "rfactor: loop 'k' is refused"):  # any loop over the predicated block
        sch.rfactor(k, 0)
    # the handles survive the refusals, and the unfactored schedule is right
    sch.decompose_reduction(block, jo)
    assert_computes_reference("csr_spmm", sch)


def test_rfactor_over_dense_split_is_allowed():
    sch = at_stage2("sddmm")
    _, k = sch.get_loops(sch.get_sblock("sddmm1"))
    _, ki = sch.split(k, [None, 4])
    sch.rfactor(ki, 0)
    assert sch.history[-1].primitive == "rfactor"


def test_unpredicated_split_of_row_loop():
    sch = at_stage2("csr_spmm")
    j, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    message = (
        r"split: disable_predication=True on loop 'j' is refused: its extent "
        r"J_indptr\[vi \+ 1\] - J_indptr\[vi\] is read from data"
    )
    with refused(sch, message):
        sch.split(j, [None, 4], disable_predication=True)
    sch.split(j, [None, 4])  # with predication it is fine
    assert_computes_reference("csr_spmm", sch)


def test_unpredicated_split_of_fused_row_loop():
    sch = at_stage2("sddmm")
    fused = sch.fuse(*sch.get_loops(sch.get_sblock("sddmm1")))
    with refused(sch, r"on loop 'j_k_fused' is refused: its extent \(J_indptr\[vi \+ 1\] - J_indptr\[vi\]\) \* feat_size"):
        sch.split(fused, [None, 8], disable_predication=True)
    sch.split(fused, [None, 8])
    assert_computes_reference("sddmm", sch)


def test_fuse_of_row_reduction_with_initialised_spatial_loop():
    sch = at_stage2("csr_spmm")
    block = sch.get_sblock("csr_spmm1")
    j, k = sch.get_loops(block)
    message = (
        r"fuse: fusing the row loop 'j' with the spatial loop 'k' is refused: block 'csr_spmm1' initialises "
        r"its output in T.init, and the fused loop is empty for an empty row.*call decompose_reduction on 'csr_spmm1' first"
    )
    with refused(sch, message):
        sch.fuse(j, k)
    sch.decompose_reduction(block, j)  # the init out of the way, fusing is safe
    sch.fuse(*sch.get_loops(sch.get_sblock("csr_spmm1_update")))
    assert_computes_reference("csr_spmm", sch)


def test_fuse_of_reduction_loops_is_allowed():
    sch = at_stage2("bsr_spmm")
    jo, ji, _ = sch.get_loops(sch.get_sblock("bsr_spmm1"))
    sch.fuse(jo, ji)
    assert_computes_reference("bsr_spmm", sch)


def test_unpredicated_split_of_dense_loop_is_allowed():
    sch = at_stage2("csr_spmm")
    _, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    sch.split(k, [None, 4], disable_predication=True)  # the caller's contract: feat % 4 == 0
    assert sch.history[-1].args["disable_predication"] is True


def test_sparse_cache_at_the_root():
    sch = at_stage2("csr_spmm")
    row_block = sch.get_sblock("csr_spmm0")
    message = r"cache_read: the cache of sparse buffer 'A' is refused: it would sit at the root, outside the row block"
    with refused(sch, message):
        sch.cache_read(row_block, "A", "global")
    with refused(sch, "the cache of sparse buffer 'J_indices' is refused"):
        sch.cache_read(row_block, "J_indices", "global")
    sch.cache_read(row_block, "B", "global")  # a dense buffer: the box is exact
    sch.cache_read(sch.get_sblock("csr_spmm1"), "A", "local")  # inside the row block
    assert_computes_reference("csr_spmm", sch)


def test_sparse_cache_write_at_the_root():
    sch = at_stage2("sddmm")
    with refused(sch, "cache_write: the cache of sparse buffer 'Y' is refused: it would sit at the root"):
        sch.cache_write(sch.get_sblock("sddmm0"), 0, "global")


def test_step_failing_the_program_check_is_rolled_back(monkeypatch):
    sch = at_stage2("csr_spmm")
    j, k = sch.get_loops(sch.get_sblock("csr_spmm1"))

    def broken(f2, round_trip=True):
        raise sparsetir.ScheduleError("the step would detach sparse buffer 'A' from the function's parameters")

    monkeypatch.setattr("sparsetir.schedule.schedule.check_stage2", broken)
    with refused(sch, "split: the step would detach sparse buffer 'A'"):
        sch.split(k, [None, 4])
    monkeypatch.undo()
    sch.split(k, [None, 4])  # the handle is still valid after the rollback
    assert [s.primitive for s in sch.history] == ["lower_sparse_iter", "split"]


def test_stage2_check_finds_detached_metadata():
    f2 = at_stage2("csr_spmm").func
    meta = f2.buffer("A")
    stray = tirx.decl_buffer((4,), "float32", name="A")
    detached = Stage2Buffer(stray, list(meta.axes), meta.handle_name, meta.extra_storage, meta.role)
    bad = Stage2Function(f2.prim, list(f2.axes), [detached if b.name == "A" else b for b in f2.buffers], list(f2.param_names))
    with pytest.raises(sparsetir.ScheduleError, match="would detach sparse buffer 'A' from the function's parameters"):
        checks.check_stage2(bad)


def test_unrecordable_arguments_are_refused():
    sch = at_stage2("csr_spmm")
    _, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    feat = [p for p in sch.func.prim.params if p.name == "feat_size"][0]
    with refused(sch, r"split: cannot record an argument of type Var \(feat_size\)"):
        sch.split(k, [None, feat])
    with refused(sch, "split: missing a required argument: 'factors'"):
        sch.split(k, factor=4)
