from sparsetir.script import tir as T


# C = A * B elementwise (the Hadamard product) of two CSR matrices with different patterns:
# T.intersect walks the columns stored in both rows, reading A and B where the merge is (no
# search). C holds the product's pattern (the intersection, as a symbolic phase or SciPy gives
# it), so JC joins the merge: C is written where the merge is too, instead of at a position
# found by binary search in JC (every coordinate of A and B's intersection is in JC).
@T.prim_func
def csr_multiply(
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
    n: T.int32,
    nnz_a: T.int32,
    nnz_b: T.int32,
    nnz_c: T.int32,
) -> None:
    T.func_attr({"global_symbol": "csr_multiply", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, nnz_a), (indptr_a, indices_a), "int32")
    JB = T.sparse_variable(I, (n, nnz_b), (indptr_b, indices_b), "int32")
    JC = T.sparse_variable(I, (n, nnz_c), (indptr_c, indices_c), "int32")
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
    with T.sp_iter([I, T.intersect(JA, JB, JC)], "SS", "csr_multiply") as [i, j]:
        C[i, j] = A[i, j] * B[i, j]
