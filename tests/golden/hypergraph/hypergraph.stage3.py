# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def hypergraph(x: T.Buffer(("num_vertices", "feat_size"), "float32"), y: T.Buffer((num_vertices, feat_size), "float32"), indptr_e: T.Buffer((num_vertices + 1,), "int32"), indices_e: T.Buffer(("nnz_e",), "int32"), indptr_u: T.Buffer(("num_edges + 1",), "int32"), indices_u: T.Buffer(("nnz_u",), "int32"), num_vertices: T.int32, num_edges: T.int32, feat_size: T.int32, nnz_e: T.int32, nnz_u: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"hypergraph0": ["examples/hypergraph.py:30"], "hypergraph0_1": ["examples/hypergraph.py:30"], "hypergraph1": ["examples/hypergraph.py:30"], "hypergraph1_1": ["examples/hypergraph.py:30"], "hypergraph2": ["examples/hypergraph.py:30", "examples/hypergraph.py:33"], "hypergraph2_1": ["examples/hypergraph.py:30", "examples/hypergraph.py:33"], "hypergraph_init0": ["examples/hypergraph.py:30", "examples/hypergraph.py:32"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for v, f in T.grid(num_vertices, feat_size):
        with T.sblock("hypergraph_init0"):
            vv, vf = T.axis.remap("SS", [v, f])
            T.reads()
            T.writes(y[vv, vf])
            T.sblock_attr({"sparse": True})
            y[vv, vf] = T.float32(0.0)
    for v in range(num_vertices):
        with T.sblock("hypergraph0_1"):
            vv = T.axis.spatial(num_vertices, v)
            T.reads(indptr_e[0:num_vertices + 1], indptr_u[0:num_edges + 1], indices_e[0:nnz_e], y[vv, 0:feat_size], x[0:num_vertices, 0:feat_size], indices_u[0:nnz_u])
            T.writes(y[vv, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for e in range(indptr_e[vv + 1] - indptr_e[vv]):
                with T.sblock("hypergraph1_1"):
                    ve = T.axis.reduce(num_edges, e)
                    T.reads(indptr_u[0:num_edges + 1], indices_e[indptr_e[vv] + ve], y[vv, 0:feat_size], x[0:num_vertices, 0:feat_size], indices_u[0:nnz_u])
                    T.writes(y[vv, 0:feat_size])
                    T.sblock_attr({"sparse": True})
                    for u, f in T.grid(indptr_u[indices_e[indptr_e[vv] + ve] + 1] - indptr_u[indices_e[indptr_e[vv] + ve]], feat_size):
                        with T.sblock("hypergraph2_1"):
                            vu = T.axis.reduce(num_vertices, u)
                            vf = T.axis.spatial(feat_size, f)
                            T.reads(y[vv, vf], x[indices_u[indptr_u[indices_e[indptr_e[vv] + ve]] + vu], vf], indices_u[indptr_u[indices_e[indptr_e[vv] + ve]] + vu], indices_e[indptr_e[vv] + ve])
                            T.writes(y[vv, vf])
                            T.sblock_attr({"sparse": True})
                            y[vv, vf] = y[vv, vf] + x[indices_u[indptr_u[indices_e[indptr_e[vv] + ve]] + vu], vf]
