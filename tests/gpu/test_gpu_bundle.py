"""The GPU bundle (``sparsetir/bench/gpu_bundle.py``): exported here, it reads and plans every
launch in a Python process that imports neither TVM nor sparsetir, and says so when there is no
CUDA device. (Running it is for a GPU machine: ``docs/gpu.md``.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import sparsetir
from gpu_checks import op_checks, workload_checks
from gpu_kernels import OP_KEYS
from sparsetir.bench import gpu_bundle
from sparsetir.runtime.cuda import find_nvcc

_PLAN_WITHOUT_TVM = """
import runpy, sys
sys.argv = ["run.py", *sys.argv[1:]]
try:
    runpy.run_path({run!r}, run_name="__main__")
except SystemExit as stop:
    code = stop.code
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("tvm", "tvm_ffi", "sparsetir"))
print("LOADED", loaded)
sys.exit(code)
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    if find_nvcc() is None:
        pytest.skip("nvcc is absent: install sparsetir's 'cuda' extra (NVIDIA's CUDA 13.0 compiler wheels)")
    checks = op_checks([k for k in OP_KEYS if k.op in ("spmm", "softmax")][:2]) + workload_checks(["csr_spmm"])
    path = tmp_path_factory.mktemp("bundle") / "gpu"
    return gpu_bundle.export(path, [("cora", sparsetir.data.load("cora"))], [32], checks=checks), checks


def _run(path, *args):
    code = _PLAN_WITHOUT_TVM.format(run=str(path / "run.py"))
    return subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True, timeout=300,
                          cwd=path)


def test_bundle_plans_every_launch_without_tvm_or_sparsetir(bundle):
    path, checks = bundle
    manifest = json.loads((path / "manifest.json").read_text())
    assert [c["name"] for c in manifest["checks"]] == [c.name for c in checks]
    assert {(b["kernel"], b["width"], b["matrix"]) for b in manifest["bench"]} == {("spmm", 32, "cora"),
                                                                                   ("sddmm", 32, "cora")}
    done = _run(path, "--plan")
    assert done.returncode == 0, done.stderr
    assert f"plan: {len(checks)} checks and 2 bench cases" in done.stdout
    assert "LOADED []" in done.stdout  # -I: the checkout is not on the path, and nothing imported TVM


def test_bundle_without_a_device_exits_3(bundle):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    done = _run(bundle[0])
    assert done.returncode == 3 and "no CUDA device" in done.stderr


def test_bench_device_cuda_without_a_device(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    done = subprocess.run([sys.executable, "-m", "sparsetir", "bench", "--device", "cuda", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 3
    assert "sparsetir bench --device cuda: no CUDA device" in done.stderr and "--export DIR" in done.stderr
    refused = subprocess.run([sys.executable, "-m", "sparsetir", "bench", "--device", "cuda", "--kernels", "softmax"],
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "times spmm, sddmm" in refused.stderr
