"""Tuned against default: ``python -m sparsetir.tune.bench [--budget S] [--widths 32 128 512] [matrices]``.

For each script (``examples/csr_spmm.py``, ``examples/sddmm.py``), matrix and width, the
choices are tuned from scratch (a fresh database) within the budget, then the tuned kernel and
the default one are timed again, apart from the search, in interleaved rounds: by the fastest
call of each (what the search compares) and by the median of paired rounds. Prints a Markdown
table and the geometric means.
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import data
from ..default_build import build_default
from ..schedule.default import Choices
from ..script import parse_file
from .space import describe
from .tuner import tuned

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MATRICES = ("cora", "pubmed", "email_enron", "soc_slashdot0902", "rgg_n_2_15_s0", "bcsstk16")
ROUNDS = 41


def spmm_args(a, width: int) -> dict:
    m, n = a.shape
    x = np.random.default_rng(0).standard_normal((n, width), dtype=np.float32)
    return dict(a=a.data, b=x, c=np.zeros((m, width), np.float32), indptr=a.indptr, indices=a.indices,
                m=m, n=n, feat_size=width, nnz=a.nnz)


def sddmm_args(a, width: int) -> dict:
    m, n = a.shape
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((m, width), dtype=np.float32)
    xb = rng.standard_normal((n, width), dtype=np.float32)
    return dict(a=xa, b=xb, x=a.data, y=np.zeros(a.nnz, np.float32), indptr=a.indptr, indices=a.indices,
                m=m, n=n, feat_size=width, nnz=a.nnz)


PROGRAMS = {"csr_spmm": ("csr_spmm.py", spmm_args), "sddmm": ("sddmm.py", sddmm_args)}


def compare(default, tuned_kernel, args: dict) -> tuple[float, float]:
    """Default over tuned, timed in ``ROUNDS`` rounds of back-to-back calls of each (the order
    alternating): by the fastest call of all, and the median over rounds of the ratio of the
    two kernels' mean call in that round (paired, so a drift of the machine cancels)."""
    values = list(args.values())
    kernels = [default, tuned_kernel]
    for k in kernels:
        k(*values)
    start = time.perf_counter()
    default(*values)
    calls = max(1, min(20, math.ceil(0.002 / max(time.perf_counter() - start, 1e-9))))
    fastest, paired = [math.inf, math.inf], []
    for r in range(ROUNDS):
        mean = [0.0, 0.0]
        for j in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            for _ in range(calls):
                t = time.perf_counter()
                kernels[j](*values)
                fastest[j] = min(fastest[j], time.perf_counter() - t)
            mean[j] = (time.perf_counter() - t0) / calls
        paired.append(mean[0] / mean[1])
    return fastest[0] / fastest[1], statistics.median(paired)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("matrices", nargs="*", default=[m for m in MATRICES if m in data.available()])
    parser.add_argument("--budget", type=float, default=20.0, help="tuning seconds per case")
    parser.add_argument("--widths", type=int, nargs="+", default=[32, 128, 512])
    parser.add_argument("--programs", nargs="+", default=list(PROGRAMS), choices=list(PROGRAMS))
    options = parser.parse_args(argv)
    print("| program | matrix | width | choices | search | re-timed (fastest) | re-timed (paired median) | tuning s |")
    print("|---|---|---|---|---|---|---|---|")
    ratios: dict[str, list[float]] = {"search": [], "fastest": [], "median": []}
    for program in options.programs:
        script, make_args = PROGRAMS[program]
        f = parse_file(EXAMPLES / script)
        for name in options.matrices:
            a = data.load(name)
            for width in options.widths:
                args = make_args(a, width)
                with tempfile.TemporaryDirectory() as database:
                    start = time.perf_counter()
                    result = tuned(f, args, options.budget, database=database, progress=False)
                    spent = time.perf_counter() - start
                default = build_default(f, "llvm", None, None, Choices())
                fastest, median = compare(default, result.kernel, args)
                search = result.speedup or 1.0
                for key, value in (("search", search), ("fastest", fastest), ("median", median)):
                    ratios[key].append(value)
                print(f"| {program} | {name} | {width} | {describe(result.choices)} | {search:.2f} | {fastest:.2f} "
                      f"| {median:.2f} | {spent:.0f} ({len(result.trials)} candidates) |", flush=True)
    means = {k: math.exp(sum(map(math.log, v)) / len(v)) for k, v in ratios.items() if v}
    print(f"\ngeomean speedup over the default: search {means['search']:.3f}, re-timed fastest call "
          f"{means['fastest']:.3f}, re-timed paired median {means['median']:.3f} ({len(ratios['search'])} cases)")


if __name__ == "__main__":
    main()
