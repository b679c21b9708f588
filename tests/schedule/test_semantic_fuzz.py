"""The semantic fuzzer's CI budget: random scripts built with the default CPU schedule, under a
random tuning choice and with the default GPU schedule (simulated on the CPU) compute what they
compute built as written, and what NumPy computes (``fuzz/semantic.py``).

The seed is the fuzz budget's (``fuzz_seed`` in ``tests/conftest.py``: the UTC day, or
``--fuzz-seed N``), so each day's CI tries new programs and a failure names the seed to rerun.
The longer run is ``python -m fuzz.semantic --count 300 --seed 2``.

Besides the budget, the oracle itself is checked: the NumPy evaluation agrees with SciPy on the
README's SpMM and SDDMM shapes, and a wrong kernel is reported as a mismatch.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from fuzz import semantic  # noqa: E402

#: Scripts per CI run: about 3 s each on 2 cores (four builds; every width called compiles a variant).
BUDGET = 12


def test_the_budget_finds_nothing(fuzz_seed):
    summary = semantic.run(BUDGET, fuzz_seed, quiet=True)
    assert summary.scripts == BUDGET
    report = "\n".join(f"--- {f.kind} ({f.case}):\n{f.script}{f.detail}" for f in summary.findings)
    assert not summary.findings, f"seed {fuzz_seed} (rerun: python -m fuzz.semantic --seed {fuzz_seed} " \
                                 f"--count {BUDGET}):\n{report}"


def _script(shape: tuple[str, str, str], expr: str, reduce: str = "+") -> semantic.Script:
    axes, kinds, out_axes = shape
    buffers = [semantic.Buffer("A", "IJ"), semantic.Buffer("X", "IK"), semantic.Buffer("Y", "DK")]
    out = semantic.Buffer("O0", out_axes, output=True)
    iterations = [semantic.Iteration("it0", axes, kinds, out, expr, reduce)]
    text = semantic._text("float64", buffers + [out], iterations, True)
    return semantic.Script(text, "float64", buffers + [out], iterations, True)


def _csr(rng: np.random.Generator) -> sp.csr_matrix:
    a = sp.random(9, 7, density=0.4, format="lil", random_state=np.random.RandomState(3))
    a[4, :] = 0  # an empty row
    a = a.tocsr()
    a.eliminate_zeros()
    return a


def test_the_numpy_oracle_agrees_with_scipy():
    rng = np.random.default_rng(0)
    a = _csr(rng)
    spmm = _script(("IJK", "SRS", "IK"), "A[i, j] * Y[j, k]")
    args = semantic.arguments(spmm, a, 5, rng)
    pattern = sp.csr_matrix((args["a"], args["indices"], args["indptr"]), shape=a.shape)
    np.testing.assert_allclose(semantic.evaluate(spmm, a, 5, args)["o0"], pattern @ args["y"])
    sddmm = _script(("IJK", "SSR", "IJ"), "X[i, k] * Y[j, k]")
    args = semantic.arguments(sddmm, a, 5, rng)
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    expected = np.einsum("ek,ek->e", args["x"][rows], args["y"][a.indices])
    np.testing.assert_allclose(semantic.evaluate(sddmm, a, 5, args)["o0"], expected)


def test_a_wrong_result_is_a_finding(monkeypatch):
    # The NumPy evaluation made wrong on purpose: the check must report both builds as wrong.
    script = _script(("IJK", "SRS", "IK"), "A[i, j] * Y[j, k]")
    real = semantic.evaluate

    def off_by_one(*args):
        return {k: v + 1 for k, v in real(*args).items()}

    monkeypatch.setattr(semantic, "evaluate", off_by_one)
    found = semantic.check(script, np.random.default_rng(1), cases=1)
    assert [f.kind for f in found] == ["reference_mismatch"]


def test_scripts_are_deterministic_in_the_seed():
    first = [semantic.generate(random.Random(7)).text for _ in range(3)]
    assert first == [semantic.generate(random.Random(7)).text for _ in range(3)]
    assert len({semantic.generate(random.Random(s)).text for s in range(20)}) > 15


def test_the_comparison_is_not_widened_by_infinities_or_the_lowest_value():
    lowest = np.finfo(np.float32).min  # a max over no entries
    y = np.array([1.0, 2.0, lowest, np.inf], np.float32)
    assert semantic._close(y.copy(), y, "float32")
    assert not semantic._close(np.array([1.0, 3.0, lowest, np.inf], np.float32), y, "float32")
    assert not semantic._close(np.array([1.0, 2.0, lowest, 5.0], np.float32), y, "float32")
    assert not semantic._close(np.array([1, 2], np.int32), np.array([1, 3], np.int32), "int32")


def test_bsr_scripts_index_rows_and_columns_through_their_blocks():
    rng = random.Random(0)
    script = next(s for s in (semantic.generate(rng) for _ in range(200)) if s.format == "bsr3")
    assert "II = T.dense_fixed(3)" in script.text and "JO = T.sparse_variable(IO" in script.text
    a = next(m for m in (semantic.matrix(np.random.default_rng(k), "bsr3") for k in range(50)) if m.nnz and m.shape[0] > 3)
    a.data[:] = np.random.default_rng(1).standard_normal(a.data.shape)
    rows, cols = semantic._entries(a)
    dense = np.zeros(a.shape)
    dense[rows, cols] = a.data.ravel()  # the stored order is the values' order
    np.testing.assert_array_equal(dense, a.toarray())
