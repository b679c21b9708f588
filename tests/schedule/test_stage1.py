"""Golden tests of the stage-I schedule primitives and their history."""

import pytest

import sparsetir
from sparsetir.schedule import History, Schedule, replay
from schedule_helpers import assert_computes_reference, stage1
from workloads import WORKLOADS

HEADER = '''from sparsetir.script import tir as T

@T.prim_func
def f(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
'''

CSRMM = HEADER + '''    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    with T.sp_iter([{axes}], "{kinds}", "csrmm") as [{iters}]:{attr}
        with T.init():
            C[i, k] = T.float32(0)
        C[i, k] = C[i, k] + A[i, j] * B[j, k]
'''

SDDMM = HEADER + '''    X = T.match_sparse_buffer(a, (I, K), "float32")
    Y = T.match_sparse_buffer(b, (J_detach, K), "float32")
    O = T.match_sparse_buffer(c, (I, J), "float32")
    with T.sp_iter([{axes}], "SSR", "sddmm") as [i, j, k]:
        with T.init():
            O[i, j] = T.float32(0)
        O[i, j] = O[i, j] + X[i, k] * Y[j, k]
'''


def csrmm(axes="I, J, K", kinds="SRS", iters="i, j, k", attr=""):
    return sparsetir.parse(CSRMM.format(axes=axes, kinds=kinds, iters=iters, attr=attr))


def test_sparse_reorder_golden():
    sch = Schedule(csrmm())
    sch.sparse_reorder("csrmm", ["I", "K", "J"])
    expected = csrmm(axes="I, K, J", kinds="SSR", iters="i, k, j")
    sparsetir.assert_structural_equal(sch.func, expected)


def test_sparse_reorder_keeps_parents_first():
    sch = Schedule(csrmm())
    with pytest.raises(sparsetir.ScheduleError, match="'J' depends on 'I'"):
        sch.sparse_reorder("csrmm", ["J", "I", "K"])
    with pytest.raises(sparsetir.ScheduleError, match="permutation"):
        sch.sparse_reorder("csrmm", ["I", "K"])
    assert len(sch.history) == 0


def test_sparse_fuse_golden():
    sch = Schedule(sparsetir.parse(SDDMM.format(axes="I, J, K")))
    sch.sparse_fuse("sddmm", ["I", "J"])
    expected = sparsetir.parse(SDDMM.format(axes="T.fuse(I, J), K"))
    sparsetir.assert_structural_equal(sch.func, expected)


def test_sparse_fuse_refusals():
    sch = Schedule(csrmm())
    with pytest.raises(sparsetir.ScheduleError, match="all be spatial or all be reductions"):
        sch.sparse_fuse("csrmm", ["I", "J"])
    with pytest.raises(sparsetir.ScheduleError, match="not a child"):
        sch.sparse_fuse("csrmm", ["J", "K"])
    with pytest.raises(sparsetir.ScheduleError, match="no sparse iteration named 'nope'"):
        sch.sparse_fuse("nope", ["I", "J"])


def test_annotate_sparse_iter_golden():
    sch = Schedule(csrmm())
    sch.annotate_sparse_iter("csrmm", "preprocess", True)
    expected = csrmm(attr='\n        T.sp_iter_attr({"preprocess": True})')
    sparsetir.assert_structural_equal(sch.func, expected)
    with pytest.raises(sparsetir.ScheduleError, match="value must be"):
        sch.annotate_sparse_iter("csrmm", "x", [1, 2])


def test_history_snapshots_verify_print_and_replay():
    original = csrmm()
    sch = Schedule(original)
    sch.sparse_reorder("csrmm", ["I", "K", "J"])
    sch.annotate_sparse_iter("csrmm", "tile", 8)
    assert [s.primitive for s in sch.history] == ["sparse_reorder", "annotate_sparse_iter"]
    for step in sch.history:
        snapshot = sparsetir.parse(step.script)  # parses, and parsing runs the verifier
        assert snapshot.script() == step.script
    assert sch.history[-1].script == sch.func.script()
    assert sch.history.initial_script == original.script()
    reloaded = History.from_json(sch.history.to_json())
    assert reloaded == sch.history
    sparsetir.assert_structural_equal(replay(original, reloaded), sch.func)


# -- stage-I schedules on the workload fixtures: golden, and the built kernel is still right ---

BSR_ITER = 'with T.sp_iter([IO, II, JO, JI, K], "SSRRS", "bsr_spmm") as [io, ii, jo, ji, k]:'
BSR_REORDERED = 'with T.sp_iter([IO, JO, II, K, JI], "SRSSR", "bsr_spmm") as [io, jo, ii, k, ji]:'


def test_sparse_reorder_golden_on_bsr_fixture():
    before = stage1("bsr_spmm")
    text = WORKLOADS["bsr_spmm"].path.read_text()
    assert BSR_ITER in text
    expected = sparsetir.parse(text.replace(BSR_ITER, BSR_REORDERED))
    sch = Schedule(before)
    sch.sparse_reorder("bsr_spmm", ["IO", "JO", "II", "K", "JI"])
    sparsetir.assert_structural_equal(sch.func, expected)


STAGE1_SCHEDULES = [
    ("csr_spmm", "sparse_reorder", lambda s: s.sparse_reorder("csr_spmm", ["I", "K", "J"])),
    ("bsr_spmm", "sparse_reorder", lambda s: s.sparse_reorder("bsr_spmm", ["IO", "JO", "II", "K", "JI"])),
    ("sddmm", "sparse_fuse", lambda s: s.sparse_fuse("sddmm", ["I", "J"])),
    ("csr_elementwise", "sparse_fuse", lambda s: s.sparse_fuse("csr_elementwise", ["I", "J"])),
    ("csr_spmm", "annotate_sparse_iter", lambda s: s.annotate_sparse_iter("csr_spmm", "preprocess", True)),
]


@pytest.mark.parametrize(
    "name, primitive, schedule", STAGE1_SCHEDULES, ids=[f"{n}-{p}" for n, p, _ in STAGE1_SCHEDULES]
)
def test_stage1_schedule_computes_reference(name, primitive, schedule):
    original = stage1(name)
    sch = Schedule(original)
    schedule(sch)
    assert [s.primitive for s in sch.history] == [primitive]
    assert_computes_reference(name, sch)
    sparsetir.assert_structural_equal(replay(original, History.from_json(sch.history.to_json())), sch.func)


def test_stage1_then_stage2_schedule():
    """A reordered iteration lowers to reordered loops, which TVM's primitives then schedule."""
    sch = Schedule(stage1("csr_spmm"))
    sch.sparse_reorder("csr_spmm", ["I", "K", "J"])
    sch.lower_sparse_iter()
    i, k = sch.get_loops(sch.get_sblock("csr_spmm0"))  # the row block now spans (i, k)
    (j,) = sch.get_loops(sch.get_sblock("csr_spmm1"))
    assert [sch.get(lp).loop_var.name for lp in (i, k, j)] == ["i", "k", "j"]
    _, ki = sch.split(k, [None, 4])
    sch.unroll(ki)
    assert_computes_reference("csr_spmm", sch)
