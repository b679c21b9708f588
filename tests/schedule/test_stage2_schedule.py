"""TVM primitives through ``sparsetir.Schedule`` at stages II and III: goldens, results, handles."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import sparsetir
from sparsetir._tvm import s_tir, tvm
from sparsetir.ir.stage2 import Stage2Function
from sparsetir.schedule import Schedule
from schedule_helpers import assert_computes_reference, assert_history_sound, at_stage2, stage1

GOLDEN = Path(__file__).parent / "golden"


# -- schedules (each applied to the workload at stage II) -----------------------------------


def spmm_vectorized_rows(sch):
    """split k, move the row loop j between the halves, vectorize, parallel rows, hoist the init."""
    block = sch.get_sblock("csr_spmm1")
    j, k = sch.get_loops(block)
    ko, ki = sch.split(k, [None, 8])
    sch.reorder(ko, j, ki)
    sch.vectorize(ki)
    sch.parallel(sch.get_loops(sch.get_sblock("csr_spmm0"))[0])
    sch.decompose_reduction(block, j)


def spmm_register_tile(sch):
    """A local accumulator tile written back after the row (cache_write + reverse_compute_at)."""
    block = sch.get_sblock("csr_spmm1")
    j, k = sch.get_loops(block)
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(ko, j, ki)
    tile = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(tile, ko)
    sch.unroll(ki)
    sch.parallel(sch.get_loops(sch.get_sblock("csr_spmm0"))[0])
    sch.decompose_reduction(block, j)


def spmm_cache_sparse_value(sch):
    """cache_read of the sparse A at the nonzero (a point inside the row block)."""
    block = sch.get_sblock("csr_spmm1")
    j, _ = sch.get_loops(block)
    sch.compute_at(sch.cache_read(block, "A", "local"), j)


def spmm_cache_sparse_row(sch):
    """cache_read of the sparse A left at its default place: one row, a data-dependent extent."""
    sch.cache_read(sch.get_sblock("csr_spmm1"), "A", "local")


def spmm_cache_gathered_dense(sch):
    """cache_read of the gathered dense B at the innermost loop."""
    block = sch.get_sblock("csr_spmm1")
    _, k = sch.get_loops(block)
    sch.compute_at(sch.cache_read(block, "B", "local"), k)


def spmm_split_row_loop(sch):
    """A predicated split of the data-dependent row loop, unrolled."""
    block = sch.get_sblock("csr_spmm1")
    j, _ = sch.get_loops(block)
    _, ji = sch.split(j, [None, 4])
    sch.unroll(ji)


def spmm_blockize_features(sch):
    """blockize the feature loop into a sub-block under the nonzero loop."""
    _, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    sch.blockize(k)


def sddmm_rfactor(sch):
    """rfactor over a split of the (dense) feature loop, rf buffer local, rows parallel."""
    block = sch.get_sblock("sddmm1")
    _, k = sch.get_loops(block)
    _, ki = sch.split(k, [None, 4])
    rf = sch.rfactor(ki, 0)
    sch.reverse_compute_at(block, sch.get_loops(rf)[0])
    sch.set_scope(rf, 0, "local")
    sch.parallel(sch.get_loops(sch.get_sblock("sddmm0"))[0])
    sch.decompose_reduction(rf, sch.get_loops(rf)[1])
    sch.decompose_reduction(block, sch.get_loops(block)[-1])


def sddmm_caches(sch):
    """cache_write of the sparse output and cache_read of the sparse X, both per nonzero."""
    block = sch.get_sblock("sddmm1")
    j, _ = sch.get_loops(block)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), j)
    sch.compute_at(sch.cache_read(block, "X", "local"), j)
    sch.split(j, [None, 4])
    sch.parallel(sch.get_loops(sch.get_sblock("sddmm0"))[0])


def bsr_register_tile(sch):
    """BSR: split features, tile the output, cache each 4x4 block of A, parallel block rows."""
    io, _ = sch.get_loops(sch.get_sblock("bsr_spmm0"))
    block = sch.get_sblock("bsr_spmm1")
    jo, ji, k = sch.get_loops(block)
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(ko, jo, ji, ki)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), ko)
    sch.compute_at(sch.cache_read(block, "A", "local"), jo)
    sch.parallel(io)
    sch.vectorize(ki)
    sch.decompose_reduction(block, jo)


def spmm_stage3(sch):
    """Parallel rows at stage II, then at stage III split, reorder and unroll the flat program.

    ``parallel`` and ``vectorize`` need the reduction's ``T.init`` in place, and LowerSparseBuffer
    hoists it (``auto_decompose_reduction``), so they belong to stage II.
    """
    sch.parallel(sch.get_loops(sch.get_sblock("csr_spmm0"))[0])
    sch.lower_sparse_buffer()
    block = sch.get_sblock("csr_spmm1_update")
    j, k = sch.get_loops(block)
    ko, ki = sch.split(k, [None, 8])
    sch.reorder(ko, j, ki)
    sch.unroll(ki)


SCHEDULES = [
    ("csr_spmm", spmm_vectorized_rows),
    ("csr_spmm", spmm_register_tile),
    ("csr_spmm", spmm_cache_sparse_value),
    ("csr_spmm", spmm_cache_sparse_row),
    ("csr_spmm", spmm_cache_gathered_dense),
    ("csr_spmm", spmm_split_row_loop),
    ("csr_spmm", spmm_blockize_features),
    ("sddmm", sddmm_rfactor),
    ("sddmm", sddmm_caches),
    ("bsr_spmm", bsr_register_tile),
    ("csr_spmm", spmm_stage3),
]
IDS = [schedule.__name__ for _, schedule in SCHEDULES]


@pytest.mark.parametrize("name, schedule", SCHEDULES, ids=IDS)
def test_scheduled_program_computes_reference(name, schedule):
    sch = at_stage2(name)
    schedule(sch)
    assert_computes_reference(name, sch)


@pytest.mark.parametrize("name, schedule", SCHEDULES, ids=IDS)
def test_scheduled_history_is_sound(name, schedule):
    original = stage1(name)
    sch = Schedule(original)
    sch.lower_sparse_iter()
    schedule(sch)
    assert_history_sound(sch, original)


@pytest.mark.parametrize("name, schedule", SCHEDULES[:-1], ids=IDS[:-1])
def test_same_program_as_tvm_schedule(name, schedule):
    """The wrapper adds checks and records, never changes what TVM's primitives do."""
    sch = at_stage2(name)
    f2 = sch.func
    schedule(sch)
    raw = s_tir.Schedule(copy.deepcopy(f2.func))
    schedule(raw)
    sparsetir.assert_structural_equal(sch.func, Stage2Function.from_func(raw.mod["main"]))


# -- goldens --------------------------------------------------------------------------------


def test_golden_stage2_vectorized_rows():
    sch = at_stage2("csr_spmm")
    spmm_vectorized_rows(sch)
    expected = sparsetir.parse((GOLDEN / "csr_spmm_vectorized_rows.py").read_text())
    sparsetir.assert_structural_equal(sch.func, expected)
    assert expected.script() == sch.func.script()


def test_golden_stage2_bsr_register_tile():
    sch = at_stage2("bsr_spmm")
    bsr_register_tile(sch)
    expected = sparsetir.parse((GOLDEN / "bsr_spmm_register_tile.py").read_text())
    sparsetir.assert_structural_equal(sch.func, expected)


def test_golden_stage3_spmm():
    sch = at_stage2("csr_spmm")
    spmm_stage3(sch)
    expected = tvm.script.from_source((GOLDEN / "csr_spmm_stage3.py").read_text())
    assert sparsetir.structural_equal(sch.func, expected)


# -- stages, handles, inputs ----------------------------------------------------------------


def test_func_is_the_current_program_at_every_stage():
    sch = Schedule(stage1("csr_spmm"))
    assert isinstance(sch.func, sparsetir.SparseFunction) and sch.stage == 1
    sch.lower_sparse_iter()
    assert isinstance(sch.func, Stage2Function) and sch.stage == 2
    sch.lower_sparse_buffer()
    assert isinstance(sch.func, tvm.tirx.PrimFunc) and sch.stage == 3
    assert [s.primitive for s in sch.history] == ["lower_sparse_iter", "lower_sparse_buffer"]
    assert [s.stage for s in sch.history] == [2, 3]
    assert_computes_reference("csr_spmm", sch)


def test_handles_stay_valid_across_calls():
    sch = at_stage2("csr_spmm")
    block = sch.get_sblock("csr_spmm1")
    j, k = sch.get_loops(block)
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(ko, j, ki)  # j: a handle made before the split
    assert "for k_0, j, k_1 in T.grid(" in sch.func.script()
    sch.decompose_reduction(block, j)
    assert_computes_reference("csr_spmm", sch)


def test_input_functions_are_never_changed():
    f2 = sparsetir.lower_sparse_iter(stage1("csr_spmm"))
    text = f2.script()
    sch = Schedule(f2)
    spmm_vectorized_rows(sch)
    sch.lower_sparse_buffer()
    assert f2.script() == text
    f3 = sparsetir.lower_sparse_buffer(f2)
    text3 = f3.script()
    sch = Schedule(f3)
    sch.split(sch.get_loops(sch.get_sblock("csr_spmm1_update"))[-1], [None, 4])
    assert f3.script() == text3


def test_schedule_starts_at_any_stage():
    f2 = sparsetir.lower_sparse_iter(stage1("csr_spmm"))
    assert Schedule(f2).stage == 2
    assert Schedule(f2.func).stage == 2  # a PrimFunc carrying the metadata
    assert Schedule(sparsetir.lower_sparse_buffer(f2)).stage == 3
    with pytest.raises(sparsetir.ScheduleError, match="takes a SparseFunction"):
        Schedule("csr_spmm")


def test_primitives_belong_to_their_stage():
    sch = Schedule(stage1("csr_spmm"))
    with pytest.raises(sparsetir.ScheduleError, match="split is a stage-II/III primitive; call lower_sparse_iter"):
        sch.split(None, [None, 4])
    with pytest.raises(sparsetir.ScheduleError, match="lower_sparse_buffer is a stage-II primitive"):
        sch.lower_sparse_buffer()
    sch.lower_sparse_iter()
    with pytest.raises(sparsetir.ScheduleError, match="sparse_reorder is a stage-I primitive, but the schedule is at stage II"):
        sch.sparse_reorder("csr_spmm", ["I", "K", "J"])
    with pytest.raises(AttributeError, match="tvm_primitives lists the TVM primitives offered"):
        sch.transform_layout  # noqa: B018  (layouts are fixed by the sparse format)
    assert "split" in dir(sch) and sch.split.__doc__


def test_tvm_refusals_become_schedule_errors_without_the_ir_dump():
    sch = at_stage2("csr_spmm")
    with pytest.raises(sparsetir.ScheduleError, match="get_sblock: refused by TVM: Cannot find a block with the name: nope") as info:
        sch.get_sblock("nope")
    assert "@T.prim_func" not in str(info.value)
    j, _ = sch.get_loops(sch.get_sblock("csr_spmm1"))
    with pytest.raises(sparsetir.ScheduleError, match="compute_at: refused by TVM: .*same block scope"):
        sch.compute_at(sch.get_sblock("csr_spmm0"), j)
    assert [s.primitive for s in sch.history] == ["lower_sparse_iter"]
