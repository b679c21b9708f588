"""Pack what a lent GPU machine needs to run sparsetir itself, in two carries of under 64 MiB.

    python tools/device_payload.py [--bundle]

The GPU machine (``device`` tool) has torch, SciPy, nvcc and the driver, but no TVM, and one
call carries at most 64 MiB of the working tree. TVM's wheel is 100 MB, almost all of it one
library (``libtvm_compiler.so``, 259 MB unpacked); xz packs that library into 60 MB. So:

- ``.dev1/``: ``libtvm_compiler.so.xz`` (made once: xz takes ~6 minutes on two cores);
- ``.dev2/``: the rest of TVM's wheel (``tvm_slim.zip``, without CUTLASS's headers, which no
  sparsetir kernel includes), tvm-ffi's wheel for the machine's Python 3.12, and with
  ``--bundle`` the GPU bundle (``tools/export_gpu_bundle.py``).

Both folders are ignored by git (``.git/info/exclude``). Then two ``device`` calls back to back
(the machine stays warm 30 s): one carrying ``.dev1`` copies the library to ``/tmp/w``, the next
carrying ``.dev2`` runs ``tools/gpu_device_run.sh`` (``bench/notes/gpu.md``).
"""

from __future__ import annotations

import argparse
import lzma
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TVM = "apache-tvm==0.27.0.post1"
FFI = "apache-tvm-ffi==0.1.14.post0"
COMPILER = "tvm/lib/libtvm_compiler.so"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", action="store_true", help="also export the GPU bundle into .dev2")
    args = parser.parse_args()
    _exclude(".dev1/", ".dev2/")
    one, two = ROOT / ".dev1", ROOT / ".dev2"
    one.mkdir(exist_ok=True)
    two.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "cp",
                        "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_27_x86_64",
                        "-d", tmp, TVM, FFI], check=True)
        wheel = zipfile.ZipFile(next(Path(tmp).glob("apache_tvm-*.whl")))
        packed = one / "libtvm_compiler.so.xz"
        if not packed.exists():
            with wheel.open(COMPILER) as src, lzma.open(packed, "wb", preset=9) as dst:
                shutil.copyfileobj(src, dst, 1 << 24)
        with zipfile.ZipFile(two / "tvm_slim.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
            for info in wheel.infolist():
                if info.filename != COMPILER and not info.filename.startswith("tvm/3rdparty/"):
                    out.writestr(info, wheel.read(info.filename))
        for old in two.glob("apache_tvm_ffi-*.whl"):
            old.unlink()
        shutil.copy(next(Path(tmp).glob("apache_tvm_ffi-*.whl")), two)
    if args.bundle:
        shutil.rmtree(two / "gpu-bundle", ignore_errors=True)
        subprocess.run([sys.executable, str(ROOT / "tools" / "export_gpu_bundle.py"), str(two / "gpu-bundle")],
                       check=True)
    for folder in (one, two):
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        print(f"{folder.name}: {size / 2**20:.1f} MiB")
    return 0


def _exclude(*patterns: str) -> None:
    exclude = ROOT / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    have = exclude.read_text().splitlines() if exclude.exists() else []
    with exclude.open("a") as f:
        for p in patterns:
            if f"/{p}" not in have:
                f.write(f"/{p}\n")


if __name__ == "__main__":
    sys.exit(main())
