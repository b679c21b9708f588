from sparsetir.script import tir as T


# Sum of each segment of a ragged tensor: out[i, k] = sum over j of x[i, j, k].
@T.prim_func
def segment_reduce(
    x: T.handle,
    out: T.handle,
    indptr: T.handle,
    m: T.int32,
    max_len: T.int32,
    feat_size: T.int32,
    nnz: T.int32,
) -> None:
    T.func_attr({"global_symbol": "segment_reduce", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.dense_variable(I, (max_len, nnz), indptr, "int32")
    K = T.dense_fixed(feat_size)
    X = T.match_sparse_buffer(x, (I, J, K), "float32")
    OUT = T.match_sparse_buffer(out, (I, K), "float32")
    with T.sp_iter([I, J, K], "SRS", "segment_reduce") as [i, j, k]:
        with T.init():
            OUT[i, k] = T.float32(0)
        OUT[i, k] = OUT[i, k] + X[i, j, k]
