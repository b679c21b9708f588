"""The CUDA back end without a GPU: the host code read into launch steps, the checks made while
compiling, ``kernel.source("cuda")``, nvcc discovery, and the driver calls' argument packing."""

from __future__ import annotations

import ctypes

import pytest
from tvm.script import tirx as T

import sparsetir
from gpu_kernels import op_kernel, workload_function, workload_kernel
from sparsetir.errors import LoweringError
from sparsetir.ops.kernels import KernelKey
from sparsetir.runtime import KernelCache, build_stage3, cuda_target
from sparsetir.runtime.cuda import CudaProgram, Driver, KernelSpec, Launch, Param, ProgramError, as_cuda_tensor
from sparsetir.runtime.cuda.launch import CudaError
from sparsetir.runtime.cuda.nvcc import NvccError, gencode_flags


def _sddmm():
    return op_kernel(KernelKey("sddmm", "float32", 32, target="cuda"))


def _arrays(program, **shapes):
    return {p.name: (1000 * (i + 1), shapes.get(p.name, (1,))) for i, p in enumerate(program.params) if p.kind == "array"}


def test_sddmm_program_launches_the_dot_products_then_the_scaling():
    program = _sddmm().compiled.program
    assert [p.name for p in program.params] == ["a", "x", "y", "o", "rows", "indices", "m", "n", "nnz"]
    arrays = _arrays(program)
    dot, scale = program.launches({"m": 10, "n": 12, "nnz": 1000}, arrays)
    assert dot.grid == (16, 1, 1) and dot.block == (8, 32, 1)  # 32 groups of 8 lanes, 2 nonzeros each
    assert scale.grid == (4, 1, 1) and scale.block == (256, 1, 1)
    spec = program.kernel(dot.kernel)
    pointers = [value for kind, value in zip(spec.params, dot.args) if kind == "handle"]
    assert set(pointers) <= {pointer for pointer, _ in arrays.values()}
    assert dot.args[-3:] == (10, 12, 1000)  # m, n (the bounds of the rows and columns read), nnz


@pytest.mark.parametrize("feat", [1, 2, 3, 32])
def test_sddmm_stores_no_dot_product_past_the_last_nonzero(feat):
    # The nonzero loop is split by a factor that does not divide nnz; TVM 0.27's cross-thread
    # reduction dropped that guard from the store of the reduced value (found on an H200: the
    # last block wrote past the output). Every store into o must sit under a test against nnz.
    source = op_kernel(KernelKey("sddmm", "float64", feat, target="cuda")).compiled.program.source
    lines = source.splitlines()
    stores = [i for i, line in enumerate(lines) if line.lstrip().startswith("o_ptr[")]
    assert stores
    for i in stores:
        guard = lines[i - 1].strip()
        assert guard.startswith("if (") and "< nnz)" in guard, f"width {feat}: {lines[i].strip()} under {guard}"


def test_empty_launches_are_left_out():
    program = _sddmm().compiled.program
    assert program.launches({"m": 0, "n": 0, "nnz": 0}, _arrays(program)) == []


def test_the_default_schedule_sizes_its_grid_from_the_rows():
    program = workload_kernel("csr_spmm").compiled.program
    (launch,) = program.launches({"m": 1000, "n": 7, "feat_size": 3, "nnz": 5}, _arrays(program))
    assert launch.grid == (4, 1, 1) and launch.block == (256, 1, 1)


def test_program_json_round_trip():
    program = _sddmm().compiled.program
    again = CudaProgram.from_json(program.to_json())
    assert again == program
    with pytest.raises(ProgramError, match="not a sparsetir CUDA program"):
        CudaProgram.from_json('{"format": "something else"}')


def _program(block, grid=(["int", 1], ["int", 1], ["int", 1]), args=(["var", "n"],)):
    return CudaProgram("p", "", (Param("n", "scalar", "int32"),), (KernelSpec("k", ("int32",)),),
                       ({"launch": "k", "args": list(args), "grid": list(grid), "block": block},))


def test_launches_past_cuda_limits_are_refused():
    with pytest.raises(ProgramError, match="2048 threads per block exceed CUDA's limit 1024"):
        _program([["int", 1024], ["int", 2], ["int", 1]]).launches({"n": 1}, {})
    with pytest.raises(ProgramError, match="block dimension z = 65 exceeds CUDA's limit 64"):
        _program([["int", 1], ["int", 1], ["int", 65]]).launches({"n": 1}, {})


def test_expressions_follow_tir_integer_semantics():
    grid = (["floordiv", ["int", -7], ["int", 2]], ["floormod", ["int", -7], ["int", 2]], ["int", 1])
    args = (["div", ["int", -7], ["int", 2]],)
    (launch,) = _program([["int", 1]] * 3, grid=grid, args=args).launches({}, {}) or [None]
    assert launch is None  # grid (-4, 1, 1): nothing to run
    program = _program([["int", 1]] * 3, grid=(["int", 1],) * 3, args=args)
    assert program.launches({}, {})[0].args == (-3,)  # truncating division, as C


def test_unknown_values_are_named():
    with pytest.raises(ProgramError, match="no value for 'n'"):
        _program([["int", 1]] * 3).launches({}, {})


@T.prim_func(s_tir=True)
def _unbound_scale(x: T.Buffer(("n",), "float32"), n: T.int32):
    for i in range(n):
        with T.sblock("scale"):
            vi = T.axis.spatial(n, i)
            x[vi] = x[vi] * T.float32(2)


def test_host_code_touching_arrays_is_refused():
    with pytest.raises(LoweringError, match="the host code runs loop 'i' around its kernels; bind it to GPU threads"):
        build_stage3(_unbound_scale, [], target=cuda_target("sm_90"), cache=KernelCache(disk=None))


@T.prim_func(s_tir=True)
def _two_writers(x: T.Buffer((8, 32), "float32"), y: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.sblock("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0)
                y[vi] = y[vi] + x[vi, vk]
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.sblock("again"):
                vi, vk = T.axis.remap("SR", [i, k])
                y[vi] = y[vi] + x[vi, vk]


def test_a_reduction_over_threads_that_tvm_cannot_lower_is_refused():
    with pytest.raises(LoweringError, match="block 'sum' reduces over loop 'k', bound to threadIdx.x, but TVM cannot"):
        build_stage3(_two_writers, [], target=cuda_target("sm_90"), cache=KernelCache(disk=None))


def test_source_formats():
    kernel = workload_kernel("csr_spmm")
    assert kernel.source().startswith("\n#ifdef __CUDACC_RTC__") or "__global__" in kernel.source()
    assert kernel.source("cuda") == kernel.source()
    assert "define" in kernel.source("ll")  # the host code TVM generated
    with pytest.raises(ValueError, match="unknown source format 'ptx'; use 'll', 'asm' or 'cuda'"):
        kernel.source("ptx")
    cpu = sparsetir.build(workload_function("csr_spmm"))
    with pytest.raises(ValueError, match="no CUDA source; build it with target=\"cuda\""):
        cpu.source("cuda")


def test_gencode_flags_name_each_architecture():
    assert gencode_flags(["sm_80", "sm_90"]) == ["-gencode", "arch=compute_80,code=sm_80",
                                                 "-gencode", "arch=compute_90,code=sm_90"]
    with pytest.raises(NvccError, match="not a CUDA architecture: 'compute_90'"):
        gencode_flags(["compute_90"])


def test_without_a_driver_the_launcher_says_so():
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        with pytest.raises(CudaError, match="cannot load the CUDA driver library libcuda.so.1"):
            Driver()
    else:
        pytest.skip("this machine has a CUDA driver")


def test_cpu_tensors_are_refused_by_the_launcher():
    torch = pytest.importorskip("torch")
    with pytest.raises(ProgramError, match="argument 'x' is on cpu, but the kernel runs on a CUDA device"):
        as_cuda_tensor(torch.zeros(3), "x")
    with pytest.raises(ProgramError, match="expected a CUDA array"):
        as_cuda_tensor([1, 2], "x")


class _RecordingLibrary:
    """Stands in for libcuda's cuLaunchKernel: reads back what a launch passes, as the driver
    would (each kernel parameter through its pointer in the array), while the call lasts."""

    def __init__(self, types):
        self.types = types
        self.calls = []

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):  # noqa: N802
        values = [ctypes.cast(params[i], ctypes.POINTER(t)).contents.value for i, t in enumerate(self.types)]
        self.calls.append((function.value, (gx.value, gy.value, gz.value), (bx.value, by.value, bz.value),
                           shared.value, stream.value, values, extra))
        return 0


def test_launch_packs_each_argument_as_its_kernel_parameter_type():
    driver = Driver.__new__(Driver)  # no libcuda here: only the packing is under test
    driver._lib = _RecordingLibrary((ctypes.c_void_p, ctypes.c_int32, ctypes.c_float, ctypes.c_int64))
    launch = Launch("k", (3, 1, 1), (32, 8, 1), 0, (0xDEADBEEF000, 7, 2.5, -1))
    driver.launch(0x1234, launch, ("handle", "int32", "float32", "int64"), stream=0x77)
    assert driver._lib.calls == [(0x1234, (3, 1, 1), (32, 8, 1), 0, 0x77, [0xDEADBEEF000, 7, 2.5, -1], None)]


def test_launch_errors_are_sparsetir_errors():
    from sparsetir.runtime.build import _on_device

    class _Refusing:
        program = CudaProgram("k", "", (), (), ())

        def __init__(self, error):
            self.error = error

        def __call__(self, args):
            raise self.error

    with pytest.raises(sparsetir.ArgumentError, match=r"k\(\): grid too large"):
        _on_device(_Refusing(ProgramError("grid too large")))(())
    with pytest.raises(sparsetir.DeviceError, match=r"k\(\): cuInit failed: no device"):
        _on_device(_Refusing(CudaError("cuInit failed: no device")))(())
