from sparsetir.script import tir as T


# Row sums of a CSR matrix.
@T.prim_func
def csr_rowsum(
    a: T.handle,
    b: T.handle,
    indptr: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    nnz: T.int32,
) -> None:
    T.func_attr({"global_symbol": "csr_rowsum", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I,), "float32")
    with T.sp_iter([I, J], "SR", "csr_rowsum") as [i, j]:
        with T.init():
            B[i] = T.float32(0)
        B[i] = B[i] + A[i, j]
