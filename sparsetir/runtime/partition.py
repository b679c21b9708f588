"""Row partitions computed at call time: the boundaries a ``partition_rows`` loop runs over.

A kernel whose row loop was split into ``P`` chunks (``transforms/partition.py``) takes the chunk
boundaries as an argument. Chunks holding equal work keep the threads of a parallel loop busy
for the same time; a row's work is its stored entries plus one (its output row is written even
when the row is empty).
"""

from __future__ import annotations

import bisect

import numpy as np


def row_partition(indptr: np.ndarray, parts: int) -> np.ndarray:
    """``parts + 1`` row boundaries splitting the rows into chunks of equal nonzeros + rows.

    Each row costs its nonzeros plus one (its output row is written even when it is empty).
    Boundaries are non-decreasing from 0 to the row count whatever ``indptr`` holds.
    """
    m = indptr.shape[0] - 1
    total = int(indptr[-1]) + m
    # Boundary t is the first row k whose cost so far, indptr[k] + k (increasing in k), reaches
    # ceil(total * t / parts). A binary search per boundary: O(parts log m), not O(m).
    part = np.empty(parts + 1, np.int32)
    part[0], part[parts] = 0, m
    low = 0
    for t in range(1, parts):
        goal = -(-total * t // parts)
        low = bisect.bisect_left(range(m + 1), goal, lo=low, key=lambda k: int(indptr[k]) + k)
        part[t] = low
    return part


def uniform_partition(rows: int, parts: int) -> np.ndarray:
    """``parts + 1`` boundaries splitting ``rows`` rows into chunks of (nearly) equal row counts."""
    return (np.arange(parts + 1, dtype=np.int64) * rows // parts).astype(np.int32)
