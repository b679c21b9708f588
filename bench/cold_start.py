"""What a new process pays before its first sparse op: the disk cache at work.

    python bench/cold_start.py [--width 32] [--runs 5]

Runs fresh Python processes against an empty cache directory: the first compiles and stores
the ``ops.spmm`` kernel, the next ones load it. Each prints how long ``import sparsetir.ops``
and the first ``ops.spmm`` call on cora took; then, in this process, a second ``sparsetir.build``
of an equal example function (the in-memory cache hit) and a tiny ``ops.spmm`` call against
SciPy's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import json, time
start = time.perf_counter()
import numpy as np
from sparsetir import data, ops
imported = time.perf_counter()
A = data.load("cora")
X = np.ones((A.shape[1], {width}), np.float32)
loaded = time.perf_counter()
ops.spmm(A, X)
done = time.perf_counter()
print(json.dumps({{"import_s": imported - start, "first_call_ms": (done - loaded) * 1e3,
                  "loaded_from_disk": ops.library.loads}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, SPARSETIR_CACHE_DIR=cache)
        for run in range(args.runs):
            out = subprocess.run([sys.executable, "-c", CHILD.format(width=args.width)], env=env, check=True,
                                 capture_output=True, text=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            kind = "loads the kernel" if row["loaded_from_disk"] else "compiles"
            print(f"process {run + 1} ({kind}): import {row['import_s']:.2f} s, first ops.spmm "
                  f"{row['first_call_ms']:.1f} ms")
    _in_memory()


def _in_memory() -> None:
    import numpy as np
    import scipy.sparse as sp

    import sparsetir
    from sparsetir import ops

    example = Path(__file__).resolve().parents[1] / "examples" / "csr_spmm.py"
    func = sparsetir.parse_file(str(example))
    sparsetir.build(func)
    again = sparsetir.parse_file(str(example))
    start = time.perf_counter()
    sparsetir.build(again)
    print(f"sparsetir.build of an equal function again: {(time.perf_counter() - start) * 1e3:.3f} ms")
    A = sp.random(64, 64, density=0.05, format="csr", dtype=np.float32, random_state=0)
    X = np.ones((64, 8), np.float32)
    for label, call in (("ops.spmm", lambda: ops.spmm(A, X)), ("SciPy A @ X", lambda: A @ X)):
        for _ in range(1000):
            call()
        start = time.perf_counter()
        for _ in range(20000):
            call()
        print(f"{label} on a 64x64 matrix, width 8: {(time.perf_counter() - start) / 20000 * 1e6:.1f} us per call")


if __name__ == "__main__":
    main()
