"""sparsetir.tune's search: results match SciPy, the default is a candidate, wrong candidates are
discarded, the user's arrays are left alone, the budget holds."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

import sparsetir
from sparsetir.schedule.default import Choices
from sparsetir.tune import TuningDatabase, key_of, tuned
from sparsetir.tune.measure import Bench
from sparsetir.tune.search import Search
from tune_cases import sddmm, sddmm_args, sddmm_reference, skewed_csr, spmm, spmm_args


def test_tuned_spmm_matches_scipy_and_leaves_the_arguments_alone(tmp_path):
    a = skewed_csr(1, 300, 200)
    args = spmm_args(a, 16)
    before = {name: np.copy(v) for name, v in args.items() if isinstance(v, np.ndarray)}
    result = tuned(spmm(), args, 1.5, database=tmp_path, progress=False)
    assert result.how == "measured"
    for name, value in before.items():
        np.testing.assert_array_equal(args[name], value, err_msg=f"tune wrote {name}")
    result.kernel(**args)
    np.testing.assert_allclose(args["c"], a @ args["b"], rtol=1e-5, atol=1e-4)


def test_tuned_sddmm_matches_the_reference(tmp_path):
    a = skewed_csr(2, 200, 150)
    args = sddmm_args(a, 32)
    kernel = sparsetir.tune(sddmm(), args, 1.0, database=tmp_path, progress=False)
    assert isinstance(kernel, sparsetir.runtime.specialized.SpecializedKernel)
    np.testing.assert_array_equal(args["y"], 0)
    kernel(**args)
    np.testing.assert_allclose(args["y"], sddmm_reference(a, args), rtol=1e-4, atol=1e-4)


def test_the_default_is_measured_first_and_every_candidate_is_timed_or_explained(tmp_path):
    a = skewed_csr(3, 200, 200)
    result = tuned(spmm(), spmm_args(a, 8), 3.0, database=tmp_path, progress=False)  # room for a cold compile or two
    first = result.trials[0]
    assert first.choices == Choices() and first.ratio == 1.0 and first.seconds > 0
    assert len(result.trials) > 1
    for trial in result.trials:
        assert (trial.ratio is not None) != (trial.error is not None), trial
    if result.choices != Choices():
        chosen = next(t for t in result.trials if t.choices == result.choices)
        assert chosen.ratio < 1.0
    assert len({t.choices for t in result.trials}) == len(result.trials)


def test_sequence_arguments_in_parameter_order(tmp_path):
    a = skewed_csr(4, 120, 90)
    args = spmm_args(a, 8)
    result = tuned(spmm(), list(args.values()), 0.5, database=tmp_path, progress=False)
    result.kernel(**args)
    np.testing.assert_allclose(args["c"], a @ args["b"], rtol=1e-5, atol=1e-4)


def test_torch_outputs_are_copied_too(tmp_path):
    torch = pytest.importorskip("torch")
    a = skewed_csr(5, 150, 100)
    args = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in spmm_args(a, 8).items()}
    args["c"].fill_(7.0)
    result = tuned(spmm(), args, 0.5, database=tmp_path, progress=False)
    assert bool((args["c"] == 7.0).all())
    result.kernel(**args)
    np.testing.assert_allclose(args["c"].numpy(), a @ args["b"].numpy(), rtol=1e-5, atol=1e-4)


def test_budget_is_respected_roughly(tmp_path):
    a = skewed_csr(6, 400, 300)
    start = time.perf_counter()
    result = tuned(spmm(), spmm_args(a, 16), 2.0, database=tmp_path, progress=False)
    elapsed = time.perf_counter() - start
    # The default's own build and first compile come before the budget's checks, and one
    # candidate may finish compiling after the deadline.
    assert elapsed < 2.0 + 3.0, elapsed
    assert len(result.trials) >= 2


class _Wrong:
    """A kernel that computes what ``kernel`` does, then spoils its output."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.params, self.outputs = kernel.params, kernel.outputs

    def __call__(self, *args):
        self._kernel(*args)
        args[self.params.index("c")][0, 0] += 1.0


def test_a_candidate_with_a_wrong_result_is_discarded():
    a = skewed_csr(7, 100, 80)
    f, args = spmm(), spmm_args(a, 8)
    default = sparsetir.build(f)
    bench = Bench(default.params, default.outputs, list(args.values()))
    # Every candidate with max_vectors=4 computes a wrong result; all others are the default's kernel.
    search = Search(lambda c: _Wrong(default) if c.max_vectors == 4 else default, lambda c: c,
                    lambda seed: Choices(max_vectors=4), bench, 1.0)
    winner = search.run()
    spoiled = [c for c in search.candidates if c.choices.max_vectors == 4]
    assert spoiled
    for candidate in spoiled:
        assert "its output c differs from the default's" in candidate.error and not candidate.ratios
    assert winner.choices.max_vectors != 4


def test_the_result_is_committed_with_the_default(tmp_path):
    a = skewed_csr(8, 150, 150)
    args = spmm_args(a, 8)
    result = tuned(spmm(), args, 1.0, database=tmp_path, progress=False)
    found = TuningDatabase(tmp_path).best(key_of(spmm(), args))
    assert found is not None and found.choices == result.choices
    assert found.default_seconds is not None


def test_knobs_that_do_not_change_the_program_stay_at_their_defaults(tmp_path):
    # SpMM streams no rows: streamed_row_bytes never changes its program
    result = tuned(spmm(), spmm_args(skewed_csr(9, 200, 150), 8), 1.5, database=tmp_path, progress=False)
    assert {t.choices.streamed_row_bytes for t in result.trials} == {Choices().streamed_row_bytes}


@pytest.mark.parametrize("installed", [True, False])
def test_the_progress_bar_is_drawn_when_tqdm_is_installed(tmp_path, monkeypatch, capsys, installed):
    if installed:
        pytest.importorskip("tqdm")
    else:
        monkeypatch.setitem(sys.modules, "tqdm", None)
    result = tuned(spmm(), spmm_args(skewed_csr(10, 100, 80), 8), 0.5, database=tmp_path, progress=True)
    assert result.how == "measured"
    assert ("tune csr_spmm" in capsys.readouterr().err) == installed


def test_a_prefetch_distance_is_a_program_of_its_own_only_where_rows_are_prefetched():
    from sparsetir.tune.tuner import _program_keys

    key = _program_keys(spmm(), {"feat_size": 32})
    fetched = [key(Choices(prefetch=0, prefetch_distance=d)) for d in (8, 16, 32)]
    assert len(set(fetched)) == 3  # three kernels: the search measures each
    assert key(Choices(prefetch=0)) == fetched[0]  # 8 is the default distance
    unfetched = {key(Choices(prefetch=-1, prefetch_distance=d)) for d in (8, 16, 32)}
    assert unfetched == {key(Choices(prefetch=-1))}  # nothing fetched: one kernel, measured once
