"""Per-iteration scratch of a CPU kernel (a binary search's bounds and result) lives on the stack,
not in a workspace allocated on every iteration, and the kernel still finds what it searches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse

import sparsetir
from sparsetir._tvm import s_tir, structural_walk
from sparsetir.runtime.stack_scratch import scratch_on_stack
from sparsetir.transforms import pipeline

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _scopes(func) -> dict[str, str]:
    found: dict[str, str] = {}

    def on_block(block) -> None:
        for buf in block.alloc_buffers:
            found[str(buf.name)] = str(buf.ty.storage_scope)

    structural_walk(func.body, [(s_tir.SBlock, on_block)])
    return found


def test_local_scratch_becomes_global():
    f3 = pipeline.lower(sparsetir.parse_file(EXAMPLES / "csr_to_bsr.py"))
    before = _scopes(f3)
    assert "local" in before.values()  # the lowering's search scratch
    after = _scopes(scratch_on_stack(f3))
    assert set(after) == set(before) and set(after.values()) == {"global"}


def test_lookup_kernel_allocates_no_workspace_and_copies_into_bsr():
    f = sparsetir.parse_file(EXAMPLES / "csr_to_bsr.py")
    rng = np.random.default_rng(0)
    m, n = 24, 20  # whole 4x4 blocks
    pad = scipy.sparse.random(m, n, density=0.2, format="csr", random_state=rng, dtype=np.float32)
    pad.sort_indices()
    indptr = pad.indptr.astype(np.int32)
    bsr = scipy.sparse.bsr_matrix(pad, blocksize=(4, 4))
    bsr.sort_indices()
    mb, nb = m // 4, n // 4
    out = np.zeros((bsr.indices.size, 4, 4), dtype=np.float32)
    for schedule in ("none", "default"):
        kernel = sparsetir.build(f, schedule=schedule)
        code = kernel.source("ll")
        assert "TVMBackendAllocWorkspace" not in code
        out[:] = 0
        kernel(a=pad.data, b=out, indptr=indptr, indices=pad.indices.astype(np.int32),
               indptr_b=bsr.indptr.astype(np.int32), indices_b=bsr.indices.astype(np.int32),
               m=m, n=n, nnz=pad.nnz, mb=mb, nb=nb, nnzb=bsr.indices.size)
        np.testing.assert_array_equal(out, bsr.data)
