@T.prim_func
def rgcn_heterogeneous(a: T.handle, w: T.handle, x: T.handle, y: T.handle, indptr_i: T.handle, indices_i: T.handle, indptr_j: T.handle, indices_j: T.handle, num_rel: T.int32, n: T.int32, feat_in: T.int32, feat_out: T.int32, nnz_i: T.int32, nnz_j: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"rgcn_heterogeneous0": ["examples/rgcn_heterogeneous.py:38"], "rgcn_heterogeneous1": ["examples/rgcn_heterogeneous.py:38"], "rgcn_heterogeneous2": ["examples/rgcn_heterogeneous.py:38", "examples/rgcn_heterogeneous.py:39"]}, "tir.noalias": True})
    R = T.dense_fixed(num_rel)
    I = T.sparse_variable(R, (n, nnz_i), (indptr_i, indices_i))
    I_dense = T.dense_variable(R, (n, nnz_i), indptr_i)
    J = T.sparse_variable(I, (n, nnz_j), (indptr_j, indices_j))
    J_dense = T.dense_variable(I_dense, (n, nnz_j), indptr_j)
    I_detach = T.dense_fixed(n)
    J_detach = T.dense_fixed(n)
    FI = T.dense_fixed(feat_in)
    FO = T.dense_fixed(feat_out)
    A = T.match_sparse_buffer(a, (R, I, J), "float32")
    W = T.match_sparse_buffer(w, (R, FI, FO), "float32")
    X = T.match_sparse_buffer(x, (J_detach, FI), "float32")
    Y = T.match_sparse_buffer(y, (I_detach, FO), "float32")
    I_indptr = T.match_sparse_buffer(indptr_i, (R,), "int32", extra_storage=1)
    I_indices = T.match_sparse_buffer(indices_i, (R, I_dense), "int32")
    J_indptr = T.match_sparse_buffer(indptr_j, (R, I_dense), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices_j, (R, I_dense, J_dense), "int32")
    for r in range(num_rel):
        with T.sblock("rgcn_heterogeneous0"):
            vr = T.axis.reduce(num_rel, r)
            T.reads(I_indptr[vr:vr + 2], J_indptr[vr, 0:n + 1], Y[0:n, 0:feat_out], I_indices[vr, 0:n], A[vr, 0:n, 0:n], W[vr, 0:feat_in, 0:feat_out], X[0:n, 0:feat_in], J_indices[vr, 0:n, 0:n])
            T.writes(Y[0:n, 0:feat_out])
            T.sblock_attr({"sparse": True})
            for i in range(I_indptr[vr + 1] - I_indptr[vr]):
                with T.sblock("rgcn_heterogeneous1"):
                    vi = T.axis.spatial(n, i)
                    T.reads(J_indptr[vr, vi:vi + 2], Y[I_indices[vr, vi], 0:feat_out], I_indices[vr, vi], A[vr, vi, 0:n], W[vr, 0:feat_in, 0:feat_out], X[0:n, 0:feat_in], J_indices[vr, vi, 0:n])
                    T.writes(Y[I_indices[vr, vi], 0:feat_out])
                    T.sblock_attr({"sparse": True})
                    for j, fo, fi in T.grid(J_indptr[vr, vi + 1] - J_indptr[vr, vi], feat_out, feat_in):
                        with T.sblock("rgcn_heterogeneous2"):
                            vj = T.axis.reduce(n, j)
                            vfo = T.axis.spatial(feat_out, fo)
                            vfi = T.axis.reduce(feat_in, fi)
                            T.reads(Y[I_indices[vr, vi], vfo], I_indices[vr, vi], A[vr, vi, vj], W[vr, vfi, vfo], X[J_indices[vr, vi, vj], vfi], J_indices[vr, vi, vj])
                            T.writes(Y[I_indices[vr, vi], vfo])
                            T.sblock_attr({"sparse": True})
                            Y[I_indices[vr, vi], vfo] = Y[I_indices[vr, vi], vfo] + A[vr, vi, vj] * W[vr, vfi, vfo] * X[J_indices[vr, vi, vj], vfi]
