"""``sch.bind``: thread bindings print and parse back at stage II, and loops TVM refuses for its
dataflow rule are bound when (and only when) their iterations are proven independent."""

from __future__ import annotations

import pytest
from tvm.script import tirx as T

import sparsetir
from gpu_kernels import workload_function
from sparsetir._tvm import Schedule as TVMSchedule
from sparsetir.errors import ScheduleError
from sparsetir.ops import scripts
from sparsetir.schedule.thread_binding import independent_iterations
from sparsetir.transforms import pipeline


def _stage2_schedule(script):
    return sparsetir.Schedule(pipeline.lower(script, until=pipeline.STAGE_II))  # round trip checked


def test_bound_loops_print_and_parse_back_at_stage2():
    sch = _stage2_schedule(workload_function("csr_spmm"))
    (i,) = sch.get_loops(sch.get_sblock("csr_spmm0"))
    sch.bind(i, "blockIdx.x")  # the schedule's round-trip check passes
    k = sch.get_loops(sch.get_sblock("csr_spmm1"))[-1]
    sch.bind(k, "threadIdx.x")
    text = sch.func.script()
    assert 'T.thread_binding(m, thread="blockIdx.x")' in text and 'thread="threadIdx.x"' in text
    sparsetir.assert_structural_equal(sparsetir.parse(text), sch.func)


def test_softmax_rows_bind_though_tvm_refuses_them():
    """The row block initialises its maximum and sum before reducing into them: not compact
    dataflow for TVM; each row owns its elements, which the proof shows at stage II."""
    sch = _stage2_schedule(scripts.softmax_script("float32"))
    (i,) = sch.get_loops(sch.get_sblock("softmax0"))
    io, ii = sch.split(i, [None, 64])
    sch.bind(ii, "threadIdx.x")
    sch.bind(io, "blockIdx.x")
    assert [s.primitive for s in sch.history][-2:] == ["bind", "bind"]
    replayed = sparsetir.schedule.replay(sch.initial, sch.history)
    sparsetir.assert_structural_equal(replayed, sch.func)


def test_in_place_update_over_fused_nonzeros_binds_at_stage3_only():
    sch = sparsetir.Schedule(scripts.sddmm_script(32, "float32"))
    sch.sparse_fuse("sddmm_scale", ["I", "J"])
    sch.lower_sparse_iter()
    (p,) = sch.get_loops(sch.get_sblock("sddmm_scale0"))
    with pytest.raises(ScheduleError, match="cannot be shown to touch disjoint elements of 'O'"):
        sch.bind(p, "threadIdx.x")  # O[row(p), p - indptr[row(p)]]: the row is read from data
    sch.lower_sparse_buffer()
    (p,) = sch.get_loops(sch.get_sblock("sddmm_scale0"))
    po, pi = sch.split(p, [None, 128])
    sch.bind(pi, "threadIdx.x")  # flattened, o[p]
    sch.bind(po, "blockIdx.x")


@T.prim_func(s_tir=True)
def _row_histogram(idx: T.Buffer((64,), "int32"), count: T.Buffer((8,), "float32")):
    for i in range(64):
        with T.sblock("count"):
            vi = T.axis.spatial(64, i)
            count[idx[vi]] = count[idx[vi]] + T.float32(1)


@T.prim_func(s_tir=True)
def _shifted(x: T.Buffer((65,), "float32")):
    for i in range(64):
        with T.sblock("shift"):
            vi = T.axis.spatial(64, i)
            x[vi] = x[vi + 1] * T.float32(2)


@T.prim_func(s_tir=True)
def _tiles(x: T.Buffer((64, 16), "float32")):
    for i, k in T.grid(64, 16):
        with T.sblock("scale"):
            vi, vk = T.axis.remap("SS", [i, k])
            x[vi, vk] = x[vi, vk] * T.float32(2)


@T.prim_func(s_tir=True)
def _after_a_statement(x: T.Buffer((64,), "float32"), y: T.Buffer((4,), "float32")):
    for o in range(4):
        with T.sblock("outer"):
            vo = T.axis.spatial(4, o)
            y[vo] = T.float32(0)
            for i in range(16):
                with T.sblock("scale"):
                    vi = T.axis.spatial(64, vo * 16 + i)
                    x[vi] = x[vi] * T.float32(2)


@T.prim_func(s_tir=True)
def _blocked_rows(x: T.Buffer((16, 8, 4, 4), "float32"), a: T.Buffer((64, 4), "float32")):
    for i, j in T.grid(64, 4):
        with T.sblock("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            x[vi // 4, vj * 2, vi % 4, vj] = a[vi, vj]


@T.prim_func(s_tir=True)
def _blocked_rows_overlapping(x: T.Buffer((16, 8, 4, 4), "float32"), a: T.Buffer((64, 4), "float32")):
    for i, j in T.grid(64, 4):
        with T.sblock("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            x[vi // 8, vj, vi % 4, vj] = a[vi, vj]


def _loop(func, block):
    sch = TVMSchedule(func)
    return sch, sch.get_loops(sch.get_sblock(block))[0]


def test_collisions_through_data_are_refused():
    sch, loop = _loop(_row_histogram, "count")
    assert "disjoint elements of 'count'" in independent_iterations(sch, loop)


def test_a_read_of_another_iterations_element_is_refused():
    sch, loop = _loop(_shifted, "shift")  # x[i] = 2 * x[i + 1]: iteration i reads what i + 1 writes
    assert "disjoint elements of 'x'" in independent_iterations(sch, loop)


def test_a_row_of_elements_per_iteration_is_independent():
    sch, loop = _loop(_tiles, "scale")  # x[i, 0:16] in place: dimension 0 names the iteration
    assert independent_iterations(sch, loop) is None
    outer, inner = sch.split(loop, [None, 8])
    assert independent_iterations(sch, outer) is None  # x[8 * o + i, k]: i in [0, 8) stays in o's rows


def test_a_row_named_by_a_pair_of_dimensions_is_independent():
    """Row i of a 4x4-blocked output lives at [i // 4, ..., i % 4, ...]: neither dimension names
    the row, the pair does (4 * (i // 4) + i % 4 = i)."""
    sch, loop = _loop(_blocked_rows, "copy")
    assert independent_iterations(sch, loop) is None
    sch, loop = _loop(_blocked_rows_overlapping, "copy")  # rows i and i + 4 share [i // 8, ., i % 4]
    assert "disjoint elements of 'x'" in independent_iterations(sch, loop)


def test_a_loop_beside_other_statements_is_refused():
    sch = TVMSchedule(_after_a_statement)
    loop = sch.get_loops(sch.get_sblock("scale"))[-1]  # y[o] = 0 runs beside it, once per o
    assert "does not start a kernel's loop nest" in independent_iterations(sch, loop)


def test_atomic_accumulations_may_collide():
    from sparsetir.transforms.atomic_updates import lower_atomic_updates

    sch, loop = _loop(lower_atomic_updates(_row_histogram, ["count"]), "count")
    assert independent_iterations(sch, loop) is None
