"""``Schedule.sparse_compute_at``: a producer iteration moved into its consumer's loop over an
axis computes what the two did one after the other (NumPy references, before and after); what it
refuses, naming the iterations and the axis; its history, printing and replay."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import sparsetir
from sparsetir.errors import ScheduleError
from sparsetir.schedule import History, Schedule, replay
from schedule_helpers import assert_history_sound

HEADER = '''
@T.prim_func
def pair(a: T.handle, b: T.handle, c: T.handle, y: T.handle, indptr: T.handle, indices: T.handle,
         m: T.int32, n: T.int32, nnz: T.int32):
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    K = T.dense_fixed(8)
    J_detach = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    Y = T.match_sparse_buffer(y, (I,), "float32")
    S = T.alloc_sparse_buffer((I, J), "float32")
    D = T.alloc_sparse_buffer((I, J), "float32")
'''

SCALE = '''
    with T.sp_iter([I, J], "SS", "scale") as [i, j]:
        S[i, j] = A[i, j] * T.float32(2)
'''

# an elementwise producer feeding an SpMM and a row reduction
SCALE_SPMM = HEADER + SCALE + '''
    with T.sp_iter([I, J, K], "SRS", "spmm") as [i, j, k]:
        with T.init():
            C[i, k] = T.float32(0)
        C[i, k] = C[i, k] + S[i, j] * B[j, k]
    with T.sp_iter([I, J], "SR", "rowsum") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + T.exp(S[i, j])
'''

ROWSUM = '''
    with T.sp_iter([I, J], "SR", "rowsum") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + T.exp(S[i, j])
'''
SPMM = '''
    with T.sp_iter([I, J, K], "SRS", "spmm") as [i, j, k]:
        with T.init():
            C[i, k] = T.float32(0)
        C[i, k] = C[i, k] + S[i, j] * B[j, k]
'''

SCALE_SPMM_AT_I = HEADER + '''
    with T.sp_iter([I], "S", "spmm_outer") as [i]:
        with T.sp_iter([J], "S", "scale") as [j]:
            S[i, j] = A[i, j] * T.float32(2)
        with T.sp_iter([J, K], "RS", "spmm") as [j, k]:
            with T.init():
                C[i, k] = T.float32(0)
            C[i, k] = C[i, k] + S[i, j] * B[j, k]
    with T.sp_iter([I, J], "SR", "rowsum") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + T.exp(S[i, j])
'''

# an elementwise consumer over the same axes: computed at J, the producer is one store
SCALE_ADD = HEADER + SCALE + '''
    with T.sp_iter([I, J], "SS", "add") as [i, j]:
        D[i, j] = S[i, j] + T.float32(1)
    with T.sp_iter([I, J], "SR", "rowsum") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + S[i, j] * D[i, j]
'''

SCALE_ADD_AT_J = HEADER + '''
    with T.sp_iter([I, J], "SS", "add_outer") as [i, j]:
        S[i, j] = A[i, j] * T.float32(2)
        D[i, j] = S[i, j] + T.float32(1)
    with T.sp_iter([I, J], "SR", "rowsum") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + S[i, j] * D[i, j]
'''

M, N = 13, 9


def inputs(rng: np.random.Generator) -> tuple[scipy.sparse.csr_matrix, dict]:
    """A CSR matrix with empty rows (the first and the last) and a full one, and the arguments."""
    dense = scipy.sparse.random(M, N, density=0.3, random_state=rng, dtype=np.float32).toarray()
    dense[[0, M // 2, M - 1]] = 0
    dense[1] = rng.standard_normal(N)
    a = scipy.sparse.csr_matrix(dense)
    args = dict(a=a.data.copy(), b=rng.standard_normal((N, 8)).astype(np.float32), c=np.full((M, 8), np.nan, np.float32),
                y=np.full(M, np.nan, np.float32), indptr=a.indptr, indices=a.indices, m=M, n=N, nnz=a.nnz)
    return a, args


def check_scale_spmm(program, schedule: str) -> None:
    a, args = inputs(np.random.default_rng(3))
    sparsetir.build(program, schedule=schedule)(**args)
    s = 2 * a.astype(np.float64)
    np.testing.assert_allclose(args["c"], s @ args["b"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(args["y"], np.asarray(s.expm1().sum(axis=1)).ravel() + np.diff(a.indptr), rtol=1e-5)


def check_scale_add(program, schedule: str) -> None:
    a, args = inputs(np.random.default_rng(4))
    sparsetir.build(program, schedule=schedule)(**args)
    s = 2 * a.data.astype(np.float64)
    rows = np.repeat(np.arange(M), np.diff(a.indptr))
    np.testing.assert_allclose(args["y"], np.bincount(rows, s * (s + 1), minlength=M), rtol=1e-5, atol=1e-5)


def test_the_producer_moves_under_the_consumers_row_loop():
    f = sparsetir.parse(SCALE_SPMM)
    sch = Schedule(f)
    sch.sparse_compute_at("scale", "spmm", "I")
    sparsetir.assert_structural_equal(sch.func, sparsetir.parse(SCALE_SPMM_AT_I))
    assert sch.iterations() == ["spmm_outer", "scale", "spmm", "rowsum"]


@pytest.mark.parametrize("schedule", ["none", "default"])
def test_an_spmm_computing_its_operand_per_row_equals_numpy(schedule):
    f = sparsetir.parse(SCALE_SPMM)
    check_scale_spmm(f, schedule)
    sch = Schedule(f)
    sch.sparse_compute_at("scale", "spmm", "I")
    check_scale_spmm(sch, schedule)


def test_lowered_the_producer_runs_inside_the_consumers_loop():
    sch = Schedule(sparsetir.parse(SCALE_SPMM))
    sch.sparse_compute_at("scale", "spmm", "I")
    sch.lower_sparse_iter()
    outer = sch.get_sblock("spmm_outer0")  # the block of the one loop over I
    children = [sch.get(b).name_hint for b in sch.get_child_blocks(outer)]
    assert children == ["scale0", "spmm0"]  # the producer's row, then the SpMM's row
    assert len(sch.get_loops(outer)) == 1 and len(sch.get_loops(sch.get_sblock("scale0"))) == 1
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_sblock("rowsum0"))] == ["rowsum1"]
    script = sch.func.script()
    assert script.index('T.sblock("spmm_outer0")') < script.index('T.sblock("scale0")') < script.index('T.sblock("spmm0")')


@pytest.mark.parametrize("schedule", ["none", "default"])
def test_a_reduction_consumer_equals_numpy(schedule):
    f = sparsetir.parse(HEADER + SCALE + ROWSUM + SPMM)
    check_scale_spmm(f, schedule)
    sch = Schedule(f)
    sch.sparse_compute_at("scale", "rowsum", "I")  # the SpMM after it reads S once all of it is computed
    assert sch.iterations() == ["rowsum_outer", "scale", "rowsum", "spmm"]
    check_scale_spmm(sch, schedule)


@pytest.mark.parametrize("schedule", ["none", "default"])
def test_computed_at_the_innermost_axis_the_producer_is_a_store(schedule):
    f = sparsetir.parse(SCALE_ADD)
    check_scale_add(f, schedule)
    sch = Schedule(f)
    sch.sparse_compute_at("scale", "add", "J")
    sparsetir.assert_structural_equal(sch.func, sparsetir.parse(SCALE_ADD_AT_J))
    check_scale_add(sch, schedule)


def test_history_prints_and_replays():
    f = sparsetir.parse(SCALE_SPMM)
    sch = Schedule(f)
    sch.sparse_compute_at("scale", "spmm", "I")
    sch.annotate_sparse_iter("spmm_outer", "note", 1)
    step = sch.history[0]
    assert (step.primitive, step.args) == ("sparse_compute_at", {"iteration": "scale", "target_iteration": "spmm", "axis": "I"})
    assert sparsetir.parse(step.script).script() == step.script
    assert_history_sound(sch, f)
    sparsetir.assert_structural_equal(replay(f, History.from_json(sch.history.to_json())), sch.func)


def refused(source: str, producer: str, consumer: str, axis: str) -> str:
    sch = Schedule(sparsetir.parse(source))
    with pytest.raises(ScheduleError) as err:
        sch.sparse_compute_at(producer, consumer, axis)
    message = str(err.value)
    assert f"sparse_compute_at of '{producer}' at axis '{axis}' of '{consumer}'" in message
    assert len(sch.history) == 0
    return message


def test_refuses_an_axis_the_consumer_does_not_iterate():
    assert "'spmm' does not iterate axis 'J_detach'" in refused(SCALE_SPMM, "scale", "spmm", "J_detach")


def test_refuses_to_compute_under_a_reduction():
    assert "'spmm' reduces over 'J'" in refused(SCALE_SPMM, "scale", "spmm", "J")
    assert "'spmm' reduces over 'J'" in refused(SCALE_SPMM, "scale", "spmm", "K")


def test_refuses_a_consumer_reading_other_positions():
    source = HEADER + '''
    with T.sp_iter([I], "S", "norm") as [i]:
        Y[i] = T.float32(2)
    with T.sp_iter([I, J], "SS", "scale_columns") as [i, j]:
        A[i, j] = A[i, j] * Y[j]
'''
    message = refused(source, "norm", "scale_columns", "I")
    assert "reads 'Y' at elements 'norm' writes at other positions of the axes up to 'I'" in message


def test_refuses_a_producer_after_its_consumer_or_moved_into_itself():
    assert "'spmm' comes after 'scale'" in refused(SCALE_SPMM, "spmm", "scale", "I")
    assert "inside itself" in refused(SCALE_SPMM, "spmm", "spmm", "I")


def test_refuses_a_producer_not_over_the_consumers_axes():
    source = HEADER + '''
    with T.sp_iter([K], "S", "fill") as [k]:
        C[0, k] = T.float32(1)
    with T.sp_iter([I, K], "SS", "copy") as [i, k]:
        C[i, k] = C[0, k]
'''
    assert "'fill' must start with the axes [I]" in refused(source, "fill", "copy", "I")


def test_refuses_a_consumer_writing_what_the_producer_reads():
    source = HEADER + SCALE + '''
    with T.sp_iter([I, J], "SS", "add") as [i, j]:
        A[i, j] = S[i, j] + T.float32(1)
'''
    assert "'add' writes 'A', which 'scale' reads" in refused(source, "scale", "add", "J")


def test_refuses_to_move_past_an_iteration_using_the_producers_output():
    assert "'spmm' between them uses what 'scale' writes" in refused(SCALE_SPMM, "scale", "rowsum", "I")
    source = HEADER + SCALE + '''
    with T.sp_iter([I, J], "SS", "overwrite") as [i, j]:
        S[i, j] = T.float32(0)
    with T.sp_iter([I, J], "SR", "rowsum") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + S[i, j]
'''
    assert "'overwrite' between them uses what 'scale' writes" in refused(source, "scale", "rowsum", "I")


def test_refuses_a_consumer_reading_nothing_of_the_producer():
    source = HEADER + SCALE + '''
    with T.sp_iter([I, K], "SS", "zero") as [i, k]:
        C[i, k] = T.float32(0)
'''
    assert "'zero' reads nothing 'scale' writes" in refused(source, "scale", "zero", "I")


# an SDDMM-like consumer, spatial over the sparse axis J too; the producer names its iterators
# [x, i], so moved under the consumer's i its own i is renamed
SCALE_SDDMM = HEADER + '''
    with T.sp_iter([I, J], "SS", "scale") as [x, i]:
        S[x, i] = A[x, i] * T.float32(2)
    with T.sp_iter([I, J, K], "SSR", "sddmm") as [i, j, k]:
        with T.init():
            D[i, j] = T.float32(0)
        D[i, j] = D[i, j] + S[i, j] * B[j, k]
    with T.sp_iter([I, J], "SR", "rowsum") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + D[i, j]
'''

SCALE_SDDMM_AT = {
    "I": '''
    with T.sp_iter([I], "S", "sddmm_outer") as [i]:
        with T.sp_iter([J], "S", "scale") as [i2]:
            S[i, i2] = A[i, i2] * T.float32(2)
        with T.sp_iter([J, K], "SR", "sddmm") as [j, k]:
            with T.init():
                D[i, j] = T.float32(0)
            D[i, j] = D[i, j] + S[i, j] * B[j, k]
''',
    "J": '''
    with T.sp_iter([I, J], "SS", "sddmm_outer") as [i, j]:
        S[i, j] = A[i, j] * T.float32(2)
        with T.sp_iter([K], "R", "sddmm") as [k]:
            with T.init():
                D[i, j] = T.float32(0)
            D[i, j] = D[i, j] + S[i, j] * B[j, k]
''',
}


@pytest.mark.parametrize("axis", ["I", "J"])
@pytest.mark.parametrize("schedule", ["none", "default"])
def test_an_sddmm_computing_its_operand_at_each_nonzero_equals_numpy(axis, schedule):
    f = sparsetir.parse(SCALE_SDDMM)
    sch = Schedule(f)
    sch.sparse_compute_at("scale", "sddmm", axis)
    rowsum = SCALE_SDDMM[SCALE_SDDMM.index('    with T.sp_iter([I, J], "SR"'):]
    sparsetir.assert_structural_equal(sch.func, sparsetir.parse(HEADER + SCALE_SDDMM_AT[axis] + rowsum))
    assert_history_sound(sch, f)
    for program in (f, sch):
        a, args = inputs(np.random.default_rng(5))
        sparsetir.build(program, schedule=schedule)(**args)
        d = 2 * a.multiply(args["b"].astype(np.float64).sum(axis=1)[None, :])
        np.testing.assert_allclose(args["y"], np.asarray(d.sum(axis=1)).ravel(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("schedule", ["none", "default"])
def test_a_reducing_producer_computed_per_row_equals_numpy(schedule):
    f = sparsetir.parse(HEADER + '''
    with T.sp_iter([I, J], "SR", "norm") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + A[i, j] * A[i, j]
    with T.sp_iter([I, K], "SS", "broadcast") as [i, k]:
        C[i, k] = Y[i] + T.float32(k)
''')
    sch = Schedule(f)
    sch.sparse_compute_at("norm", "broadcast", "I")
    assert sch.iterations() == ["broadcast_outer", "norm", "broadcast"]
    assert_history_sound(sch, f)
    for program in (f, sch):
        a, args = inputs(np.random.default_rng(6))
        sparsetir.build(program, schedule=schedule)(**args)
        norm = np.asarray(a.multiply(a).sum(axis=1)).ravel()
        np.testing.assert_allclose(args["y"], norm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(args["c"], norm[:, None] + np.arange(8), rtol=1e-5, atol=1e-6)
