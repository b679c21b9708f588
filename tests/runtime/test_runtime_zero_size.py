"""Zero-size calls run, and nothing but sparsetir errors escapes a kernel call."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import sparsetir
import sparsetir.ops as ops
from matrices import csrmm_arguments, expected_product, random_csr

EXAMPLE = "examples/csr_spmm.py"


@pytest.fixture(scope="module")
def example_kernel(request):
    path = request.config.rootpath / EXAMPLE
    return sparsetir.build(sparsetir.parse(path.read_text(), filename=str(path)))


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("m, n, feat", [(6, 5, 0), (0, 5, 3), (0, 0, 0), (6, 0, 2)])
def test_zero_size_dimensions_run(example_kernel, check, kind, m, n, feat):
    # The case: width 0 raised a plain ValueError about strides from TVM.
    A = sp.random(m, n, 0.4 if m and n else 0.0, format="csr", dtype=np.float32, random_state=1)
    B = np.random.default_rng(0).standard_normal((n, feat)).astype(np.float32)
    C = np.full((m, feat), 7.0, np.float32)
    b, c = (torch.from_numpy(B), torch.from_numpy(C)) if kind == "torch" else (B, C)
    example_kernel(A.data, b, c, A.indptr, A.indices, m, n, feat, A.nnz, check=check)
    np.testing.assert_allclose(C, A @ B.astype(np.float64), atol=1e-6)  # empty, or rows of zeros


def test_tvm_refusals_become_argument_errors(csr_kernel):
    args = csrmm_arguments(random_csr(10, 8, 0.3, seed=4), feat=4)
    args["b"] = np.asfortranarray(args["b"])  # not compact: validation would copy it, TVM refuses it
    with pytest.raises(sparsetir.ArgumentError, match=r"csrmm\(\): the compiled kernel refused the call: "
                                                      r"Mismatched b\.strides .* expected to be compact array") as info:
        csr_kernel(**args, check=False)
    assert isinstance(info.value.__cause__, ValueError)
    csr_kernel(**args)  # checked, the same call runs
    np.testing.assert_allclose(args["c"], expected_product(args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_ops_at_width_zero(kind):
    A = random_csr(12, 9, 0.3, seed=5)
    make = (lambda a: torch.from_numpy(a)) if kind == "torch" else (lambda a: a)
    C = ops.spmm(A, make(np.zeros((9, 0), np.float32)))
    assert tuple(C.shape) == (12, 0)
    y = ops.spmv(A, make(np.ones(9, np.float32)))
    np.testing.assert_allclose(np.asarray(y), A @ np.ones(9), rtol=1e-5)
    B = A.tobsr(blocksize=(3, 3))
    assert tuple(ops.bsr_spmm(B, make(np.zeros((9, 0), np.float32))).shape) == (12, 0)
    S = ops.segment_sum(make(np.zeros((5, 0), np.float32)), np.array([0, 2, 5]))
    assert tuple(S.shape) == (2, 0)
