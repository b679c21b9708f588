from sparsetir.script import tir as T


# B = A * 2 + 1 on the stored entries of a CSR matrix (B shares A's structure).
@T.prim_func
def csr_elementwise(
    a: T.handle,
    b: T.handle,
    indptr: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    nnz: T.int32,
) -> None:
    T.func_attr({"global_symbol": "csr_elementwise", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I, J), "float32")
    with T.sp_iter([I, J], "SS", "csr_elementwise") as [i, j]:
        B[i, j] = A[i, j] * T.float32(2) + T.float32(1)
