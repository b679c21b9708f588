"""Every GPU kernel compiles: the ops' kernels and the default-scheduled kernel of every workload,
their CUDA source compiled by nvcc to machine code for sm_80 (Ampere) and sm_90 (Hopper), in one
nvcc run. Needs no GPU; skips with the reason when nvcc is absent (``pip install
'sparsetir[cuda]'`` provides it)."""

from __future__ import annotations

import re

import pytest

from gpu_kernels import OP_KEYS, key_id, op_kernel, workload_kernel
from sparsetir.runtime.cuda import CI_ARCHS, compile_sources, find_nvcc
from sparsetir.schedule.gpu_recipes import feature_layout
from workloads import WORKLOADS

_GLOBAL = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(')


def _sources() -> dict[str, str]:
    sources = {f"op_{key_id(key)}": op_kernel(key).source() for key in OP_KEYS}
    sources.update({f"workload_{name}": workload_kernel(name).source() for name in sorted(WORKLOADS)})
    return sources


@pytest.fixture(scope="module")
def compiled() -> tuple[dict[str, str], dict[str, bytes]]:
    if find_nvcc() is None:
        pytest.skip("nvcc is absent: install sparsetir's 'cuda' extra (NVIDIA's CUDA 13.0 compiler wheels)")
    sources = _sources()
    return sources, compile_sources(sources, CI_ARCHS)


def test_every_kernel_compiles_for_sm80_and_sm90(compiled):
    sources, images = compiled
    assert set(images) == set(sources)
    assert all(len(image) > 1000 for image in images.values())


@pytest.mark.parametrize("key", OP_KEYS, ids=key_id)
def test_op_kernels_are_thread_bound_global_functions(key):
    kernel = op_kernel(key)
    source = kernel.source()
    names = _GLOBAL.findall(source)
    assert names and {k.name for k in kernel.compiled.program.kernels} == set(names)
    assert "blockIdx.x" in source
    if key.op in ("spmm", "segment_sum", "bsr_spmm", "ell_spmm", "hybrid_spmm") and key.feat > 1:
        layout = feature_layout(key.feat, key.dtype)  # rows across threadIdx.y, features across threadIdx.x
        assert ("threadIdx.y" in source) == (layout.rows > 1)
        assert ("threadIdx.x" in source) == (layout.lanes > 1)
    if key.op == "sddmm" or (key.op == "spmm" and key.feat == 1):
        assert "__shfl_down_sync" in source  # the lanes' partial sums reduced by warp shuffles


#: Workloads whose outer loop the default schedule leaves on one thread: none, since iterations
#: that accumulate into shared elements get atomic adds (rgcn_heterogeneous's relations).
SINGLE_THREAD: set[str] = set()

#: Workloads whose default kernel adds into elements several threads share, with atomicAdd.
ATOMIC = {"rgcn_heterogeneous"}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workloads_get_global_functions_from_the_default_schedule(name):
    kernel = workload_kernel(name)
    source = kernel.source()
    assert _GLOBAL.search(source)
    launches = [step for step in kernel.compiled.program.steps if "launch" in step]
    threads = {tuple(map(tuple, step["block"])) for step in launches}
    if name in SINGLE_THREAD:
        assert threads == {(("int", 1), ("int", 1), ("int", 1))} and "threadIdx" not in source
    else:
        assert threads == {(("int", 256), ("int", 1), ("int", 1))} and "threadIdx.x" in source
    assert ("atomicAdd(" in source) == (name in ATOMIC)  # only where the threads' writes collide


def test_vector_loads_where_the_width_allows():
    assert "float4" in op_kernel(next(k for k in OP_KEYS if k.op == "spmm" and k.feat == 128)).source()
