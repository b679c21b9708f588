# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csr_spmm_detached(a: T.Buffer(("nnz",), "float32"), b: T.Buffer(("n", "feat_size"), "float32"), c: T.Buffer(("m", feat_size), "float32"), indptr: T.Buffer((m + 1,), "int32"), indices: T.Buffer((nnz,), "int32"), m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.searched_axes": ["J"], "sparsetir.spans": {"csr_spmm_detached0": ["examples/csr_spmm_detached.py:26", "examples/csr_spmm_detached.py:29"], "csr_spmm_detached0_J_pos0": ["examples/csr_spmm_detached.py:29"], "csr_spmm_detached0_J_search0": ["examples/csr_spmm_detached.py:29"], "csr_spmm_detached0_init": ["examples/csr_spmm_detached.py:26", "examples/csr_spmm_detached.py:28"]}, "tir.noalias": True})
    # with T.sblock("root"):
    csr_spmm_detached0_J_pos0 = T.sblock_alloc_buffer((m, n), "int32", scope="local")
    for i, j in T.grid(m, n):
        with T.sblock("csr_spmm_detached0_J_search0"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(indptr[0:m + 1], indices[0:nnz])
            T.writes(csr_spmm_detached0_J_pos0[vi, vj])
            T.sblock_attr({"sparse": True})
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            lohi[0] = 0
            lohi[1] = indptr[vi + 1] - indptr[vi]
            while lohi[0] < lohi[1]:
                if T.if_then_else((lohi[0] + lohi[1]) // 2 + indptr[vi] >= 0 and (lohi[0] + lohi[1]) // 2 + indptr[vi] < nnz, indices[(lohi[0] + lohi[1]) // 2 + indptr[vi]], 0) < vj:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            csr_spmm_detached0_J_pos0[vi, vj] = T.if_then_else(lohi[0] < indptr[vi + 1] - indptr[vi], T.if_then_else(T.if_then_else(indptr[vi] + lohi[0] >= 0 and indptr[vi] + lohi[0] < nnz, indices[indptr[vi] + lohi[0]], 0) == vj, lohi[0], -1), -1)
        for k in range(feat_size):
            with T.sblock("csr_spmm_detached0"):
                vi, vj, vk = T.axis.remap("SRS", [i, j, k])
                T.reads(csr_spmm_detached0_J_pos0[vi, vj], a[indptr[vi] + csr_spmm_detached0_J_pos0[vi, vj]], b[vj, vk])
                T.writes(c[vi, vk])
                T.sblock_attr({"sparse": True})
                with T.init():
                    c[vi, vk] = T.float32(0.0)
                c[vi, vk] = c[vi, vk] + T.if_then_else(csr_spmm_detached0_J_pos0[vi, vj] >= 0, T.if_then_else(indptr[vi] + csr_spmm_detached0_J_pos0[vi, vj] >= 0 and indptr[vi] + csr_spmm_detached0_J_pos0[vi, vj] < nnz, a[indptr[vi] + csr_spmm_detached0_J_pos0[vi, vj]], T.float32(0.0)), T.float32(0.0)) * b[vj, vk]
