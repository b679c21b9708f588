"""``Schedule.sparse_split``: a sparse iteration split in two along a dense axis computes what the
whole one did; what it refuses (and where, by iteration and axis); its history and printing."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import sparsetir
from sparsetir.schedule import History, Schedule
from schedule_helpers import stage1

WIDTH = 20


def spmm(width: int = WIDTH) -> sparsetir.SparseFunction:
    """examples/csr_spmm.py with its feature width bound to ``width``."""
    return stage1("csr_spmm").specialize({"feat_size": width})


def csr(rng: np.random.Generator, m: int, n: int) -> scipy.sparse.csr_matrix:
    """A random CSR matrix with empty rows (the first and the last among them) and a full row."""
    dense = scipy.sparse.random(m, n, density=0.2, random_state=rng, dtype=np.float32).toarray()
    dense[[0, m // 2, m - 1]] = 0
    dense[1] = rng.standard_normal(n)
    return scipy.sparse.csr_matrix(dense)


def run_spmm(program, width: int, schedule: str = "none") -> None:
    """Build ``program`` and compare it with SciPy on a random matrix."""
    rng = np.random.default_rng(width)
    a = csr(rng, 23, 17)
    x = rng.standard_normal((17, width)).astype(np.float32)
    c = np.full((23, width), np.nan, np.float32)
    kernel = sparsetir.build(program, schedule=schedule)
    kernel(a=a.data, b=x, c=c, indptr=a.indptr, indices=a.indices, m=23, n=17, nnz=a.nnz,
           **({"feat_size": width} if "feat_size" in kernel.params else {}))
    np.testing.assert_allclose(c, a.astype(np.float64) @ x.astype(np.float64), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("at", [1, 7, 16, WIDTH - 1])
def test_a_split_spmm_equals_scipy(at):
    sch = Schedule(spmm())
    sch.sparse_split("csr_spmm", "K", at)
    script = sch.func.script()
    assert f"K_head = T.dense_fixed({at})" in script and f"K_tail = T.dense_fixed({WIDTH - at})" in script
    assert '"csr_spmm_tail"' in script and f"C[i, k + {at}]" in script
    run_spmm(sch, WIDTH)


def test_a_tail_splits_again():
    sch = Schedule(spmm())
    sch.sparse_split("csr_spmm", "K", 7)
    sch.sparse_split("csr_spmm_tail", "K_tail", 5)  # columns [0, 7), [7, 12), [12, 20)
    script = sch.func.script()
    assert "K_tail_head = T.dense_fixed(5)" in script and "K_tail_tail = T.dense_fixed(8)" in script
    assert '"csr_spmm_tail_tail"' in script
    run_spmm(sch, WIDTH)
    run_spmm(sch, WIDTH, schedule="default")  # and the default rules on top of the three parts


HEADER = '''from sparsetir.script import tir as T

@T.prim_func
def f(a: T.handle, b: T.handle, c: T.handle, m: T.int32) -> None:
    I = T.dense_fixed(m)
    K = T.dense_fixed(8)
    A = T.match_sparse_buffer(a, (I, K), "float32")
    B = T.match_sparse_buffer(b, (I,), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
'''
ROW_STORE = HEADER + '''    with T.sp_iter([I, K], "SS", "last") as [i, k]:
        B[i] = A[i, k]
'''
READS_ELSEWHERE = HEADER + '''    with T.sp_iter([I, K], "SS", "shift") as [i, k]:
        C[i, k] = A[i, k] + C[i, 0]
'''

#: SpMM as a row iteration holding the reduction over a row's entries (the nested form).
NESTED_SPMM = '''from sparsetir.script import tir as T

@T.prim_func
def nested(a: T.handle, x: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32,
           feat: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    D = T.dense_fixed(n)
    K = T.dense_fixed(feat)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    X = T.match_sparse_buffer(x, (D, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    with T.sp_iter([I], "S", "rows") as [i]:
        with T.sp_iter([J, K], "RS", "row") as [j, k]:
            with T.init():
                C[i, k] = T.float32(0)
            C[i, k] = C[i, k] + A[i, j] * X[j, k]
'''


def nested_spmm(width: int = 33) -> sparsetir.SparseFunction:
    return sparsetir.parse(NESTED_SPMM, "nested.py").specialize({"feat": width})


@pytest.mark.parametrize("width", [33, 100, 3])
def test_a_nested_reduction_at_an_awkward_width_builds_by_default(width):
    # The default schedule's split_width rule splits awkward widths; inside an outer iteration
    # the two parts would both reduce into C in one block, which TVM 0.27 cannot decompose (the
    # default build used to fail at its first call). The split is refused, the rest applies.
    rng = np.random.default_rng(width)
    a = csr(rng, 23, 17)
    x = rng.standard_normal((17, width)).astype(np.float32)
    c = np.full((23, width), np.nan, np.float32)
    kernel = sparsetir.build(sparsetir.parse(NESTED_SPMM, "nested.py"))
    kernel(a=a.data, x=x, c=c, indptr=a.indptr, indices=a.indices, m=23, n=17, feat=width, nnz=a.nnz)
    np.testing.assert_allclose(c, a.astype(np.float64) @ x.astype(np.float64), rtol=1e-5, atol=1e-5)


def sddmm(width: int = 16) -> sparsetir.SparseFunction:
    return stage1("sddmm").specialize({"feat_size": width})


@pytest.mark.parametrize(
    "program, iteration, axis, at, message",
    [
        (sddmm, "sddmm", "K", 8, r"^sparse_split: axis 'K' is a reduction in 'sddmm'; only a spatial axis splits$"),
        (lambda: stage1("csr_spmm"), "csr_spmm", "K", 8, r"^sparse_split: axis 'K' .*constant extent"),
        (spmm, "csr_spmm", "K", 0, r"^sparse_split: the split point must be an integer in \(0, 20\), got 0$"),
        (spmm, "csr_spmm", "K", WIDTH, r"^sparse_split: the split point must be an integer in \(0, 20\), got 20$"),
        (spmm, "csr_spmm", "K", 2.5, r"^sparse_split: the split point must be an integer in \(0, 20\), got 2.5$"),
        (lambda: spmm().specialize({"m": 8}), "csr_spmm", "I", 4,
         r"^sparse_split: axis 'I' has an axis under it in 'csr_spmm'$"),
        (spmm, "csr_spmm", "J", 2, r"^sparse_split: axis 'J' is not a dense fixed axis"),
        (spmm, "csr_spmm", "Q", 2, r"^sparse_split: 'Q' is not an axis of sparse iteration 'csr_spmm'$"),
        (spmm, "nope", "K", 2, r"has no sparse iteration named 'nope' \(it has: csr_spmm\)$"),
        (lambda: sparsetir.parse(ROW_STORE, "row_store.py"), "last", "K", 4,
         r"^sparse_split: a store of 'last' does not depend on axis 'K'$"),
        (lambda: sparsetir.parse(READS_ELSEWHERE, "reads_elsewhere.py"), "shift", "K", 4,
         r"^sparse_split: 'shift' reads 'C' where it does not store it$"),
        (nested_spmm, "row", "K", 32,
         r"^sparse_split: 'row' reduces inside the sparse iteration 'rows'; its two parts would both write"),
    ],
    ids=["reduction", "non-constant", "at-0", "at-extent", "not-integer", "has-child", "sparse-axis",
         "unknown-axis", "unknown-iteration", "store-without-axis", "read-elsewhere", "nested-reduction"],
)
def test_refusals_name_the_iteration_and_axis(program, iteration, axis, at, message):
    func = program()
    sch = Schedule(func)
    with pytest.raises(sparsetir.ScheduleError, match=message):
        sch.sparse_split(iteration, axis, at)
    assert len(sch.history) == 0 and sparsetir.structural_equal(sch.func, func)  # nothing changed or recorded


def test_it_is_recorded_and_replays():
    func = spmm()
    sch = Schedule(func)
    sch.sparse_split("csr_spmm", "K", 7)
    sch.sparse_split("csr_spmm_tail", "K_tail", 5)
    steps = list(sch.history)
    assert [(s.primitive, s.stage) for s in steps] == [("sparse_split", 1), ("sparse_split", 1)]
    assert steps[0].args == {"iteration": "csr_spmm", "axis": "K", "at": 7}
    assert steps[1].args == {"iteration": "csr_spmm_tail", "axis": "K_tail", "at": 5}
    assert steps[-1].script == sch.func.script()
    assert sparsetir.structural_equal(sparsetir.replay(func, sch.history), sch.func)
    reloaded = History.from_json(sch.history.to_json())
    assert reloaded == sch.history
    assert sparsetir.structural_equal(sparsetir.replay(func, reloaded), sch.func)


def test_the_printed_script_parses_back_equal():
    sch = Schedule(spmm())
    sch.sparse_split("csr_spmm", "K", 7)
    sch.sparse_split("csr_spmm_tail", "K_tail", 5)
    script = sch.func.script()
    again = sparsetir.parse(script, "split.py")
    sparsetir.assert_structural_equal(again, sch.func)
    assert again.script() == script
