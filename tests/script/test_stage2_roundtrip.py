"""Stage II prints as a script that parses back to an equal function, for every program we make.

Covers every function of the examples and the RFC fixtures as ``lower_sparse_iter`` gives it,
and every scheduled kernel of ``sparsetir.ops`` (the schedule steps of tests/schedule are
checked the same way by ``sparsetir.Schedule`` after each step). The printed text is also a
fixed point: printing the parsed function gives the same text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sparsetir
from sparsetir.ops.kernels import MAKERS, KernelKey

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "examples").glob("*.py"), *(ROOT / "tests" / "scripts").glob("**/*.py"),
                  *(ROOT / "tests" / "transforms" / "scripts").glob("*.py")])  # fused iterations over 3+ axes


def _functions():
    for path in SOURCES:
        parsed = sparsetir.parse_file(path)
        for name, func in (parsed.items() if isinstance(parsed, dict) else [(parsed.name, parsed)]):
            yield pytest.param(path, name, id=f"{path.parent.name}/{path.stem}:{name}")


def _kernel_keys():
    for op in sorted(MAKERS):
        for dtype in ("float32", "float64"):
            if op == "softmax":
                yield KernelKey(op, dtype)
                continue
            for feat in (1, 16, 20, 33, 64, 127, 512):
                block = {"bsr_spmm": (4, 4), "bsr_gather_spmm": (3, 3)}.get(op, (0, 0))
                widths = (1, 2, 4, 32) if op == "hybrid_spmm" else ()
                yield KernelKey(op, dtype, feat=feat, block=block, widths=widths)
    yield KernelKey("bsr_spmm", "float32", feat=32, block=(2, 3))
    yield KernelKey("hybrid_spmm", "float32", feat=32, widths=(8,))


def assert_round_trip(f2: sparsetir.Stage2Function) -> None:
    text = f2.script()
    again = sparsetir.parse(text, "<stage2>")
    assert isinstance(again, sparsetir.Stage2Function)
    sparsetir.assert_structural_equal(again, f2)
    assert again.script() == text


@pytest.mark.parametrize("path,name", list(_functions()))
def test_lowered_function_round_trips(path, name):
    parsed = sparsetir.parse_file(path)
    func = parsed[name] if isinstance(parsed, dict) else parsed
    f2 = func if isinstance(func, sparsetir.Stage2Function) else sparsetir.lower_sparse_iter(func)
    assert_round_trip(f2)


@pytest.mark.parametrize("key", list(_kernel_keys()), ids=lambda k: f"{k.op}-{k.dtype}-{k.feat}-{k.block[0]}x{k.block[1]}")
def test_ops_kernel_round_trips(key):
    assert_round_trip(MAKERS[key.op](key))


def test_parsed_stage2_builds_and_computes_like_the_original():
    """The parsed text is the same program: it builds and gives the original's results."""
    import numpy as np
    import scipy.sparse as sp

    f2 = sparsetir.lower_sparse_iter(sparsetir.parse_file(ROOT / "examples" / "csr_spmm.py"))
    again = sparsetir.parse(f2.script())
    rng = np.random.default_rng(0)
    a = sp.random(30, 20, density=0.2, format="csr", random_state=1, dtype=np.float32)
    b = rng.standard_normal((20, 8)).astype(np.float32)
    c = np.zeros((30, 8), np.float32)
    sparsetir.build(again)(a.data, b, c, a.indptr.astype(np.int32), a.indices.astype(np.int32), 30, 20, 8, a.nnz)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
