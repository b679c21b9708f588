"""Row partitions computed at call time: the boundaries a ``partition_rows`` loop runs over.

A kernel whose row loop was split into ``P`` chunks (``transforms/partition.py``) takes the chunk
boundaries as an argument. Chunks holding equal work keep the threads of a parallel loop busy
for the same time; a row's work is its stored entries plus a row cost (its output row is written
even when the row is empty, and its loop's exit is a mispredicted branch).

No static estimate is exact: a row's fixed cost next to an entry's depends on the kernel (an
entry of a row sum is one add, an entry of a width-512 SpMM is 64 vector FMAs). So a call with
enough work is cut into several chunks per thread (``chunk_count``), which the launcher's threads
claim as they finish: a thread whose chunks were underestimated takes fewer. Measured on the
2-core machine (``examples/csr_rowsum.py`` and ``csr_elementwise.py`` over their serial builds,
on soc_slashdot0902 / email_enron): one chunk per thread with a row counted as one entry
1.27x / 1.26x and 1.13x / 1.18x; four chunks per thread with a row counted as four entries
1.73x / 1.97x and 1.62x / 1.75x; the README's SpMM at width 32 gained 3-8% on both, and lost
nothing on cora, whose work is one chunk per thread either way.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np


#: A row's fixed cost in stored entries, for the partitions of kernels ``build`` returns.
ROW_COST = 4
#: The least work (stored entries + ``ROW_COST`` per row) worth a chunk of its own: a chunk
#: costs a claim and a cold start, so a small call keeps one chunk per thread.
CHUNK_WORK = 32_768
#: The most chunks per thread: enough for a thread to even out a misjudged chunk.
MAX_CHUNKS_PER_THREAD = 4


def row_partition(indptr: Any, parts: int, row_cost: int = 1) -> np.ndarray:
    """``parts + 1`` row boundaries splitting the rows into chunks of equal work, a row's work
    being its nonzeros plus ``row_cost`` (its output row is written even when it is empty).
    ``indptr`` may be a pair of row pointers of one length: a row's nonzeros are then its
    entries in both (a merge of two operands), with no summed array made.

    Boundaries are non-decreasing from 0 to the row count whatever ``indptr`` holds.
    """
    if isinstance(indptr, tuple):
        first, second = map(_entries, indptr)
        m = indptr[0].shape[0] - 1
        total = int(first[m]) + int(second[m]) + row_cost * m
        key = lambda k: first[k] + second[k] + row_cost * k  # noqa: E731
    else:
        entries = _entries(indptr)
        m = indptr.shape[0] - 1
        total = int(entries[m]) + row_cost * m
        key = lambda k: entries[k] + row_cost * k  # noqa: E731
    # Boundary t is the first row k whose cost so far (increasing in k) reaches
    # ceil(total * t / parts). A binary search per boundary: O(parts log m), not O(m).
    part = np.empty(parts + 1, np.int32)
    part[0], part[parts] = 0, m
    low = 0
    for t in range(1, parts):
        goal = -(-total * t // parts)
        low = bisect.bisect_left(range(m + 1), goal, lo=low, key=key)
        part[t] = low
    return part


def _entries(indptr: Any) -> Any:
    """The 1-D integer array ``indptr`` indexable by position: a memoryview where the buffer
    allows it (whose entries are Python ints, read in half the time of ``item``)."""
    if isinstance(indptr, np.ndarray) and indptr.dtype.isnative and indptr.ndim == 1:
        return memoryview(indptr)
    return np.asarray(indptr, np.int64)


def chunk_count(work: int, threads: int) -> int:
    """How many chunks a parallel row loop with ``work`` to do (stored entries + ``ROW_COST`` per
    row) is cut into for ``threads`` threads: a multiple of ``threads``, one per thread for a
    small call, up to ``MAX_CHUNKS_PER_THREAD`` per thread of at least ``CHUNK_WORK`` each."""
    per_thread = work // (threads * CHUNK_WORK)
    return threads * max(1, min(MAX_CHUNKS_PER_THREAD, per_thread))


def uniform_partition(rows: int, parts: int) -> np.ndarray:
    """``parts + 1`` boundaries splitting ``rows`` rows into chunks of (nearly) equal row counts."""
    return (np.arange(parts + 1, dtype=np.int64) * rows // parts).astype(np.int32)
