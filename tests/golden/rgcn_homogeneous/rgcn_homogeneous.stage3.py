# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def rgcn_homogeneous(a: T.Buffer(("nnz",), "float32"), etype: T.Buffer((nnz,), "int32"), w: T.Buffer(("num_rel", "feat_in", "feat_out"), "float32"), x: T.Buffer(("n", feat_in), "float32"), y: T.Buffer(("m", feat_out), "float32"), indptr: T.Buffer((m + 1,), "int32"), indices: T.Buffer((nnz,), "int32"), m: T.int32, n: T.int32, num_rel: T.int32, feat_in: T.int32, feat_out: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"rgcn_homogeneous0": ["examples/rgcn_homogeneous.py:34"], "rgcn_homogeneous0_init": ["examples/rgcn_homogeneous.py:34", "examples/rgcn_homogeneous.py:36"], "rgcn_homogeneous1": ["examples/rgcn_homogeneous.py:34", "examples/rgcn_homogeneous.py:37"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i, fo in T.grid(m, feat_out):
        with T.sblock("rgcn_homogeneous0"):
            vi, vfo = T.axis.remap("SS", [i, fo])
            T.reads(indptr[0:m + 1], y[vi, vfo], a[0:nnz], etype[0:nnz], w[0:num_rel, 0:feat_in, vfo], x[0:n, 0:feat_in], indices[0:nnz])
            T.writes(y[vi, vfo])
            T.sblock_attr({"sparse": True})
            y[vi, vfo] = T.float32(0.0)
            for j, fi in T.grid(indptr[vi + 1] - indptr[vi], feat_in):
                with T.sblock("rgcn_homogeneous1"):
                    vj = T.axis.reduce(n, j)
                    vfi = T.axis.reduce(feat_in, fi)
                    T.reads(y[vi, vfo], a[indptr[vi] + vj], etype[indptr[vi] + vj], w[etype[indptr[vi] + vj], vfi, vfo], x[indices[indptr[vi] + vj], vfi], indices[indptr[vi] + vj])
                    T.writes(y[vi, vfo])
                    T.sblock_attr({"sparse": True})
                    y[vi, vfo] = y[vi, vfo] + a[indptr[vi] + vj] * T.if_then_else(etype[indptr[vi] + vj] >= 0 and etype[indptr[vi] + vj] < num_rel, T.if_then_else(etype[indptr[vi] + vj] >= 0 and etype[indptr[vi] + vj] < num_rel, w[etype[indptr[vi] + vj], vfi, vfo], T.float32(0.0)), T.float32(0.0)) * x[indices[indptr[vi] + vj], vfi]
