"""sparsetir.tune refuses bad arguments with a message that names the problem."""

from __future__ import annotations

import numpy as np
import pytest

import sparsetir
from sparsetir.errors import ArgumentError
from sparsetir.tune import tuned
from tune_cases import skewed_csr, spmm, spmm_args


@pytest.fixture(scope="module")
def args():
    return spmm_args(skewed_csr(40, 50, 40), 8)


def test_a_missing_parameter_is_named(args, tmp_path):
    partial = {k: v for k, v in args.items() if k != "nnz"}
    with pytest.raises(ArgumentError, match="missing a required argument: 'nnz'"):
        tuned(spmm(), partial, 0, database=tmp_path)


def test_an_unknown_parameter_is_named_with_the_real_ones(args, tmp_path):
    with pytest.raises(ArgumentError, match=r"no parameter 'k' \(its parameters: a, b, c, indptr"):
        tuned(spmm(), {**args, "k": 3}, 0, database=tmp_path)


def test_example_args_must_be_a_dict_or_a_sequence(tmp_path):
    with pytest.raises(ArgumentError, match="example_args must be a dict by parameter name or a sequence"):
        tuned(spmm(), 42, 0, database=tmp_path)


def test_an_indptr_that_is_not_an_array_is_named(args, tmp_path):
    with pytest.raises(ArgumentError, match="indptr must be an indptr array, got list"):
        tuned(spmm(), {**args, "indptr": list(args["indptr"])}, 0, database=tmp_path)


def test_a_decreasing_indptr_is_refused(args, tmp_path):
    bad = np.array(args["indptr"])
    bad[5], bad[6] = bad[6] + 1, bad[5]
    with pytest.raises(ArgumentError, match="indptr is not an indptr: it decreases"):
        tuned(spmm(), {**args, "indptr": bad}, 0, database=tmp_path)


def test_malformed_structure_is_refused_by_the_kernel_before_anything_is_measured(args, tmp_path):
    bad = np.array(args["indices"])
    bad[0] = 10_000
    with pytest.raises(ArgumentError, match="indices"):
        tuned(spmm(), {**args, "indices": bad}, 1, database=tmp_path, progress=False)
    assert not (tmp_path / "database_tuning_record.json").exists() or \
        (tmp_path / "database_tuning_record.json").read_text() == ""


@pytest.mark.parametrize("budget, error, message", [
    (-1, ValueError, "budget_s must be 0"),
    (float("nan"), ValueError, "budget_s must be 0"),
    ("60", TypeError, "budget_s must be a number of seconds, got str"),
    (True, TypeError, "budget_s must be a number of seconds, got bool"),
])
def test_a_bad_budget_is_refused(args, tmp_path, budget, error, message):
    with pytest.raises(error, match=message):
        tuned(spmm(), args, budget, database=tmp_path)


def test_only_unscheduled_programs_are_tuned(args, tmp_path):
    sch = sparsetir.Schedule(spmm())
    sch.lower_sparse_iter()
    sch.partition_rows("csr_spmm0", parallel=True)
    with pytest.raises(ValueError, match="is scheduled already"):
        tuned(sch.func, args, 0, database=tmp_path)
    with pytest.raises(TypeError, match="expects a stage-I SparseFunction"):
        tuned(sparsetir.build(spmm(), schedule="none").func, args, 0, database=tmp_path)


def test_gpu_targets_are_refused(args, tmp_path):
    with pytest.raises(ValueError, match="measures CPU kernels"):
        tuned(spmm(), args, 0, database=tmp_path, target="cuda")


def test_a_bad_database_is_refused(args):
    with pytest.raises(TypeError, match="database must be a directory"):
        tuned(spmm(), args, 0, database=42)
