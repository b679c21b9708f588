from sparsetir.script import tir as T


# RGCN on one graph whose edges carry a relation type: the weight matrix of each edge is
# chosen by a load, W[ETYPE[i, j], fi, fo].
@T.prim_func
def rgcn_homogeneous(
    a: T.handle,
    etype: T.handle,
    w: T.handle,
    x: T.handle,
    y: T.handle,
    indptr: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    num_rel: T.int32,
    feat_in: T.int32,
    feat_out: T.int32,
    nnz: T.int32,
) -> None:
    T.func_attr({"global_symbol": "rgcn_homogeneous", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    J_detach = T.dense_fixed(n)
    R = T.dense_fixed(num_rel)
    FI = T.dense_fixed(feat_in)
    FO = T.dense_fixed(feat_out)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    ETYPE = T.match_sparse_buffer(etype, (I, J), "int32")
    W = T.match_sparse_buffer(w, (R, FI, FO), "float32")
    X = T.match_sparse_buffer(x, (J_detach, FI), "float32")
    Y = T.match_sparse_buffer(y, (I, FO), "float32")
    with T.sp_iter([I, FO, J, FI], "SSRR", "rgcn_homogeneous") as [i, fo, j, fi]:
        with T.init():
            Y[i, fo] = T.float32(0)
        Y[i, fo] += A[i, j] * W[ETYPE[i, j], fi, fo] * X[j, fi]
