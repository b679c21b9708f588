"""Calling a Kernel: argument styles, torch tensors, in-place outputs, untouched inputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsetir.runtime import build_stage3, constraints_from_axes
from matrices import csrmm_arguments, expected_product, random_csr
from stage3_kernels import dcsr_axes, dcsrmm

ORDER = ["a", "b", "c", "indptr", "indices", "m", "n", "feat_size", "nnz"]


def _check(args):
    np.testing.assert_allclose(args["c"], expected_product(args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("style", ["positional", "keyword", "mixed", "numpy-scalars"])
def test_argument_styles(csr_kernel, style):
    args = csrmm_arguments(random_csr(40, 30, 0.1, seed=2), feat=5)
    if style == "positional":
        csr_kernel(*[args[p] for p in ORDER])
    elif style == "keyword":
        csr_kernel(**dict(reversed(list(args.items()))))
    elif style == "mixed":
        csr_kernel(args["a"], args["b"], args["c"], **{p: args[p] for p in ORDER[3:]})
    else:
        csr_kernel(**{**args, "m": np.int64(40), "n": np.int32(30), "nnz": np.int64(args["nnz"])})
    _check(args)


@pytest.mark.parametrize(
    "shape, density, feat",
    [((1, 50), 0.3, 3), ((60, 1), 0.5, 8), ((0, 5), 0.0, 4), ((25, 25), 0.0, 2), ((200, 90), 0.02, 16)],
    ids=["single-row", "single-column", "no-rows", "all-empty", "sparse"],
)
def test_edge_shapes_zero_empty_rows(csr_kernel, shape, density, feat):
    matrix = sp.random(*shape, density=density, format="csr", dtype=np.float32, random_state=3)
    args = csrmm_arguments(matrix, feat)
    csr_kernel(**args)
    _check(args)
    assert not np.isnan(args["c"]).any()


def test_unsorted_rows_are_accepted_when_no_binary_search_needs_them(csr_kernel):
    matrix = random_csr(30, 20, 0.3, seed=4)
    for row in range(30):
        lo, hi = matrix.indptr[row], matrix.indptr[row + 1]
        matrix.indices[lo:hi] = matrix.indices[lo:hi][::-1].copy()
        matrix.data[lo:hi] = matrix.data[lo:hi][::-1].copy()
    matrix.has_sorted_indices = False
    args = csrmm_arguments(matrix, 4)
    csr_kernel(**args)
    _check(args)


def test_inputs_are_unchanged(csr_kernel):
    args = csrmm_arguments(random_csr(50, 40, 0.1, seed=6), feat=6)
    before = {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray) and k != "c"}
    csr_kernel(**args)
    for name, copy in before.items():
        np.testing.assert_array_equal(args[name], copy, err_msg=name)


def test_read_only_and_strided_inputs_work(csr_kernel):
    args = csrmm_arguments(random_csr(50, 40, 0.1, seed=7), feat=6)
    for name in ("a", "indptr", "indices"):
        args[name].flags.writeable = False
    args["b"] = np.asfortranarray(args["b"])
    csr_kernel(**args)
    _check(args)


def test_unchecked_call_computes_the_same(csr_kernel):
    args = csrmm_arguments(random_csr(50, 40, 0.1, seed=8), feat=6)
    args["a"].flags.writeable = False
    csr_kernel(**args, check=False)
    _check(args)


def test_nested_dcsr_kernel_matches_scipy():
    kernel = build_stage3(dcsrmm, constraints_from_axes(dcsr_axes(), set()))
    matrix = random_csr(40, 25, 0.1, seed=9)
    rows = np.flatnonzero(np.diff(matrix.indptr)).astype(np.int32)
    compressed = matrix[rows]
    b = np.random.default_rng(0).random((25, 8), dtype=np.float32)
    c = np.full((40, 8), np.nan, np.float32)
    kernel(
        compressed.data, b, c, np.array([0, rows.size], np.int32), rows,
        compressed.indptr.astype(np.int32), compressed.indices.astype(np.int32),
        40, 25, 8, rows.size, compressed.nnz,
    )
    np.testing.assert_allclose(c, matrix @ b, rtol=1e-5, atol=1e-5)


def test_torch_tensors(csr_kernel):
    torch = pytest.importorskip("torch")
    args = csrmm_arguments(random_csr(50, 40, 0.1, seed=10), feat=6)
    tensors = {k: torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for k, v in args.items()}
    tensors["b"].requires_grad_(True)
    out = torch.zeros(50, 6)
    csr_kernel(**{**tensors, "c": out})
    np.testing.assert_allclose(out.numpy(), expected_product(args), rtol=1e-5, atol=1e-5)
    mixed = dict(args, c=torch.zeros(50, 6), b=torch.from_numpy(args["b"]).t().contiguous().t())
    csr_kernel(**mixed)
    np.testing.assert_allclose(mixed["c"].numpy(), expected_product(args), rtol=1e-5, atol=1e-5)


def test_torch_output_must_be_contiguous(csr_kernel):
    torch = pytest.importorskip("torch")
    from sparsetir.errors import ArgumentError

    args = csrmm_arguments(random_csr(20, 10, 0.2, seed=11), feat=4)
    with pytest.raises(ArgumentError, match="argument 'c': must be C-contiguous"):
        csr_kernel(**dict(args, c=torch.zeros(4, 20).t()))
    with pytest.raises(ArgumentError, match="argument 'indptr': expected dtype int32, got int64"):
        csr_kernel(**dict(args, indptr=torch.from_numpy(args["indptr"]).long()))


def test_torch_output_that_requires_grad_is_refused_and_left_unwritten(csr_kernel):
    torch = pytest.importorskip("torch")
    from sparsetir.errors import ArgumentError

    args = csrmm_arguments(random_csr(20, 10, 0.2, seed=12), feat=4)
    out = torch.full((20, 4), 7.0, requires_grad=True)
    with pytest.raises(ArgumentError, match="argument 'c': is a torch tensor that requires grad, but the kernel "
                                            "writes it in place"):
        csr_kernel(**dict(args, c=out))
    assert bool((out.detach() == 7.0).all())
    csr_kernel(**dict(args, c=out.detach()))  # its detached alias is an ordinary output
    np.testing.assert_allclose(out.detach().numpy(), expected_product(args), rtol=1e-5, atol=1e-5)


class _DLPackOnly:
    """An array that offers nothing but the DLPack protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_producers_and_tvm_tensors(csr_kernel):
    from sparsetir._tvm import tvm

    args = csrmm_arguments(random_csr(30, 20, 0.2, seed=13), feat=4)
    out = tvm.runtime.tensor(np.zeros((30, 4), np.float32))
    csr_kernel(**dict(args, a=_DLPackOnly(args["a"]), indptr=tvm.runtime.tensor(args["indptr"]), c=out))
    np.testing.assert_allclose(out.numpy(), expected_product(args), rtol=1e-5, atol=1e-5)


def test_kernel_has_a_python_signature(csr_kernel):
    import inspect

    assert list(inspect.signature(csr_kernel).parameters) == ORDER
    assert repr(csr_kernel) == f"Kernel(csrmm({', '.join(ORDER)}) -> llvm)"
