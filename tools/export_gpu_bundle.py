"""Write the GPU bundle a GPU session runs: the bench (SpMM and SDDMM against cuSPARSE on the
shared matrices at widths 32, 128 and 512) and every check of the test suite (each op
configuration, each workload's default-scheduled kernel), compiled here for sm_80 and sm_90.

    python tools/export_gpu_bundle.py DIR [MATRIX ...]

Needs sparsetir with nvcc (the ``cuda`` extra); no GPU. Then, on the GPU machine (no TVM
needed): ``python3 DIR/run.py --out RESULTS`` (``docs/gpu.md``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "gpu")]

from sparsetir import data  # noqa: E402
from sparsetir.bench import gpu_bundle  # noqa: E402

#: The matrices of the acceptance bench: every one in ../shared/data that is found.
SHARED = ("cora", "citeseer", "pubmed", "email_enron", "soc_slashdot0902", "rgg_n_2_15_s0", "bcsstk16")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("matrices", nargs="*", help=f"default: {', '.join(SHARED)} (those found)")
    parser.add_argument("--widths", default="32,128,512")
    args = parser.parse_args()
    from gpu_checks import op_checks, workload_checks

    names = args.matrices or [m for m in SHARED if _found(m)]
    matrices = [(name, data.load(name, search_dirs=[ROOT.parent / "shared" / "data"])) for name in names]
    widths = [int(w) for w in args.widths.split(",")]
    checks = op_checks() + workload_checks()
    path = gpu_bundle.export(Path(args.directory), matrices, widths, checks=checks)
    print(f"wrote {path}: {len(checks)} checks, {len(matrices)} matrices x {len(widths)} widths x 2 kernels")
    return 0


def _found(name: str) -> bool:
    try:
        data.find(name, search_dirs=[ROOT.parent / "shared" / "data"])
    except FileNotFoundError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
