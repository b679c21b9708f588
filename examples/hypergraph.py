from sparsetir.script import tir as T


# Hypergraph aggregation: Y[v, f] = sum over hyperedges e of v, over vertices u of e, of X[u, f].
# E lists the hyperedges of each vertex; U lists the vertices of each hyperedge and is iterated
# attached under E, so the row of U visited is the hyperedge coordinate e.
@T.prim_func
def hypergraph(
    x: T.handle,
    y: T.handle,
    indptr_e: T.handle,
    indices_e: T.handle,
    indptr_u: T.handle,
    indices_u: T.handle,
    num_vertices: T.int32,
    num_edges: T.int32,
    feat_size: T.int32,
    nnz_e: T.int32,
    nnz_u: T.int32,
) -> None:
    T.func_attr({"global_symbol": "hypergraph", "tir.noalias": True, "sparse_tir_level": 2})
    V = T.dense_fixed(num_vertices)
    E = T.sparse_variable(V, (num_edges, nnz_e), (indptr_e, indices_e), "int32")
    EH = T.dense_fixed(num_edges)
    U = T.sparse_variable(EH, (num_vertices, nnz_u), (indptr_u, indices_u), "int32")
    U_detach = T.dense_fixed(num_vertices)
    F = T.dense_fixed(feat_size)
    X = T.match_sparse_buffer(x, (U_detach, F), "float32")
    Y = T.match_sparse_buffer(y, (V, F), "float32")
    with T.sp_iter([V, E, T.attach(U, E), F], "SRRS", "hypergraph") as [v, e, u, f]:
        with T.init():
            Y[v, f] = T.float32(0)
        Y[v, f] += X[u, f]
