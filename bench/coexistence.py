"""How a sparsetir kernel and torch share the cores: the measurement behind runtime/parallel.py.

    python bench/coexistence.py [MATRIX.npz ...] [--width 32] [--seconds 1]

For each matrix, ``ops.spmm`` is timed (median and mean of calls over ``--seconds``) under
three launchers -- TVM's pool, torch's OpenMP threads only, sparsetir's pool only -- and the
default (the launcher as shipped), in four situations: alone, right after a torch op (sparse or
dense matmul), and with another process spinning on a core (a "hog"); and torch's own ops are
timed right after ours. Nothing here sets a thread, binding or environment variable: the
launchers differ only in where ``__TVMBackendParallelLaunch`` points.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch

from sparsetir import data, ops
from sparsetir.ops.kernels import KernelKey
from sparsetir.runtime import parallel
from sparsetir.runtime.threads import call_off_workers

warnings.filterwarnings("ignore")


def timed(call, before, seconds):
    samples = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        before()
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    samples.sort()
    return samples[len(samples) // 2] * 1e3, sum(samples) / len(samples) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("matrices", nargs="*", default=["cora", "bcsstk16"])
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    launcher = parallel.launcher()
    assert launcher is not None, parallel.unavailable_reason()
    print(f"# {parallel.backend()}; torch {torch.__version__}, {torch.get_num_threads()} threads")
    for name in args.matrices:
        A = sp.load_npz(name) if name.endswith(".npz") else data.load(name)
        A = sp.csr_matrix(A, dtype=np.float32)
        X = np.random.default_rng(0).random((A.shape[1], args.width), dtype=np.float32)
        At = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)),
                                     torch.from_numpy(A.indices.astype(np.int64)), torch.from_numpy(A.data),
                                     size=A.shape)
        Xt, W = torch.from_numpy(X), torch.randn(args.width, args.width)
        ops.spmm(A, X)
        compiled = ops.library.get(KernelKey("spmm", "float32", args.width)).compiled
        ours = lambda: ops.spmm(A, X)  # noqa: E731
        situations = {
            "alone": lambda: None,
            "after torch.sparse.mm": lambda: torch.sparse.mm(At, Xt),
            "after X @ W": lambda: Xt @ W,
        }
        peers = {"torch X @ W": lambda: Xt @ W, "torch.sparse.mm": lambda: torch.sparse.mm(At, Xt)}
        print(f"\n## {Path(name).stem} {A.shape[0]}x{A.shape[1]}, nnz {A.nnz}, width {args.width}: "
              "median / mean ms")
        for hog in (False, True):
            spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if hog else None
            time.sleep(0.2)
            try:
                for mode in ("TVM's pool", "OpenMP only", "own pool only", "shipped"):
                    _set_mode(launcher, compiled, mode)
                    cells = [f"{'hog, ' if hog else ''}{mode}"]
                    for label, before in situations.items():
                        cells.append("%s %.3f / %.3f" % ((label,) + timed(ours, before, args.seconds)))
                    for label, peer in peers.items():
                        cells.append("%s after ours %.3f / %.3f" % ((label,) + timed(peer, ours, args.seconds)))
                    print(" | ".join(cells))
                for label, peer in peers.items():
                    print("%s%s alone %.3f / %.3f" % (("hog, " if hog else "", label) + timed(peer, lambda: None,
                                                                                             args.seconds)))
            finally:
                _set_mode(launcher, compiled, "shipped")
                if spinner is not None:
                    spinner.kill()
        print(launcher.stats())


def _set_mode(launcher, compiled, mode):
    """Point the kernel's parallel loops at the launcher under test."""
    if mode == "TVM's pool":
        launcher.detach(compiled.library)
        object.__setattr__(compiled, "invoke", lambda args: call_off_workers(compiled.entry, args))
        return
    launcher.attach(compiled.library)
    object.__setattr__(compiled, "invoke", lambda args: compiled.entry(*args))
    if mode == "own pool only":
        launcher.stop_openmp()
    else:
        launcher.find_openmp()
    if mode == "OpenMP only":
        launcher.configure(late_ns=10**15)  # never set OpenMP aside
    else:
        launcher.configure(late_ns=300_000)


if __name__ == "__main__":
    main()
