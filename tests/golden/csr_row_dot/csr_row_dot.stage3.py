# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csr_row_dot(a: T.Buffer(("nnz_a",), "float32"), b: T.Buffer(("nnz_b",), "float32"), out: T.Buffer(("m",), "float32"), indptr_a: T.Buffer((m + 1,), "int32"), indices_a: T.Buffer((nnz_a,), "int32"), indptr_b: T.Buffer((m + 1,), "int32"), indices_b: T.Buffer((nnz_b,), "int32"), m: T.int32, n: T.int32, nnz_a: T.int32, nnz_b: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.searched_axes": ["JA", "JB"], "sparsetir.spans": {"csr_row_dot0": ["examples/csr_row_dot.py:27"], "csr_row_dot0_init": ["examples/csr_row_dot.py:27", "examples/csr_row_dot.py:29"], "csr_row_dot1": ["examples/csr_row_dot.py:27", "examples/csr_row_dot.py:30"], "csr_row_dot_j_merge": ["examples/csr_row_dot.py:27"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("csr_row_dot0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr_a[0:m + 1], indptr_b[0:m + 1], indices_a[0:nnz_a], indices_b[0:nnz_b], out[vi], a[0:nnz_a], b[0:nnz_b])
            T.writes(out[vi])
            T.sblock_attr({"sparse": True})
            out[vi] = T.float32(0.0)
            with T.sblock("csr_row_dot1"):
                T.reads(indptr_a[0:m + 1], indptr_b[0:m + 1], indices_a[0:nnz_a], indices_b[0:nnz_b], out[vi], a[0:nnz_a], b[0:nnz_b])
                T.writes(out[vi])
                T.sblock_attr({"sparse": True})
                csr_row_dot_j_merge = T.sblock_alloc_buffer((3,), "int32", scope="local")
                csr_row_dot_j_merge[0] = 0
                csr_row_dot_j_merge[1] = 0
                while csr_row_dot_j_merge[0] < indptr_a[vi + 1] - indptr_a[vi] and csr_row_dot_j_merge[1] < indptr_b[vi + 1] - indptr_b[vi]:
                    csr_row_dot_j_merge[2] = T.min(T.if_then_else(indptr_a[vi] + csr_row_dot_j_merge[0] >= 0 and indptr_a[vi] + csr_row_dot_j_merge[0] < nnz_a, indices_a[indptr_a[vi] + csr_row_dot_j_merge[0]], 0), T.if_then_else(indptr_b[vi] + csr_row_dot_j_merge[1] >= 0 and indptr_b[vi] + csr_row_dot_j_merge[1] < nnz_b, indices_b[indptr_b[vi] + csr_row_dot_j_merge[1]], 0))
                    if T.if_then_else(indptr_a[vi] + csr_row_dot_j_merge[0] >= 0 and indptr_a[vi] + csr_row_dot_j_merge[0] < nnz_a, indices_a[indptr_a[vi] + csr_row_dot_j_merge[0]], 0) == csr_row_dot_j_merge[2] and T.if_then_else(indptr_b[vi] + csr_row_dot_j_merge[1] >= 0 and indptr_b[vi] + csr_row_dot_j_merge[1] < nnz_b, indices_b[indptr_b[vi] + csr_row_dot_j_merge[1]], 0) == csr_row_dot_j_merge[2]:
                        out[vi] = out[vi] + T.if_then_else(indptr_a[vi] + csr_row_dot_j_merge[0] >= 0 and indptr_a[vi] + csr_row_dot_j_merge[0] < nnz_a, a[indptr_a[vi] + csr_row_dot_j_merge[0]], T.float32(0.0)) * T.if_then_else(indptr_b[vi] + csr_row_dot_j_merge[1] >= 0 and indptr_b[vi] + csr_row_dot_j_merge[1] < nnz_b, b[indptr_b[vi] + csr_row_dot_j_merge[1]], T.float32(0.0))
                    if T.if_then_else(indptr_a[vi] + csr_row_dot_j_merge[0] >= 0 and indptr_a[vi] + csr_row_dot_j_merge[0] < nnz_a, indices_a[indptr_a[vi] + csr_row_dot_j_merge[0]], 0) == csr_row_dot_j_merge[2]:
                        csr_row_dot_j_merge[0] = csr_row_dot_j_merge[0] + 1
                    if T.if_then_else(indptr_b[vi] + csr_row_dot_j_merge[1] >= 0 and indptr_b[vi] + csr_row_dot_j_merge[1] < nnz_b, indices_b[indptr_b[vi] + csr_row_dot_j_merge[1]], 0) == csr_row_dot_j_merge[2]:
                        csr_row_dot_j_merge[1] = csr_row_dot_j_merge[1] + 1
