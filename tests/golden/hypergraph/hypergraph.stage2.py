@T.prim_func
def hypergraph(x: T.handle, y: T.handle, indptr_e: T.handle, indices_e: T.handle, indptr_u: T.handle, indices_u: T.handle, num_vertices: T.int32, num_edges: T.int32, feat_size: T.int32, nnz_e: T.int32, nnz_u: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"hypergraph0": ["examples/hypergraph.py:30"], "hypergraph1": ["examples/hypergraph.py:30"], "hypergraph2": ["examples/hypergraph.py:30", "examples/hypergraph.py:33"], "hypergraph_init0": ["examples/hypergraph.py:30", "examples/hypergraph.py:32"], "hypergraph0_1": ["examples/hypergraph.py:30"], "hypergraph1_1": ["examples/hypergraph.py:30"], "hypergraph2_1": ["examples/hypergraph.py:30", "examples/hypergraph.py:33"]}, "tir.noalias": True})
    V = T.dense_fixed(num_vertices)
    E = T.sparse_variable(V, (num_edges, nnz_e), (indptr_e, indices_e))
    E_dense = T.dense_variable(V, (num_edges, nnz_e), indptr_e)
    EH = T.dense_fixed(num_edges)
    U = T.sparse_variable(EH, (num_vertices, nnz_u), (indptr_u, indices_u))
    U_dense = T.dense_variable(EH, (num_vertices, nnz_u), indptr_u)
    U_detach = T.dense_fixed(num_vertices)
    F = T.dense_fixed(feat_size)
    X = T.match_sparse_buffer(x, (U_detach, F), "float32")
    Y = T.match_sparse_buffer(y, (V, F), "float32")
    E_indptr = T.match_sparse_buffer(indptr_e, (V,), "int32", extra_storage=1)
    E_indices = T.match_sparse_buffer(indices_e, (V, E_dense), "int32")
    U_indptr = T.match_sparse_buffer(indptr_u, (EH,), "int32", extra_storage=1)
    U_indices = T.match_sparse_buffer(indices_u, (EH, U_dense), "int32")
    for v, f in T.grid(num_vertices, feat_size):
        with T.sblock("hypergraph_init0"):
            vv, vf = T.axis.remap("SS", [v, f])
            T.reads()
            T.writes(Y[vv, vf])
            T.sblock_attr({"sparse": True})
            Y[vv, vf] = T.float32(0)
    for v in range(num_vertices):
        with T.sblock("hypergraph0_1"):
            vv = T.axis.spatial(num_vertices, v)
            T.reads(E_indptr[vv:vv + 2], U_indptr[0:num_edges + 1], E_indices[vv, 0:num_edges], Y[vv, 0:feat_size], X[0:num_vertices, 0:feat_size], U_indices[0:num_edges, 0:num_vertices])
            T.writes(Y[vv, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for e in range(E_indptr[vv + 1] - E_indptr[vv]):
                with T.sblock("hypergraph1_1"):
                    ve = T.axis.reduce(num_edges, e)
                    T.reads(U_indptr[0:num_edges + 1], E_indices[vv, ve], Y[vv, 0:feat_size], X[0:num_vertices, 0:feat_size], U_indices[E_indices[vv, ve], 0:num_vertices])
                    T.writes(Y[vv, 0:feat_size])
                    T.sblock_attr({"sparse": True})
                    for u, f in T.grid(U_indptr[E_indices[vv, ve] + 1] - U_indptr[E_indices[vv, ve]], feat_size):
                        with T.sblock("hypergraph2_1"):
                            vu = T.axis.reduce(num_vertices, u)
                            vf = T.axis.spatial(feat_size, f)
                            T.reads(Y[vv, vf], X[U_indices[E_indices[vv, ve], vu], vf], U_indices[E_indices[vv, ve], vu], E_indices[vv, ve])
                            T.writes(Y[vv, vf])
                            T.sblock_attr({"sparse": True})
                            Y[vv, vf] = Y[vv, vf] + X[U_indices[E_indices[vv, ve], vu], vf]
