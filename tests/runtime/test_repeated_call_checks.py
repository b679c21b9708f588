"""A kernel called again with the same index arrays still sees what was edited in them in place.

From the second call with the same structure arrays on, their checks run as one compiled plan
(``native_checks.Plan``); these tests edit the arrays in place between calls, as a careless
user (or a bug) would, and expect the same errors, naming the same positions, as a first call.
"""

from __future__ import annotations

import numpy as np
import pytest

from sparsetir.errors import ArgumentError
from sparsetir.runtime import build_stage3, constraints_from_axes
from sparsetir.runtime.native_checks import Plan
from sparsetir.runtime.structure import in_range
from malformed import CASES, base_arguments
from matrices import csrmm_arguments, expected_product, random_csr
from stage3_kernels import csr_axes, csrmm

#: The malformed cases that change an index array's contents but not its shape or dtype.
IN_PLACE = [c for c in CASES if c.id in ("indptr-decreasing", "indptr-end", "indptr-start", "index-too-big",
                                         "index-negative")]


def _changed_array(case) -> tuple[str, np.ndarray, list[str]]:
    base = base_arguments()
    _, kwargs, expected = case.make(base)
    (name,) = [k for k in ("indptr", "indices") if not np.array_equal(kwargs[k], base[k])]
    return name, kwargs[name], expected


@pytest.mark.parametrize("fresh_dense", [False, True], ids=["same-arrays", "new-dense-operand"])
@pytest.mark.parametrize("case", IN_PLACE, ids=[c.id for c in IN_PLACE])
def test_an_index_array_edited_in_place_is_caught(csr_kernel, case, fresh_dense):
    args = base_arguments()
    for _ in range(3):  # the second call builds the plan, the third runs it
        if fresh_dense:
            args["b"] = args["b"].copy()
        csr_kernel(**args)
    np.testing.assert_allclose(args["c"], expected_product(args), rtol=1e-5, atol=1e-5)
    assert isinstance(csr_kernel._validator._plan, Plan)  # the path under test
    name, broken, expected = _changed_array(case)
    saved = args[name].copy()
    args[name][:] = broken  # in place: the very array object of the last calls
    if fresh_dense:
        args["b"] = args["b"].copy()
    with pytest.raises(ArgumentError) as info:
        csr_kernel(**args)
    for part in expected:
        assert part in str(info.value)
    args[name][:] = saved
    args["c"][:] = np.nan
    csr_kernel(**args)  # repaired: accepted again, with the right answer
    np.testing.assert_allclose(args["c"], expected_product(args), rtol=1e-5, atol=1e-5)


def test_sorted_rows_edited_in_place_are_caught():
    kernel = build_stage3(csrmm, constraints_from_axes(csr_axes(), {"J"}))
    args = csrmm_arguments(random_csr(30, 25, 0.3, seed=21), feat=3)
    for _ in range(3):
        kernel(**args)
    row = int(np.flatnonzero(np.diff(args["indptr"]) >= 2)[-1])
    k = int(args["indptr"][row]) + 1
    saved = args["indices"].copy()
    args["indices"][k] = args["indices"][k - 1]
    with pytest.raises(ArgumentError) as info:
        kernel(**args)
    assert str(info.value) == (
        f"argument 'indices': not strictly increasing within row {row} at position {k} "
        f"(indices[{k - 1}]={args['indices'][k - 1]} >= indices[{k}]={args['indices'][k]}); axis J must be sorted"
    )
    args["indices"][:] = saved
    kernel(**args)
    np.testing.assert_allclose(args["c"], expected_product(args), rtol=1e-5, atol=1e-5)


def test_new_index_arrays_are_checked_whole(csr_kernel):
    """A call with other index arrays than the last (equal shapes and sizes) does not reuse the
    last arrays' plan: its own arrays are checked."""
    args = base_arguments()
    for _ in range(3):
        csr_kernel(**args)
    name, broken, expected = _changed_array(next(c for c in IN_PLACE if c.id == "index-too-big"))
    with pytest.raises(ArgumentError) as info:
        csr_kernel(**{**args, name: broken})
    assert expected[0] in str(info.value)


def test_range_check_of_int32_coordinates_against_a_huge_length():
    """Viewed unsigned, -1 is 2**32 - 1: a length past 2**31 must not let it through."""
    idx = np.array([0, 5, -1], np.int32)
    assert not in_range(idx, 2**33)
    assert in_range(np.array([0, 5, 2**31 - 1], np.int32), 2**33)
    assert not in_range(np.array([3, -(2**62)], np.int64), 2**63 - 1)


def _sorted_by_rows(indices, ptr):
    """The reference: every row of ``ptr`` inside ``indices`` and strictly increasing."""
    if ptr[0] < 0 or ptr[-1] > indices.size or (np.diff(ptr) < 0).any():
        return False
    return all((np.diff(indices[ptr[r]:ptr[r + 1]]) > 0).all() for r in range(ptr.size - 1))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("ptr_dtype", [np.int32, np.int64])
def test_the_compiled_sorted_rows_check_agrees_with_a_row_by_row_check(index_dtype, ptr_dtype):
    # The compiled check counts descents over all entries and takes back those at row starts:
    # random structures (empty rows, rows of one entry, rows that start below where the last
    # one ended) with one corruption each must get the row-by-row verdict.
    from sparsetir.runtime import native_checks

    rng = np.random.default_rng(31)
    verdicts = set()
    for trial in range(400):
        rows = int(rng.integers(1, 12))
        lengths = rng.integers(0, 6, rows) * (rng.random(rows) < 0.8)
        ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(ptr_dtype)
        indices = np.concatenate([np.sort(rng.choice(40, size=l, replace=False)) for l in lengths] + [[]])
        indices = indices.astype(index_dtype)
        kind = trial % 5
        if kind == 1 and indices.size >= 2:  # a repeat or a swap, maybe across a row boundary
            k = int(rng.integers(1, indices.size))
            indices[k] = indices[k - 1] if rng.random() < 0.5 else indices[k - 1] - 1
        elif kind == 2 and rows >= 2:  # a row pointer that decreases
            r = int(rng.integers(1, rows))
            ptr[r] = ptr[r + 1] + 1 if ptr[r + 1] < ptr[-1] else max(int(ptr[r - 1]) - 1, 0)
        elif kind == 3:  # rows reaching past the array
            indices = indices[:max(indices.size - 1, 0)].copy()
        elif kind == 4 and indices.size:  # an entry moved anywhere
            indices[int(rng.integers(indices.size))] = rng.integers(-3, 43)
        expected = _sorted_by_rows(indices, ptr)
        check = native_checks.plan([(native_checks.SORTED_ROWS, indices, indices.size, rows, 0, ptr)])
        assert check is not None
        assert (check.first_failing() == -1) == expected, (ptr, indices)
        verdicts.add(expected)
    assert verdicts == {True, False}
