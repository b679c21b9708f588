from sparsetir.script import tir as T


# C = A ⊙ B (elementwise) of two CSR matrices, C's pattern computed by the kernel: T.intersect
# visits the columns stored in both rows, which are C's row (JC is assembled: the call returns
# indptr_c, indices_c, nnz_c and c).
@T.prim_func
def csr_multiply_assembled(
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
    T.func_attr({"global_symbol": "csr_multiply_assembled", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, nnz_a), (indptr_a, indices_a), "int32")
    JB = T.sparse_variable(I, (n, nnz_b), (indptr_b, indices_b), "int32")
    JC = T.sparse_variable(I, (n, nnz_c), (indptr_c, indices_c), "int32", assembled=True)
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
    with T.sp_iter([I, T.intersect(JA, JB)], "SS", "csr_multiply_assembled") as [i, j]:
        C[i, j] = A[i, j] * B[i, j]
