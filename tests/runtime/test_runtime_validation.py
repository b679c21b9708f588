"""Malformed calls raise ArgumentError naming the argument and position, and never crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sparsetir._tvm import Var, tirx
from sparsetir.errors import ArgumentError, LoweringError
from sparsetir.ir.axis import make_axis
from sparsetir.runtime import IndicesConstraint, IndptrConstraint, build_stage3, constraints_from_axes
from sparsetir.runtime.structure import check_indices, check_indptr
from malformed import CASES, base_arguments
from matrices import csrmm_arguments, random_csr
from stage3_kernels import csr_axes, csrmm, dcsr_axes, dcsrmm

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_call_is_an_argument_error(csr_kernel, case):
    args, kwargs, expected = case.make(base_arguments())
    with pytest.raises(ArgumentError) as info:
        csr_kernel(*args, **kwargs)
    for part in expected:
        assert part in str(info.value)


def test_a_failed_call_writes_nothing(csr_kernel):
    args, kwargs, _ = CASES[0].make(base_arguments())
    with pytest.raises(ArgumentError):
        csr_kernel(*args, **kwargs)
    assert np.isnan(kwargs["c"]).all()


_BUILDS = {
    "build_stage3": "build_stage3(csrmm, constraints_from_axes(csr_axes(), set()))",
    # the same kernel from the example script, its checks derived by sparsetir.build
    "sparsetir.build": "sparsetir.build(sparsetir.parse_file(EXAMPLE))",
}

_CHILD = """
import json
import sparsetir
from malformed import CASES, base_arguments
from sparsetir.errors import ArgumentError
from sparsetir.runtime import build_stage3, constraints_from_axes
from stage3_kernels import csr_axes, csrmm

EXAMPLE = {example!r}
kernel = {build}
messages = {{}}
for case in CASES:
    args, kwargs, _ = case.make(base_arguments())
    try:
        kernel(*args, **kwargs)
        messages[case.id] = None
    except ArgumentError as err:
        messages[case.id] = str(err)
print(json.dumps(messages))
"""


@pytest.mark.parametrize("build", sorted(_BUILDS))
def test_malformed_calls_in_a_child_process_end_cleanly(build):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HERE), env.get("PYTHONPATH", "")])
    child = _CHILD.format(example=str(ROOT / "examples" / "csr_spmm.py"), build=_BUILDS[build])
    result = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, f"exit {result.returncode} (negative = signal)\n{result.stderr[-3000:]}"
    messages = json.loads(result.stdout.strip().splitlines()[-1])
    for case in CASES:
        _, _, expected = case.make(base_arguments())
        assert messages[case.id] is not None, f"{case.id}: no error"
        for part in expected:
            if build == "sparsetir.build":
                part = part.replace("csrmm()", "csr_spmm()")  # the example's function name
            assert part in messages[case.id], case.id


def test_binary_search_axes_need_strictly_increasing_rows():
    kernel = build_stage3(csrmm, constraints_from_axes(csr_axes(), {"J"}))
    args = csrmm_arguments(random_csr(20, 15, 0.3, seed=12), feat=2)
    kernel(**args)
    row = int(np.flatnonzero(np.diff(args["indptr"]) >= 2)[0])
    k = int(args["indptr"][row]) + 1
    args["indices"][k] = args["indices"][k - 1]
    with pytest.raises(ArgumentError) as info:
        kernel(**args)
    assert str(info.value) == (
        f"argument 'indices': not strictly increasing within row {row} at position {k} "
        f"(indices[{k - 1}]={args['indices'][k - 1]} >= indices[{k}]={args['indices'][k]}); "
        "axis J must be sorted"
    )


def _dcsr_arguments() -> dict:
    return {
        "a": np.ones(3, np.float32),
        "b": np.ones((6, 2), np.float32),
        "c": np.zeros((5, 2), np.float32),
        "indptr_i": np.array([0, 2], np.int32),
        "indices_i": np.array([1, 4], np.int32),
        "indptr_j": np.array([0, 1, 3], np.int32),
        "indices_j": np.array([5, 0, 2], np.int32),
        "m": 5, "n": 6, "feat_size": 2, "nnz_i": 2, "nnz_j": 3,
    }


_DCSR_CASES = [
    (
        {"indices_i": np.array([1, 5], np.int32)},
        "argument 'indices_i': out of range at position 1 (indices_i[1]=5, expected 0 <= value < m = 5)",
    ),
    (
        {"indptr_j": np.array([0, 2, 1], np.int32)},
        "argument 'indptr_j': not non-decreasing at position 1 (indptr_j[1]=2 > indptr_j[2]=1)",
    ),
    (
        {"indptr_j": np.array([0, 1, 2], np.int32)},
        "argument 'indptr_j': ends at indptr_j[2]=2, expected nnz_j = 3",
    ),
    (
        {"indptr_i": np.array([0, 1], np.int32)},
        "argument 'indptr_i': ends at indptr_i[1]=1, expected nnz_i = 2",
    ),
    (
        {"indices_j": np.array([5, 0, 6], np.int32)},
        "argument 'indices_j': out of range at position 2 (indices_j[2]=6, expected 0 <= value < n = 6)",
    ),
]


@pytest.mark.parametrize("change, message", _DCSR_CASES)
def test_nested_dcsr_structure(change, message):
    kernel = build_stage3(dcsrmm, constraints_from_axes(dcsr_axes(), set()))
    kernel(**_dcsr_arguments())
    with pytest.raises(ArgumentError) as info:
        kernel(**{**_dcsr_arguments(), **change})
    assert str(info.value) == message


def test_sparse_fixed_rows_are_checked_by_width():
    m, n, k = Var("m", "int32"), Var("n", "int32"), Var("k", "int32")
    c = IndicesConstraint("cols", "J", positions=(m, k), length=n, sorted=True, row_width=k)
    env = {"m": 2, "n": 5, "k": 3}
    check_indices(c, {"cols": np.array([0, 2, 4, 0, 1, 3])}, env)
    with pytest.raises(ArgumentError, match=r"within row 1 at position 4 \(cols\[3\]=1 >= cols\[4\]=1\)"):
        check_indices(c, {"cols": np.array([0, 2, 4, 1, 1, 3])}, env)
    with pytest.raises(ArgumentError, match=r"argument 'cols': has 5 entries, expected m \* k = 6"):
        check_indices(c, {"cols": np.array([0, 2, 4, 1, 3])}, env)


def test_dense_variable_rows_are_bounded_by_the_axis_length():
    m, n, nnz = Var("m", "int32"), Var("n", "int32"), Var("nnz", "int32")
    c = IndptrConstraint("ptr", "J", rows=(m,), nnz=nnz, max_row_length=n)
    env = {"m": 3, "n": 2, "nnz": 4}
    check_indptr(c, {"ptr": np.array([0, 2, 2, 4])}, env)
    with pytest.raises(ArgumentError, match=r"row 1 has 3 entries .* more than the length of axis J \(n = 2\)"):
        check_indptr(c, {"ptr": np.array([0, 1, 4, 4])}, env)


def test_indptr_comparisons_do_not_overflow_int32():
    c = IndptrConstraint("ptr", "J", rows=(tirx.IntImm("int32", 2),))
    big = np.array([0, 2**31 - 1, -(2**31)], np.int32)
    with pytest.raises(ArgumentError, match="not non-decreasing at position 1"):
        check_indptr(c, {"ptr": big}, {})


def test_constraints_must_name_index_array_parameters():
    i, j = csr_axes()
    row_ptr = Var("row_ptr", "handle")
    renamed = make_axis("J", j.kind, i, length=j.length, nnz=j.nnz, indptr=row_ptr, indices=j.indices)
    with pytest.raises(LoweringError, match="'row_ptr', which is not an array parameter"):
        build_stage3(csrmm, constraints_from_axes([renamed], set()))


def test_constraint_sizes_must_be_integer_arguments():
    i, j = csr_axes()
    total = Var("total", "int32")
    unbound = make_axis("J", j.kind, i, length=j.length, nnz=total, indptr=j.indptr, indices=j.indices)
    with pytest.raises(LoweringError, match="the constraint on 'indptr' uses total, which no integer argument"):
        build_stage3(csrmm, constraints_from_axes([unbound], set()))
