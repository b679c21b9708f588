@T.prim_func
def rgcn_homogeneous(a: T.handle, etype: T.handle, w: T.handle, x: T.handle, y: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, num_rel: T.int32, feat_in: T.int32, feat_out: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"rgcn_homogeneous0": ["examples/rgcn_homogeneous.py:34"], "rgcn_homogeneous1": ["examples/rgcn_homogeneous.py:34", "examples/rgcn_homogeneous.py:37"], "rgcn_homogeneous0_init": ["examples/rgcn_homogeneous.py:34", "examples/rgcn_homogeneous.py:36"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_variable(I, (n, nnz), indptr)
    J_detach = T.dense_fixed(n)
    R = T.dense_fixed(num_rel)
    FI = T.dense_fixed(feat_in)
    FO = T.dense_fixed(feat_out)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    ETYPE = T.match_sparse_buffer(etype, (I, J), "int32")
    W = T.match_sparse_buffer(w, (R, FI, FO), "float32")
    X = T.match_sparse_buffer(x, (J_detach, FI), "float32")
    Y = T.match_sparse_buffer(y, (I, FO), "float32")
    J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")
    for i, fo in T.grid(m, feat_out):
        with T.sblock("rgcn_homogeneous0"):
            vi, vfo = T.axis.remap("SS", [i, fo])
            T.reads(J_indptr[vi:vi + 2], Y[vi, vfo], A[vi, 0:n], ETYPE[vi, 0:n], W[0:num_rel, 0:feat_in, vfo], X[0:n, 0:feat_in], J_indices[vi, 0:n])
            T.writes(Y[vi, vfo])
            T.sblock_attr({"sparse": True})
            Y[vi, vfo] = T.float32(0)
            for j, fi in T.grid(J_indptr[vi + 1] - J_indptr[vi], feat_in):
                with T.sblock("rgcn_homogeneous1"):
                    vj = T.axis.reduce(n, j)
                    vfi = T.axis.reduce(feat_in, fi)
                    T.reads(Y[vi, vfo], A[vi, vj], ETYPE[vi, vj], W[ETYPE[vi, vj], vfi, vfo], X[J_indices[vi, vj], vfi], J_indices[vi, vj])
                    T.writes(Y[vi, vfo])
                    T.sblock_attr({"sparse": True})
                    Y[vi, vfo] = Y[vi, vfo] + A[vi, vj] * T.if_then_else(ETYPE[vi, vj] >= 0 and ETYPE[vi, vj] < num_rel, W[ETYPE[vi, vj], vfi, vfo], T.float32(0)) * X[J_indices[vi, vj], vfi]
