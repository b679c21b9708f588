"""sparsetir.build from every stage: one kernel for every matrix, the cache, argument checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import sparsetir
from sparsetir import data
from sparsetir.runtime import KernelCache

WORKLOADS = Path(__file__).resolve().parents[1] / "examples"


def csr_spmm() -> sparsetir.SparseFunction:
    return sparsetir.parse_file(WORKLOADS / "csr_spmm.py")


def spmm_args(a: scipy.sparse.csr_matrix, x: np.ndarray, c: np.ndarray) -> dict:
    m, n = a.shape
    return dict(a=a.data, b=x, c=c, indptr=a.indptr, indices=a.indices, m=m, n=n, feat_size=x.shape[1], nnz=a.nnz)


def random_csr(rng: np.random.Generator, m: int, n: int, density: float) -> scipy.sparse.csr_matrix:
    a = scipy.sparse.random(m, n, density=density, format="csr", random_state=rng, dtype=np.float32)
    a.sort_indices()
    return a


def test_one_build_serves_cora_pubmed_and_a_random_matrix():
    cache = KernelCache(disk=None)
    kernel = sparsetir.build(csr_spmm(), cache=cache)
    rng = np.random.default_rng(0)
    matrices = {"cora": data.load("cora"), "pubmed": data.load("pubmed"), "random": random_csr(rng, 777, 1234, 0.01)}
    for name, a in matrices.items():
        x = rng.standard_normal((a.shape[1], 24), dtype=np.float32)
        c = np.full((a.shape[0], 24), np.nan, dtype=np.float32)
        kernel(**spmm_args(a, x, c))
        np.testing.assert_allclose(c, a @ x, rtol=1e-5, atol=1e-4, err_msg=name)
    assert cache.compilations == 1


def test_second_build_of_the_same_script_is_a_cache_hit():
    cache = KernelCache(disk=None)
    sparsetir.build(csr_spmm(), cache=cache, schedule="none")
    again = sparsetir.parse((WORKLOADS / "csr_spmm.py").read_text())  # a fresh parse, equal program
    sparsetir.build(again, cache=cache, schedule="none")
    assert (cache.compilations, cache.hits) == (1, 1)


def test_default_schedule_compiles_a_variant_per_width_once():
    cache = KernelCache(disk=None)
    a = random_csr(np.random.default_rng(1), 50, 40, 0.1)
    for width in (16, 24, 16):
        kernel = sparsetir.build(sparsetir.parse((WORKLOADS / "csr_spmm.py").read_text()), cache=cache)
        x = np.ones((40, width), np.float32)
        c = np.zeros((50, width), np.float32)
        kernel(**spmm_args(a, x, c))
        np.testing.assert_allclose(c, a @ x, rtol=1e-5, atol=1e-5)
    # one compilation per width: the third build's variant for 16 is the first one's, from the cache
    assert cache.compilations == 2


@pytest.mark.parametrize("stage", ["I", "II", "II-prim", "III"])
def test_build_accepts_every_stage(stage):
    func = csr_spmm()
    if stage != "I":
        func = sparsetir.lower_sparse_iter(func)
    if stage == "II-prim":
        func = func.func  # the stage-II PrimFunc with its metadata attributes
    if stage == "III":
        func = sparsetir.lower_sparse_buffer(func)
    kernel = sparsetir.build(func)
    rng = np.random.default_rng(1)
    a = random_csr(rng, 50, 40, 0.1)
    x = rng.standard_normal((40, 8), dtype=np.float32)
    c = np.zeros((50, 8), np.float32)
    kernel(**spmm_args(a, x, c))
    np.testing.assert_allclose(c, a @ x, rtol=1e-5, atol=1e-5)


def test_kernels_check_structure_by_the_scripts_parameter_names():
    kernel = sparsetir.build(csr_spmm())
    a = random_csr(np.random.default_rng(2), 10, 10, 0.3)
    x = np.ones((10, 4), np.float32)
    c = np.zeros((10, 4), np.float32)
    bad = a.indptr.copy()
    bad[3], bad[4] = bad[4], bad[3] - 1
    with pytest.raises(sparsetir.ArgumentError, match=r"'indptr'.*position [34]"):
        kernel(**{**spmm_args(a, x, c), "indptr": bad})
    wild = a.indices.copy()
    wild[0] = 10
    with pytest.raises(sparsetir.ArgumentError, match=r"'indices'.*position 0"):
        kernel(**{**spmm_args(a, x, c), "indices": wild})


def test_lookup_kernels_require_sorted_indices():
    """A coordinate lookup binary-searches its row; unsorted rows would silently miss entries."""
    kernel = sparsetir.build(sparsetir.parse_file(WORKLOADS / "csr_spmm_detached.py"))
    a = random_csr(np.random.default_rng(3), 12, 9, 0.4)
    x = np.ones((9, 2), np.float32)
    c = np.zeros((12, 2), np.float32)
    kernel(**spmm_args(a, x, c))
    np.testing.assert_allclose(c, a @ x, rtol=1e-5)
    row = int(np.argmax(np.diff(a.indptr)))
    shuffled = a.indices.copy()
    shuffled[a.indptr[row] : a.indptr[row + 1]] = shuffled[a.indptr[row] : a.indptr[row + 1]][::-1]
    with pytest.raises(sparsetir.ArgumentError, match=r"'indices'.*sorted"):
        kernel(**{**spmm_args(a, x, c), "indices": shuffled})
    # the plain CSR SpMM gathers by coordinate and accepts any order
    plain = sparsetir.build(csr_spmm())
    plain(**{**spmm_args(a, x, c), "indices": shuffled})


def test_kernel_source_is_the_generated_code():
    kernel = sparsetir.build(csr_spmm())
    assert "csr_spmm" in kernel.source()


def test_build_rejects_what_is_not_a_program():
    with pytest.raises(TypeError, match="sparsetir.build expects"):
        sparsetir.build("csr_spmm")


def test_an_unroll_too_large_to_compile_is_refused_at_its_line(tmp_path):
    """T.unroll(100000) over a row loop once compiled for minutes; now it is refused, naming the
    loop and its line, before TVM sees it. A smaller unroll of the same loop builds and computes."""
    stage2 = sparsetir.lower_sparse_iter(csr_spmm()).script()
    path = tmp_path / "unrolled.py"
    path.write_text(stage2.replace("for i in range(m):", "for i in T.unroll(100000):", 1))
    line = next(k for k, text in enumerate(path.read_text().splitlines(), 1) if "T.unroll(100000)" in text)
    with pytest.raises(sparsetir.LoweringError) as info:
        sparsetir.build(sparsetir.parse_file(path))
    message = str(info.value)
    assert "the unrolled loop 'i' of extent 100000" in message
    assert f"unrolled.py:{line})" in message and "more than the 100000" in message

    rng = np.random.default_rng(7)
    a = random_csr(rng, 8, 6, 0.4)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    path.write_text(stage2.replace("for i in range(m):", "for i in T.unroll(8):", 1))
    kernel = sparsetir.build(sparsetir.parse_file(path))
    c = np.zeros((8, 4), np.float32)
    kernel(**spmm_args(a, x, c))
    np.testing.assert_allclose(c, a.toarray().astype(np.float64) @ x, rtol=1e-5, atol=1e-5)
