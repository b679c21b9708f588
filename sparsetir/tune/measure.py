"""Running candidate kernels on the user's own arguments, as the user calls them.

MetaSchedule's runner times a compiled module on random inputs; a sparse kernel's structure
arrays (indptr, indices) cannot be random, and its speed depends on the very matrix. So a
``Bench`` holds the user's arguments with private copies of the outputs (the kernel writes
those in place; the user's arrays are never written) and calls each candidate through its
``SpecializedKernel``, with the argument checks and row partitions of a real call.

``check`` runs a candidate once from the user's output contents (the first call also compiles
its variant) and compares what it wrote with the default's result; ``time`` runs it ``calls``
times back to back and returns the fastest call.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import numpy as np

from ..runtime.arrays import inspect_array, is_array

#: Results may differ from the default's by float reassociation (vector lanes, chunked rows).
RTOL = 1e-4
#: ... and by this fraction of the largest magnitude in the default's result.
ATOL_SCALE = 1e-5


class Bench:
    """The user's arguments (in parameter order) with private copies of the outputs."""

    def __init__(self, params: Sequence[str], outputs: Sequence[str], values: Sequence[Any]):
        self.outputs = [params.index(name) for name in outputs]
        self._originals = [values[i] for i in self.outputs]
        self._scratch = [_copy(v) for v in self._originals]
        self.args = list(values)
        for i, copy in zip(self.outputs, self._scratch):
            self.args[i] = copy
        self.reference: Optional[list[np.ndarray]] = None

    def check(self, kernel: Any) -> Optional[str]:
        """Run ``kernel`` once from the user's output contents; None when it wrote what the
        reference did (the first kernel checked *is* the reference), else what differs."""
        for copy, original in zip(self._scratch, self._originals):
            _assign(copy, original)
        kernel(*self.args)
        results = [np.array(inspect_array(v).host_array(), copy=True) for v in self._scratch]
        if self.reference is None:
            self.reference = results
            return None
        for name_at, got, want in zip(self.outputs, results, self.reference):
            finite = np.abs(want[np.isfinite(want)])
            scale = float(finite.max()) if finite.size else 0.0
            if not np.allclose(got, want, rtol=RTOL, atol=ATOL_SCALE * scale, equal_nan=True):
                worst = float(np.nanmax(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
                return f"its output {kernel.params[name_at]} differs from the default's (by up to {worst:.3g})"
        return None

    def time(self, kernel: Any, calls: int) -> float:
        """The fastest of ``calls`` calls back to back, in seconds: on a shared machine a call
        that another process interrupts takes many times longer, and the fastest is the one
        nothing interrupted."""
        args = self.args
        clock = time.perf_counter
        fastest = float("inf")
        for _ in range(calls):
            start = clock()
            kernel(*args)
            fastest = min(fastest, clock() - start)
        return fastest


def _copy(value: Any) -> Any:
    if not is_array(value):
        return value
    clone = getattr(value, "clone", None)
    if clone is not None and hasattr(value, "data_ptr"):  # torch
        return clone()
    return np.array(inspect_array(value).host_array(), copy=True)


def _assign(target: Any, source: Any) -> None:
    if hasattr(target, "copy_") and hasattr(target, "data_ptr"):  # torch
        target.copy_(source)
    elif isinstance(target, np.ndarray):
        np.copyto(target, inspect_array(source).host_array())
