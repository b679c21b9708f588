from sparsetir.script import tir as T


# out[i] = sum over j, k of A[i, j, k], A a 3-level CSF tensor (dense I, compressed J and K).
@T.prim_func
def csf_reduction(
    a: T.handle,
    out: T.handle,
    indptr_j: T.handle,
    indices_j: T.handle,
    indptr_k: T.handle,
    indices_k: T.handle,
    m: T.int32,
    n: T.int32,
    p: T.int32,
    nnz_j: T.int32,
    nnz_k: T.int32,
) -> None:
    T.func_attr({"global_symbol": "csf_reduction", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz_j), (indptr_j, indices_j), "int32")
    K = T.sparse_variable(J, (p, nnz_k), (indptr_k, indices_k), "int32")
    A = T.match_sparse_buffer(a, (I, J, K), "float32")
    OUT = T.match_sparse_buffer(out, (I,), "float32")
    with T.sp_iter([I, J, K], "SRR", "csf_reduction") as [i, j, k]:
        with T.init():
            OUT[i] = T.float32(0)
        OUT[i] = OUT[i] + A[i, j, k]
