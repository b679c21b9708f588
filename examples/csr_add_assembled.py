from sparsetir.script import tir as T


# C = A + B of two CSR matrices, C's pattern computed by the kernel: JC is assembled, so the call
# takes no indptr_c / indices_c / nnz_c / c and returns them. T.union visits, in each row, the
# columns stored in A's row or B's, in ascending order: they are C's row. sparsetir.build makes a
# symbolic kernel that counts them per row and the numeric kernel below, which writes each
# column and its value at the row's next position.
@T.prim_func
def csr_add_assembled(
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
    T.func_attr({"global_symbol": "csr_add_assembled", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, nnz_a), (indptr_a, indices_a), "int32")
    JB = T.sparse_variable(I, (n, nnz_b), (indptr_b, indices_b), "int32")
    JC = T.sparse_variable(I, (n, nnz_c), (indptr_c, indices_c), "int32", assembled=True)
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
    with T.sp_iter([I, T.union(JA, JB)], "SS", "csr_add_assembled") as [i, j]:
        C[i, j] = A[i, j] + B[i, j]
