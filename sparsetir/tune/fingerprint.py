"""What ``sparsetir.tune`` remembers about a call's matrix: its sizes and row-length distribution.

The best choices depend on the matrix as much as on the program: the number of rows decides
whether more chunks per thread pay off, the row lengths whether prefetching the gathered rows
does. A *fingerprint* is the call's integer scalars (rows, columns, nnz; the widths are keyed
apart) and, for every indptr among the arguments, its rows, nonzeros and a histogram of row
lengths in powers of two (bucket 0: empty rows; bucket b: lengths in ``[2**(b-1), 2**b)``).

Equal fingerprints are the same tuning problem (the database's exact key). For matrices never
tuned, ``distance`` compares normalized features, so a nearest neighbour can be found: sizes
on a log2 scale (a distance of 1 is a factor of 2), row-length histograms as fractions of the
rows (total variation, weighted by ``HISTOGRAM_WEIGHT``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ArgumentError
from ..runtime.arrays import inspect_array, is_array

#: Weight of the row-length distribution against sizes: two matrices whose rows have nothing
#: in common (total variation 2) are as far apart as a factor of 16 in size.
HISTOGRAM_WEIGHT = 2.0


@dataclass(frozen=True)
class RowLengths:
    """One indptr argument: its rows, its nonzeros and its histogram of row lengths."""

    name: str
    rows: int
    nnz: int
    histogram: tuple[int, ...]  # rows per power-of-two bucket of lengths, no trailing zeros

    @property
    def longest(self) -> int:
        """An upper bound of the longest row: the top of its bucket."""
        return (1 << (len(self.histogram) - 1)) if len(self.histogram) > 1 else 0


@dataclass(frozen=True)
class Fingerprint:
    """A call's matrix as the tuner sees it (see the module docs)."""

    scalars: tuple[tuple[str, int], ...]
    indptrs: tuple[RowLengths, ...]

    def as_attrs(self) -> dict:
        """The fingerprint as the tuning workload's attribute (plain ints, strings, maps)."""
        return {
            "scalars": dict(self.scalars),
            "indptrs": {r.name: {"rows": r.rows, "nnz": r.nnz, "histogram": list(r.histogram)} for r in self.indptrs},
        }

    @classmethod
    def from_attrs(cls, attrs: Any) -> "Fingerprint":
        """The fingerprint ``as_attrs`` wrote (read back from a TVM map)."""
        scalars = tuple(sorted((str(k), int(v)) for k, v in attrs["scalars"].items()))
        indptrs = tuple(sorted(
            (RowLengths(str(name), int(r["rows"]), int(r["nnz"]), tuple(int(x) for x in r["histogram"]))
             for name, r in attrs["indptrs"].items()), key=lambda r: r.name))
        return cls(scalars, indptrs)

    def comparable(self, other: "Fingerprint") -> bool:
        """Whether ``distance`` applies: the same scalar and indptr names."""
        return [n for n, _ in self.scalars] == [n for n, _ in other.scalars] and \
            [r.name for r in self.indptrs] == [r.name for r in other.indptrs]

    def distance(self, other: "Fingerprint") -> float:
        """How different two comparable matrices are, over the normalized features."""
        sizes = [(a, b) for (_, a), (_, b) in zip(self.scalars, other.scalars)]
        spread = 0.0
        for a, b in zip(self.indptrs, other.indptrs):
            sizes += [(a.rows, b.rows), (a.nnz, b.nnz), (a.longest, b.longest)]
            spread += _total_variation(a, b)
        logs = sum((math.log2(1 + a) - math.log2(1 + b)) ** 2 for a, b in sizes)
        return math.sqrt(logs) + HISTOGRAM_WEIGHT * spread


def fingerprint(values: Mapping[str, Any], indptrs: Sequence[str], widths: Sequence[str]) -> Fingerprint:
    """The fingerprint of a call's arguments (by name): its integer scalars but ``widths``, and
    the row lengths of the arrays named in ``indptrs``."""
    scalars = []
    for name, value in values.items():
        if name in widths or is_array(value) or isinstance(value, (bool, np.bool_)):
            continue
        if isinstance(value, (int, np.integer)):
            scalars.append((name, int(value)))
    return Fingerprint(tuple(sorted(scalars)), tuple(sorted((row_lengths(n, values[n]) for n in indptrs),
                                                            key=lambda r: r.name)))


def row_lengths(name: str, indptr: Any) -> RowLengths:
    """The rows, nonzeros and row-length histogram of one indptr argument."""
    if not is_array(indptr):
        raise ArgumentError(f"{name} must be an indptr array, got {type(indptr).__name__}")
    ptr = inspect_array(indptr).host_array()
    if ptr.ndim != 1 or ptr.size == 0 or ptr.dtype.kind not in "iu":
        raise ArgumentError(f"{name} must be a non-empty 1-D integer array (an indptr), "
                            f"got {ptr.ndim}-D {ptr.dtype} of {ptr.size} entries")
    lengths = np.diff(ptr.astype(np.int64))
    if lengths.size and lengths.min() < 0:
        raise ArgumentError(f"{name} is not an indptr: it decreases after row {int(np.argmax(lengths < 0))}")
    buckets = np.frexp(lengths.astype(np.float64))[1]  # 0 for 0, b for lengths in [2**(b-1), 2**b)
    histogram = np.bincount(buckets) if buckets.size else np.zeros(0, np.int64)
    histogram = np.trim_zeros(histogram, "b")
    return RowLengths(name, int(lengths.size), int(ptr[-1] - ptr[0]), tuple(int(x) for x in histogram))


def _total_variation(a: RowLengths, b: RowLengths) -> float:
    size = max(len(a.histogram), len(b.histogram))
    pa, pb = _fractions(a, size), _fractions(b, size)
    return float(np.abs(pa - pb).sum())


def _fractions(r: RowLengths, size: int) -> np.ndarray:
    counts = np.zeros(size)
    counts[:len(r.histogram)] = r.histogram
    return counts / counts.sum() if counts.sum() else counts
