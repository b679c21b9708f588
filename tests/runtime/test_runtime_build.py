"""build_stage3: compilation, the kernel cache, targets, generated source, output detection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sparsetir._tvm import tvm
from sparsetir.runtime import KernelCache, build_stage3, constraints_from_axes, cuda_target, host_target
from sparsetir.runtime.target import num_threads
from matrices import CORA, csrmm_arguments, expected_product, load_cora, random_csr
from stage3_kernels import copy_rows_via_view, csr_axes, csrmm, dcsrmm, gpu_scale

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _build(cache=None, **kw):
    return build_stage3(csrmm, constraints_from_axes(csr_axes(), set()), cache=cache, **kw)


def test_one_build_runs_on_cora_and_on_a_random_matrix_without_recompiling():
    if not CORA.exists():
        pytest.skip(f"{CORA} is absent")
    cache = KernelCache(disk=None)
    kernel = _build(cache)
    for matrix, feat in [(load_cora(), 32), (random_csr(300, 170, 0.03, seed=5), 7)]:
        args = csrmm_arguments(matrix, feat)
        kernel(**args)
        np.testing.assert_allclose(args["c"], expected_product(args), rtol=1e-5, atol=1e-5)
    assert cache.compilations == 1


def test_second_build_of_an_equal_function_is_a_cache_hit():
    cache = KernelCache(disk=None)
    first = _build(cache)
    rebuilt = tvm.script.from_source(csrmm.script())  # parsed anew: equal, not the same object
    again = build_stage3(rebuilt, constraints_from_axes(csr_axes(), set()), cache=cache)
    assert again.compiled is first.compiled
    assert (cache.compilations, cache.hits, len(cache)) == (1, 1, 1)


def test_different_targets_and_functions_are_different_entries():
    cache = KernelCache(disk=None)
    plain = _build(cache, target={"kind": "llvm"})
    native = _build(cache)
    other = build_stage3(dcsrmm, [], cache=cache)
    assert len({id(k.compiled) for k in (plain, native, other)}) == 3
    assert cache.compilations == 3


def test_name_sets_the_compiled_symbol():
    kernel = _build(KernelCache(disk=None), name="my_spmm")
    assert kernel.name == "my_spmm"
    assert "my_spmm" in kernel.source()


def test_host_target_names_the_cpu_not_native():
    target = host_target()
    assert str(target.attrs["mcpu"]) == tvm.target.codegen.llvm_get_system_cpu()
    assert str(target.attrs["mcpu"]) not in ("native", "generic")


def test_threads_default_to_all_cores():
    expected = int(os.environ.get("TVM_NUM_THREADS", os.cpu_count()))
    assert num_threads() == expected == os.cpu_count()


def test_source_is_llvm_ir_or_assembly(csr_kernel):
    assert "define" in csr_kernel.source() and "csrmm" in csr_kernel.source()
    assert ".text" in csr_kernel.source("asm")


def test_cuda_target_compiles_to_source_without_a_gpu():
    kernel = build_stage3(gpu_scale, [], target=cuda_target("sm_90"), cache=KernelCache(disk=None))
    assert kernel.target.kind.name == "cuda"
    assert "__global__" in kernel.source()
    assert kernel.outputs == ["y"]


def test_outputs_are_the_written_parameters(csr_kernel):
    assert csr_kernel.params == ["a", "b", "c", "indptr", "indices", "m", "n", "feat_size", "nnz"]
    assert csr_kernel.outputs == ["c"]
    assert build_stage3(dcsrmm, []).outputs == ["c"]


def test_writes_through_a_block_match_buffer_count_as_outputs():
    kernel = build_stage3(copy_rows_via_view, [])
    assert kernel.outputs == ["y"]
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.zeros_like(x)
    kernel(x, y, 3)
    np.testing.assert_array_equal(y, x)


_UNALIGNED = """
import numpy as np
from sparsetir.runtime import build_stage3
from stage3_kernels import scale_rows
kernel = build_stage3(scale_rows, [])
storage = np.zeros(64 * 16 + 1, np.float32)
x = storage[1:].reshape(64, 16)          # 4 bytes past a 64-byte boundary at best
x[:] = 1
out = np.zeros(64 * 16 + 1, np.float32)[1:].reshape(64, 16)
kernel(x, out, 64)
assert (out == 2).all()
print("ok")
"""


def test_vectorized_kernel_accepts_arrays_that_are_not_64_byte_aligned():
    # TVM declares parameters 64-byte aligned and LLVM emits aligned vector moves for them;
    # build_stage3 relaxes that. Run in a child so that a regression is a failure, not a crash.
    result = _run_child(_UNALIGNED)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")


def _run_child(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HERE), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
