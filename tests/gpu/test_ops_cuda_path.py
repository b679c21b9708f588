"""``sparsetir.ops`` on device tensors, run without a GPU.

``CudaOps`` is the whole CUDA path of the ops (argument checks, the structure prepared once,
outputs on the operands' device, the kernels' arguments) parametrised by a device type and a
kernel source. Here it runs on CPU tensors with each GPU kernel replaced by its CPU simulation
(the same scheduled program, its GPU loops serial), and is compared with the CPU ops. What this
leaves out is named in ``docs/gpu.md``: the CUDA dispatch test itself (``on_cuda``), the
launcher's driver calls and the kernels' parallel execution.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gpu_kernels import simulated_op
from sparsetir import ops
from sparsetir.errors import ArgumentError
from sparsetir.ops.cuda import CudaKernels, CudaOps, aligned, on_cuda

torch = pytest.importorskip("torch")


class _Counting(CudaOps):
    """CudaOps that counts structure preparations (each one copies the index tensors to the host)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.preparations = 0

    def _prepare_csr(self, what, A):
        self.preparations += 1
        return super()._prepare_csr(what, A)


@pytest.fixture
def device_ops():
    return _Counting(device_type="cpu", kernels=CudaKernels(simulated_op))


def _csr(m=90, n=70, density=0.08, dtype=np.float32, seed=0):
    a = sp.random(m, n, density=density, format="lil", dtype=dtype, random_state=seed)
    a[0, :] = 0
    a[m // 2, :] = 0
    a = a.tocsr()
    t = torch.sparse_csr_tensor(torch.from_numpy(a.indptr).long(), torch.from_numpy(a.indices).long(),
                                torch.from_numpy(a.data), size=a.shape, check_invariants=True)
    return a, t


@pytest.mark.parametrize("feat", [1, 8, 33])
def test_spmm_matches_the_cpu_op(device_ops, feat):
    a, A = _csr()
    X = torch.randn(a.shape[1], feat)
    C = device_ops.spmm(A, X)
    assert C.device == X.device and C.shape == (a.shape[0], feat)
    torch.testing.assert_close(C, ops.spmm(A, X), rtol=1e-5, atol=1e-5)


def test_sddmm_softmax_spmm_chain(device_ops):
    a, A = _csr(dtype=np.float64)
    H = torch.randn(a.shape[0], 16, dtype=torch.float64)
    G = torch.randn(a.shape[1], 16, dtype=torch.float64)
    S = device_ops.sddmm(A, H, G)
    torch.testing.assert_close(S.to_dense(), ops.sddmm(A, H, G).to_dense())
    P = device_ops.softmax(S)
    torch.testing.assert_close(P.to_dense(), ops.softmax(ops.sddmm(A, H, G)).to_dense())
    torch.testing.assert_close(device_ops.spmm(P, G), ops.spmm(ops.softmax(ops.sddmm(A, H, G)), G))


def test_spmv_segment_sum_ell(device_ops):
    a, A = _csr()
    x = torch.randn(a.shape[1])
    torch.testing.assert_close(device_ops.spmv(A, x), ops.spmv(A, x))
    values, offsets = torch.randn(40, 3), torch.tensor([0, 0, 15, 15, 40])
    torch.testing.assert_close(device_ops.segment_sum(values, offsets), ops.segment_sum(values, offsets))
    idx, val, X = torch.randint(0, 9, (6, 4)), torch.randn(6, 4), torch.randn(9, 5)
    torch.testing.assert_close(device_ops.ell_spmm(idx, val, X), ops.ell_spmm(idx, val, X))


def test_bsr_spmm(device_ops):
    a = sp.random(12, 18, density=0.3, format="csr", dtype=np.float32, random_state=1).tobsr((3, 2))
    A = torch.sparse_bsr_tensor(torch.from_numpy(a.indptr).long(), torch.from_numpy(a.indices).long(),
                                torch.from_numpy(a.data), size=a.shape)
    X = torch.randn(18, 7)
    torch.testing.assert_close(device_ops.bsr_spmm(A, X), torch.from_numpy(a @ X.numpy()), rtol=1e-5, atol=1e-5)


def test_structure_is_prepared_once_per_matrix_and_values_read_every_call(device_ops):
    a, A = _csr()
    X = torch.randn(a.shape[1], 4)
    first = device_ops.spmm(A, X)
    A.values().mul_(2)  # the values are read afresh
    torch.testing.assert_close(device_ops.spmm(A, X), 2 * first)
    assert device_ops.preparations == 1
    device_ops.forget(A)
    device_ops.spmm(A, X)
    assert device_ops.preparations == 2


def test_results_share_their_input_structure(device_ops):
    a, A = _csr()
    H = torch.randn(a.shape[0], 4)
    S = device_ops.sddmm(A, H, torch.randn(a.shape[1], 4))
    device_ops.softmax(S)
    assert device_ops.preparations == 1


def test_csr_tensors_are_prepared_by_their_index_memory(device_ops):
    a, A = _csr()
    crow, col = A.crow_indices(), A.col_indices()
    X = torch.randn(a.shape[1], 4)
    for _ in range(3):  # a new CsrTensors on the same index tensors each time
        C = device_ops.spmm(ops.CsrTensors(crow, col, A.values(), tuple(A.shape)), X)
    assert device_ops.preparations == 1
    torch.testing.assert_close(C, ops.spmm(A, X))
    col.add_(0)  # an in-place torch edit bumps the version: prepared again
    device_ops.spmm(ops.CsrTensors(crow, col, A.values(), tuple(A.shape)), X)
    assert device_ops.preparations == 2


def test_argument_errors_match_the_cpu_path(device_ops):
    a, A = _csr()
    with pytest.raises(ArgumentError, match="spmm: X: dtype float64 does not match the sparse matrix's dtype float32"):
        device_ops.spmm(A, torch.randn(a.shape[1], 4, dtype=torch.float64))
    with pytest.raises(ArgumentError, match=r"spmm: X: expected 70 rows to match the sparse matrix, got shape \(71, 4\)"):
        device_ops.spmm(A, torch.randn(a.shape[1] + 1, 4))
    bad = torch.sparse_csr_tensor(torch.tensor([0, 2, 1]), torch.tensor([0, 1]), torch.ones(2), size=(2, 3),
                                  check_invariants=False)
    with pytest.raises(ArgumentError, match="spmm: A: indptr: not non-decreasing at position 1"):
        device_ops.spmm(bad, torch.randn(3, 4))
    with pytest.raises(ArgumentError, match="spmm: X: expected a torch tensor on cpu, got ndarray"):
        device_ops.spmm(A, np.zeros((a.shape[1], 4), np.float32))
    dense = torch.randn(6, 6) * (torch.rand(6, 6) < 0.5)
    B = dense.to_sparse_bsr((3, 2)).requires_grad_()
    with pytest.raises(ArgumentError, match="bsr_spmm: A: gradients of a BSR matrix's blocks on CUDA tensors are not "
                                            "implemented yet"):
        device_ops.bsr_spmm(B, torch.randn(6, 5))


def test_misaligned_and_strided_operands_are_copied_on_their_device():
    base = torch.zeros(65)
    view = base[1:]  # 4 bytes past the allocation's start
    assert view.data_ptr() % 16 and aligned(view).data_ptr() % 16 == 0
    strided = torch.zeros(8, 8).t()
    assert aligned(strided).is_contiguous()
    ok = torch.zeros(16)
    assert aligned(ok) is ok


def test_cpu_tensors_do_not_take_the_cuda_path():
    a, A = _csr()
    assert not on_cuda(A, torch.randn(3), np.zeros(3), None)


# -- gradients, against torch's own autograd through dense matrices ---------------------------------


def _dense_twin(A):
    """``A`` as a dense leaf tensor with the same values, and the mask of its pattern."""
    D = A.detach().to_dense().clone().requires_grad_()
    return D, (A.detach().to_dense() != 0)


def _leaf(t):
    return t.detach().clone().requires_grad_()


@pytest.mark.parametrize("feat", [1, 8, 33])
def test_spmm_gradients(device_ops, feat):
    a, A = _csr(dtype=np.float64)
    A.requires_grad_()
    X = torch.randn(a.shape[1], feat, dtype=torch.float64, requires_grad=True)
    W = torch.randn(a.shape[0], feat, dtype=torch.float64)  # a loss whose gradient is not uniform
    (device_ops.spmm(A, X) * W).sum().backward()
    D, mask = _dense_twin(A)
    X2 = _leaf(X)
    ((D @ X2) * W).sum().backward()
    torch.testing.assert_close(X.grad, X2.grad)
    assert A.grad.layout == torch.sparse_csr
    torch.testing.assert_close(A.grad.to_dense(), D.grad * mask)


def test_sddmm_softmax_spmm_chain_gradients(device_ops):
    a, A = _csr(dtype=np.float64)
    A.requires_grad_()
    H = torch.randn(a.shape[0], 6, dtype=torch.float64, requires_grad=True)
    G = torch.randn(a.shape[1], 6, dtype=torch.float64, requires_grad=True)
    V = torch.randn(a.shape[1], 5, dtype=torch.float64, requires_grad=True)
    W = torch.randn(a.shape[0], 5, dtype=torch.float64)
    (device_ops.spmm(device_ops.softmax(device_ops.sddmm(A, H, G)), V) * W).sum().backward()

    D, mask = _dense_twin(A)
    H2, G2, V2 = _leaf(H), _leaf(G), _leaf(V)
    scores = torch.where(mask, D * (H2 @ G2.T), torch.tensor(-torch.inf, dtype=torch.float64))
    P = torch.softmax(scores, dim=1).nan_to_num(0.0)  # rows without entries stay 0
    ((P @ V2) * W).sum().backward()
    for got, want in ((H.grad, H2.grad), (G.grad, G2.grad), (V.grad, V2.grad)):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(A.grad.to_dense(), D.grad * mask)


def test_sddmm_gradient_through_a_dense_result(device_ops):
    a, A = _csr(dtype=np.float64)
    X = torch.randn(a.shape[0], 4, dtype=torch.float64, requires_grad=True)
    Y = torch.randn(a.shape[1], 4, dtype=torch.float64, requires_grad=True)
    W = torch.randn(a.shape, dtype=torch.float64)
    (device_ops.sddmm(A, X, Y).to_dense() * W).sum().backward()
    D, _ = _dense_twin(A)
    X2, Y2 = _leaf(X), _leaf(Y)
    ((D.detach() * (X2 @ Y2.T)) * W).sum().backward()
    torch.testing.assert_close(X.grad, X2.grad)
    torch.testing.assert_close(Y.grad, Y2.grad)


def test_spmv_and_segment_sum_gradients(device_ops):
    a, A = _csr(dtype=np.float64)
    A.requires_grad_()
    x = torch.randn(a.shape[1], dtype=torch.float64, requires_grad=True)
    w = torch.randn(a.shape[0], dtype=torch.float64)
    (device_ops.spmv(A, x) * w).sum().backward()
    D, mask = _dense_twin(A)
    x2 = _leaf(x)
    ((D @ x2) * w).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(A.grad.to_dense(), D.grad * mask)

    values, offsets = torch.randn(40, 3, dtype=torch.float64, requires_grad=True), torch.tensor([0, 0, 15, 15, 40])
    (device_ops.segment_sum(values, offsets) ** 2).sum().backward()
    sums = torch.stack([values[0:0].sum(0), values[0:15].sum(0), values[15:15].sum(0), values[15:40].sum(0)])
    expected = torch.repeat_interleave(2 * sums.detach(), torch.tensor([0, 15, 0, 25]), dim=0)
    torch.testing.assert_close(values.grad, expected)


def test_csr_tensors_values_receive_gradients(device_ops):
    a, A = _csr(dtype=np.float64)
    values = A.values().detach().clone().requires_grad_()
    C = ops.CsrTensors(A.crow_indices(), A.col_indices(), values, tuple(A.shape))
    H = torch.randn(a.shape[0], 4, dtype=torch.float64)
    G = torch.randn(a.shape[1], 4, dtype=torch.float64)
    P = device_ops.softmax(device_ops.sddmm(C, H, G))
    assert type(P) is ops.CsrTensors
    weights = torch.randn(a.nnz, dtype=torch.float64)
    (P.values * weights).sum().backward()

    D, mask = _dense_twin(A)
    scores = torch.where(mask, D * (H @ G.T), torch.tensor(-torch.inf, dtype=torch.float64))
    P2 = torch.softmax(scores, dim=1).nan_to_num(0.0)
    rows = torch.repeat_interleave(torch.arange(a.shape[0]), torch.from_numpy(np.diff(a.indptr)))
    (P2[rows, torch.from_numpy(a.indices).long()] * weights).sum().backward()
    torch.testing.assert_close(values.grad, D.grad[rows, torch.from_numpy(a.indices).long()])


def test_the_transposed_structure_is_made_once_per_matrix(device_ops):
    a, A = _csr(dtype=np.float64)
    X = torch.randn(a.shape[1], 4, dtype=torch.float64, requires_grad=True)
    device_ops.spmm(A, X).sum().backward()
    first = device_ops.csr("A", A).transposed()
    device_ops.spmm(A, X).sum().backward()
    assert device_ops.csr("A", A).transposed() is first
    t, perm = first
    assert t.shape == (a.shape[1], a.shape[0])
    at = a.T.tocsr()
    np.testing.assert_array_equal(t.host_indptr, at.indptr)
    np.testing.assert_array_equal(t.indices.numpy(), at.indices)
    np.testing.assert_array_equal(A.values().detach()[perm].numpy(), at.data)


def test_no_gradient_is_recorded_under_no_grad(device_ops):
    a, A = _csr()
    X = torch.randn(a.shape[1], 4, requires_grad=True)
    with torch.no_grad():
        C = device_ops.spmm(A, X)
    assert C.grad_fn is None and not C.requires_grad


@pytest.mark.parametrize("flat", [False, True])
def test_ell_spmm_gradients(device_ops, flat):
    gen = torch.Generator().manual_seed(3)
    m, width, n = 7, 4, 9
    idx = torch.randint(0, n, (m, width), generator=gen)
    values = torch.randn(m, width, dtype=torch.float64, generator=gen)
    if flat:
        idx, values = idx.reshape(-1), values.reshape(-1)
    values.requires_grad_()
    X = torch.randn(n, 5, dtype=torch.float64, generator=gen, requires_grad=True)
    W = torch.randn(m, 5, dtype=torch.float64, generator=gen)
    (device_ops.ell_spmm(idx, values, X, rows=m if flat else None) * W).sum().backward()

    v2, X2 = _leaf(values), _leaf(X)
    rows = torch.arange(m).repeat_interleave(width)
    dense = torch.zeros(m, n, dtype=torch.float64).index_put((rows, idx.reshape(-1)), v2.reshape(-1), accumulate=True)
    ((dense @ X2) * W).sum().backward()
    torch.testing.assert_close(X.grad, X2.grad)
    torch.testing.assert_close(values.grad, v2.grad)
    assert values.grad.shape == values.shape


def test_bsr_spmm_gradient_of_x(device_ops):
    gen = torch.Generator().manual_seed(4)
    dense = torch.randn(12, 18, dtype=torch.float64, generator=gen) * (torch.rand(12, 18, generator=gen) < 0.3)
    B = dense.to_sparse_bsr((3, 2))
    X = torch.randn(18, 7, dtype=torch.float64, generator=gen, requires_grad=True)
    W = torch.randn(12, 7, dtype=torch.float64, generator=gen)
    (device_ops.bsr_spmm(B, X) * W).sum().backward()
    torch.testing.assert_close(X.grad, dense.T @ W)


def test_an_operand_edited_in_place_before_the_backward_is_refused(device_ops):
    a, A = _csr(dtype=np.float64)
    A.requires_grad_()
    X = torch.randn(a.shape[1], 4, dtype=torch.float64, requires_grad=True)
    H = X * 1
    out = device_ops.spmm(A, H)
    H.mul_(10)  # the gradient of A would read the edited H
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    values = torch.from_numpy(a.data.copy()).requires_grad_()
    C = ops.CsrTensors(A.crow_indices(), A.col_indices(), values, tuple(A.shape))
    P = device_ops.softmax(C)
    P.values.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        P.values.sum().backward()


def test_spmv_takes_a_dlpack_vector_beside_a_matrix_that_needs_a_gradient(device_ops):
    a, A = _csr(dtype=np.float64)
    A.requires_grad_()
    x = torch.randn(a.shape[1], dtype=torch.float64)

    class Producer:  # a DLPack producer that is not a torch tensor
        def __dlpack__(self, **kw):
            return x.__dlpack__(**kw)

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    device_ops.spmv(A, Producer()).sum().backward()
    D, mask = _dense_twin(A)
    (D @ x).sum().backward()
    torch.testing.assert_close(A.grad.to_dense(), D.grad * mask)


def _skewed_with_duplicates(dtype):
    """Rows of 0 to 90 entries (longer than the widest bucket, 32: cut into pieces) in a
    CsrTensors whose row 3 holds column 5 twice (the duplicates are summed)."""
    rng = np.random.default_rng(7)
    lengths = np.array([0, 1, 2, 3, 90, 0, 33, 17, 64, 5] * 4)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.concatenate([np.sort(rng.choice(120, k, replace=False)) for k in lengths])
    indices[indptr[3]:indptr[3] + 2] = 5
    values = rng.standard_normal(indices.shape[0]).astype(dtype)
    dense = np.zeros((lengths.shape[0], 120), dtype)
    np.add.at(dense, (np.repeat(np.arange(lengths.shape[0]), lengths), indices), values)
    A = ops.CsrTensors(torch.from_numpy(indptr), torch.from_numpy(indices), torch.from_numpy(values), dense.shape)
    return dense, A


@pytest.mark.parametrize("fmt", ["hyb", "ell", ops.SpmmFormat("hyb", widths=(2, 8)), ops.SpmmFormat("ell", widths=(4,))],
                         ids=str)
@pytest.mark.parametrize("feat", [1, 8, 33])
def test_spmm_on_the_hybrid_format(device_ops, fmt, feat):
    a, A = _csr(dtype=np.float64)
    X = torch.randn(a.shape[1], feat, dtype=torch.float64)
    torch.testing.assert_close(device_ops.spmm(A, X, format=fmt), torch.from_numpy(a @ X.numpy()))
    dense, B = _skewed_with_duplicates(np.float64)
    Y = torch.randn(dense.shape[1], feat, dtype=torch.float64)
    torch.testing.assert_close(device_ops.spmm(B, Y, format=fmt), torch.from_numpy(dense @ Y.numpy()))


def test_hybrid_format_is_converted_once_and_reads_the_values_every_call(device_ops):
    a, A = _csr()
    X = torch.randn(a.shape[1], 4)
    first = device_ops.spmm(A, X, format="hyb")
    a_dev = device_ops.csr("", A)
    kept = [k for k in a_dev.splits if isinstance(k, tuple) and k[0] == "buckets"]
    A.values().mul_(-3)
    torch.testing.assert_close(device_ops.spmm(A, X, format="hyb"), -3 * first)
    assert [k for k in a_dev.splits if isinstance(k, tuple) and k[0] == "buckets"] == kept and len(kept) == 1
    assert device_ops.preparations == 1


def test_hybrid_format_gradients_are_csrs(device_ops):
    dense, A = _skewed_with_duplicates(np.float64)
    X = torch.randn(dense.shape[1], 6, dtype=torch.float64)
    W = torch.randn(dense.shape[0], 6, dtype=torch.float64)
    grads = []
    for fmt in ("csr", "hyb"):
        values, Xg = A.values.clone().requires_grad_(), X.clone().requires_grad_()
        B = ops.CsrTensors(A.crow_indices, A.col_indices, values, A.shape)
        (device_ops.spmm(B, Xg, format=fmt) * W).sum().backward()
        grads.append((values.grad, Xg.grad))
    torch.testing.assert_close(grads[1][0], grads[0][0])
    torch.testing.assert_close(grads[1][1], grads[0][1])
    torch.testing.assert_close(grads[0][1], torch.from_numpy(dense.T @ W.numpy()))


def test_formats_without_a_gpu_kernel_are_refused(device_ops):
    a, A = _csr()
    X = torch.randn(a.shape[1], 4)
    for fmt in ("bsr", "auto", "tuned", ops.SpmmFormat("bsr", block=2)):
        with pytest.raises(ArgumentError, match=r"spmm: format: '(bsr|auto|tuned)' works on the CPU; on CUDA tensors "
                                                r"spmm computes on 'csr', 'ell' or 'hyb'"):
            device_ops.spmm(A, X, format=fmt)
    with pytest.raises(ArgumentError, match="spmm: format: format must be 'csr', 'ell' or 'hyb' .* on CUDA tensors, "
                                            "got 'hybrid'"):
        device_ops.spmm(A, X, format="hybrid")
    with pytest.raises(ArgumentError, match=r"spmm: format: hyb needs increasing power-of-two widths, got \(3,\)"):
        device_ops.spmm(A, X, format=ops.SpmmFormat("hyb", widths=(3,)))
