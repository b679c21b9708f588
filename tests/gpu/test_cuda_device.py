"""The GPU kernels on a CUDA device: every op on torch CUDA tensors against the CPU ops, every
workload's default-scheduled kernel against its reference, torch's current stream respected.

These run only where torch sees a CUDA device, the NVIDIA driver (``libcuda.so.1``) loads and
nvcc is found (the kernels are compiled for the device on first use); otherwise each test skips
and says which of them is missing. On a GPU machine without TVM, the exported bundle runs the
same checks (``tools/export_gpu_bundle.py``, ``docs/gpu.md``).
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import sparsetir
from gpu_kernels import workload_function
from sparsetir import ops
from sparsetir.runtime.cuda import find_nvcc
from workloads import WORKLOADS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


def _device_missing() -> str:
    if not torch.cuda.is_available():
        return f"no CUDA device: torch {torch.__version__} sees none (a CPU build of torch, or no GPU)"
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "the NVIDIA driver library libcuda.so.1 cannot be loaded"
    if find_nvcc() is None:
        return "nvcc is absent (pip install 'sparsetir[cuda]')"
    return ""


@pytest.fixture(scope="module", autouse=True)
def cuda_device():
    missing = _device_missing()
    if missing:
        pytest.skip(missing)


def _cora(dtype=torch.float32):
    a = sparsetir.data.load("cora")
    return torch.sparse_csr_tensor(torch.from_numpy(a.indptr).long(), torch.from_numpy(a.indices).long(),
                                   torch.from_numpy(a.data), size=a.shape).to(dtype)


@pytest.mark.parametrize("width", [1, 32, 33, 128, 512])
def test_spmm_on_cuda_matches_the_cpu(width):
    A = _cora()
    X = torch.randn(A.shape[1], width)
    expected = ops.spmm(A, X)
    got = ops.spmm(A.cuda(), X.cuda())
    assert got.is_cuda
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fmt", ["hyb", "ell"])
@pytest.mark.parametrize("width", [1, 33, 128, 512])
def test_spmm_on_the_hybrid_format_on_cuda_matches_the_cpu(fmt, width):
    A = _cora()
    X = torch.randn(A.shape[1], width)
    got = ops.spmm(A.cuda(), X.cuda(), format=fmt)
    torch.testing.assert_close(got.cpu(), ops.spmm(A, X), rtol=1e-4, atol=1e-4)
    A64 = _cora(torch.float64).cuda()
    X64 = torch.randn(A.shape[1], width, dtype=torch.float64)
    W = torch.randn(A.shape[0], width, dtype=torch.float64)
    for g, w in zip(_grads(A64, [X64.cuda()], lambda A, X: ops.spmm(A, X, format=fmt) * W.cuda()),
                    _grads(A64.cpu(), [X64], lambda A, X: ops.spmm(A, X) * W)):
        torch.testing.assert_close(g.cpu(), w, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("width", [1, 2, 5, 32, 128, 512])
def test_sddmm_and_softmax_on_cuda_match_the_cpu(width):
    A = _cora()
    X, Y = torch.randn(A.shape[0], width), torch.randn(A.shape[1], width)
    S = ops.sddmm(A.cuda(), X.cuda(), Y.cuda())
    torch.testing.assert_close(S.values().cpu(), ops.sddmm(A, X, Y).values(), rtol=1e-4, atol=1e-4)
    P = ops.softmax(S)
    torch.testing.assert_close(P.values().cpu(), ops.softmax(ops.sddmm(A, X, Y)).values(), rtol=1e-4, atol=1e-4)


def test_spmv_segment_sum_ell_bsr_on_cuda():
    A = _cora()
    x = torch.randn(A.shape[1])
    torch.testing.assert_close(ops.spmv(A.cuda(), x.cuda()).cpu(), ops.spmv(A, x), rtol=1e-4, atol=1e-4)
    v, offs = torch.randn(1000, 16), torch.tensor([0, 10, 10, 700, 1000])
    torch.testing.assert_close(ops.segment_sum(v.cuda(), offs).cpu(), ops.segment_sum(v, offs), rtol=1e-4, atol=1e-4)
    idx, val, X = torch.randint(0, 50, (40, 6)), torch.randn(40, 6), torch.randn(50, 24)
    torch.testing.assert_close(ops.ell_spmm(idx.cuda(), val.cuda(), X.cuda()).cpu(), ops.ell_spmm(idx, val, X),
                               rtol=1e-4, atol=1e-4)
    dense = torch.randn(16, 12) * (torch.rand(16, 12) < 0.3)
    B = dense.to_sparse_bsr((4, 3))
    Xb = torch.randn(12, 8)
    torch.testing.assert_close(ops.bsr_spmm(B.cuda(), Xb.cuda()).cpu(), dense @ Xb, rtol=1e-4, atol=1e-4)


def _grads(A, dense, fn):
    """The output and the gradients of ``fn(A, *dense)``'s weighted sum, A's values' first."""
    A = A.detach().clone().requires_grad_()
    dense = [t.detach().clone().requires_grad_() for t in dense]
    out = fn(A, *dense)
    weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype, device=out.device).reshape(out.shape)
    (out * weights).sum().backward()
    return [A.grad.values()] + [t.grad for t in dense]


@pytest.mark.parametrize("width", [1, 32, 128])
def test_gradients_on_cuda_match_the_cpu(width):
    A = _cora(torch.float64)
    X, H, G = (torch.randn(A.shape[0], width, dtype=torch.float64) for _ in range(3))
    gat = lambda A, X, H, G: ops.spmm(ops.softmax(ops.sddmm(A, H, G)), X)  # noqa: E731
    for fn, dense in ((ops.spmm, [X]), (gat, [X, H, G])):
        want = _grads(A, dense, fn)
        got = _grads(A.cuda(), [t.cuda() for t in dense], fn)
        for g, w in zip(got, want):
            torch.testing.assert_close(g.cpu(), w, rtol=1e-8, atol=1e-8)
    x = torch.randn(A.shape[1], dtype=torch.float64)
    for g, w in zip(_grads(A.cuda(), [x.cuda()], ops.spmv), _grads(A, [x], ops.spmv)):
        torch.testing.assert_close(g.cpu(), w, rtol=1e-8, atol=1e-8)


def test_ell_and_bsr_gradients_on_cuda_match_the_cpu():
    gen = torch.Generator().manual_seed(5)
    idx = torch.randint(0, 50, (40, 6), generator=gen)
    values = torch.randn(40, 6, dtype=torch.float64, generator=gen)
    X = torch.randn(50, 24, dtype=torch.float64, generator=gen)
    ell = lambda v, X, idx=idx: ops.ell_spmm(idx.to(v.device), v, X)  # noqa: E731
    got = _grads_dense([values.cuda(), X.cuda()], ell)
    want = _grads_dense([values, X], ell)
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w, rtol=1e-8, atol=1e-8)
    dense = torch.randn(16, 12, dtype=torch.float64, generator=gen) * (torch.rand(16, 12, generator=gen) < 0.3)
    B = dense.to_sparse_bsr((4, 3)).cuda()
    Xb = torch.randn(12, 8, dtype=torch.float64, generator=gen)
    (dX,) = _grads_dense([Xb.cuda()], lambda X: ops.bsr_spmm(B, X))
    (want,) = _grads_dense([Xb], lambda X: dense @ X)
    torch.testing.assert_close(dX.cpu(), want, rtol=1e-8, atol=1e-8)


def _grads_dense(tensors, fn):
    tensors = [t.detach().clone().requires_grad_() for t in tensors]
    out = fn(*tensors)
    weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype, device=out.device).reshape(out.shape)
    (out * weights).sum().backward()
    return [t.grad for t in tensors]


def test_kernels_run_on_the_current_stream():
    A, X = _cora().cuda(), torch.randn(2708, 64, device="cuda")
    expected = ops.spmm(A, X)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        got = ops.spmm(A, X)
    stream.synchronize()
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_default_schedule_on_cuda(name):
    w = WORKLOADS[name]
    kernel = sparsetir.build(workload_function(name), target="cuda")
    for case in w.cases:
        inputs = w.make_inputs(np.random.default_rng(11), case)
        expected = w.reference(inputs)
        args = [torch.from_numpy(np.ascontiguousarray(inputs[p])).cuda() if isinstance(inputs[p], np.ndarray)
                else inputs[p] for p in w.params]
        kernel(*args)
        for out in w.outputs:
            got = args[w.params.index(out)].cpu().numpy()
            np.testing.assert_allclose(got, expected[out], rtol=2e-5, atol=2e-5, err_msg=f"{name}/{case}/{out}")


def test_malformed_structure_is_refused_on_the_device():
    kernel = sparsetir.build(workload_function("csr_spmm"), target="cuda")
    indptr = torch.tensor([0, 2, 1], dtype=torch.int32, device="cuda")
    with pytest.raises(sparsetir.ArgumentError, match="indptr"):
        kernel(torch.ones(2, device="cuda"), torch.ones(3, 4, device="cuda"), torch.empty(2, 4, device="cuda"),
               indptr, torch.tensor([0, 1], dtype=torch.int32, device="cuda"), 2, 3, 4, 2)
