"""What converting a CSR matrix to each ``sparsetir.formats`` format costs, next to SciPy.

    python bench/conversions.py [--matrices cora pubmed ...] [--runs 5] [--json out.json]

For each matrix (default: the bundled ones and those of ../shared/data that are present), times
every conversion from canonical CSR (median of ``--runs``), the ``values()`` refresh that runs per
call when only the values change, SciPy's own ``tocsc`` and ``tobsr`` where they exist (``tobsr``
on the matrix padded with empty rows and columns to a multiple of the block size, as SciPy
requires; SciPy leaves the blocks of a block row in the order it met them, so ``tobsr`` followed
by the ``sort_indices()`` that gives our sorted blocks is timed too), and one SciPy SpMM with 32
columns. Columns: our time, SciPy's, ours / SciPy, ours / SpMM (how many SpMM calls the
conversion costs, so how many it takes to amortize it), then the same for ``values()``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Callable, Optional

import numpy as np
import scipy.sparse as sp

from sparsetir import data
from sparsetir import formats as F

BUNDLED = ("cora", "citeseer", "pubmed")
WIDTHS = (1, 2, 4, 8, 16, 32)


def median_ms(fn: Callable[[], object], runs: int) -> float:
    """Median wall time of ``fn()`` in milliseconds, after one warm-up call."""
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def padded_to(A: sp.csr_matrix, b: int) -> sp.csr_matrix:
    """``A`` with empty rows and columns appended up to multiples of ``b`` (what SciPy needs)."""
    m, n = A.shape
    mp, np_ = -(-m // b) * b, -(-n // b) * b
    indptr = np.concatenate([A.indptr, np.full(mp - m, A.indptr[-1], A.indptr.dtype)])
    return sp.csr_matrix((A.data, A.indices, indptr), shape=(mp, np_))


def scipy_sorted_bsr(A: sp.csr_matrix, b: int) -> Callable[[], object]:
    def convert():
        B = A.tobsr((b, b))
        B.sort_indices()
        return B

    return convert


def cases(A: sp.csr_matrix) -> list[tuple[str, Callable, Optional[Callable], Optional[Callable]]]:
    """(name, our conversion (None: the previous row's), SciPy's or None, our values() refresh
    or None)."""
    out = []

    def add(name, ours, theirs=None, refresh=True):
        fmt = ours()
        out.append((name, ours, theirs, (lambda: fmt.values(A.data)) if refresh else None))
        return fmt

    add("canonical (Csr)", lambda: F.canonical(A), lambda: A.copy().sum_duplicates(), refresh=False)
    add("Csc", lambda: F.Csc.from_csr(A), A.tocsc)
    add("Dcsr", lambda: F.Dcsr.from_csr(A), refresh=False)
    add("Csf (2 levels)", lambda: F.Csf.from_csr(A), refresh=False)
    for b in (2, 4, 8):
        padded = padded_to(A, b)
        add(f"Bsr {b}x{b}", lambda b=b: F.Bsr.from_csr(A, (b, b)), lambda b=b, padded=padded: padded.tobsr((b, b)))
        # The same conversion of ours, against SciPy's blocks sorted as ours are.
        out.append(("  vs SciPy + sort_indices", None, scipy_sorted_bsr(padded, b), None))
    add("bsr.decompose (32,16,4)", lambda: F.bsr.decompose(A, (32, 16, 4)), refresh=False)
    add("Ell 32", lambda: F.Ell.from_csr(A, 32))
    add("PaddedCsr 8", lambda: F.PaddedCsr.from_csr(A, 8))
    add("Hybrid 1 x (1..32)", lambda: F.Hybrid.from_csr(A, 1, WIDTHS))
    add("Hybrid 4 x (1..32)", lambda: F.Hybrid.from_csr(A, 4, WIDTHS))
    add("stats", lambda: F.stats(A), refresh=False)
    return out


def bench(name: str, A: sp.csr_matrix, runs: int) -> list[dict]:
    X = np.ones((A.shape[1], 32), A.dtype)
    spmm = median_ms(lambda: A @ X, runs)
    rows = []
    for label, ours, theirs, refresh in cases(A):
        ours_ms = median_ms(ours, runs) if ours else rows[-1]["ours_ms"]
        theirs_ms = median_ms(theirs, runs) if theirs else None
        refresh_ms = median_ms(refresh, runs) if refresh else None
        rows.append(dict(matrix=name, conversion=label, ours_ms=ours_ms, scipy_ms=theirs_ms, values_ms=refresh_ms,
                         spmm_ms=spmm))
    return rows


def print_table(name: str, A: sp.csr_matrix, rows: list[dict]) -> None:
    spmm = rows[0]["spmm_ms"]
    print(f"\n{name}: {A.shape[0]} x {A.shape[1]}, {A.nnz} nnz; SciPy SpMM (32 columns) {spmm:.2f} ms")
    print(f"  {'conversion':<26}{'ours ms':>9}{'SciPy ms':>10}{'ours/SciPy':>11}{'/ SpMM':>8}{'values() ms':>13}"
          f"{'/ SpMM':>8}")
    for r in rows:
        theirs = f"{r['scipy_ms']:10.2f}{r['ours_ms'] / r['scipy_ms']:11.2f}" if r["scipy_ms"] else f"{'-':>10}{'-':>11}"
        values = (f"{r['values_ms']:13.2f}{r['values_ms'] / spmm:8.2f}" if r["values_ms"] is not None
                  else f"{'-':>13}{'-':>8}")
        print(f"  {r['conversion']:<26}{r['ours_ms']:9.2f}{theirs}{r['ours_ms'] / spmm:8.2f}{values}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrices", nargs="+", help="matrix names (sparsetir.data) or .npz paths")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement (median)")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    names = args.matrices or [n for n in data.available() if n in BUNDLED] + [
        n for n in data.available() if n not in BUNDLED]
    results = []
    for name in names:
        A = data.load_file(name) if name.endswith(".npz") else data.load(name)
        rows = bench(name, A, args.runs)
        print_table(name, A, rows)
        results += rows
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
