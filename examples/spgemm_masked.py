from sparsetir.script import tir as T


# C = A @ B at the entries of a given pattern JC (masked SpGEMM; with JC the product's own pattern,
# SpGEMM's numeric phase). B's row kk is iterated attached under A's column kk; each product is
# added at the position of column j in C's row i (a binary search in JC; a product outside the
# pattern is dropped). The first iteration zeroes C, since a position no product reaches stays 0.
@T.prim_func
def spgemm_masked(
    a: T.handle,
    b: T.handle,
    c: T.handle,
    indptr_a: T.handle,
    indices_a: T.handle,
    indptr_b: T.handle,
    indices_b: T.handle,
    indptr_c: T.handle,
    indices_c: T.handle,
    m: T.int32,
    k: T.int32,
    n: T.int32,
    nnz_a: T.int32,
    nnz_b: T.int32,
    nnz_c: T.int32,
) -> None:
    T.func_attr({"global_symbol": "spgemm_masked", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    KA = T.sparse_variable(I, (k, nnz_a), (indptr_a, indices_a), "int32")
    KB = T.dense_fixed(k)
    JB = T.sparse_variable(KB, (n, nnz_b), (indptr_b, indices_b), "int32")
    JC = T.sparse_variable(I, (n, nnz_c), (indptr_c, indices_c), "int32")
    A = T.match_sparse_buffer(a, (I, KA), "float32")
    B = T.match_sparse_buffer(b, (KB, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
    with T.sp_iter([I, JC], "SS", "spgemm_masked_zero") as [i, j]:
        C[i, j] = T.float32(0)
    with T.sp_iter([I, KA, T.attach(JB, KA)], "SRS", "spgemm_masked") as [i, kk, j]:
        C[i, j] = C[i, j] + A[i, kk] * B[kk, j]
