"""The op a model runs between its sparse ops: run untimed before every timed call by default.

In a GNN layer a dense transform comes before every sparse product (``A @ (H @ W)``), so the
bench runs one before every timed call of every implementation: the case's dense operand (its
first ``INTERLEAVE_WIDTH`` columns) times a small square weight, in torch when it is installed
(as ``../shared/probes/interleave.py`` does), else in NumPy. Any parallel torch op leaves
torch's OpenMP threads spinning for a while; a small one is enough to show what that does to
the next call, and keeps the run short at width 512.
"""

from __future__ import annotations

from types import ModuleType
from typing import Optional

import numpy as np

from .kernels import Case
from .timing import Interleave

# The most columns of the case's dense operand the op multiplies (W is at most this square).
INTERLEAVE_WIDTH = 32
# The seed of W, and of the stand-in operand of kernels without one.
SEED = 1


def describe(torch: Optional[ModuleType]) -> str:
    """The op, in words, for the report."""
    library = "torch" if torch is not None else "NumPy (no torch)"
    return (
        f"{library} X @ W (X: the case's dense operand, at most {INTERLEAVE_WIDTH} columns "
        "of it; W: a random k x k weight)"
    )


def between_op(case: Case, torch: Optional[ModuleType]) -> Interleave:
    """The op run before every timed call of ``case``: with torch, or NumPy when it is None."""
    # SpMV and softmax have no dense operand: the node features of the layer around them.
    return dense_op(case.features, case.matrix.shape[0], torch)


def dense_op(features: Optional[np.ndarray], rows: int, torch: Optional[ModuleType]) -> Interleave:
    """X @ W, X the first ``INTERLEAVE_WIDTH`` columns of the 2-D ``features`` (random, of
    ``rows`` rows, when None) and W a random square weight: with torch, or NumPy when it is None."""
    rng = np.random.default_rng(SEED)
    if features is None:
        features = rng.standard_normal((rows, INTERLEAVE_WIDTH), dtype=np.float32)
    k = min(features.shape[1], INTERLEAVE_WIDTH)
    x = np.ascontiguousarray(features[:, :k])
    w = rng.standard_normal((k, k), dtype=np.float32)
    shape = f"{x.shape[0]}x{k} @ {k}x{k}"
    if torch is None:
        return Interleave(f"numpy X @ W ({shape})", lambda: x @ w)
    x_t, w_t = torch.from_numpy(x), torch.from_numpy(w)
    return Interleave(f"torch X @ W ({shape})", lambda: x_t @ w_t)
