"""``sparsetir bench --device cuda``: sparsetir's GPU SpMM and SDDMM against cuSPARSE.

On a machine where sparsetir runs next to a CUDA device, each case calls ``sparsetir.ops`` on
torch CUDA tensors and the cuSPARSE peer through torch (``cuda_measure.py`` says how both are
timed and checked), and writes the table and ``bench-cuda.json`` into ``--out``. Where there is
no CUDA device it says so and exits with ``EXIT_NO_DEVICE``.

``--export DIR`` needs no GPU: it writes a bundle of the same cases that runs on a GPU machine
without TVM (``gpu_bundle.py``; ``python3 DIR/run.py`` there).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from . import cuda_measure as measure
from . import gpu_bundle

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_DEVICE = 3
DEFAULT_WIDTHS = (32, 128, 512)
#: What ``--kernels`` may name here: the bundle's kernels, and SpMM on the hybrid format
#: (``format="hyb"``, converted on the first call; needs sparsetir where the GPU is).
KERNELS = (*gpu_bundle.BENCH_KERNELS, "spmm_hyb")
JSON_NAME = "bench-cuda.json"
TABLE_NAME = "bench-cuda.md"


def run(args: argparse.Namespace) -> int:
    """Time (or, with ``--export``, bundle) the GPU cases of ``args``; the exit code."""
    kernels = list(getattr(args, "kernels", None) or gpu_bundle.BENCH_KERNELS)
    allowed = gpu_bundle.BENCH_KERNELS if getattr(args, "export", None) else KERNELS
    unknown = [k for k in kernels if k not in allowed]
    if unknown:
        print(f"sparsetir bench --device cuda{' --export' if allowed is not KERNELS else ''}: times "
              f"{', '.join(allowed)} (the kernels with a cuSPARSE peer), not {', '.join(unknown)}", file=sys.stderr)
        return EXIT_USAGE
    widths = list(getattr(args, "widths", None) or DEFAULT_WIDTHS)
    try:
        matrices = _matrices(args)
    except (FileNotFoundError, ValueError) as err:
        print(f"sparsetir bench: {err}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "export", None):
        path = gpu_bundle.export(Path(args.export), [(name, csr) for name, csr in matrices], widths, kernels)
        print(f"wrote {path}: copy it to a GPU machine and run python3 {path / 'run.py'} --out RESULTS")
        return 0
    torch = _cuda_torch()
    if torch is None:
        return EXIT_NO_DEVICE
    rows = [_case(kernel, name, csr, width, torch) for kernel in kernels for name, csr in matrices for width in widths]
    table = measure.table(rows)
    print(f"device: {measure.device_name(torch)}; timing: CUDA-graph replays of {measure.CALLS} calls, "
          f"median of {measure.ROUNDS}\n")
    print(table)
    out = Path(getattr(args, "out", None) or "bench-results")
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "device": measure.device_name(torch),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "rows": [dict(r.__dict__, ours=r.ours and r.ours.__dict__, peer=r.peer and r.peer.__dict__,
                      speedup=r.speedup) for r in rows],
    }
    (out / JSON_NAME).write_text(json.dumps(record, indent=1))
    (out / TABLE_NAME).write_text(f"device: {record['device']}, {record['date']}\n\n{table}\n")
    print(f"\nwrote {out / JSON_NAME} and {out / TABLE_NAME}")
    return EXIT_FAILED if any(r.errors for r in rows) else 0


def _matrices(args: argparse.Namespace) -> list[tuple[str, Any]]:
    from sparsetir import data

    names = [*(getattr(args, "matrices", None) or []), *(getattr(args, "matrix", None) or [])] or ["cora"]
    found = []
    for spec in dict.fromkeys(names):
        path = Path(spec) if spec.endswith(data.SUFFIX) or "/" in spec else data.find(spec)
        if not path.is_file():
            raise FileNotFoundError(f"matrix file {spec}: no such file")
        found.append((path.stem, data.load_file(path)))
    return found


def _cuda_torch() -> Any:
    """torch when it sees a CUDA device; else None, having said why."""
    try:
        import torch
    except ModuleNotFoundError:
        print("sparsetir bench --device cuda: torch is not installed; install a CUDA build of torch",
              file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"sparsetir bench --device cuda: no CUDA device: torch {torch.__version__} sees none (a CPU build, "
              "or no GPU here); --export DIR writes a bundle to run on a GPU machine", file=sys.stderr)
        return None
    return torch


def _case(kernel: str, name: str, csr: Any, width: int, torch: Any) -> measure.Row:
    from sparsetir import ops

    row = measure.Row(kernel, name, width, int(csr.nnz))
    fmt = "hyb" if kernel == "spmm_hyb" else "csr"
    if kernel == "spmm":
        from sparsetir.runtime.cuda import row_split

        length = row_split.choose(csr.indptr, width, 4)  # what ops.spmm chooses for float32
        row.plan = f"rows in pieces of {length}" if length else ""
    generator = torch.Generator(device="cuda").manual_seed(0)
    A = torch.sparse_csr_tensor(torch.from_numpy(csr.indptr.astype(np.int64)),
                                torch.from_numpy(csr.indices.astype(np.int64)),
                                torch.from_numpy(csr.data.astype(np.float32)), size=csr.shape).cuda()
    A64 = A.to(torch.float64)
    m, n = csr.shape
    try:
        if kernel in ("spmm", "spmm_hyb"):
            X = torch.randn(n, width, device="cuda", generator=generator)
            problem = measure.mismatch(ops.spmm(A, X, format=fmt), torch.sparse.mm(A64, X.double()), torch)
            if fmt != "csr":  # the format's widths, chosen from the structure on the first call
                from sparsetir.ops.cuda import ops as on_cuda

                row.plan = str(on_cuda.buckets(on_cuda.csr("spmm: A", A), fmt).fmt)
            ours, peer = (lambda: ops.spmm(A, X, format=fmt)), measure.torch_spmm(A, X, torch)
            row.peer_name = "torch.sparse.mm (cuSPARSE)"
        else:
            X = torch.randn(m, width, device="cuda", generator=generator)
            Y = torch.randn(n, width, device="cuda", generator=generator)
            expected = torch.sparse.sampled_addmm(A64, X.double(), Y.double().t(), beta=0).values() * A64.values()
            problem = measure.mismatch(ops.sddmm(A, X, Y).values(), expected, torch)
            ours, peer = (lambda: ops.sddmm(A, X, Y)), measure.torch_sddmm(A, X, Y, torch)
            row.peer_name = "torch.sparse.sampled_addmm (cuSPARSE)"
        if problem:
            row.errors["sparsetir"] = problem
        row.ours = measure.time_on_gpu(ours, torch)
        row.peer = measure.time_on_gpu(peer, torch)
    except Exception as err:  # noqa: BLE001 - reported in the row, the run goes on
        row.errors["run"] = f"{type(err).__name__}: {err}"
    return row


__all__ = ["EXIT_NO_DEVICE", "run"]
