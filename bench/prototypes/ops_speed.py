"""Speed of ``sparsetir.ops.spmm`` / ``sddmm`` against SciPy and torch on the shared matrices.

Run:  python bench/prototypes/ops_speed.py [--mats cora,pubmed] [--feats 32,128,512] [--ops spmm,sddmm]

Method (``bench/notes/cpu_schedules.md`` §1): TVM and torch on 2 threads, SciPy on 1. Every
implementation runs in rounds of >= min_time/rounds seconds, interleaved, with a 20 ms pause
before each round (so the other library's spinning worker threads go to sleep); the time is
the median over rounds of the per-call mean ("best": the fastest round of each, a check
against contention). Calls go through the public API (validation of
the dense operands, output allocation and the cached per-matrix preparation included).
SpMM speedup is over the faster of SciPy ``A @ X`` and ``torch.sparse.mm``; SDDMM speedup is
over ``torch.sparse.sampled_addmm(A, X, Y.T, beta=0)`` (which does not scale by A's values).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# TVM's idle workers spin-yield for a long time after each parallel call, and torch's pool,
# running next, then loses whole scheduler quanta (8/16/24 ms "collapses"). Let TVM's workers
# sleep at once unless told otherwise (--spin N, read before TVM starts its pool).
if "--spin" in sys.argv:
    os.environ["TVM_THREAD_POOL_SPIN_COUNT"] = sys.argv[sys.argv.index("--spin") + 1]
os.environ.setdefault("TVM_THREAD_POOL_SPIN_COUNT", "0")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402

import sparsetir.ops as ops  # noqa: E402
from sparsetir.runtime.target import num_threads  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning)
torch.set_num_threads(2)
DATA = os.environ.get("SPARSETIR_DATA", "/work/shared/data")
MATS = ["cora", "citeseer", "pubmed", "email_enron", "soc_slashdot0902", "rgg_n_2_15_s0", "bcsstk16"]


def load(name: str) -> sp.csr_matrix:
    z = np.load(os.path.join(DATA, name + ".npz"))
    A = sp.csr_matrix((z["data"].astype(np.float32), z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    A.sort_indices()
    return A


def bench(fns: dict, min_time: float = 0.4, rounds: int = 9) -> dict:
    """Interleaved rounds; median over rounds of the per-call mean (ms)."""
    reps = {}
    for k, f in fns.items():
        f()
        t0 = time.perf_counter()
        f()
        reps[k] = max(1, int(min_time / rounds / max(time.perf_counter() - t0, 1e-7)))
    res: dict = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            time.sleep(0.02)
            f()
            t0 = time.perf_counter()
            for _ in range(reps[k]):
                f()
            res[k].append((time.perf_counter() - t0) / reps[k] * 1e3)
    return {k: float(np.median(v)) for k, v in res.items()}, {k: float(np.min(v)) for k, v in res.items()}


def relerr(x: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(x - ref).max() / max(np.abs(ref).max(), 1e-30))


def gmean(xs: list) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mats", default=",".join(MATS))
    ap.add_argument("--feats", default="32,128,512")
    ap.add_argument("--ops", default="spmm,sddmm")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--min-time", type=float, default=0.4)
    ap.add_argument("--spin", default="0", help="TVM_THREAD_POOL_SPIN_COUNT (default 0: workers sleep at once)")
    args = ap.parse_args()
    mats, feats, which = args.mats.split(","), [int(f) for f in args.feats.split(",")], args.ops.split(",")
    print(f"TVM threads={num_threads()} (spin count {os.environ['TVM_THREAD_POOL_SPIN_COUNT']}) "
          f"torch threads={torch.get_num_threads()} loadavg={os.getloadavg()}")
    print(f"{'op':5s} {'matrix':17s} {'feat':>4s} {'scipy':>8s} {'torch':>8s} {'sparsetir':>9s} "
          f"{'speedup':>7s} {'(best)':>7s} {'err':>7s} {'load':>5s}")
    speed: dict = {op: [] for op in which}
    speed_best: dict = {op: [] for op in which}
    rng = np.random.default_rng(0)
    for name in mats:
        A = load(name)
        m, n = A.shape
        tA = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)),
                                     torch.from_numpy(A.indices.astype(np.int64)),
                                     torch.from_numpy(A.data), size=A.shape)
        for feat in feats:
            Y = rng.standard_normal((n, feat), dtype=np.float32)
            if "spmm" in which:
                ref = A @ Y
                tY = torch.from_numpy(Y)
                out = ops.spmm(A, Y)
                r, best = bench({"scipy": lambda: A @ Y, "torch": lambda: torch.sparse.mm(tA, tY),
                                 "ops": lambda: ops.spmm(A, Y)}, args.min_time, args.rounds)
                s = min(r["scipy"], r["torch"]) / r["ops"]
                s_best = min(best["scipy"], best["torch"]) / best["ops"]
                speed["spmm"].append(s)
                speed_best["spmm"].append(s_best)
                print(f"spmm  {name:17s} {feat:4d} {r['scipy']:8.3f} {r['torch']:8.3f} {r['ops']:9.3f} "
                      f"{s:7.2f} {s_best:7.2f} {relerr(out, ref):7.0e} {os.getloadavg()[0]:5.2f}", flush=True)
            if "sddmm" in which:
                X = rng.standard_normal((m, feat), dtype=np.float32)
                tX, tYt = torch.from_numpy(X), torch.from_numpy(Y).t()
                coo = A.tocoo()
                ref = coo.data * np.einsum("pk,pk->p", X[coo.row].astype(np.float64), Y[coo.col].astype(np.float64))
                out = ops.sddmm(A, X, Y).data
                r, best = bench({"torch": lambda: torch.sparse.sampled_addmm(tA, tX, tYt, beta=0.0),
                                 "ops": lambda: ops.sddmm(A, X, Y)}, args.min_time, args.rounds)
                s = r["torch"] / r["ops"]
                speed["sddmm"].append(s)
                speed_best["sddmm"].append(best["torch"] / best["ops"])
                print(f"sddmm {name:17s} {feat:4d} {'':8s} {r['torch']:8.3f} {r['ops']:9.3f} "
                      f"{s:7.2f} {best['torch'] / best['ops']:7.2f} {relerr(out, ref):7.0e} "
                      f"{os.getloadavg()[0]:5.2f}", flush=True)
    for op, xs in speed.items():
        if xs:
            ys = speed_best[op]
            print(f"{op}: geomean x{gmean(xs):.2f}  worst x{min(xs):.2f}  best x{max(xs):.2f}  (n={len(xs)}); "
                  f"from best rounds: geomean x{gmean(ys):.2f}  worst x{min(ys):.2f}")
    print(f"loadavg at end={os.getloadavg()}")


if __name__ == "__main__":
    main()
