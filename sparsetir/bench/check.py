"""Checking a timed call's answer against the float64 reference, with a message that says where.

A float32 kernel may reorder its sums, so each value is compared within ``rtol`` of its
*magnitude* (the sum of the absolute values of its terms), the scale its rounding error grows
with; a relative test against the value itself would fail wherever terms cancel.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .kernels import Case, Impl, WrongShape

RTOL = 1e-4


def mismatch(case: Case, impl: Impl, output: Any, rtol: float = RTOL) -> Optional[str]:
    """Why ``output`` of ``impl`` is not the answer of ``case``, or None when it is."""
    try:
        got = np.asarray(impl.values(output))
    except WrongShape as err:
        return str(err)
    except Exception as err:  # a result we cannot even read is a wrong result
        return f"unreadable result ({type(err).__name__}: {err})"
    expected = case.expected
    if got.shape != expected.shape:
        return f"result has shape {got.shape}, expected {expected.shape}"
    if not np.issubdtype(got.dtype, np.floating):
        return f"result has dtype {got.dtype}, expected float32"
    error = np.abs(got.astype(np.float64) - expected)
    allowed = rtol * case.magnitude + np.finfo(np.float32).tiny
    bad = ~(error <= allowed)  # NaN counts as bad
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    worst = int(np.argmax(np.where(bad, np.nan_to_num(error / allowed, nan=np.inf), -1.0)))
    at = case.locate(worst)
    return (
        f"{count} of {expected.size} values differ from SciPy; worst at {list(at)}: "
        f"got {got.flat[worst]:.6g}, expected {expected.flat[worst]:.6g} "
        f"(|error| {error.flat[worst]:.3g} > {rtol:g} x magnitude {case.magnitude.flat[worst]:.3g})"
    )
