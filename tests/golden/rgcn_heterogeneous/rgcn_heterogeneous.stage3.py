# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def rgcn_heterogeneous(a: T.Buffer(("nnz_j",), "float32"), w: T.Buffer(("num_rel", "feat_in", "feat_out"), "float32"), x: T.Buffer(("n", feat_in), "float32"), y: T.Buffer((n, feat_out), "float32"), indptr_i: T.Buffer((num_rel + 1,), "int32"), indices_i: T.Buffer(("nnz_i",), "int32"), indptr_j: T.Buffer((nnz_i + 1,), "int32"), indices_j: T.Buffer((nnz_j,), "int32"), num_rel: T.int32, n: T.int32, feat_in: T.int32, feat_out: T.int32, nnz_i: T.int32, nnz_j: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"rgcn_heterogeneous0": ["examples/rgcn_heterogeneous.py:38"], "rgcn_heterogeneous1": ["examples/rgcn_heterogeneous.py:38"], "rgcn_heterogeneous2": ["examples/rgcn_heterogeneous.py:38", "examples/rgcn_heterogeneous.py:39"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for r in range(num_rel):
        with T.sblock("rgcn_heterogeneous0"):
            vr = T.axis.reduce(num_rel, r)
            T.reads(indptr_i[0:num_rel + 1], indptr_j[0:nnz_i + 1], y[0:n, 0:feat_out], indices_i[0:nnz_i], a[0:nnz_j], w[vr, 0:feat_in, 0:feat_out], x[0:n, 0:feat_in], indices_j[0:nnz_j])
            T.writes(y[0:n, 0:feat_out])
            T.sblock_attr({"sparse": True})
            for i in range(indptr_i[vr + 1] - indptr_i[vr]):
                with T.sblock("rgcn_heterogeneous1"):
                    vi = T.axis.spatial(n, i)
                    T.reads(indptr_j[0:nnz_i + 1], y[indices_i[indptr_i[vr] + vi], 0:feat_out], indices_i[indptr_i[vr] + vi], a[0:nnz_j], w[vr, 0:feat_in, 0:feat_out], x[0:n, 0:feat_in], indices_j[0:nnz_j])
                    T.writes(y[indices_i[indptr_i[vr] + vi], 0:feat_out])
                    T.sblock_attr({"sparse": True})
                    for j, fo, fi in T.grid(indptr_j[indptr_i[vr] + vi + 1] - indptr_j[indptr_i[vr] + vi], feat_out, feat_in):
                        with T.sblock("rgcn_heterogeneous2"):
                            vj = T.axis.reduce(n, j)
                            vfo, vfi = T.axis.remap("SR", [fo, fi])
                            T.reads(y[indices_i[indptr_i[vr] + vi], vfo], indices_i[indptr_i[vr] + vi], a[indptr_j[indptr_i[vr] + vi] + vj], w[vr, vfi, vfo], x[indices_j[indptr_j[indptr_i[vr] + vi] + vj], vfi], indices_j[indptr_j[indptr_i[vr] + vi] + vj])
                            T.writes(y[indices_i[indptr_i[vr] + vi], vfo])
                            T.sblock_attr({"sparse": True})
                            y[indices_i[indptr_i[vr] + vi], vfo] = y[indices_i[indptr_i[vr] + vi], vfo] + a[indptr_j[indptr_i[vr] + vi] + vj] * w[vr, vfi, vfo] * x[indices_j[indptr_j[indptr_i[vr] + vi] + vj], vfi]
