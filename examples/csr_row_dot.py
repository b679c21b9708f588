from sparsetir.script import tir as T


# out[i] = <A[i, :], B[i, :]>, the dot product of the rows of two CSR matrices: a reduction over
# T.intersect, the columns stored in both rows.
@T.prim_func
def csr_row_dot(
    a: T.handle,
    b: T.handle,
    out: T.handle,
    indptr_a: T.handle,
    indices_a: T.handle,
    indptr_b: T.handle,
    indices_b: T.handle,
    m: T.int32,
    n: T.int32,
    nnz_a: T.int32,
    nnz_b: T.int32,
) -> None:
    T.func_attr({"global_symbol": "csr_row_dot", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, nnz_a), (indptr_a, indices_a), "int32")
    JB = T.sparse_variable(I, (n, nnz_b), (indptr_b, indices_b), "int32")
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    O = T.match_sparse_buffer(out, (I,), "float32")
    with T.sp_iter([I, T.intersect(JA, JB)], "SR", "csr_row_dot") as [i, j]:
        with T.init():
            O[i] = T.float32(0)
        O[i] = O[i] + A[i, j] * B[i, j]
