from sparsetir.script import tir as T


# RGCN with one sparse adjacency per relation: the relation axis R is dense above the
# compressed destination axis I, and the compressed source axis J hangs under I.
# Y is accumulated into (no init): a destination row gets contributions from every relation.
@T.prim_func
def rgcn_heterogeneous(
    a: T.handle,
    w: T.handle,
    x: T.handle,
    y: T.handle,
    indptr_i: T.handle,
    indices_i: T.handle,
    indptr_j: T.handle,
    indices_j: T.handle,
    num_rel: T.int32,
    n: T.int32,
    feat_in: T.int32,
    feat_out: T.int32,
    nnz_i: T.int32,
    nnz_j: T.int32,
) -> None:
    T.func_attr(
        {"global_symbol": "rgcn_heterogeneous", "tir.noalias": True, "sparse_tir_level": 2}
    )
    R = T.dense_fixed(num_rel)
    I = T.sparse_variable(R, (n, nnz_i), (indptr_i, indices_i), "int32")
    J = T.sparse_variable(I, (n, nnz_j), (indptr_j, indices_j), "int32")
    I_detach = T.dense_fixed(n)
    J_detach = T.dense_fixed(n)
    FI = T.dense_fixed(feat_in)
    FO = T.dense_fixed(feat_out)
    A = T.match_sparse_buffer(a, (R, I, J), "float32")
    W = T.match_sparse_buffer(w, (R, FI, FO), "float32")
    X = T.match_sparse_buffer(x, (J_detach, FI), "float32")
    Y = T.match_sparse_buffer(y, (I_detach, FO), "float32")
    with T.sp_iter([R, I, J, FO, FI], "RSRSR", "rgcn_heterogeneous") as [r, i, j, fo, fi]:
        Y[i, fo] += A[r, i, j] * W[r, fi, fo] * X[j, fi]
