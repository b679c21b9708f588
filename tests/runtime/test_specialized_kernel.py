"""``SpecializedKernel``, the kernel ``sparsetir.build`` returns under the default schedule: a
variant per width, the generic variant for the rest, the script's own argument checks, and a
prefetching variant chosen per matrix; every result against SciPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import sparsetir
import sparsetir.runtime.specialized as specialized
from sparsetir.runtime import KernelCache
from sparsetir.runtime.specialized import SpecializedKernel

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"
FEAT = 8


def script() -> sparsetir.SparseFunction:
    return sparsetir.parse_file(EXAMPLE)


def fresh_kernel() -> SpecializedKernel:
    """A kernel of its own (no variant compiled yet); compiled code still comes from the disk cache."""
    return sparsetir.build(script(), cache=KernelCache())


@pytest.fixture(scope="module")
def kernel() -> SpecializedKernel:
    return fresh_kernel()


@pytest.fixture(scope="module")
def serial():
    """The same script built as written: the reference for argument errors."""
    return sparsetir.build(script(), schedule="none")


def random_csr(rng: np.random.Generator, m: int, n: int, density: float = 0.2,
               empty_rows: tuple[int, ...] = ()) -> scipy.sparse.csr_matrix:
    dense = scipy.sparse.random(m, n, density=density, random_state=rng, dtype=np.float32).toarray()
    dense[list(empty_rows)] = 0
    return scipy.sparse.csr_matrix(dense)


def spmm_args(a: scipy.sparse.csr_matrix, x: np.ndarray, c: np.ndarray) -> dict:
    m, n = a.shape
    return dict(a=a.data, b=x, c=c, indptr=a.indptr, indices=a.indices, m=m, n=n, feat_size=x.shape[1], nnz=a.nnz)


def expected(a: scipy.sparse.csr_matrix, x: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) @ x.astype(np.float64)


def run(kernel, a: scipy.sparse.csr_matrix, width: int, seed: int = 0) -> None:
    """Call ``kernel`` on ``a`` and a random dense operand of ``width`` columns; compare with SciPy."""
    x = np.random.default_rng(seed).standard_normal((a.shape[1], width)).astype(np.float32)
    c = np.full((a.shape[0], width), np.nan, np.float32)
    kernel(**spmm_args(a, x, c))
    np.testing.assert_allclose(c, expected(a, x), rtol=1e-5, atol=1e-5)


def widths_compiled(kernel: SpecializedKernel) -> set:
    return {widths for widths, _ in kernel.compiled_variants()}


def banded(n: int) -> scipy.sparse.csr_matrix:
    """A tridiagonal matrix: two of every three entries' columns follow the previous entry's."""
    rng = np.random.default_rng(n)
    diagonals = [rng.standard_normal(n - 1), rng.standard_normal(n), rng.standard_normal(n - 1)]
    return scipy.sparse.diags(diagonals, [-1, 0, 1], format="csr", dtype=np.float32)


def scattered(n: int, per_row: int = 8) -> scipy.sparse.csr_matrix:
    """Random columns all over the matrix: almost no entry's column follows the previous one's."""
    rng = np.random.default_rng(n)
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, n, size=rows.size)
    a = scipy.sparse.csr_matrix((rng.standard_normal(rows.size).astype(np.float32), (rows, cols)), shape=(n, n))
    a.sum_duplicates()
    a.sort_indices()
    return a


def consecutive_fraction(a: scipy.sparse.csr_matrix) -> float:
    """The fraction of stored entries whose column is the previous entry's plus one."""
    return float(np.mean(np.diff(a.indices.astype(np.int64)) == 1))


# -- variants -------------------------------------------------------------------------------


def test_one_variant_per_width_serves_every_matrix():
    kernel = fresh_kernel()
    rng = np.random.default_rng(1)
    matrices = [random_csr(rng, 30, 20), random_csr(rng, 7, 50, 0.5), random_csr(rng, 64, 64, 0.05)]
    for width in (8, 24):
        for k, a in enumerate(matrices):
            run(kernel, a, width, seed=k)
    assert set(kernel.compiled_variants()) == {((8,), -1), ((24,), -1)}
    assert kernel.widths == ["feat_size"]
    assert kernel.params == ["a", "b", "c", "indptr", "indices", "m", "n", "feat_size", "nnz"]
    assert kernel.compiled_variants()[((8,), -1)] is kernel.variant(feat_size=8)


def test_widths_beyond_max_variants_run_the_generic_variant(monkeypatch):
    monkeypatch.setattr(specialized, "MAX_VARIANTS", 2)
    kernel = fresh_kernel()
    a = random_csr(np.random.default_rng(2), 12, 9, empty_rows=(0, 11))
    for width in range(1, 7):
        run(kernel, a, width, seed=width)
    assert None in widths_compiled(kernel)  # the generic variant ran the widths past the limit
    assert len(widths_compiled(kernel)) < 6
    for width in range(1, 7):  # each width again, by whichever variant it has now
        run(kernel, a, width, seed=10 + width)


def test_at_most_max_variants_widths_get_a_variant(monkeypatch):
    monkeypatch.setattr(specialized, "MAX_VARIANTS", 2)
    kernel = fresh_kernel()
    a = random_csr(np.random.default_rng(2), 12, 9)
    for width in range(1, 5):
        run(kernel, a, width, seed=width)
    assert len(widths_compiled(kernel) - {None}) <= 2


def test_widths_zero_and_over_max_width_run_the_generic_variant():
    kernel = fresh_kernel()
    a = random_csr(np.random.default_rng(3), 5, 4, 0.5)
    c = np.zeros((5, 0), np.float32)
    kernel(**spmm_args(a, np.zeros((4, 0), np.float32), c))
    assert c.shape == (5, 0) and set(kernel.compiled_variants()) == {(None, -1)}
    run(kernel, scipy.sparse.csr_matrix(a[:2, :2]), specialized.MAX_WIDTH + 1)
    assert set(kernel.compiled_variants()) == {(None, -1)}


def test_the_variant_of_width_zero_is_compiled_or_refused_naming_it():
    kernel = fresh_kernel()
    try:
        variant = kernel.variant(feat_size=0)
    except sparsetir.ArgumentError as err:
        assert "feat_size" in str(err)
    else:
        assert "csr_spmm" in variant.name


def test_an_empty_matrix_and_empty_rows(kernel):
    run(kernel, scipy.sparse.csr_matrix((0, 0), dtype=np.float32), FEAT)
    run(kernel, scipy.sparse.csr_matrix((6, 4), dtype=np.float32), FEAT)  # rows, no entries: zeros
    rng = np.random.default_rng(4)
    run(kernel, random_csr(rng, 40, 30, 0.3, empty_rows=(0, 1, 17, 38, 39)), FEAT)
    single = scipy.sparse.csr_matrix(rng.standard_normal((1, 30)).astype(np.float32))
    run(kernel, single, FEAT)


def test_int64_structure_arrays():
    """The example declares int32 indices: int64 ones are refused as the serial kernel refuses
    them. The same script declaring int64 takes them (its row partition read from an int64
    indptr)."""
    a = random_csr(np.random.default_rng(5), 20, 15, empty_rows=(0,))
    x = np.ones((15, FEAT), np.float32)
    args = {**spmm_args(a, x, np.zeros((20, FEAT), np.float32)), "indptr": a.indptr.astype(np.int64),
            "indices": a.indices.astype(np.int64)}
    messages = []
    for k in (sparsetir.build(script()), sparsetir.build(script(), schedule="none")):
        with pytest.raises(sparsetir.ArgumentError) as info:
            k(**args)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "argument 'indptr': expected dtype int32, got int64"

    text = EXAMPLE.read_text()
    assert text.count('(indptr, indices), "int32")') == 1
    wide = sparsetir.parse(text.replace('(indptr, indices), "int32")', '(indptr, indices), "int64")'), "csr_spmm64.py")
    kernel = sparsetir.build(wide)
    assert isinstance(kernel, SpecializedKernel)
    kernel(**args)
    np.testing.assert_allclose(args["c"], expected(a, x), rtol=1e-5, atol=1e-5)


def test_positional_keyword_and_unchecked_calls(kernel):
    a = random_csr(np.random.default_rng(6), 25, 18, empty_rows=(3,))
    x = np.random.default_rng(7).standard_normal((18, FEAT)).astype(np.float32)
    args = spmm_args(a, x, np.full((25, FEAT), np.nan, np.float32))
    kernel(*args.values())
    np.testing.assert_allclose(args["c"], expected(a, x), rtol=1e-5, atol=1e-5)
    mixed = np.full((25, FEAT), np.nan, np.float32)
    kernel(a.data, x, mixed, **{k: v for k, v in args.items() if k not in ("a", "b", "c")})
    np.testing.assert_array_equal(mixed, args["c"])
    unchecked = np.full((25, FEAT), np.nan, np.float32)
    kernel(**{**args, "c": unchecked}, check=False)
    np.testing.assert_array_equal(unchecked, args["c"])
    readonly = x.copy()
    readonly.setflags(write=False)  # an input TVM refuses as it is; check=False still adapts it
    again = np.full((25, FEAT), np.nan, np.float32)
    kernel(**{**args, "b": readonly, "c": again}, check=False)
    np.testing.assert_array_equal(again, args["c"])


def test_inputs_are_never_modified(kernel):
    a = random_csr(np.random.default_rng(8), 30, 30, empty_rows=(0, 29))
    x = np.random.default_rng(9).standard_normal((30, FEAT)).astype(np.float32)
    args = spmm_args(a, x, np.full((30, FEAT), np.nan, np.float32))
    before = {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray) and k != "c"}
    kernel(**args)
    kernel(**args, check=False)
    for name, value in before.items():
        np.testing.assert_array_equal(args[name], value, err_msg=name)


def test_a_repeated_call_reads_its_arrays_again_and_checks_them_again():
    """A call with the very arrays of the last one reuses its variant and launch arguments: it
    still reads what the arrays hold now, refuses indices edited out of range in place, and a
    call with other arrays of the same shapes runs on those."""
    from sparsetir.errors import ArgumentError

    kernel = fresh_kernel()
    rng = np.random.default_rng(11)
    a = random_csr(rng, 40, 30, empty_rows=(5,))
    x = rng.standard_normal((30, FEAT)).astype(np.float32)
    args = spmm_args(a, x, np.full((40, FEAT), np.nan, np.float32))
    for _ in range(3):
        kernel(**args)
    np.testing.assert_allclose(args["c"], expected(a, x), rtol=1e-5, atol=1e-5)
    a.data *= 2  # in place: the same array objects
    x[:] = rng.standard_normal(x.shape)
    kernel(**args)
    np.testing.assert_allclose(args["c"], expected(a, x), rtol=1e-5, atol=1e-5)
    other = random_csr(rng, 40, 30)
    y = rng.standard_normal((30, FEAT)).astype(np.float32)
    c = np.full((40, FEAT), np.nan, np.float32)
    kernel(**spmm_args(other, y, c))
    np.testing.assert_allclose(c, expected(other, y), rtol=1e-5, atol=1e-5)
    kernel(**args)  # back to the first arrays
    np.testing.assert_allclose(args["c"], expected(a, x), rtol=1e-5, atol=1e-5)
    a.indices[-1] = 30  # edited in place, out of range
    with pytest.raises(ArgumentError, match=r"argument 'indices': out of range"):
        kernel(**args)


def test_a_kernel_does_not_keep_the_arrays_of_its_last_call_alive():
    import gc
    import weakref

    kernel = fresh_kernel()
    rng = np.random.default_rng(12)
    a = random_csr(rng, 20, 16)
    x = rng.standard_normal((16, FEAT)).astype(np.float32)
    args = spmm_args(a, x, np.full((20, FEAT), np.nan, np.float32))
    kernel(**args)
    kernel(**args)  # a repeated call: the one that reuses the last call's launch arguments
    refs = [weakref.ref(v) for v in args.values() if isinstance(v, np.ndarray)]
    del a, x, args
    gc.collect()
    assert all(ref() is None for ref in refs)


# -- argument errors ------------------------------------------------------------------------


def _readonly(shape) -> np.ndarray:
    out = np.zeros(shape, np.float32)
    out.setflags(write=False)
    return out


M, N = 12, 12
BAD = {
    "wrong dtype": lambda g: {"b": g["b"].astype(np.float64)},
    "wrong shape": lambda g: {"c": np.zeros((M, FEAT + 1), np.float32)},
    "wrong rank": lambda g: {"b": g["b"].reshape(-1)},
    "index out of range": lambda g: {"indices": np.where(np.arange(g["nnz"]) == 2, N, g["indices"]).astype(np.int32)},
    "non-monotone indptr": lambda g: {"indptr": np.concatenate([[0, g["nnz"]], g["indptr"][2:]]).astype(np.int32)},
    "indptr ends early": lambda g: {"nnz": g["nnz"] + 1, "a": np.zeros(g["nnz"] + 1, np.float32),
                                    "indices": np.zeros(g["nnz"] + 1, np.int32)},
    "output overlaps an input": lambda g: {"c": g["b"]},
    "read-only output": lambda g: {"c": _readonly((M, FEAT))},
    "non-contiguous output": lambda g: {"c": np.zeros((M, 2 * FEAT), np.float32)[:, ::2]},
    "negative size": lambda g: {"feat_size": -1},
    "not an array": lambda g: {"a": list(g["a"])},
    "missing argument": None,
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_argument_is_refused_as_the_serial_kernel_refuses_it(kernel, serial, case):
    rng = np.random.default_rng(10)
    a = random_csr(rng, M, N, 0.3, empty_rows=(5,))
    good = spmm_args(a, rng.standard_normal((N, FEAT)).astype(np.float32), np.zeros((M, FEAT), np.float32))
    messages = []
    for k in (kernel, serial):
        args = {**good, **BAD[case](good)} if BAD[case] is not None else {n: good[n] for n in list(good)[:-1]}
        with pytest.raises(sparsetir.ArgumentError) as info:
            k(**args)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "csr_spmm" in messages[0] if case == "missing argument" else messages[0].startswith("argument '")


def test_a_non_contiguous_input_is_copied_not_refused(kernel):
    a = random_csr(np.random.default_rng(11), 15, 10)
    wide = np.random.default_rng(12).standard_normal((10, 2 * FEAT)).astype(np.float32)
    x = wide[:, ::2]
    c = np.full((15, FEAT), np.nan, np.float32)
    kernel(**spmm_args(a, x, c))
    np.testing.assert_allclose(c, expected(a, x), rtol=1e-5, atol=1e-5)
    fortran = np.asfortranarray(x)
    kernel(**spmm_args(a, fortran, c))
    np.testing.assert_allclose(c, expected(a, x), rtol=1e-5, atol=1e-5)


# -- prefetching ----------------------------------------------------------------------------


def test_a_scattered_matrix_runs_a_prefetching_variant():
    """At 64 float32 (256-byte rows, one register-tile pass each) a matrix whose columns rarely
    follow one another prefetches the rows it gathers (``prefetch.py``: a tile of 129-512 bytes,
    fewer than half the entries in runs)."""
    a = scattered(3000)
    assert consecutive_fraction(a) < 0.05
    kernel = fresh_kernel()
    run(kernel, a, 64)
    assert set(kernel.compiled_variants()) == {((64,), -1), ((64,), 0)}  # 0: whole rows prefetched
    prefetching = kernel.compiled_variants()[((64,), 0)]
    assert "prefetch" in prefetching.func.script() and "prefetch" not in kernel.variant(feat_size=64).func.script()


def test_a_banded_matrix_does_not_prefetch():
    """Two of every three columns follow the previous one: the hardware prefetcher streams them."""
    a = banded(3000)
    assert consecutive_fraction(a) > 0.6
    kernel = fresh_kernel()
    run(kernel, a, 64)
    assert set(kernel.compiled_variants()) == {((64,), -1)}


# -- torch ----------------------------------------------------------------------------------


def test_torch_tensors(kernel, serial):
    torch = pytest.importorskip("torch")
    a = random_csr(np.random.default_rng(13), 20, 16, empty_rows=(0, 19))
    x = np.random.default_rng(14).standard_normal((16, FEAT)).astype(np.float32)
    args = {k: torch.from_numpy(np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v
            for k, v in spmm_args(a, x, np.zeros((20, FEAT), np.float32)).items()}
    args["c"] = torch.full((20, FEAT), float("nan"))
    kernel(**args)
    np.testing.assert_allclose(args["c"].numpy(), expected(a, x), rtol=1e-5, atol=1e-5)
    bad = {**args, "indices": args["indices"].to(torch.int64)}
    messages = []
    for k in (kernel, serial):
        with pytest.raises(sparsetir.ArgumentError) as info:
            k(**bad)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "argument 'indices': expected dtype int32, got int64"
