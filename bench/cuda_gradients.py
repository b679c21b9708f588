"""Forward and backward of sparsetir's CUDA ops against torch.sparse, as a model calls them.

    python bench/cuda_gradients.py [OUT.json]

On each bundled graph (cora, citeseer, pubmed) and width 32/128/512, float32:

- a GCN layer's sparse product with the gradient of X: ``(ops.spmm(A, X) * W).sum().backward()``
  against the same with ``torch.sparse.mm`` (cuSPARSE both ways: torch's backward is
  ``A.t() @ G``); the two X gradients are compared first;
- a GAT layer's chain ``ops.spmm(ops.softmax(ops.sddmm(A, H, G)), X)`` with the gradients of H,
  G and X (sparsetir only: torch has no CSR softmax).

Each step is timed eagerly (CUDA events around the Python call, the median of 30 after
warm-ups: ``cuda_measure.time_on_gpu`` without a graph), the way a training loop calls it: Python's and the launches' cost is in the time.
Needs a CUDA GPU, torch and sparsetir (``tools/gpu_device_run.sh grad``).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import torch

from sparsetir import data, ops
from sparsetir.bench.cuda_measure import time_on_gpu

MATRICES = ("cora", "citeseer", "pubmed")
WIDTHS = (32, 128, 512)


def _csr(a) -> torch.Tensor:
    return torch.sparse_csr_tensor(torch.from_numpy(a.indptr).long(), torch.from_numpy(a.indices).long(),
                                   torch.from_numpy(a.data.astype(np.float32)), size=a.shape).cuda()


def _median_ms(step) -> float:
    return time_on_gpu(step, torch, calls=1, rounds=30, graph=False).ms


def main() -> int:
    rows = []
    for name in MATRICES:
        a = data.load(name)
        A = _csr(a)
        for width in WIDTHS:
            X = torch.randn(a.shape[1], width, device="cuda", requires_grad=True)
            W = torch.randn(a.shape[0], width, device="cuda")
            H = torch.randn(a.shape[0], width, device="cuda", requires_grad=True)
            G = torch.randn(a.shape[1], width, device="cuda", requires_grad=True)

            def ours():
                (ops.spmm(A, X) * W).sum().backward()

            def peer():
                (torch.sparse.mm(A, X) * W).sum().backward()

            def gat():
                (ops.spmm(ops.softmax(ops.sddmm(A, H, G)), X) * W).sum().backward()

            grads = []
            for step in (ours, peer):
                X.grad = None
                step()
                grads.append(X.grad.clone())
            match = bool(torch.allclose(grads[0], grads[1], rtol=1e-3, atol=1e-3))
            t_ours, t_peer, t_gat = _median_ms(ours), _median_ms(peer), _median_ms(gat)
            rows.append({"matrix": name, "width": width, "x_grad_matches_torch": match, "spmm_ms": t_ours,
                         "torch_sparse_mm_ms": t_peer, "speedup": t_peer / t_ours, "gat_chain_ms": t_gat})
            print(f"{name:9s} width {width:4d}  X grad matches: {match}  spmm fwd+bwd {t_ours:.4f} ms, "
                  f"torch.sparse.mm {t_peer:.4f} ms ({t_peer / t_ours:.2f}x)  gat chain fwd+bwd {t_gat:.4f} ms",
                  flush=True)
    geomean = float(np.exp(np.mean([np.log(r["speedup"]) for r in rows])))
    print(f"spmm forward+backward: geometric-mean speedup over torch.sparse.mm {geomean:.2f}x")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows, "geomean": geomean}, f, indent=1)
    return 0 if all(r["x_grad_matches_torch"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
