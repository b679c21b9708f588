"""``ops.spmm(A, X, format="tuned")`` and ``ops.tune_spmm``: every plan the search may pick equals
SciPy (a random matrix, a block-structured one, one with empty rows); the decision is searched
once per matrix, width and dtype, kept with the matrix and read back by another process without
measuring; the search never picks a plan slower than CSR in its own measurement; bad arguments
are named."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import sparsetir
import sparsetir.ops as ops
from sparsetir.ops import SpmmFormat, tuned
from sparsetir.ops.tuned import Plan
from sparsetir.schedule.default import Choices

from ops_matrices import random_csr

TESTS = Path(__file__).resolve().parent


def _blocky(dtype=np.float32) -> sp.csr_matrix:
    """3x3 blocks along a band, plus a few scattered entries: BSR(3) is a candidate."""
    rng = np.random.default_rng(4)
    blocks = sp.kron(sp.random(30, 30, density=0.15, random_state=rng), np.ones((3, 3)))
    A = (blocks + sp.random(90, 90, density=0.01, random_state=rng)).astype(dtype).tocsr()
    A.sum_duplicates()  # sorted, as a torch CSR tensor must be
    return A


MATRICES = {
    "random": lambda: random_csr(120, 90, 0.08, 21),
    "blocky": _blocky,
    "empty_rows": lambda: random_csr(200, 60, 0.05, 22, empty_rows=True, long_row=False),
}


def _operand(A, width, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal((A.shape[1], width)).astype(dtype)


def _assert_product(C, A, X):
    expected = A @ X
    scale = max(float(np.abs(expected).max()), 1.0)
    np.testing.assert_allclose(np.asarray(C), expected, rtol=1e-5, atol=1e-5 * scale)


@pytest.fixture
def searches(monkeypatch):
    """The searches run in this test, by the plan each decided."""
    made = []
    run = tuned._Search.run

    def counted(self):
        result = run(self)
        made.append(result.plan)
        return result

    monkeypatch.setattr(tuned._Search, "run", counted)
    return made


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_every_candidate_plan_equals_scipy(name):
    A = MATRICES[name]()
    X = _operand(A, 40)  # 2.5 vectors: max_vectors=2 splits the width
    pool = tuned.candidates(sparsetir.formats.stats(A))
    assert pool[0].is_default and len(pool) >= 12
    assert any(p.format.name != "csr" for p in pool)
    for plan in pool:
        _assert_product(tuned.runner(A, X, plan)(), A, X)
    if name == "blocky":
        assert Plan(SpmmFormat("bsr", block=3)) in pool
    assert Plan(choices=Choices(prefetch=0, prefetch_distance=32)) in pool  # a distance comes with whole rows


def test_a_stored_plan_older_than_a_knob_takes_its_default():
    plan = Plan(choices=Choices(chunks_per_thread=2, prefetch=0, prefetch_distance=16))
    record = plan.as_json()
    assert Plan.from_json(record) == plan
    del record["prefetch_distance"]  # written before the knob existed
    assert Plan.from_json(record) == Plan(choices=Choices(chunks_per_thread=2, prefetch=0))
    with pytest.raises(ValueError, match="out of range"):
        Plan.from_json({**plan.as_json(), "prefetch_distance": 0})


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_tuned_equals_scipy_and_never_loses_to_csr(name, tmp_path, searches):
    A = MATRICES[name]()
    X = _operand(A, 24)
    made = ops.tune_spmm(A, X, budget_s=1.0, store=tmp_path)
    assert made.how == "measured" and searches == [made.plan]
    assert "csr" in made.seconds and made.rejected == {}
    if not made.plan.is_default:  # another plan wins only by the margin, in the final rounds
        assert made.ratios[str(made.plan)] * tuned.MARGIN <= 1.0
        assert made.seconds[str(made.plan)] < made.seconds["csr"]
    _assert_product(ops.spmm(A, X, format="tuned"), A, X)
    assert "width 24 float32" in made.describe()


def test_the_decision_is_made_once_per_matrix_and_width(tmp_path, searches):
    A = MATRICES["random"]()
    X = _operand(A, 16)
    made = ops.tune_spmm(A, X, budget_s=0.3, store=tmp_path)
    for _ in range(3):
        _assert_product(ops.spmm(A, X, format="tuned"), A, X)
    assert tuned.decision(A, X) is made
    assert ops.tune_spmm(A, X, budget_s=5, store=tmp_path) is made  # kept with A, whatever the budget
    assert len(searches) == 1
    ops.tune_spmm(A, _operand(A, 8), budget_s=0.3, store=tmp_path)  # another width: another search
    assert len(searches) == 2
    again = ops.tune_spmm(A, X, budget_s=0.3, store=tmp_path, retune=True)
    assert len(searches) == 3 and again is tuned.decision(A, X)
    # a fresh preparation (a new matrix object, the same structure) reads the store
    B = A.copy()
    stored = ops.tune_spmm(B, X, budget_s=0.3, store=tmp_path)
    assert stored.how == "stored" and stored.plan == again.plan and len(searches) == 3


def test_a_stored_plan_runs_in_another_process_without_measuring(tmp_path, monkeypatch):
    """A plan with every CSR choice changed, stored by this process, is read and run by another."""
    plan = Plan(choices=Choices(chunks_per_thread=4, prefetch=1, max_vectors=2))
    monkeypatch.setattr(tuned._Search, "run", lambda self: tuned.TunedSpmm(plan, int(self.X.shape[1]), "float32",
                                                                           "measured", 1.5))
    A = random_csr(150, 100, 0.05, 23)
    X = _operand(A, 40)
    assert ops.tune_spmm(A, X, budget_s=1.0, store=tmp_path).plan == plan
    _assert_product(ops.spmm(A, X, format="tuned"), A, X)
    [record] = [json.loads(p.read_text()) for p in tmp_path.glob("spmm-*.json")]
    assert record["key"]["width"] == 40 and record["plan"]["chunks_per_thread"] == 4
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path.insert(0, {str(TESTS)!r})
        from ops_matrices import random_csr
        import sparsetir.ops as ops
        from sparsetir.ops import tuned

        def refuse(self):
            raise AssertionError("measured again")

        tuned._Search.run = refuse
        A = random_csr(150, 100, 0.05, 23)
        X = np.random.default_rng(0).standard_normal((100, 40)).astype(np.float32)
        made = ops.tune_spmm(A, X, budget_s=5, store={str(tmp_path)!r})
        C = ops.spmm(A, X, format="tuned")
        assert np.allclose(C, A @ X, rtol=1e-5, atol=1e-5), "wrong result"
        print(made.how, made.plan, made.speedup)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == f"stored {plan} 1.5"


def test_a_stored_bsr_plan_and_torch_tensors(tmp_path, monkeypatch):
    plan = Plan(SpmmFormat("bsr", block=3))
    monkeypatch.setattr(tuned._Search, "run", lambda self: tuned.TunedSpmm(plan, int(self.X.shape[1]), "float64",
                                                                           "measured", 1.2))
    A = _blocky(np.float64)
    T = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                                torch.from_numpy(A.data.copy()), size=A.shape, check_invariants=True)
    X = torch.from_numpy(_operand(A, 12, dtype=np.float64)).requires_grad_()
    assert ops.tune_spmm(T, X, budget_s=1.0, store=tmp_path).plan == plan
    out = ops.spmm(T, X, format="tuned")
    _assert_product(out.detach().numpy(), A, X.detach().numpy())
    out.sum().backward()  # the gradient is CSR's: Aᵀ @ ones
    np.testing.assert_allclose(X.grad.numpy(), A.T @ np.ones((A.shape[0], 12)), rtol=1e-12)


def test_budget_zero_and_empty_products_decide_without_measuring(tmp_path, searches):
    A = MATRICES["random"]()
    made = ops.tune_spmm(A, _operand(A, 16), budget_s=0, store=tmp_path)
    assert made.how == "default" and made.plan.is_default
    assert not list(tmp_path.iterdir())  # nothing stored: a later budget may still search
    empty = sp.csr_matrix((6, 5), dtype=np.float32)
    assert ops.tune_spmm(empty, np.ones((5, 4), np.float32), store=tmp_path).how == "default"
    np.testing.assert_array_equal(ops.spmm(empty, np.ones((5, 4), np.float32), format="tuned"), 0)
    assert ops.spmm(A, np.ones((90, 0), np.float32), format="tuned").shape == (120, 0)
    assert searches == []


def test_an_unreadable_store_file_is_reported_and_searched_again(tmp_path, searches):
    A = MATRICES["random"]()
    X = _operand(A, 16)
    ops.tune_spmm(A, X, budget_s=0.3, store=tmp_path)
    [path] = tmp_path.glob("spmm-*.json")
    path.write_text("{ not json")
    ops.forget(A)
    with pytest.warns(UserWarning, match="ignoring the unreadable tuned decision"):
        made = ops.tune_spmm(A, X, budget_s=0.3, store=tmp_path)
    assert made.how == "measured" and len(searches) == 2
    assert json.loads(path.read_text())["plan"]["format"] == made.plan.format.name  # written afresh


@pytest.mark.parametrize("budget, message", [
    (-1, r"tune_spmm: budget_s: must be a finite number of seconds >= 0, got -1"),
    (float("inf"), r"tune_spmm: budget_s: must be a finite number of seconds >= 0, got inf"),
    (float("nan"), r"tune_spmm: budget_s: must be a finite number of seconds >= 0, got nan"),
    ("5", r"tune_spmm: budget_s: must be a number of seconds, got str"),
    (True, r"tune_spmm: budget_s: must be a number of seconds, got bool"),
])
def test_bad_budgets_are_named(budget, message, tmp_path):
    A = MATRICES["random"]()
    with pytest.raises(sparsetir.ArgumentError, match=message):
        ops.tune_spmm(A, _operand(A, 4), budget_s=budget, store=tmp_path)


def test_bad_arguments_are_named(tmp_path):
    A = MATRICES["random"]()
    X = _operand(A, 4)
    with pytest.raises(sparsetir.ArgumentError, match="tune_spmm: store: must be a directory .* got int"):
        ops.tune_spmm(A, X, store=3)
    with pytest.raises(sparsetir.ArgumentError, match="tune_spmm: retune: must be True or False, got 'yes'"):
        ops.tune_spmm(A, X, store=tmp_path, retune="yes")
    with pytest.raises(sparsetir.ArgumentError, match="tune_spmm: X: expected 90 rows"):
        ops.tune_spmm(A, np.ones((89, 4), np.float32), store=tmp_path)
    with pytest.raises(sparsetir.ArgumentError, match="tune_spmm: A: expected a scipy.sparse CSR matrix"):
        ops.tune_spmm(A.tocoo(), X, store=tmp_path)
    with pytest.raises(sparsetir.ArgumentError, match="'tuned' is decided by a trial: pass format='tuned'"):
        ops.spmm(A, X, format=SpmmFormat("tuned"))
    with pytest.raises(sparsetir.ArgumentError, match="format must be one of .*'auto', 'tuned' or an ops.SpmmFormat"):
        ops.spmm(A, X, format="tune")
