# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def ell_spmm(a: T.Buffer(("m", "nnz_cols"), "float32"), b: T.Buffer(("n", "feat_size"), "float32"), c: T.Buffer((m, feat_size), "float32"), indices: T.Buffer((m * nnz_cols,), "int32"), m: T.int32, n: T.int32, nnz_cols: T.int32, feat_size: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.alt_shapes": {"a": ["m * nnz_cols"], "indices": ["m", "nnz_cols"]}, "sparsetir.spans": {"ell_spmm0": ["examples/ell_spmm.py:24", "examples/ell_spmm.py:27"], "ell_spmm0_init": ["examples/ell_spmm.py:24", "examples/ell_spmm.py:26"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i, j, k in T.grid(m, nnz_cols, feat_size):
        with T.sblock("ell_spmm0"):
            vi, vj, vk = T.axis.remap("SRS", [i, j, k])
            T.reads(a[vi, vj], b[indices[vi * nnz_cols + vj], vk], indices[vi * nnz_cols + vj])
            T.writes(c[vi, vk])
            T.sblock_attr({"sparse": True})
            with T.init():
                c[vi, vk] = T.float32(0.0)
            c[vi, vk] = c[vi, vk] + a[vi, vj] * b[indices[vi * nnz_cols + vj], vk]
