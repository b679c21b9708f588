"""Per-call latency when other processes occupy the cores: quiet, one busy, two busy.

Times ``ops.spmm`` and ``ops.sddmm`` as a model calls them (each call after an untimed dense
torch op), next to torch (``torch.sparse.mm`` / ``sampled_addmm``) and single-threaded SciPy
(``A @ X``, SpMM only), with 0, 1 and 2 processes spinning beside them (``python -c "while
True: pass"``, unpinned, as a DataLoader worker or a second job would). Reports the median and
the 99th percentile per call, each load's medians against the quiet one, and what the parallel
launcher did (``sparsetir.runtime.parallel``). Nothing is set that a user's program would not
have: no thread binding, no environment variable.

    python bench/contention.py [MATRIX ...] [--widths 32,128] [--calls 200] [--json out.json]

MATRIX: a bundled graph (cora, citeseer, pubmed) or a ``.npz`` path (``SPARSETIR_DATA`` names a
folder of them). What holds is the goal of ``docs/runtime.md``: with one busy process the median
within 2.2x and the p99 within 4x of the quiet median; with two, the SpMM median within 1.2x
of SciPy's under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

LOADS = (0, 1, 2)


def load_matrix(name: str) -> tuple[str, sp.csr_matrix]:
    from sparsetir import data

    path = Path(name)
    if not path.suffix:
        folder = os.environ.get("SPARSETIR_DATA")
        candidate = Path(folder) / f"{name}.npz" if folder else None
        if candidate is not None and candidate.exists():
            path = candidate
        else:
            return name, data.load(name).astype(np.float32)
    matrix = sp.load_npz(path).tocsr().astype(np.float32)
    matrix.sort_indices()
    return path.stem, matrix


def percentiles(run, before, calls: int) -> tuple[float, float]:
    """Median and 99th percentile, in ms, of ``run()`` each after an untimed ``before()``."""
    for _ in range(5):
        before()
        run()
    times = []
    for _ in range(calls):
        before()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    times.sort()
    return statistics.median(times) * 1e3, times[min(len(times) - 1, int(0.99 * len(times)))] * 1e3


def spinners(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("matrices", nargs="*", default=["cora", "pubmed"])
    parser.add_argument("--widths", default="32,128")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    import torch

    from sparsetir import ops
    from sparsetir.runtime.parallel import launcher

    active = launcher()
    rows, holds = [], 0
    for name in args.matrices:
        label, a = load_matrix(name)
        at = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                     torch.from_numpy(a.indices.astype(np.int64)), torch.from_numpy(a.data),
                                     size=a.shape)
        for width in (int(w) for w in args.widths.split(",")):
            rng = np.random.default_rng(0)
            x = rng.random((a.shape[1], width), dtype=np.float32)
            xm = rng.random((a.shape[0], width), dtype=np.float32)
            xt, xmt = torch.from_numpy(x), torch.from_numpy(xm)
            w = torch.randn(width, width)

            def before():
                return xt @ w

            cases = {
                "spmm": {"sparsetir": lambda: ops.spmm(at, xt), "torch": lambda: torch.sparse.mm(at, xt),
                         "scipy": lambda: a @ x},
                "sddmm": {"sparsetir": lambda: ops.sddmm(at, xmt, xt),
                          "torch": lambda: torch.sparse.sampled_addmm(at, xmt, xt.T, beta=0.0)},
            }
            for op, impls in cases.items():
                measured = {}
                for load in LOADS:
                    busy = spinners(load)
                    time.sleep(0.3)
                    stats_before = active.stats() if active else None
                    try:
                        measured[load] = {impl: percentiles(run, before, args.calls) for impl, run in impls.items()}
                    finally:
                        for p in busy:
                            p.kill()
                            p.wait()
                    if active:
                        after = active.stats()
                        measured[load]["launcher"] = {k: getattr(after, k) - getattr(stats_before, k)
                                                      for k in ("openmp", "pool", "serial", "late", "pool_late", "crowded")}
                quiet = measured[0]["sparsetir"][0]
                one_median = measured[1]["sparsetir"][0] / quiet
                one_p99 = measured[1]["sparsetir"][1] / quiet
                two_vs_scipy = measured[2]["sparsetir"][0] / measured[2]["scipy"][0] if "scipy" in impls else None
                ok = one_median <= 2.2 and one_p99 <= 4.0 and (two_vs_scipy is None or two_vs_scipy <= 1.2)
                holds += ok
                row = {"matrix": label, "op": op, "width": width, "holds": ok, "one_busy_median_x": one_median,
                       "one_busy_p99_x": one_p99, "two_busy_vs_scipy_x": two_vs_scipy,
                       "ms": {str(k): v for k, v in measured.items()}}
                rows.append(row)
                t = {load: measured[load]["torch"] for load in LOADS}
                line = (f"{'holds' if ok else 'FAILS'} {label:14s} {op:5s} {width:4d} | quiet "
                        f"{quiet:7.3f} ms (torch {t[0][0]:7.3f}) | 1 busy: median x{one_median:5.2f} p99 "
                        f"x{one_p99:6.2f} (torch x{t[1][0] / t[0][0]:5.2f} / x{t[1][1] / t[0][0]:6.2f}) | 2 busy: "
                        f"median {measured[2]['sparsetir'][0]:7.3f} p99 {measured[2]['sparsetir'][1]:7.3f}")
                if two_vs_scipy is not None:
                    line += f" scipy {measured[2]['scipy'][0]:7.3f} (x{two_vs_scipy:4.2f})"
                line += f" torch {t[2][0]:7.3f}"
                if active:
                    line += " | launches " + " / ".join(
                        ",".join(f"{k}={v}" for k, v in measured[load]["launcher"].items() if v) or "-"
                        for load in LOADS)
                print(line, flush=True)
    print(f"contention: {holds}/{len(rows)} cases hold")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if holds == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
