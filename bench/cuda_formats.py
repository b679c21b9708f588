"""SpMM on CUDA tensors over CSR and variants of the hybrid format's widths, against cuSPARSE
(float32, CUDA-graph timing, ``sparsetir.bench.cuda_measure``): one line per matrix and width,
then each variant's geometric-mean speedup.

    python bench/cuda_formats.py OUT [MATRIX_DIR]   (default: the GPU bundle's matrices)

Run on a lent GPU by ``tools/gpu_device_run.sh formats``; results: ``bench/notes/gpu.md``."""
import glob
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch

from sparsetir import ops
from sparsetir.bench import cuda_measure as measure
from sparsetir.ops.cuda import ops as cops

out = Path(sys.argv[1])
rows = []
variants = {"csr": "csr", "hyb": "hyb", "hyb8": ops.SpmmFormat("hyb", widths=(1, 2, 4, 8)),
            "hyb16": ops.SpmmFormat("hyb", widths=(1, 2, 4, 8, 16)),
            "hyb64": ops.SpmmFormat("hyb", widths=(1, 2, 4, 8, 16, 32, 64)),
            "pow4": ops.SpmmFormat("hyb", widths=(1, 4, 16, 64))}
start = time.time()
folder = sys.argv[2] if len(sys.argv) > 2 else ".dev2/gpu-bundle/matrices"
for path in sorted(glob.glob(f"{folder}/*.npz")):
    csr = sp.load_npz(path).tocsr()
    name = Path(path).stem
    A = torch.sparse_csr_tensor(torch.from_numpy(csr.indptr.astype(np.int64)), torch.from_numpy(csr.indices.astype(np.int64)),
                                torch.from_numpy(csr.data.astype(np.float32)), size=csr.shape).cuda()
    for width in (32, 128, 512):
        X = torch.randn(csr.shape[1], width, device="cuda")
        want = torch.sparse.mm(A.double(), X.double())
        peer = measure.time_on_gpu(measure.torch_spmm(A, X, torch), torch).ms
        line = {"matrix": name, "width": width, "cusparse": peer}
        for v, f in variants.items():
            try:
                got = ops.spmm(A, X, format=f)
                err = float((got.double() - want).abs().max() / want.abs().max().clamp_min(1e-30))  # relative
                line[v] = measure.time_on_gpu(lambda: ops.spmm(A, X, format=f), torch).ms
                line[v + "_err"] = err
            except Exception as e:  # noqa: BLE001 - reported in the line, the run goes on
                line[v] = None
                line[v + "_err"] = repr(e)[:200]
        line["hyb_widths"] = str(cops.buckets(cops.csr("", A), "hyb").fmt)
        rows.append(line)
        print(name, width, " ".join(f"{k}={v:.4f}" if isinstance(v, float) and not k.endswith("_err") else f"{k}={v}" for k, v in line.items() if k not in ("matrix", "width")), flush=True)
out.mkdir(parents=True, exist_ok=True)
(out / "cuda-formats.json").write_text(json.dumps(rows, indent=1))
for v in variants:
    s = [r["cusparse"] / r[v] for r in rows if r.get(v)]
    print(v, "geomean vs cusparse", float(np.exp(np.mean(np.log(s)))) if s else None, "worst", min(s) if s else None)
print("seconds", round(time.time() - start, 1))
