"""Atomic adds chosen by the compiler: where threads of a CUDA kernel may update one element
(``thread_binding.colliding_buffers``), its accumulations become ``atomicAdd`` (the default GPU
schedule on a nest that cannot run in parallel as written; a reduction bound to threads that
TVM cannot lower); owned rows keep plain stores, and what cannot be atomic is refused or, in
the default schedule, left on one thread. Checked against NumPy through the CPU simulation."""

from __future__ import annotations

import numpy as np
import pytest
from tvm.script import tirx as T

import sparsetir
from gpu_kernels import workload_kernel
from sparsetir._tvm import Schedule as TVMSchedule
from sparsetir.errors import LoweringError
from sparsetir.runtime import KernelCache, build_stage3, cuda_target
from sparsetir.runtime.cuda import CI_ARCHS, compile_sources, find_nvcc
from sparsetir.runtime.cuda.simulate import simulate
from sparsetir.schedule.thread_binding import colliding_buffers
from sparsetir.transforms.atomic_updates import atomic_accumulations, lower_atomic_updates


@T.prim_func(s_tir=True)
def _scatter(x: T.Buffer((64,), "float32"), idx: T.Buffer((64,), "int32"), scaled: T.Buffer((64,), "float32"),
             total: T.Buffer((8,), "float32")):
    """Each iteration owns ``scaled[i]`` and adds into ``total[idx[i]]``, which others share."""
    for i in range(64):
        with T.sblock("scatter"):
            vi = T.axis.spatial(64, i)
            scaled[vi] = x[vi] * T.float32(2)
            total[idx[vi]] = total[idx[vi]] + x[vi]


@T.prim_func(s_tir=True)
def _scatter_max(x: T.Buffer((64,), "float32"), idx: T.Buffer((64,), "int32"), top: T.Buffer((8,), "float32")):
    for i in range(64):
        with T.sblock("scatter_max"):
            vi = T.axis.spatial(64, i)
            top[idx[vi]] = T.max(top[idx[vi]], x[vi])


@T.prim_func(s_tir=True)
def _scatter_then_read(x: T.Buffer((64,), "float32"), idx: T.Buffer((64,), "int32"), total: T.Buffer((8,), "float32"),
                       seen: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.sblock("scatter_read"):
            vi = T.axis.spatial(64, i)
            total[idx[vi]] = total[idx[vi]] + x[vi]
            seen[vi] = total[idx[vi]]


@T.prim_func(s_tir=True)
def _row_sums_over_blocks(x: T.Buffer((8, 32), "float32"), y: T.Buffer((8,), "float32")):
    """The reduction loop bound to blocks: every block adds into each row."""
    for k in T.thread_binding(32, thread="blockIdx.x"):
        for i in T.thread_binding(8, thread="threadIdx.x"):
            with T.sblock("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                y[vi] = y[vi] + x[vi, vk]


@T.prim_func(s_tir=True)
def _row_max_over_blocks(x: T.Buffer((8, 32), "float32"), y: T.Buffer((8,), "float32")):
    for k in T.thread_binding(32, thread="blockIdx.x"):
        for i in T.thread_binding(8, thread="threadIdx.x"):
            with T.sblock("row_max"):
                vi, vk = T.axis.remap("SR", [i, k])
                y[vi] = T.max(y[vi], x[vi, vk])


def _loop(func, block):
    sch = TVMSchedule(func)
    return sch, sch.get_loops(sch.get_sblock(block))[0]


def _inputs(rng):
    return rng.standard_normal(64).astype(np.float32), rng.integers(0, 8, 64).astype(np.int32)


# --- deciding which buffers collide ---------------------------------------------------------------


def test_only_the_shared_buffer_collides():
    sch, loop = _loop(_scatter, "scatter")
    assert colliding_buffers(sch, loop) == ["total"]  # scaled[i] is owned by iteration i


def test_atomic_accumulations_rewrite_only_the_named_buffers():
    text = _scatter.with_body(atomic_accumulations(_scatter.body, ["total"], "loop 'i'")).script()
    assert "T.cuda.atomic_add(T.address_of(total[idx[vi]]), x[vi])" in text
    assert "scaled[vi] = x[vi] * T.float32(2.0)" in text or "scaled[vi] = x[vi] * T.float32(2)" in text


# --- refusals -------------------------------------------------------------------------------------


def test_a_max_reduction_cannot_be_atomic():
    with pytest.raises(LoweringError, match=r"loop 'i': the max reduction top\[\.\.\.\] = .* CUDA in TVM 0.27 has "
                                            r"atomic add only \(no atomic max\)"):
        atomic_accumulations(_scatter_max.body, ["top"], "loop 'i'")
    with pytest.raises(LoweringError, match="block 'scatter_max': the max reduction"):
        lower_atomic_updates(_scatter_max, ["scatter_max"])


def test_a_shared_element_read_in_the_kernel_cannot_be_atomic():
    with pytest.raises(LoweringError, match="the kernel also reads it outside its accumulations"):
        atomic_accumulations(_scatter_then_read.body, ["total"], "loop 'i'")


def test_an_init_of_a_shared_element_cannot_be_atomic():
    @T.prim_func(s_tir=True)
    def with_init(x: T.Buffer((64,), "float32"), idx: T.Buffer((64,), "int32"), total: T.Buffer((8,), "float32")):
        for i in range(64):
            with T.sblock("acc"):
                vi = T.axis.reduce(64, i)
                with T.init():
                    total[idx[0]] = T.float32(0)
                total[idx[vi]] = total[idx[vi]] + x[vi]

    with pytest.raises(LoweringError, match="block 'acc' initialises total in a T.init"):
        atomic_accumulations(with_init.body, ["total"], "loop 'i'")


# --- the default GPU schedule ---------------------------------------------------------------------


def test_default_schedule_binds_a_colliding_nest_with_atomics_on_the_shared_buffer_only():
    kernel = sparsetir.build(_scatter, target="cuda")
    source = kernel.source()
    assert "threadIdx.x" in source and "blockIdx.x" not in source  # 64 iterations: one block
    assert "atomicAdd(" in source  # in TVM's helper, emitted only when a kernel uses it
    uses = [ln.strip() for ln in source.splitlines() if ln.strip().startswith("tvm_builtin_cuda_atomic_add(")]
    assert len(uses) == 1 and uses[0].startswith("tvm_builtin_cuda_atomic_add((&(total_ptr[")
    assert "scaled_ptr[((int)threadIdx.x)] = " in source  # the owned element: a plain store
    x, idx = _inputs(np.random.default_rng(0))
    scaled, total = np.zeros(64, np.float32), np.ones(8, np.float32)
    simulate(kernel)(x, idx, scaled, total)
    np.testing.assert_allclose(total, 1 + np.bincount(idx, weights=x, minlength=8), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(scaled, 2 * x)


@pytest.mark.parametrize("func", [_scatter_max, _scatter_then_read], ids=["max", "read"])
def test_default_schedule_leaves_what_cannot_be_atomic_on_one_thread(func):
    kernel = sparsetir.build(func, target="cuda")
    source = kernel.source()
    assert "atomicAdd(" not in source and "threadIdx" not in source
    steps = [s for s in kernel.compiled.program.steps if "launch" in s]
    assert {tuple(map(tuple, s["block"])) for s in steps} == {(("int", 1), ("int", 1), ("int", 1))}


@pytest.mark.parametrize("name", ["csr_spmm", "sddmm_fused", "fused_rows_reduction", "ragged_fused_reduction",
                                  "csf_fuse3"])
def test_default_schedule_keeps_owned_rows_free_of_atomics(name):
    """Rows (and fused nonzeros) the proof shows owned by one thread keep plain stores."""
    source = workload_kernel(name).source()
    assert "threadIdx.x" in source and "atomicAdd" not in source


def test_rgcn_relations_run_on_threads_adding_atomically_into_y():
    kernel = workload_kernel("rgcn_heterogeneous")
    text = kernel.func.script()
    assert 'thread="blockIdx.x"' in text and 'thread="threadIdx.x"' in text
    assert text.count("T.cuda.atomic_add(T.address_of(y[") == 1


# --- reductions bound to threads by the user -----------------------------------------------------


def _compile(func):
    return build_stage3(func, [], target=cuda_target("sm_90"), cache=KernelCache(disk=None))


def test_a_reduction_over_blocks_becomes_atomic_adds():
    kernel = _compile(_row_sums_over_blocks)
    assert "atomicAdd(" in kernel.source()
    x = np.random.default_rng(1).standard_normal((8, 32)).astype(np.float32)
    y = np.full(8, 0.5, np.float32)
    simulate(kernel)(x, y)
    np.testing.assert_allclose(y, 0.5 + x.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_a_max_reduction_over_blocks_is_refused():
    with pytest.raises(LoweringError, match=r"block 'row_max' reduces over loop 'k', bound to blockIdx.x, .* "
                                            r"cannot be made atomic adds: block 'row_max': the max reduction "
                                            r".*\(no atomic max\)"):
        _compile(_row_max_over_blocks)


def test_the_atomic_kernels_compile_with_nvcc():
    if find_nvcc() is None:
        pytest.skip("nvcc is absent: install sparsetir's 'cuda' extra (NVIDIA's CUDA 13.0 compiler wheels)")
    sources = {"scatter": sparsetir.build(_scatter, target="cuda").source(),
               "row_sums": _compile(_row_sums_over_blocks).source()}
    images = compile_sources(sources, CI_ARCHS)
    assert set(images) == set(sources) and all(len(image) > 1000 for image in images.values())
