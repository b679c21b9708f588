from sparsetir.script import tir as T


# Copy a CSR matrix into a BSR matrix with 4x4 blocks whose structure covers it: each store
# looks the block column j // 4 up in block row i // 4 of the compressed axis JO.
@T.prim_func
def csr_to_bsr(
    a: T.handle,
    b: T.handle,
    indptr: T.handle,
    indices: T.handle,
    indptr_b: T.handle,
    indices_b: T.handle,
    m: T.int32,
    n: T.int32,
    nnz: T.int32,
    mb: T.int32,
    nb: T.int32,
    nnzb: T.int32,
) -> None:
    T.func_attr({"global_symbol": "csr_to_bsr", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    IO = T.dense_fixed(mb)
    JO = T.sparse_variable(IO, (nb, nnzb), (indptr_b, indices_b), "int32")
    II = T.dense_fixed(4)
    JI = T.dense_fixed(4)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (IO, JO, II, JI), "float32")
    with T.sp_iter([I, J], "SS", "csr_to_bsr") as [i, j]:
        B[i // 4, j // 4, i % 4, j % 4] = A[i, j]
