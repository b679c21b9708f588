"""The format decompositions whose stage-I results are golden scripts (tests/golden/format_decompose/).

The RFC's ``csrmm`` decomposed by the rules of the RFC and of SparseTIR's own tests: BSR with
blocks of 4, 16 and 32; ELL buckets of widths 4 and 8; rows padded to chunks of 32.
"""

from __future__ import annotations

from sparsetir.formats.rules import bsr_rule, ell_rule, padding_rule
from sparsetir.script import tir as T
from sparsetir.transforms.format_decompose import format_decompose


@T.prim_func
def csrmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32,
          feat_size: T.int32, nnz: T.int32) -> None:
    T.func_attr({"global_symbol": "main", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    with T.sp_iter([I, J, K], "SRS", "csrmm") as [i, j, k]:
        with T.init():
            C[i, k] = 0.0
        C[i, k] = C[i, k] + A[i, j] * B[j, k]


RULES = {
    "bsr_4_16_32": lambda: [bsr_rule(4), bsr_rule(16), bsr_rule(32)],
    "ell_4_8": lambda: [ell_rule(4), ell_rule(8)],
    "padding_32": lambda: [padding_rule(32)],
}


def decomposed(name: str):
    """The decomposition ``name`` of ``csrmm``."""
    return format_decompose(csrmm, RULES[name]())
