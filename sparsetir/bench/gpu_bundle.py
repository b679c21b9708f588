"""A bundle that runs sparsetir's GPU kernels where TVM is not installed.

The GPU machines this project borrows have torch, NumPy, SciPy, nvcc and the NVIDIA driver,
but no TVM, and too little room to carry it. Everything TVM does happens before a kernel runs,
so a bundle carries the result: each kernel as a ``CudaProgram`` (JSON) and its device code
(a fatbinary for sm_80 and sm_90, with sm_90's PTX for newer GPUs, compiled here by nvcc),
the launcher, the measuring code and the SpMM row split (``runtime/cuda/program.py``,
``launch.py``, ``bench/cuda_measure.py``, ``runtime/cuda/row_split.py``, copied: they import no other part of sparsetir), the matrices, and
``run.py`` (``gpu_bundle_run.py``)::

    DIR/run.py               python3 DIR/run.py --out RESULTS   (on the GPU machine)
    DIR/manifest.json        what to check and what to time
    DIR/sparsetir_cuda/      program.py, launch.py, measure.py, row_split.py
    DIR/kernels/NAME.json    the programs;  DIR/kernels/NAME.fatbin  their device code
    DIR/matrices/NAME.npz    the bench matrices (scipy.sparse.save_npz)
    DIR/checks/NAME.npz      inputs and expected outputs of each check

``run.py`` first runs every *check* (a kernel on given inputs against outputs computed here by
NumPy/SciPy), then the *bench* (each kernel against cuSPARSE on each matrix and width, every
answer checked against torch in float64), and writes ``results.json`` and ``results.md``.
``sparsetir bench --device cuda --export DIR`` writes the bench; ``tools/export_gpu_bundle.py``
adds the test suite's checks (every op configuration, every workload's default schedule).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import scipy.sparse

import sparsetir

from ..ops.cuda.kernels import build_cuda_kernel
from ..ops.kernels import KernelKey
from ..runtime.cuda import compile_sources
from ..runtime.cuda.nvcc import CI_ARCHS

PACKAGE = Path(__file__).resolve().parent.parent
#: The files copied into ``sparsetir_cuda/``, by their name there.
CARRIED = {
    "program.py": PACKAGE / "runtime" / "cuda" / "program.py",
    "launch.py": PACKAGE / "runtime" / "cuda" / "launch.py",
    "measure.py": PACKAGE / "bench" / "cuda_measure.py",
    "row_split.py": PACKAGE / "runtime" / "cuda" / "row_split.py",
}
RUNNER = Path(__file__).resolve().parent / "gpu_bundle_run.py"
FORMAT = "sparsetir.gpu_bundle/1"
#: The kernels the bench times, with their peers.
BENCH_KERNELS = ("spmm", "sddmm")


@dataclass(frozen=True)
class Check:
    """A kernel run on given arrays and scalars (``args``, in parameter order) whose outputs
    (``expected``: parameter index -> array) were computed by a reference here."""

    name: str
    kernel: Any  # a sparsetir Kernel built for CUDA
    args: tuple
    expected: dict


def bench_key(kernel: str, width: int) -> KernelKey:
    """The float32 CUDA kernel the bench times for ``kernel`` at ``width``."""
    return KernelKey(kernel, "float32", width, target="cuda")


def export(directory: Path, matrices: Sequence[tuple[str, Any]], widths: Sequence[int],
           kernels: Sequence[str] = BENCH_KERNELS, checks: Sequence[Check] = ()) -> Path:
    """Write a bundle (module docs) into ``directory`` (emptied first); its path."""
    directory = Path(directory)
    if directory.exists():
        shutil.rmtree(directory)
    for sub in ("sparsetir_cuda", "kernels", "matrices", "checks"):
        (directory / sub).mkdir(parents=True)
    for name, source in CARRIED.items():
        shutil.copyfile(source, directory / "sparsetir_cuda" / name)
    (directory / "sparsetir_cuda" / "__init__.py").write_text(
        '"""sparsetir\'s CUDA launcher and GPU bench, carried without TVM (see run.py)."""\n')
    shutil.copyfile(RUNNER, directory / "run.py")

    programs: dict[str, Any] = {}
    bench = []
    for kernel in kernels:
        if kernel not in BENCH_KERNELS:
            raise ValueError(f"the GPU bench times {', '.join(BENCH_KERNELS)}, not {kernel!r}")
        for width in widths:
            name = f"{kernel}_float32_{width}"
            programs[name] = build_cuda_kernel(bench_key(kernel, width)).compiled.program
            case = {"kernel": kernel, "width": int(width), "program": name}
            if kernel == "spmm":  # and its rows in pieces, which run.py takes where row_split.choose does
                case["split_program"] = f"split_spmm_float32_{width}"
                programs[case["split_program"]] = build_cuda_kernel(bench_key("split_spmm", width)).compiled.program
            bench += [dict(case, matrix=matrix) for matrix, _ in matrices]
    for matrix, csr in matrices:
        scipy.sparse.save_npz(directory / "matrices" / f"{matrix}.npz", scipy.sparse.csr_matrix(csr))
    entries = []
    for check in checks:
        program = check.kernel.compiled.program
        programs.setdefault(_program_name(program, check.name), program)
        entries.append(_write_check(directory, check, _program_name(program, check.name)))
    images = compile_sources({name: p.source for name, p in programs.items()}, CI_ARCHS, ptx=True)
    for name, program in programs.items():
        (directory / "kernels" / f"{name}.json").write_text(program.to_json())
        (directory / "kernels" / f"{name}.fatbin").write_bytes(images[name])
    manifest = {
        "format": FORMAT,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "sparsetir": sparsetir.__version__,
        "archs": list(CI_ARCHS) + [f"compute_{CI_ARCHS[-1][3:]} (PTX)"],
        "bench": bench,
        "checks": entries,
    }
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return directory


def _program_name(program: Any, check: str) -> str:
    """A file name for ``program``: its symbol and a hash of it (checks share equal programs)."""
    return f"{program.name}_{hashlib.sha256(program.to_json().encode()).hexdigest()[:10]}"


def _write_check(directory: Path, check: Check, program: str) -> dict:
    arrays, scalars = {}, {}
    for index, value in enumerate(check.args):
        if isinstance(value, np.ndarray):
            arrays[f"arg{index}"] = np.ascontiguousarray(value)
        else:
            scalars[str(index)] = value.item() if isinstance(value, np.generic) else value
    for index, value in check.expected.items():
        arrays[f"expected{index}"] = np.asarray(value)
    np.savez_compressed(directory / "checks" / f"{check.name}.npz", **arrays)
    return {"name": check.name, "program": program, "count": len(check.args), "scalars": scalars,
            "outputs": sorted(int(i) for i in check.expected)}


__all__ = ["BENCH_KERNELS", "Check", "bench_key", "export"]
